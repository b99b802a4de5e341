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
    /// Whose sequence of steps: QUDA's (the default) or MILC's own.
    pub trajectory: Trajectory,
}

/// The sequence of steps a fixing takes. Every order of the same sweeps
/// converges to the same gauge condition, but not to the same links:
/// Coulomb gauge leaves one SU(3) rotation a time slice free (Landau one
/// for the lattice), and which one a fixing ends in depends on its path.
/// Observables of random-colour sources on gauge-fixed links (MILC's
/// `random_color_wall`, stochastic ψ̄ψ) depend on it: on MILC's 8⁴ test
/// field such a rotation alone moves wall-sink kaon correlators by up to
/// 25% (docs/milc-gauge-fixing.md, "Which links").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trajectory {
    /// QUDA's (`gaugeFixingOVR`): the links projected first; a step is the
    /// even then the odd sites; the quality measured after each step, the
    /// change of the functional taken from the measurement before.
    #[default]
    Quda,
    /// MILC's CPU code (`gaugefix_combo` in generic/gaugefix2.c), for
    /// continuity with MILC runs that did not offload gauge fixing: a step
    /// is the odd then the even sites; its action is the mean of the
    /// functional after each half; never stops after the first step; the
    /// links projected after every `reunit_interval`-th step (counted from
    /// 0, at step `k·n − 1`) and at the end unless the last count is a
    /// multiple of it; none before the first step.
    Milc,
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
        let done = if stop.stop_with_theta {
            q.theta < stop.tolerance
        } else {
            (q.functional - self.last.functional).abs() < stop.tolerance
        };
        self.push(step, q, done, stop, report);
        done
    }

    /// Step `step`'s quality and whether it ends the fixing.
    fn push(
        &mut self,
        step: usize,
        q: Quality,
        done: bool,
        stop: &Stopping,
        report: &mut dyn FnMut(usize, &Quality),
    ) {
        self.history.push(q);
        self.steps = step;
        if stop.verbose_interval > 0 && step.is_multiple_of(stop.verbose_interval) {
            report(step, &q);
        }
        self.last = q;
        self.converged = done;
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
/// `verbose_interval`-th step. Collective. Along `params.trajectory`:
/// QUDA's (the quality measured, the links projected on SU(3), U(3)'s
/// polar factor, before the first step, every `reunit_interval` steps and
/// at the end; the stopping rule checked after every step; a tolerance of
/// 0 runs `max_steps`) or MILC's (`Trajectory::Milc`).
pub fn run_ovr(
    sweeps: &mut dyn OvrSweeps,
    ranks: Option<&Ranks>,
    volume: usize,
    params: &OvrParams,
    report: &mut dyn FnMut(usize, &Quality),
) -> Result<Outcome> {
    params.check()?;
    let mut run = Run {
        sweeps,
        ranks,
        volume,
        params,
        stop: Stopping {
            verbose_interval: params.verbose_interval,
            tolerance: params.tolerance,
            stop_with_theta: params.stop_with_theta,
        },
        report,
    };
    let initial = run.quality()?;
    let mut outcome = Outcome::start(initial);
    match params.trajectory {
        Trajectory::Quda => run.quda(&mut outcome)?,
        Trajectory::Milc => run.milc(&mut outcome)?,
    }
    Ok(outcome)
}

/// One fixing under way.
struct Run<'a> {
    sweeps: &'a mut dyn OvrSweeps,
    ranks: Option<&'a Ranks>,
    volume: usize,
    params: &'a OvrParams,
    stop: Stopping,
    report: &'a mut dyn FnMut(usize, &Quality),
}

impl Run<'_> {
    fn quality(&mut self) -> Result<Quality> {
        let sums = self.sweeps.quality_sums()?;
        from_sums(self.ranks, sums, self.volume, self.params.dirs)
    }

    /// QUDA's trajectory: the links projected once after the first
    /// measurement, from which the first step's change is taken.
    fn quda(&mut self, outcome: &mut Outcome) -> Result<()> {
        self.sweeps.reunitarize()?;
        let interval = self.params.reunit_interval;
        let mut projected = true;
        for step in 1..=self.params.max_steps {
            for p in [Parity::Even, Parity::Odd] {
                self.sweeps.half_sweep(p)?;
            }
            projected = interval > 0 && step.is_multiple_of(interval);
            if projected {
                self.sweeps.reunitarize()?;
            }
            let q = self.quality()?;
            if outcome.record(step, q, &self.stop, self.report) {
                break;
            }
        }
        // The links leave projected.
        if !projected {
            self.sweeps.reunitarize()?;
        }
        Ok(())
    }

    /// MILC's trajectory (MILC's generic/gaugefix2.c, `gaugefix_combo`
    /// and `gaugefixstep`, in our words). MILC's per-parity action sums
    /// the links of the sites of one parity, forward and backward: every
    /// link once, so it is half the functional of the whole field then.
    fn milc(&mut self, outcome: &mut Outcome) -> Result<()> {
        let interval = self.params.reunit_interval;
        let mut previous: Option<f64> = None;
        // MILC's loop counter where the loop ends (its `gauge_iter`).
        let mut count = self.params.max_steps;
        for k in 0..self.params.max_steps {
            let mut action = 0.0;
            let mut q = outcome.initial;
            for p in [Parity::Odd, Parity::Even] {
                self.sweeps.half_sweep(p)?;
                q = self.quality()?;
                action += q.functional / 2.0;
            }
            let done = match previous {
                _ if self.stop.stop_with_theta => q.theta < self.stop.tolerance,
                Some(old) => (action - old).abs() < self.stop.tolerance,
                None => false,
            };
            outcome.push(k + 1, q, done, &self.stop, self.report);
            if done {
                count = k;
                break;
            }
            previous = Some(action);
            if interval > 0 && k % interval == interval - 1 {
                self.sweeps.reunitarize()?;
            }
        }
        if interval == 0 || !count.is_multiple_of(interval) {
            self.sweeps.reunitarize()?;
        }
        Ok(())
    }
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
            trajectory: Trajectory::Quda,
        }
    }

    /// Sweeps that do nothing but log what `run_ovr` asks, for the order
    /// of a trajectory; the functional rises by `rise` a half sweep.
    struct Logged {
        log: Vec<&'static str>,
        functional: f64,
        rise: f64,
    }

    impl OvrSweeps for Logged {
        fn half_sweep(&mut self, p: Parity) -> Result<()> {
            self.functional += self.rise;
            self.log.push(match p {
                Parity::Even => "even",
                Parity::Odd => "odd",
            });
            Ok(())
        }
        fn reunitarize(&mut self) -> Result<()> {
            self.log.push("project");
            Ok(())
        }
        fn quality_sums(&mut self) -> Result<[f64; 2]> {
            // volume 1, 4 directions: F = sum / 12
            Ok([12.0 * self.functional, 1.0])
        }
        fn links(&mut self) -> Result<GaugeField> {
            unreachable!()
        }
    }

    fn logged(
        trajectory: Trajectory,
        max_steps: usize,
        tolerance: f64,
    ) -> (Vec<&'static str>, Outcome) {
        let p = OvrParams {
            max_steps,
            tolerance,
            reunit_interval: 3,
            stop_with_theta: false,
            trajectory,
            ..params(4)
        };
        let mut sweeps = Logged {
            log: Vec::new(),
            functional: 0.5,
            rise: 0.01,
        };
        let out = run_ovr(&mut sweeps, None, 1, &p, &mut |_, _| {}).unwrap();
        (sweeps.log, out)
    }

    #[test]
    fn the_trajectories_take_their_steps_in_their_orders() {
        // QUDA: projected first, even then odd, every 3rd step, and at the
        // end unless just done.
        let (log, out) = logged(Trajectory::Quda, 4, 0.0);
        assert_eq!(out.steps, 4);
        let quda = "project even odd even odd even odd project even odd project";
        assert_eq!(log.join(" "), quda);
        let (log, _) = logged(Trajectory::Quda, 3, 0.0);
        assert_eq!(log.join(" "), "project even odd even odd even odd project");
        // MILC: odd then even, no projection first, after steps counted
        // 2, 5, … from 0, and at the end unless the count is a multiple
        // of 3 (after 3 steps it is 3: none, though step 2 came after the
        // last projection... MILC's rule exactly).
        let (log, _) = logged(Trajectory::Milc, 4, 0.0);
        assert_eq!(
            log.join(" "),
            "odd even odd even odd even project odd even project"
        );
        let (log, _) = logged(Trajectory::Milc, 3, 0.0);
        assert_eq!(log.join(" "), "odd even odd even odd even project");
        let (log, _) = logged(Trajectory::Milc, 6, 0.0);
        assert_eq!(log.len(), 12 + 2, "{log:?}");
    }

    #[test]
    fn milc_never_stops_after_its_first_step_quda_may() {
        // A tolerance no change misses: QUDA stops at its first step (its
        // change is taken from the measurement before), MILC at its second.
        let (_, quda) = logged(Trajectory::Quda, 10, 1.0);
        assert_eq!((quda.steps, quda.converged), (1, true));
        let (log, milc) = logged(Trajectory::Milc, 10, 1.0);
        assert_eq!((milc.steps, milc.converged), (2, true));
        // stopped with the count at 1: projected at the end
        assert_eq!(log.join(" "), "odd even odd even project");
        // MILC's action is the mean over the two halves: its change a step
        // is 2 × 0.01; a tolerance just above stops, just below runs on.
        assert!(logged(Trajectory::Milc, 10, 0.0201).1.converged);
        assert!(!logged(Trajectory::Milc, 10, 0.0199).1.converged);
    }

    #[test]
    fn both_trajectories_reach_the_same_gauge_condition() {
        for dirs in [3, 4] {
            let lat = Arc::new(Lattice::new([4, 4, 6, 4]).unwrap());
            let start = random::smooth_gauge(&lat, 0.5, 11);
            let mut ends = Vec::new();
            for trajectory in [Trajectory::Quda, Trajectory::Milc] {
                let p = OvrParams {
                    trajectory,
                    stop_with_theta: false,
                    tolerance: 1e-15,
                    ..params(dirs)
                };
                let mut u = start.clone();
                let out = fix_ovr(None, &mut u, &p, &mut |_, _| {}).unwrap();
                assert!(out.converged, "{trajectory:?} {dirs}: {out:?}");
                let q = super::super::quality::quality(None, &u, dirs).unwrap();
                assert!(q.theta < 1e-12, "{trajectory:?} {dirs}: {q:?}");
                let mut f = out.initial.functional;
                for q in &out.history {
                    assert!(q.functional >= f - 1e-15, "{trajectory:?} {dirs}");
                    f = q.functional;
                }
                ends.push(q.functional);
            }
            assert!((ends[0] - ends[1]).abs() < 1e-12, "{dirs}: {ends:?}");
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
