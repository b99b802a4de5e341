//! Gauge fixing by over-relaxation: sweeps over the even then the odd
//! sites; at each, the gauge transformation `g(x)` that maximises
//! `Re tr[g(x) K(x)]`, `K(x) = Σ_μ [U_μ(x) + U_μ(x−μ̂)†]` over the fixed
//! directions, one SU(2) subgroup after the other (Cabibbo–Marinari), each
//! hit raised towards the power `relax_boost` (over-relaxation, ω ∈ [1, 2);
//! subgroups (0,1), (1,2), (0,2), each from the links the last one left):
//! with the subgroup's `(a₀, a⃗)` of K, `x = (ω a₀² + |a⃗|²)/(a₀² + |a⃗|²)`,
//! the hit is `(a₀, −x a⃗)/√(a₀² + x²|a⃗|²)` (ω = 1: the exact maximum).
//! QUDA's (lib/gauge_fix_ovr.cu, include/kernels/gauge_fix_ovr.cuh) in our
//! words: docs/milc-gauge-fixing.md.

use rayon::prelude::*;

use super::quality::{from_sums, local_sums, Quality};
use super::transform;
use crate::backend::OvrSweeps;
use crate::comm::extend::neighbourhood;
use crate::comm::Ranks;
use crate::error::{Error, Result};
use crate::fat_links::unitarize::{check_unitary, unitarize_link};
use crate::fat_links::UnitarizeParams;
use crate::field::GaugeField;
use crate::lattice::Parity;
use crate::su3::Su3;
use num_complex::Complex64 as C64;

/// What `fix_ovr` is asked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OvrParams {
    /// 3: Coulomb (x, y, z), 4: Landau.
    pub dirs: usize,
    pub max_steps: usize,
    /// Report the quality every this many steps (0: never).
    pub verbose_interval: usize,
    /// ω, the over-relaxation parameter.
    pub relax_boost: f64,
    pub tolerance: f64,
    /// Project the links back on SU(3) every this many steps (0: never).
    pub reunit_interval: usize,
    /// Stop on θ < tolerance; else on a change of the functional below it.
    pub stop_with_theta: bool,
}

/// The checks both methods make: the directions and the tolerance.
pub(crate) fn check_common(dirs: usize, tolerance: f64) -> Result<()> {
    if !(dirs == 3 || dirs == 4) {
        return Err(Error::InvalidArgument(format!(
            "gauge_dir = {dirs}: 3 (Coulomb) or 4 (Landau)"
        )));
    }
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(Error::InvalidArgument(format!(
            "tolerance = {tolerance}: a non-negative number"
        )));
    }
    Ok(())
}

impl OvrParams {
    pub fn check(&self) -> Result<()> {
        check_common(self.dirs, self.tolerance)?;
        if !(self.relax_boost.is_finite() && self.relax_boost > 0.0 && self.relax_boost < 2.0) {
            return Err(Error::InvalidArgument(format!(
                "relax_boost = {}: in (0, 2)",
                self.relax_boost
            )));
        }
        Ok(())
    }
}

/// Refuses links that are not in SU(3) to `tolerance` (QUDA stores them
/// as two rows: links with the staggered phases or the anti-periodic sign
/// in them are not, and MILC takes those off before it fixes the gauge).
pub fn check_su3(links: &GaugeField, tolerance: f64) -> Result<()> {
    let (dev, i) = links.max_su3_deviation();
    if dev.is_nan() || dev > tolerance {
        return Err(Error::InvalidArgument(format!(
            "the links are not in SU(3): link {} of site {} (even-odd order) deviates by              {dev:.2e}; gauge fixing takes links without staggered phases or boundary signs",
            i % 4,
            i / 4
        )));
    }
    Ok(())
}

/// How a fixing ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub steps: usize,
    pub initial: Quality,
    pub last: Quality,
    /// The quality after every step.
    pub history: Vec<Quality>,
    pub converged: bool,
}

/// When a fixing stops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stopping {
    pub verbose_interval: usize,
    pub tolerance: f64,
    pub stop_with_theta: bool,
}

impl Outcome {
    pub(crate) fn start(initial: Quality) -> Outcome {
        Outcome {
            steps: 0,
            initial,
            last: initial,
            history: Vec::new(),
            converged: false,
        }
    }

    /// Step `step`'s quality recorded (and reported at the interval);
    /// whether the fixing has converged (QUDA's rule: θ below the
    /// tolerance, or the functional's change since the last step).
    pub(crate) fn record(
        &mut self,
        step: usize,
        q: Quality,
        stop: &Stopping,
        report: &mut dyn FnMut(usize, &Quality),
    ) -> bool {
        self.history.push(q);
        self.steps = step;
        if stop.verbose_interval > 0 && step.is_multiple_of(stop.verbose_interval) {
            report(step, &q);
        }
        let done = if stop.stop_with_theta {
            q.theta < stop.tolerance
        } else {
            (q.functional - self.last.functional).abs() < stop.tolerance
        };
        self.last = q;
        self.converged = done;
        done
    }
}

/// The SU(2) subgroups in the order they are hit.
pub const SUBGROUPS: [(usize, usize); 3] = [(0, 1), (1, 2), (0, 2)];

/// rows i, j of `m` ← r · (rows i, j), r = [[r00, r01], [r10, r11]].
fn left_hit(m: &mut Su3, (i, j): (usize, usize), r: [[C64; 2]; 2]) {
    for c in 0..3 {
        let (a, b) = (m.0[i][c], m.0[j][c]);
        m.0[i][c] = r[0][0] * a + r[0][1] * b;
        m.0[j][c] = r[1][0] * a + r[1][1] * b;
    }
}

/// The over-relaxed gauge transformation of a site whose links sum to
/// `k` (see the module's text).
pub fn site_transformation(k: &Su3, relax_boost: f64) -> Su3 {
    let mut k = *k;
    let mut g = Su3::identity();
    for (i, j) in SUBGROUPS {
        let a0 = k.0[i][i].re + k.0[j][j].re;
        let a1 = k.0[i][j].im + k.0[j][i].im;
        let a2 = k.0[i][j].re - k.0[j][i].re;
        let a3 = k.0[i][i].im - k.0[j][j].im;
        let (a0sq, asq) = (a0 * a0, a1 * a1 + a2 * a2 + a3 * a3);
        if a0sq + asq == 0.0 {
            continue;
        }
        let x = (relax_boost * a0sq + asq) / (a0sq + asq);
        let norm = 1.0 / (a0sq + x * x * asq).sqrt();
        let b0 = a0 * norm;
        let [b1, b2, b3] = [a1, a2, a3].map(|a| -a * x * norm);
        let r = [
            [C64::new(b0, b3), C64::new(b2, b1)],
            [C64::new(-b2, b1), C64::new(b0, -b3)],
        ];
        left_hit(&mut g, (i, j), r);
        left_hit(&mut k, (i, j), r);
    }
    g
}

/// The host's sweeps: this rank's links, its neighbours' through
/// `comm::extend`.
pub struct HostSweeps<'a> {
    pub ranks: Option<&'a Ranks>,
    pub links: GaugeField,
    pub dirs: usize,
    pub relax_boost: f64,
}

impl OvrSweeps for HostSweeps<'_> {
    fn half_sweep(&mut self, p: Parity) -> Result<()> {
        let near = neighbourhood(self.ranks, &self.links)?;
        let lat = self.links.lattice().clone();
        let vh = lat.half_volume();
        let (dirs, boost) = (self.dirs, self.relax_boost);
        let mut g = GaugeField::try_unit(lat.clone())?;
        g.links_mut()
            .par_chunks_mut(4)
            .enumerate()
            .filter(|(i, _)| i / vh == p.index())
            .for_each(|(i, site)| {
                let x = lat.coords(p, i % vh);
                let mut k = Su3::zero();
                for mu in 0..dirs {
                    let (u, b) = (near.link(x, mu, 0), near.link(x, mu, -1).adjoint());
                    for r in 0..3 {
                        for c in 0..3 {
                            k.0[r][c] += u.0[r][c] + b.0[r][c];
                        }
                    }
                }
                site[0] = site_transformation(&k, boost);
            });
        transform(self.ranks, &mut self.links, &g)
    }

    fn reunitarize(&mut self) -> Result<()> {
        reunitarize(&mut self.links)
    }

    fn quality_sums(&mut self) -> Result<[f64; 2]> {
        local_sums(self.ranks, &self.links, self.dirs)
    }

    fn links(&mut self) -> Result<GaugeField> {
        Ok(self.links.clone())
    }
}

/// The links projected back on SU(3)'s neighbourhood (U(3), as QUDA's
/// `unitarizeLinks`), refused where one fails.
pub(crate) fn reunitarize(links: &mut GaugeField) -> Result<()> {
    let p = UnitarizeParams::default();
    links
        .links_mut()
        .par_iter_mut()
        .for_each(|u| *u = unitarize_link(u, &p));
    check_unitary(links, p.max_error)
}

/// Fixes the gauge of `links` (this rank's) in place on the host; as
/// `run_ovr`.
pub fn fix_ovr(
    ranks: Option<&Ranks>,
    links: &mut GaugeField,
    params: &OvrParams,
    report: &mut dyn FnMut(usize, &Quality),
) -> Result<Outcome> {
    params.check()?;
    let mut sweeps = HostSweeps {
        ranks,
        links: links.clone(),
        dirs: params.dirs,
        relax_boost: params.relax_boost,
    };
    let outcome = run_ovr(&mut sweeps, ranks, links.lattice().volume(), params, report)?;
    *links = sweeps.links;
    Ok(outcome)
}

/// Gauge fixing by over-relaxation on `sweeps` (this rank's `volume`
/// sites); `report` sees the step and quality at every
/// `verbose_interval`-th step. Collective. As QUDA's: the quality
/// measured, the links projected on SU(3) (U(3)'s polar factor) before the
/// first step, every `reunit_interval` steps and at the end; the stopping
/// rule checked after every step (a tolerance of 0 runs `max_steps`).
pub fn run_ovr(
    sweeps: &mut dyn OvrSweeps,
    ranks: Option<&Ranks>,
    volume: usize,
    params: &OvrParams,
    report: &mut dyn FnMut(usize, &Quality),
) -> Result<Outcome> {
    params.check()?;
    let dirs = params.dirs;
    // As QUDA's: the quality measured, then the links projected once; the
    // change of the functional is taken from that first measurement.
    let initial = from_sums(ranks, sweeps.quality_sums()?, volume, dirs)?;
    sweeps.reunitarize()?;
    let mut outcome = Outcome::start(initial);
    let stop = Stopping {
        verbose_interval: params.verbose_interval,
        tolerance: params.tolerance,
        stop_with_theta: params.stop_with_theta,
    };
    let mut projected = true;
    for step in 1..=params.max_steps {
        for p in [Parity::Even, Parity::Odd] {
            sweeps.half_sweep(p)?;
        }
        projected = params.reunit_interval > 0 && step % params.reunit_interval == 0;
        if projected {
            sweeps.reunitarize()?;
        }
        let q = from_sums(ranks, sweeps.quality_sums()?, volume, dirs)?;
        if outcome.record(step, q, &stop, report) {
            break;
        }
    }
    // The links leave projected.
    if !projected {
        sweeps.reunitarize()?;
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::Lattice;
    use crate::random;
    use std::sync::Arc;

    fn params(dirs: usize) -> OvrParams {
        OvrParams {
            dirs,
            max_steps: 3000,
            verbose_interval: 0,
            relax_boost: 1.5,
            tolerance: 1e-14,
            reunit_interval: 10,
            stop_with_theta: true,
        }
    }

    #[test]
    fn a_pure_gauge_is_fixed_to_the_unit_field() {
        // U_μ(x) = h(x) h(x+μ̂)†: Landau gauge takes it to a constant
        // (F = 1, θ = 0).
        let lat = Arc::new(Lattice::new([4, 4, 4, 6]).unwrap());
        let h = random::smooth_gauge(&lat, 0.3, 4);
        let mut u = GaugeField::unit(lat.clone());
        transform(None, &mut u, &h).unwrap();
        let out = fix_ovr(None, &mut u, &params(4), &mut |_, _| {}).unwrap();
        assert!(out.converged, "{out:?}");
        assert!(out.initial.functional < 0.99);
        assert!((out.last.functional - 1.0).abs() < 1e-12, "{:?}", out.last);
    }

    #[test]
    fn the_functional_grows_every_step_and_the_plaquette_stays() {
        for dirs in [3, 4] {
            let lat = Arc::new(Lattice::new([4, 6, 4, 4]).unwrap());
            let mut u = random::smooth_gauge(&lat, 0.5, 7);
            let plaquette = u.plaquette();
            let out = fix_ovr(None, &mut u, &params(dirs), &mut |_, _| {}).unwrap();
            assert!(
                out.converged && out.last.theta < 1e-14,
                "{dirs}: {:?}",
                out.last
            );
            let mut f = out.initial.functional;
            for q in &out.history {
                assert!(
                    q.functional >= f - 1e-15,
                    "{dirs}: {} after {f}",
                    q.functional
                );
                f = q.functional;
            }
            let after = u.plaquette();
            assert!((0..3).all(|k| (after[k] - plaquette[k]).abs() < 1e-13));
        }
    }
}
