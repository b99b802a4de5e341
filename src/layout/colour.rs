//! Staggered fields on the host: one colour vector (3 complex numbers,
//! `(site·3 + colour)·2 + re/im`) a site, sites in even-odd order (a full
//! field: the even half, then the odd one; or a single parity), double or
//! single precision. No spin and no basis: the canonical field is the
//! host's numbers, optionally scaled by a power of two (the source scaling
//! of `normalising_exponent`).

use std::sync::Arc;

use num_complex::Complex64 as C64;

use super::{power_of_two_factors, HostReals, HostRealsMut};
use crate::error::Result;
use crate::field::{Fermion, HostSpinor};
use crate::invalid;
use crate::lattice::{Lattice, Subset};

const REALS: usize = 6;

fn subset_name(subset: Subset) -> String {
    match subset {
        Subset::Full => "full".into(),
        Subset::Single(p) => format!("{p:?}-parity"),
    }
}

/// Refuses a colour-vector array of the wrong length for `sites` sites.
pub(crate) fn check_len(sites: usize, subset: Subset, len: usize) -> Result<()> {
    if len != sites * REALS {
        return invalid!(
            "colour-vector array ({} field) has {len} reals, expected {sites} sites * 6 = {}",
            subset_name(subset),
            sites * REALS
        );
    }
    Ok(())
}

/// The host colour-vector field, times `2^exp`, checked finite.
pub fn import_scaled(
    lattice: &Arc<Lattice>,
    subset: Subset,
    host: HostReals,
    exp: i32,
) -> Result<HostSpinor> {
    let sites = lattice.sites(subset);
    check_len(sites, subset, host.len())?;
    let mut field = HostSpinor::try_zeros_of(lattice.clone(), subset, Fermion::Staggered)?;
    let (f1, f2) = power_of_two_factors(exp);
    let value = |k: usize| match host {
        HostReals::F64(v) => v[k],
        HostReals::F32(v) => v[k] as f64,
    };
    for (k, z) in field.data_mut().iter_mut().enumerate() {
        let (re, im) = (value(2 * k), value(2 * k + 1));
        if !re.is_finite() || !im.is_finite() {
            return invalid!(
                "colour vector ({} field): site {} holds a non-finite number (NaN or Inf)",
                subset_name(subset),
                k / 3
            );
        }
        *z = C64::new(re * f1 * f2, im * f1 * f2);
    }
    Ok(field)
}

/// Refuses, before anything is written, an output of the wrong length or a
/// field that times `2^exp` would not fit the output's precision.
pub fn check_export_range(field: &HostSpinor, out: &HostRealsMut, exp: i32) -> Result<()> {
    check_range(field.sites(), field.subset(), field.max_abs(), out, exp)
}

/// `check_export_range` for a field of `sites` sites whose largest
/// |component| is `max`.
pub(crate) fn check_range(
    sites: usize,
    subset: Subset,
    max: f64,
    out: &HostRealsMut,
    exp: i32,
) -> Result<()> {
    let n = sites * REALS;
    if out.len() != n {
        return invalid!(
            "colour-vector output ({} field) has {} reals, expected {sites} sites * 6 = {n}",
            subset_name(subset),
            out.len()
        );
    }
    let largest = match out {
        HostRealsMut::F64(_) => f64::MAX,
        HostRealsMut::F32(_) => f32::MAX as f64,
    };
    if max > 0.0 && max.log2() + exp as f64 >= largest.log2() {
        return invalid!(
            "the result ({:.3e} times 2^{exp}) does not fit the output's precision",
            max
        );
    }
    Ok(())
}

/// Writes the field, times `2^exp`, into the host array, after the checks
/// of `check_export_range` (nothing is written if they fail).
pub fn export_scaled(field: &HostSpinor, out: HostRealsMut, exp: i32) -> Result<()> {
    check_export_range(field, &out, exp)?;
    let (f1, f2) = power_of_two_factors(exp);
    let reals = field
        .data()
        .iter()
        .flat_map(|z| [z.re * f1 * f2, z.im * f1 * f2]);
    match out {
        HostRealsMut::F64(o) => o.iter_mut().zip(reals).for_each(|(o, v)| *o = v),
        HostRealsMut::F32(o) => o.iter_mut().zip(reals).for_each(|(o, v)| *o = v as f32),
    }
    Ok(())
}
