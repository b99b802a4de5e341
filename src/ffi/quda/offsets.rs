//! Multi-shift offsets as QUDA 9521952 takes them (lib/interface_quda.cpp,
//! `invertMultiShiftQuda`; lib/check_params.h): finite, ordered from
//! smallest to largest, a value given more than once allowed (QUDA's check
//! is strict). latsol's solvers take each system once, so the face solves
//! the distinct offsets and hands each caller's slot its system's answer.

use crate::error::{Error, Result};

/// The caller's offsets reduced to distinct systems.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Offsets {
    /// The distinct offsets, ascending.
    pub distinct: Vec<f64>,
    /// Each distinct system's tolerance: the smallest asked of its slots.
    pub tols: Vec<f64>,
    /// For each caller's slot, its system's index in `distinct`.
    pub system_of: Vec<usize>,
}

impl Offsets {
    /// Checks `values` (named `field[i]` in messages) and the tolerances
    /// asked for each (`tol_field[i]`), already defaulted by the caller.
    pub(crate) fn new(values: &[f64], tols: &[f64], field: &str, tol_field: &str) -> Result<Self> {
        let mut distinct: Vec<f64> = Vec::with_capacity(values.len());
        let mut system_tols: Vec<f64> = Vec::with_capacity(values.len());
        let mut system_of = Vec::with_capacity(values.len());
        for (i, (&v, &t)) in values.iter().zip(tols).enumerate() {
            if !v.is_finite() {
                return Err(Error::InvalidArgument(format!(
                    "{field}[{i}] = {v}: not a finite number"
                )));
            }
            if v < 0.0 {
                return Err(Error::InvalidArgument(format!(
                    "{field}[{i}] = {v}: a negative offset can make the shifted operator \
                     indefinite (CG needs offsets ≥ 0)"
                )));
            }
            if !(t.is_finite() && t >= 0.0) {
                return Err(Error::InvalidArgument(format!(
                    "{tol_field}[{i}] = {t}: a tolerance is a finite number, not negative"
                )));
            }
            match distinct.last() {
                Some(&last) if v < last => {
                    return Err(Error::InvalidArgument(format!(
                        "{field}[{i}] = {v} after {last}: offsets must be ordered from smallest \
                         to largest (as in QUDA)"
                    )))
                }
                Some(&last) if v == last => {
                    let k = distinct.len() - 1;
                    system_tols[k] = f64::min(system_tols[k], t);
                }
                _ => {
                    distinct.push(v);
                    system_tols.push(t);
                }
            }
            system_of.push(distinct.len() - 1);
        }
        Ok(Offsets {
            distinct,
            tols: system_tols,
            system_of,
        })
    }
}

/// A per-shift tolerance as QUDA's callers give it: unset (0 or QUDA's
/// marker) means `fallback`; a NaN is kept, for `Offsets::new` to refuse.
pub(crate) fn tol_or(t: f64, fallback: f64) -> f64 {
    if t.is_nan() || (t > 0.0 && t != super::convert::INVALID_DOUBLE) {
        t
    } else {
        fallback
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_offsets_share_a_system_with_the_smallest_tolerance() {
        let o = Offsets::new(&[0.1, 0.2, 0.2, 0.5], &[1e-8, 1e-6, 1e-9, 1e-7], "o", "t").unwrap();
        assert_eq!(o.distinct, vec![0.1, 0.2, 0.5]);
        assert_eq!(o.tols, vec![1e-8, 1e-9, 1e-7]);
        assert_eq!(o.system_of, vec![0, 1, 1, 2]);
    }

    #[test]
    fn descending_and_non_finite_values_are_refused_by_name() {
        let e = Offsets::new(&[0.2, 0.1], &[1e-8; 2], "param->offset", "t").unwrap_err();
        assert!(e.to_string().contains("param->offset[1] = 0.1"), "{e}");
        assert!(e.to_string().contains("smallest to largest"), "{e}");
        let e = Offsets::new(&[0.1, f64::NAN], &[1e-8; 2], "offset", "t").unwrap_err();
        assert!(e.to_string().contains("offset[1] = NaN"), "{e}");
        let e = Offsets::new(&[0.1, 0.2], &[1e-8, f64::NAN], "o", "param->tol_offset").unwrap_err();
        assert!(e.to_string().contains("param->tol_offset[1] = NaN"), "{e}");
    }
}
