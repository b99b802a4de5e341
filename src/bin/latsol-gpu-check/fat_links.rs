//! latsol-gpu-check, one part: improved staggered links computed on the
//! device (`Backend::fat_links`, `Backend::unitarize_links`,
//! kernels/fat_links.cu) against the host path (`fat_links::paths`,
//! `fat_links::unitarize`): both HISQ levels of a hot field with MILC's
//! phases-free links (the paths do not care), the fat and long links and
//! the U(3) projection, every link; and the time of each, device and host.

use std::time::Instant;

use latsol::backend::cuda::CudaBackend;
use latsol::backend::Backend;
use latsol::fat_links::unitarize::cayley_hamilton;
use latsol::fat_links::{
    fat_links, long_links, PathCoefficients, UnitarizeParams, HISQ_FIRST_LEVEL, HISQ_SECOND_LEVEL,
};
use latsol::field::GaugeField;

use crate::common::{e, R};
use crate::report::Check;

fn largest_difference(a: &GaugeField, b: &GaugeField) -> f64 {
    a.links()
        .iter()
        .zip(b.links())
        .map(|(x, y)| x.max_diff(y))
        .fold(0.0, f64::max)
}

fn largest_entry(a: &GaugeField) -> f64 {
    a.links()
        .iter()
        .flat_map(|l| l.0.iter().flatten())
        .map(|z| z.norm())
        .fold(0.0, f64::max)
}

/// The checks, and lines of timings, of both HISQ levels of `thin`.
pub fn run(gpu: &CudaBackend, thin: &GaugeField) -> R<(Vec<Check>, Vec<String>)> {
    let mut checks = Vec::new();
    let mut lines = Vec::new();
    let dims = thin.lattice().dims();
    let p = UnitarizeParams::default();
    let eps = f64::EPSILON;
    let mut input = thin.clone();
    for (level, coeffs) in [(1, HISQ_FIRST_LEVEL), (2, HISQ_SECOND_LEVEL)] {
        let c = PathCoefficients::from_array(coeffs);
        let long = level == 2;
        let t = Instant::now();
        let (fat, long_links_gpu) = gpu
            .fat_links(&input, &c, long)
            .map_err(e)?
            .ok_or("the device did not compute the fat links")?;
        let device_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let host_fat = fat_links(&input, &c).map_err(e)?;
        let host_long = long
            .then(|| long_links(&input, c.naik))
            .transpose()
            .map_err(e)?;
        let host_s = t.elapsed().as_secs_f64();
        // ~100 paths of 3-7 products summed in double, contracted or not:
        // 256 ε of the largest entry.
        let bound = 256.0 * eps * largest_entry(&host_fat).max(1.0);
        checks.push(Check {
            what: format!("fat links, HISQ level {level}, {dims:?}"),
            err: largest_difference(&fat, &host_fat),
            tol: bound,
        });
        if let (Some(g), Some(h)) = (&long_links_gpu, &host_long) {
            checks.push(Check {
                what: format!("long links, HISQ level {level}, {dims:?}"),
                err: largest_difference(g, h),
                tol: 16.0 * eps,
            });
        }
        lines.push(format!(
            "fat links level {level} {dims:?}: device {:.1} ms (with transfers), host {:.1} ms",
            device_s * 1e3,
            host_s * 1e3
        ));
        if level == 1 {
            let t = Instant::now();
            let (w, flagged) = gpu
                .unitarize_links(&fat, &p)
                .map_err(e)?
                .ok_or("the device did not project the links")?;
            let device_s = t.elapsed().as_secs_f64();
            let mut worst = 0.0f64;
            let mut disagree = 0usize;
            let t = Instant::now();
            for (i, v) in fat.links().iter().enumerate() {
                match cayley_hamilton(v, &p) {
                    Some(h) => worst = worst.max(h.max_diff(&w.links()[i])),
                    None => disagree += usize::from(flagged.binary_search(&i).is_err()),
                }
            }
            let host_s = t.elapsed().as_secs_f64();
            // The projection of a hot field's V loses a few digits to the
            // spread of V†V's eigenvalues (1e-13 seen on the host).
            checks.push(Check {
                what: format!("U(3) projection {dims:?} ({} links by SVD)", flagged.len()),
                err: worst,
                tol: 1e-11,
            });
            checks.push(Check {
                what: format!(
                    "U(3) projection {dims:?}: links the host sends to the SVD, not flagged"
                ),
                err: disagree as f64,
                tol: 0.5,
            });
            lines.push(format!(
                "U(3) projection {dims:?}: device {:.1} ms (with transfers), host {:.1} ms",
                device_s * 1e3,
                host_s * 1e3
            ));
            input = w;
        }
    }
    Ok((checks, lines))
}
