//! `LATSOL_GAUGE_FIX_TRAJECTORY` through MILC's `qudaGaugeFixingOVR`
//! (docs/milc-gauge-fixing.md, "Which links"): `milc` takes MILC's own
//! sequence of steps, unset or `quda` QUDA's; each call gives the links
//! of `gauge_fixing::fix_ovr` along that trajectory, bit for bit; the two
//! end at different links that meet the gauge condition alike; any other
//! value is refused, the links left alone. Its own test binary: the variable is the process's.

mod milc_face;

use latsol::ffi::LATSOL_SUCCESS;
use latsol::gauge_fixing::{fix_ovr, quality, OvrParams, Trajectory};
use latsol::lattice::Lattice;
use milc_face::links::{from_milc, link_arg, qudaGaugeFixingOVR, to_milc};
use std::sync::Arc;

extern "C" {
    fn latsol_quda_last_status() -> i32;
}

const D: [usize; 4] = [4, 4, 4, 6];

#[test]
fn the_variable_picks_the_trajectory() {
    milc_face::milc_init(D);
    let lattice = Arc::new(Lattice::new(D).unwrap());
    let u = latsol::random::smooth_gauge(&lattice, 0.4, 9);
    // MILC's ks_spectrum call: Coulomb, boost 1.8, the functional's change
    // below the tolerance, projection every 20 steps.
    let (tolerance, nsteps) = (1e-9, 500);
    let mut fixed = Vec::new();
    for (value, trajectory) in [
        (None, Trajectory::Quda),
        (Some("quda"), Trajectory::Quda),
        (Some("milc"), Trajectory::Milc),
    ] {
        match value {
            // SAFETY: this binary's only test; no other thread reads it.
            Some(v) => unsafe { std::env::set_var("LATSOL_GAUGE_FIX_TRAJECTORY", v) },
            None => unsafe { std::env::remove_var("LATSOL_GAUGE_FIX_TRAJECTORY") },
        }
        let mut a = to_milc(&u);
        let mut arg = link_arg(&mut a);
        unsafe { qudaGaugeFixingOVR(2, 3, nsteps, 0, 1.8, tolerance, 20, 0, &mut arg) };
        assert_eq!(
            unsafe { latsol_quda_last_status() },
            LATSOL_SUCCESS,
            "{value:?}"
        );
        let mut expected = u.clone();
        let params = OvrParams {
            dirs: 3,
            max_steps: nsteps as usize,
            verbose_interval: 0,
            relax_boost: 1.8,
            tolerance,
            reunit_interval: 20,
            stop_with_theta: false,
            trajectory,
        };
        let out = fix_ovr(None, &mut expected, &params, &mut |_, _| {}).unwrap();
        assert!(out.converged, "{trajectory:?}: {out:?}");
        assert_eq!(
            a,
            to_milc(&expected),
            "{value:?}: not fix_ovr's {trajectory:?} links"
        );
        fixed.push(from_milc(lattice.clone(), &a));
    }
    let (quda, milc) = (&fixed[0], &fixed[2]);
    let apart = quda
        .links()
        .iter()
        .zip(milc.links())
        .map(|(x, y)| x.max_diff(y))
        .fold(0.0, f64::max);
    assert!(apart > 1e-6, "the two trajectories ended {apart:e} apart");
    let (q, m) = (
        quality(None, quda, 3).unwrap(),
        quality(None, milc, 3).unwrap(),
    );
    assert!((q.functional - m.functional).abs() < 1e-6, "{q:?} {m:?}");
    assert!(q.theta < 1e-5 && m.theta < 1e-5, "{q:?} {m:?}");

    // Any other value: refused, the links as they were.
    unsafe { std::env::set_var("LATSOL_GAUGE_FIX_TRAJECTORY", "MILC's") };
    let mut a = to_milc(&u);
    let keep = a.clone();
    let mut arg = link_arg(&mut a);
    unsafe { qudaGaugeFixingOVR(2, 3, nsteps, 0, 1.8, tolerance, 20, 0, &mut arg) };
    assert_ne!(unsafe { latsol_quda_last_status() }, LATSOL_SUCCESS);
    assert_eq!(a, keep);
}
