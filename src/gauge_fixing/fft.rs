//! Gauge fixing by Fourier-accelerated steepest descent, as QUDA's
//! `computeGaugeFixingFFTQuda` (lib/gauge_fix_fft.cu,
//! include/kernels/gauge_fix_fft.cuh; docs/milc-gauge-fixing.md, in our
//! words): each step takes the divergence Δ (`quality::divergence`),
//! filters it in momentum space by `p²_max / p²(k)` (four-dimensional
//! momenta whatever the gauge, `p² = 4 Σ_μ sin²(π k_μ/L_μ)`, `p²_max` = 16,
//! the zero mode dropped), and transforms the links by
//! `g(x) = P_SU(3)[1 + (α/2) Δ̃(x)]` (rows made orthonormal, the third the
//! conjugate cross product). With `autotune`, α shrinks by 0.95 (while
//! above 0.01) whenever the functional falls. One rank only, as QUDA's.

use num_complex::Complex64 as C64;
use rayon::prelude::*;
use rustfft::FftPlanner;

use super::ovr::{reunitarize, Outcome, Stopping};
use super::quality::{divergence, quality};
use super::transform;
use crate::comm::Ranks;
use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::lattice::{Lattice, Parity};
use crate::su3::Su3;

/// What `fix_fft` is asked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FftParams {
    /// 3: Coulomb (x, y, z), 4: Landau.
    pub dirs: usize,
    pub max_steps: usize,
    pub verbose_interval: usize,
    /// α, the step size.
    pub alpha: f64,
    pub autotune: bool,
    pub tolerance: f64,
    pub stop_with_theta: bool,
}

impl FftParams {
    pub fn check(&self) -> Result<()> {
        super::ovr::check_common(self.dirs, self.tolerance)?;
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return Err(Error::InvalidArgument(format!(
                "alpha = {}: a positive number",
                self.alpha
            )));
        }
        Ok(())
    }
}

/// A four-dimensional discrete Fourier transform in place (lexicographic
/// order, x fastest), unnormalised.
fn fft4(data: &mut [C64], dims: [usize; 4], inverse: bool) {
    let mut planner = FftPlanner::<f64>::new();
    let mut stride = 1;
    for &n in &dims {
        let fft = if inverse {
            planner.plan_fft_inverse(n)
        } else {
            planner.plan_fft_forward(n)
        };
        let block = stride * n;
        data.par_chunks_mut(block).for_each(|chunk| {
            let mut line = vec![C64::new(0.0, 0.0); n];
            for offset in 0..stride {
                for k in 0..n {
                    line[k] = chunk[offset + k * stride];
                }
                fft.process(&mut line);
                for k in 0..n {
                    chunk[offset + k * stride] = line[k];
                }
            }
        });
        stride = block;
    }
}

/// `p²_max / p²(k)` with the inverse transform's `1/V`, lexicographic.
fn filter(dims: [usize; 4]) -> Vec<f64> {
    let v: usize = dims.iter().product();
    (0..v)
        .map(|lex| {
            let mut rest = lex;
            let mut s = 0.0;
            for &n in &dims {
                let k = rest % n;
                rest /= n;
                s += (std::f64::consts::PI * k as f64 / n as f64).sin().powi(2);
            }
            if s <= 1e-5 {
                0.0
            } else {
                4.0 / (v as f64 * s)
            }
        })
        .collect()
}

/// Fixes the gauge of `links` in place; `report` as `fix_ovr`'s.
pub fn fix_fft(
    ranks: Option<&Ranks>,
    links: &mut GaugeField,
    params: &FftParams,
    report: &mut dyn FnMut(usize, &super::Quality),
) -> Result<Outcome> {
    params.check()?;
    if ranks.is_some_and(|r| r.partitioned()) {
        return Err(Error::Unsupported(
            "Fourier-accelerated gauge fixing on a cut lattice (QUDA's runs on one GPU only); \
             use over-relaxation"
                .into(),
        ));
    }
    let lat: std::sync::Arc<Lattice> = links.lattice().clone();
    let dims = lat.dims();
    let vh = lat.half_volume();
    // Site i (even-odd) at lexicographic position lex[i].
    let lex: Vec<usize> = (0..lat.volume())
        .map(|i| {
            let x = lat.coords(Parity::from_index(i / vh), i % vh);
            x[0] + dims[0] * (x[1] + dims[1] * (x[2] + dims[2] * x[3]))
        })
        .collect();
    let weights = filter(dims);
    let mut alpha = params.alpha;
    let initial = quality(ranks, links, params.dirs)?;
    report(0, &initial);
    let mut outcome = Outcome::start(initial);
    let stop = Stopping {
        verbose_interval: params.verbose_interval,
        tolerance: params.tolerance,
        stop_with_theta: params.stop_with_theta,
    };
    for step in 1..=params.max_steps {
        let delta = divergence(ranks, links, params.dirs)?;
        let mut filtered = vec![Su3::zero(); delta.len()];
        for (r, c) in (0..3).flat_map(|r| (0..3).map(move |c| (r, c))) {
            let mut plane = vec![C64::new(0.0, 0.0); delta.len()];
            for (i, d) in delta.iter().enumerate() {
                plane[lex[i]] = d.0[r][c];
            }
            fft4(&mut plane, dims, false);
            plane
                .par_iter_mut()
                .zip(weights.par_iter())
                .for_each(|(z, w)| *z *= w);
            fft4(&mut plane, dims, true);
            for (i, f) in filtered.iter_mut().enumerate() {
                f.0[r][c] = plane[lex[i]];
            }
        }
        let mut g = GaugeField::try_unit(lat.clone())?;
        g.links_mut()
            .par_chunks_mut(4)
            .zip(filtered.par_iter())
            .for_each(|(site, d)| {
                let mut m = d.scale(C64::new(alpha / 2.0, 0.0));
                for k in 0..3 {
                    m.0[k][k] += 1.0;
                }
                site[0] = m.project_su3();
            });
        transform(ranks, links, &g)?;
        let q = quality(ranks, links, params.dirs)?;
        if params.autotune && q.functional - outcome.last.functional < -1e-14 && alpha > 0.01 {
            alpha *= 0.95;
        }
        if outcome.record(step, q, &stop, report) {
            break;
        }
    }
    reunitarize(links)?;
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random;

    #[test]
    fn the_transform_inverts_and_fixes_a_smooth_field() {
        let dims = [4, 6, 2, 4];
        let mut rng = random::rng(1);
        let orig: Vec<C64> = (0..192).map(|_| random::gaussian(&mut rng)).collect();
        let mut d = orig.clone();
        fft4(&mut d, dims, false);
        fft4(&mut d, dims, true);
        assert!(d
            .iter()
            .zip(&orig)
            .all(|(a, b)| (a / 192.0 - b).norm() < 1e-14));
        for dirs in [3, 4] {
            let lat = std::sync::Arc::new(Lattice::new([4, 4, 4, 6]).unwrap());
            let mut u = random::smooth_gauge(&lat, 0.4, 2);
            let plaquette = u.plaquette();
            let p = FftParams {
                dirs,
                max_steps: 3000,
                verbose_interval: 0,
                alpha: 0.08,
                autotune: true,
                tolerance: 1e-13,
                stop_with_theta: true,
            };
            let out = fix_fft(None, &mut u, &p, &mut |_, _| {}).unwrap();
            assert!(out.converged && out.last.theta < 1e-13, "{dirs}: {out:?}");
            assert!(out.last.functional > out.initial.functional);
            let after = u.plaquette();
            assert!((0..3).all(|k| (after[k] - plaquette[k]).abs() < 1e-12));
        }
    }
}
