//! latsol-gpu-check, one part: the clover term computed on the device
//! (`Backend::compute_clover`, kernels/clover_compute.cu) against the host
//! path (`clover::compute`, `CloverField::inverse`, `upload_clover`), for
//! every host order and host precision and every stored format, A and A⁻¹,
//! every stored element (padding included; new buffers are zeroed and no
//! stored number of a hot field's clover is zero, so a missed write shows),
//! and the refusals the host path makes (a block that is not invertible,
//! links that are not the gauge field's).

use std::sync::Arc;

use latsol::backend::cuda::{CudaBackend, CudaClover};
use latsol::backend::{Backend, CloverStorage};
use latsol::field::GaugeField;
use latsol::lattice::Lattice;
use latsol::layout::{self, GaugeOrder, HostGauge, HostReals};
use latsol::precision::Precision;

use crate::common::{e, R};
use crate::host_links::{each_host_form, host_arrays};
use crate::report::Check;

/// The stored numbers of A and A⁻¹ (values times their block's norm over
/// the integer range for fixed point), padding included, and each
/// element's block maximum over the sites (0 in the padding).
fn numbers(gpu: &CudaBackend, c: &CudaClover) -> R<[Vec<f64>; 2]> {
    let stored = c.stored_bytes(gpu).map_err(e)?;
    let stride = c.stride();
    let vec = if c.precision() == Precision::Double {
        2
    } else {
        4
    };
    Ok(stored.map(|(bytes, norms)| {
        let (raw, max): (Vec<f64>, f64) = match c.precision() {
            Precision::Double => (bytemuck::cast_slice::<u8, f64>(&bytes).to_vec(), 1.0),
            Precision::Single | Precision::Packed30 => (
                bytemuck::cast_slice::<u8, f32>(&bytes)
                    .iter()
                    .map(|&x| x as f64)
                    .collect(),
                1.0,
            ),
            Precision::Half | Precision::Packed20 => (
                bytemuck::cast_slice::<u8, i16>(&bytes)
                    .iter()
                    .map(|&x| x as f64)
                    .collect(),
                32767.0,
            ),
            Precision::Quarter => (bytes.iter().map(|&x| x as i8 as f64).collect(), 127.0),
        };
        if norms.is_empty() {
            return raw;
        }
        // Element i: vector row j = i / (vec · stride), site (i / vec) % stride.
        raw.iter()
            .enumerate()
            .map(|(i, &x)| {
                let site = (i / vec) % stride;
                let n = (i / (vec * stride)) * vec + i % vec;
                match norms.get(2 * site + n / 36) {
                    Some(&norm) => x * (norm as f64 / max),
                    None => x,
                }
            })
            .collect()
    }))
}

/// The largest deviation of the device's numbers from the host path's, in
/// units of its bound: double roundoff of the computation (64 ε of the
/// field's largest number for A; times 24 max|A| max|A⁻¹|, the blocks'
/// condition estimate, for A⁻¹) plus two steps of the stored format.
fn deviation(device: &[Vec<f64>; 2], host: &[Vec<f64>; 2], precision: Precision) -> f64 {
    let max = |v: &Vec<f64>| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let (ma, mi) = (max(&host[0]), max(&host[1]));
    let eps = f64::EPSILON;
    let mut worst = 0.0f64;
    for k in 0..2 {
        let m = [ma, mi][k];
        let double = if k == 0 {
            64.0 * eps * ma
        } else {
            64.0 * eps * 24.0 * ma * mi * mi
        };
        for (a, b) in device[k].iter().zip(&host[k]) {
            let step = match precision {
                Precision::Double => 0.0,
                Precision::Single | Precision::Packed30 => 2.0 * f32::EPSILON as f64 * b.abs(),
                Precision::Half | Precision::Packed20 => 2.0 * m / 32767.0,
                Precision::Quarter => 2.0 * m / 127.0,
            };
            worst = worst.max((a - b).abs() / (double + step));
        }
        if device[k].len() != host[k].len() {
            worst = f64::INFINITY;
        }
    }
    worst
}

/// Every check of the device's computed clover on `gauge`.
pub fn run(gpu: &CudaBackend, lat: &Arc<Lattice>, gauge: &GaugeField) -> R<Vec<Check>> {
    let mut out = Vec::new();
    let c = 0.13 * 1.6;
    // Two launches of two stored forms each: every format.
    let pairs = [
        [Precision::Double, Precision::Half],
        [Precision::Single, Precision::Quarter],
    ];
    each_host_form(gauge, |form, host| {
        let name = format!("clover computed {:?} {form}", lat.dims());
        let links = layout::gauge::import(lat, host).map_err(e)?;
        let field = latsol::clover::compute::compute(&links, c).map_err(e)?;
        let inverse = field.inverse().map_err(e)?;
        for precisions in pairs {
            let computed = gpu
                .compute_clover(lat, host, c, &precisions, &|_| true)
                .map_err(e)?
                .ok_or_else(|| format!("{name}: the device path declined a valid field"))?;
            for (p, dev) in precisions.iter().zip(&computed) {
                let want = gpu.upload_clover(&field, &inverse, *p).map_err(e)?;
                out.push(Check {
                    what: format!("{name} {p:?}: A, A⁻¹ (units of the bound)"),
                    err: deviation(&numbers(gpu, dev)?, &numbers(gpu, &want)?, *p),
                    tol: 1.0,
                });
            }
        }
        Ok(())
    })?;
    // The refusals: a coefficient whose blocks overflow (the host's LDL†
    // refuses them), and links the caller's check does not accept.
    let d = host_arrays(gauge, GaugeOrder::Milc)?;
    let host = HostGauge::Milc(HostReals::F64(&d[0]));
    let overflow = gpu
        .compute_clover(lat, &host, f64::MAX, &[Precision::Double], &|_| true)
        .map_err(e)?;
    out.push(Check {
        what: "clover computed: blocks the host refuses are refused".into(),
        err: f64::from(u8::from(overflow.is_some())),
        tol: 0.0,
    });
    let declined = gpu
        .compute_clover(lat, &host, c, &[Precision::Double], &|_| false)
        .map_err(e)?;
    out.push(Check {
        what: "clover computed: links the caller does not accept are declined".into(),
        err: f64::from(u8::from(declined.is_some())),
        tol: 0.0,
    });
    Ok(out)
}
