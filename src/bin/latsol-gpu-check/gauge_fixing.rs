//! latsol-gpu-check, one part: gauge fixing by over-relaxation on the
//! device (`Backend::ovr_sweeps`, kernels/gauge_fixing.cu) against the host
//! path (`gauge_fixing::fix_ovr`) from the same smooth field, Coulomb and
//! Landau: the same number of steps, the same quality at each step, the
//! same links at the end (up to rounding, which the fixing's contraction
//! keeps small); and the time of a fixing on each.

use std::time::Instant;

use latsol::backend::cuda::CudaBackend;
use latsol::backend::Backend;
use latsol::field::GaugeField;
use latsol::gauge_fixing::ovr::run_ovr;
use latsol::gauge_fixing::{fix_ovr, OvrParams, Trajectory};

use crate::common::{e, R};
use crate::report::Check;

/// The checks and timing lines of fixing `links` both ways; `host` false
/// times the device alone.
pub fn run(gpu: &CudaBackend, links: &GaugeField, host: bool) -> R<(Vec<Check>, Vec<String>)> {
    let mut checks = Vec::new();
    let mut lines = Vec::new();
    let dims = links.lattice().dims();
    // MILC's trajectory (Coulomb, as MILC's programs fix) runs the same
    // device sweeps in another order.
    for (dirs, trajectory) in [
        (3, Trajectory::Quda),
        (4, Trajectory::Quda),
        (3, Trajectory::Milc),
    ] {
        let p = OvrParams {
            dirs,
            max_steps: 2000,
            verbose_interval: 0,
            relax_boost: 1.8,
            tolerance: 1e-12,
            reunit_interval: 20,
            stop_with_theta: true,
            trajectory,
        };
        let dims = format!("{dims:?} {trajectory:?}");
        let t = Instant::now();
        let mut sweeps = gpu
            .ovr_sweeps(links, dirs, p.relax_boost)
            .map_err(e)?
            .ok_or("the device did not take the links")?;
        let device = run_ovr(
            sweeps.as_mut(),
            None,
            links.lattice().volume(),
            &p,
            &mut |_, _| {},
        )
        .map_err(e)?;
        let fixed = sweeps.links().map_err(e)?;
        let device_s = t.elapsed().as_secs_f64();
        lines.push(format!(
            "gauge fixing {dirs} directions {dims}: device {} steps in {:.1} ms ({:.3} ms a \
             step), theta {:.2e}",
            device.steps,
            device_s * 1e3,
            device_s * 1e3 / device.steps.max(1) as f64,
            device.last.theta
        ));
        if !host {
            // Timing only: a large lattice needs more steps than 2000 for
            // θ < 1e-12 (critical slowing down), which is no fault.
            continue;
        }
        checks.push(Check {
            what: format!("gauge fixing {dirs} dirs {dims}: device converged (1 = no)"),
            err: if device.converged { 0.0 } else { 1.0 },
            tol: 0.5,
        });
        let mut on_host = links.clone();
        let t = Instant::now();
        let reference = fix_ovr(None, &mut on_host, &p, &mut |_, _| {}).map_err(e)?;
        let host_s = t.elapsed().as_secs_f64();
        lines.push(format!(
            "gauge fixing {dirs} directions {dims}: host {} steps in {:.1} ms",
            reference.steps,
            host_s * 1e3
        ));
        checks.push(Check {
            what: format!("gauge fixing {dirs} dirs {dims}: steps, device against host"),
            err: (device.steps as f64 - reference.steps as f64).abs(),
            tol: 2.0,
        });
        let worst_f = device
            .history
            .iter()
            .zip(&reference.history)
            .map(|(a, b)| (a.functional - b.functional).abs())
            .fold(0.0, f64::max);
        checks.push(Check {
            what: format!("gauge fixing {dirs} dirs {dims}: functional at every step"),
            err: worst_f,
            tol: 1e-12,
        });
        let worst = fixed
            .links()
            .iter()
            .zip(on_host.links())
            .map(|(a, b)| a.max_diff(b))
            .fold(0.0, f64::max);
        checks.push(Check {
            what: format!("gauge fixing {dirs} dirs {dims}: links, device against host"),
            err: worst,
            tol: 1e-9,
        });
    }
    Ok((checks, lines))
}
