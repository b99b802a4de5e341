//! The clover term computed from a caller's links on the device
//! (`kernels/clover_compute.cu`, issue 18): the links cross the bus as the
//! caller holds them (`stage_gauge`), are scanned as a gauge load scans
//! them (non-finite links, plaquette), and one kernel computes each site's
//! field strengths, clover blocks and their inverses and stores both in
//! every format asked for, in the device layout of `clover.rs`. The same
//! numbers as the host path (`clover::compute`, `CloverField::inverse`,
//! `upload_clover`) up to rounding; a block the host's LDL† would refuse is
//! refused here too, and the caller then takes the host path, which names it.

use std::sync::Arc;

use cudarc::driver::{DevicePtr, DeviceRepr};

use super::clover::{clover_vec, CudaClover, DeviceClover};
use super::driver::errors::device_err;
use super::driver::launch;
use super::fields::check_lattice;
use super::host_gauge::HostOrder;
use super::host_gauge::{scan_found, HostGaugeParams};
use crate::backend::GaugeScan;
use crate::clover::storage::CloverFormat;
use crate::clover::{chiral, compute, PACKED_REALS};
use crate::error::Result;
use crate::lattice::Lattice;
use crate::layout::HostGauge;
use crate::precision::Precision;

/// Mirrors `CloverOut` in kernels/clover_compute.cu.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CloverOut {
    pub direct: u64,
    pub inverse: u64,
    pub direct_norm: u64,
    pub inverse_norm: u64,
    pub kind: i32,
    pub vec: i32,
}

/// Threads a block of the kernel (`CLOVER_COMPUTE_BLOCK`, its launch bound).
const BLOCK: u32 = 128;

/// Stored forms one launch writes (`CLOVER_OUTS`).
pub(crate) const CLOVER_OUTS: usize = 2;

/// Mirrors `CloverComputeParams` in kernels/clover_compute.cu.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct CloverComputeParams {
    pub links: HostGaugeParams,
    pub bad: u64,
    pub stride: i64,
    pub coef: [[[f64; 8]; 6]; 2],
    pub w: [[f64; 8]; 2],
    pub w_inv: [[f64; 8]; 2],
    pub outs: i32,
    pub pad: i32,
    pub out: [CloverOut; CLOVER_OUTS],
}
// SAFETY: plain old data with the kernel's layout.
unsafe impl DeviceRepr for CloverComputeParams {}

/// The kernels of `kernels/clover_compute.cu`.
pub fn kernel_names() -> Vec<String> {
    ["clover_compute_f64", "clover_compute_f32"]
        .map(String::from)
        .to_vec()
}

/// A 2×2 complex matrix as the kernel reads it: `[s][t]` (re, im).
fn reals2(m: &chiral::Spin2) -> [f64; 8] {
    std::array::from_fn(|n| {
        let z = m[n / 4][(n / 2) % 2];
        if n % 2 == 0 {
            z.re
        } else {
            z.im
        }
    })
}

/// `(coef, w, w_inv)` of `CloverComputeParams`.
pub(crate) type SiteConstants = ([[[f64; 8]; 6]; 2], [[f64; 8]; 2], [[f64; 8]; 2]);

/// The kernel's constants for coefficient `c` (= κ c_SW): `c·½[γ_μ, γ_ν]`
/// restricted to chiral block k (DeGrand–Rossi spins 2k, 2k+1), planes in
/// `clover::compute`'s order, and the storage rotation `(W_k, W_k⁻¹)`.
/// The products `c · g` are formed as the host path forms them.
pub(crate) fn site_constants(c: f64) -> SiteConstants {
    let g = compute::commutators();
    let coef = std::array::from_fn(|k| {
        std::array::from_fn(|p| {
            let block: chiral::Spin2 =
                std::array::from_fn(|s| std::array::from_fn(|t| c * g[p][2 * k + s][2 * k + t]));
            reals2(&block)
        })
    });
    let rot = chiral::storage_rotation();
    (
        coef,
        rot.map(|(w, _)| reals2(&w)),
        rot.map(|(_, wi)| reals2(&wi)),
    )
}

/// The element kind and stored vector width of a format (`CloverOut`).
fn kind_of(format: CloverFormat) -> i32 {
    match format {
        CloverFormat::Double => 0,
        CloverFormat::Single => 1,
        CloverFormat::Half => 2,
        CloverFormat::Quarter => 3,
    }
}

impl HostOrder<'_> {
    /// A zeroed stored field (A or A⁻¹) of `format` with `len` reals.
    fn alloc_clover(&self, format: CloverFormat, len: usize, sites: usize) -> Result<DeviceClover> {
        let precision = match format {
            CloverFormat::Double => Precision::Double,
            CloverFormat::Single => Precision::Single,
            CloverFormat::Half => Precision::Half,
            CloverFormat::Quarter => Precision::Quarter,
        };
        let norms = match format {
            CloverFormat::Half | CloverFormat::Quarter => Some(
                self.stream
                    .alloc_zeros::<f32>(2 * sites)
                    .map_err(device_err("device allocation of the clover norms"))?,
            ),
            _ => None,
        };
        Ok(DeviceClover {
            values: self.alloc(precision, len)?,
            norms,
        })
    }

    /// The device side of `Backend::compute_clover`.
    pub(crate) fn compute_clover_impl(
        &self,
        lattice: &Arc<Lattice>,
        links: &HostGauge,
        c: f64,
        precisions: &[Precision],
        accept: &dyn Fn(&GaugeScan) -> bool,
    ) -> Result<Option<Vec<CudaClover>>> {
        check_lattice(lattice)?;
        // This module and the gauge scan's, compiled or loaded together; a
        // module that cannot be had leaves the work to the host path.
        let mut modules = Vec::new();
        modules.extend(self.module_named("host_gauge"));
        modules.extend(self.module_named("clover_compute"));
        if self.prepare_modules(&modules).is_err() {
            return Ok(None);
        }
        let Some(staged) = self.stage_gauge(lattice, links)? else {
            return Ok(None);
        };
        let found = scan_found(lattice, &self.scan_gauge(lattice, &staged)?);
        if found.non_finite > 0 || !accept(&found) {
            return Ok(None);
        }
        let sites = lattice.volume();
        let stride = super::layout::padded_stride(sites);
        let len = PACKED_REALS * stride;
        // Without the device memory for the stored fields beside the staged
        // links, the host path (which stages nothing) takes over.
        let mut fields = Vec::with_capacity(precisions.len());
        for &precision in precisions {
            let format = CloverFormat::for_spinors(precision);
            let (Ok(direct), Ok(inverse)) = (
                self.alloc_clover(format, len, sites),
                self.alloc_clover(format, len, sites),
            ) else {
                return Ok(None);
            };
            fields.push(CudaClover {
                lattice: lattice.clone(),
                precision,
                stride,
                direct,
                inverse,
            });
        }
        let Ok(mut bad) = self.stream.alloc_zeros::<u64>(1) else {
            return Ok(None);
        };
        self.stream
            .memcpy_htod(&[u64::MAX], &mut bad)
            .map_err(device_err("host-to-device copy"))?;
        let (coef, w, w_inv) = site_constants(c);
        let kernel = self.kernel(&format!("clover_compute_{}", staged.suffix))?;
        for chunk in fields.chunks(CLOVER_OUTS) {
            let mut out = [CloverOut::default(); CLOVER_OUTS];
            for (o, f) in out.iter_mut().zip(chunk) {
                let format = CloverFormat::for_spinors(f.precision);
                let norm =
                    |d: &DeviceClover| d.norms.as_ref().map_or(0, |n| n.device_ptr(&self.stream).0);
                *o = CloverOut {
                    direct: f.direct.values.ptr(&self.stream),
                    inverse: f.inverse.values.ptr(&self.stream),
                    direct_norm: norm(&f.direct),
                    inverse_norm: norm(&f.inverse),
                    kind: kind_of(format),
                    vec: clover_vec(format) as i32,
                };
            }
            let params = CloverComputeParams {
                links: staged.params,
                bad: bad.device_ptr(&self.stream).0,
                stride: stride as i64,
                coef,
                w,
                w_inv,
                outs: chunk.len() as i32,
                pad: 0,
                out,
            };
            launch::launch(
                &self.stream,
                &kernel,
                launch::grid_for(sites, BLOCK)?,
                BLOCK,
                &params,
            )?;
        }
        let mut first_bad = [0u64];
        self.stream
            .memcpy_dtoh(&bad, &mut first_bad)
            .map_err(device_err("reading the clover check"))?;
        self.synchronize()?;
        if first_bad[0] != u64::MAX {
            return Ok(None);
        }
        Ok(Some(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex64 as C64;

    #[test]
    fn parameter_struct_matches_the_kernel() {
        // kernels/clover_compute.cu: HostGaugeParams (120), u64, long long,
        // 2·6·8 + 2·8 + 2·8 doubles, 2 int, then two CloverOut of 4 u64
        // and 2 int.
        assert_eq!(std::mem::size_of::<CloverOut>(), 40);
        assert_eq!(std::mem::offset_of!(CloverComputeParams, coef), 136);
        assert_eq!(
            std::mem::offset_of!(CloverComputeParams, outs),
            136 + 8 * 128
        );
        assert_eq!(
            std::mem::size_of::<CloverComputeParams>(),
            136 + 8 * 128 + 8 + 80
        );
    }

    #[test]
    fn kernel_names_exist_in_the_source() {
        let text = include_str!("../../../kernels/clover_compute.cu");
        for k in kernel_names() {
            assert!(text.contains(&format!("void {k}(")), "{k}");
        }
        assert!(text.contains(&format!("#define CLOVER_OUTS {CLOVER_OUTS}")));
        assert!(text.contains(&format!("#define CLOVER_COMPUTE_BLOCK {BLOCK}")));
    }

    #[test]
    fn the_commutators_are_block_diagonal() {
        // The kernel reads only the chiral blocks of c·½[γ_μ, γ_ν]: the
        // rest must vanish (σ_μν commutes with γ5).
        for m in 0..4 {
            for n in (m + 1)..4 {
                let g = compute::half_commutator(m, n);
                for (s, row) in g.iter().enumerate() {
                    for (t, z) in row.iter().enumerate() {
                        if s / 2 != t / 2 {
                            assert_eq!(*z, C64::new(0.0, 0.0), "({m}, {n}) [{s}][{t}]");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn constants_are_the_host_path_numbers() {
        let (coef, w, w_inv) = site_constants(0.25);
        let g = compute::half_commutator(1, 3);
        // plane (1, 3) is the fifth; block 1, [s][t] = [1][0]
        assert_eq!(coef[1][4][4], (0.25 * g[3][2]).re);
        assert_eq!(coef[1][4][5], (0.25 * g[3][2]).im);
        let rot = chiral::storage_rotation();
        assert_eq!(w[0][2], rot[0].0[0][1].re);
        assert_eq!(w_inv[1][7], rot[1].1[1][1].im);
    }
}
