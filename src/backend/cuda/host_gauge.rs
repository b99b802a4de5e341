//! A caller's gauge array checked and stored on the device
//! (`kernels/host_gauge.cu`, issue 18): the array crosses the bus as it is,
//! through the pinned staging buffers, into one device buffer; one kernel
//! scans it (non-finite links, SU(3) and temporal-gauge deviations, each
//! reconstruct's largest stored number, the plaquette) and one per format
//! compresses, converts and stores the links in the device layout, as
//! `upload_gauge` does from a canonical host field: the same numbers (bit
//! for bit for reconstruct 18 and 12; reconstruct 8's phases come from the
//! device's `atan2`, within an ulp of the host's).
//!
//! `HostOrder`, the view of the device that every conversion of the
//! caller's arrays takes (`host_spinor.rs`, `clover_compute.rs` too), is
//! defined here.

use cudarc::driver::{DevicePtr, DeviceRepr};

use super::driver::device::Device;
use super::driver::errors::device_err;
use super::driver::launch;
use super::driver::memory::DeviceData;
use super::fields::{check_lattice, link_scale, CudaGauge};
use super::layout::{self, SoaShape};
use super::staggered::{self, CudaStaggeredLinks};
use crate::backend::{GaugeForm, GaugeScan};
use crate::error::{Error, Result};
use crate::lattice::Lattice;
use crate::layout::{GaugeOrder, HostGauge, HostReals};
use crate::long_links::LongReconstruct;
use crate::precision::{Precision, Reconstruct};

/// Mirrors `HostGaugeParams` in kernels/host_gauge.cu.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct HostGaugeParams {
    host: u64,
    out: u64,
    vh: i64,
    stride: i64,
    dims: [i32; 4],
    order: i32,
    reals: i32,
    vec: i32,
    kind: i32,
    layout: i32,
    t_sign_given: i32,
    max: f64,
    fixed_max: f64,
    fold_hops: i32,
    pad: i32,
    fold_coefficient: f64,
    fold_t_sign: f64,
    long_scale: f64,
}
// SAFETY: plain old data with the kernel's layout.
unsafe impl DeviceRepr for HostGaugeParams {}

/// The scan's quantities per block (`SCAN_N`) and its block size.
const SCAN_N: usize = 8;
const SCAN_BLOCK: u32 = 256;
/// At most this many scan blocks: a grid-stride loop covers the rest, and
/// the partials stay few (folded on the host, in block order).
const SCAN_GRID: usize = 1024;

/// The kernels of `kernels/host_gauge.cu`.
pub fn kernel_names() -> Vec<String> {
    [
        "gauge_scan_f64",
        "gauge_scan_f32",
        "long_scan_f64",
        "long_scan_f32",
        "gauge_store_f64",
        "gauge_store_f32",
    ]
    .map(String::from)
    .to_vec()
}

fn order_code(order: GaugeOrder) -> i32 {
    match order {
        GaugeOrder::Qdp => 0,
        GaugeOrder::Milc => 1,
        GaugeOrder::CpsWilson => 2,
    }
}

/// The element kind the store kernel writes (`HostGaugeParams::kind`).
fn kind_code(links: &DeviceData) -> Result<i32> {
    Ok(match links {
        DeviceData::F64(_) => 0,
        DeviceData::F32(_) => 1,
        DeviceData::I16(_) => 2,
        DeviceData::I8(_) => 3,
        DeviceData::I32(_) => 4,
        DeviceData::P20(_) | DeviceData::P30(_) => {
            return Err(Error::Internal("links are never stored packed".into()))
        }
    })
}

/// The per-block partials folded in block order: counts and plaquette
/// sums added, the rest the largest.
fn fold_partials(partials: &[f64]) -> [f64; SCAN_N] {
    let mut r = [0.0; SCAN_N];
    for block in partials.chunks_exact(SCAN_N) {
        for (k, (acc, &x)) in r.iter_mut().zip(block).enumerate() {
            *acc = match k {
                0 | 6 | 7 => *acc + x,
                _ => acc.max(x),
            };
        }
    }
    r
}

/// `|s|` as `long_links::scale_of` measures it on the host path's field:
/// the norm of the first row of the first link (site 0, direction x: the
/// first 6 reals of the first array in QDP and MILC order), times the
/// coefficient folded into it (η_x = 1 at the origin).
fn first_row_norm(host: &HostGauge, coefficient: f64) -> f64 {
    let a = &host.arrays()[0];
    if a.len() < 6 {
        return f64::NAN;
    }
    (0..3)
        .map(|c| {
            let z = num_complex::Complex64::new(a.get(2 * c), a.get(2 * c + 1))
                * num_complex::Complex64::new(coefficient, 0.0);
            z.norm_sqr()
        })
        .sum::<f64>()
        .sqrt()
}

/// What the host path's checks would find, from the folded scan.
pub(super) fn scan_found(lattice: &Lattice, r: &[f64; SCAN_N]) -> GaugeScan {
    let planes = 3.0 * lattice.volume() as f64;
    let (s, t) = (r[6] / planes, r[7] / planes);
    GaugeScan {
        non_finite: r[0] as usize,
        max_su3_deviation: r[1],
        max_temporal_deviation: r[2],
        plaquette: [(s + t) / 2.0, s, t],
    }
}

/// A caller's gauge array staged on the device, with what the kernels
/// need to read it.
pub(super) struct Staged {
    /// The array(s), one after another; freed in stream order when dropped.
    _buffer: cudarc::driver::CudaSlice<u8>,
    pub(super) params: HostGaugeParams,
    /// "f64" or "f32": the kernels' suffix.
    pub(super) suffix: &'static str,
}

/// The conversions of the caller's arrays (host orders and precisions)
/// into device fields and back, on one device; `flags` the two numbers the
/// spinor conversions report.
pub(crate) struct HostOrder<'d> {
    pub(crate) dev: &'d Device,
    pub(crate) flags: &'d cudarc::driver::CudaSlice<u64>,
}

impl std::ops::Deref for HostOrder<'_> {
    type Target = Device;
    fn deref(&self) -> &Device {
        self.dev
    }
}

impl HostOrder<'_> {
    /// The caller's array on the device as it is; `None` for QDP arrays of
    /// mixed precisions or without device memory for it (the host path,
    /// which needs only the stored links there, takes those).
    pub(super) fn stage_gauge(
        &self,
        lattice: &Lattice,
        host: &HostGauge,
    ) -> Result<Option<Staged>> {
        check_lattice(lattice)?;
        let arrays = host.arrays();
        let single = host.is_single();
        if arrays
            .iter()
            .any(|a| matches!(a, HostReals::F32(_)) != single)
        {
            return Ok(None);
        }
        let bytes_per_real = if single { 4 } else { 8 };
        let total = arrays.iter().map(|a| a.len()).sum::<usize>() * bytes_per_real;
        let Ok(mut buffer) = self.stream.alloc_zeros::<u8>(total) else {
            return Ok(None);
        };
        let at = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut buffer, &self.stream).0;
        let mut offset = 0;
        for a in arrays {
            let bytes: &[u8] = match a {
                HostReals::F64(h) => bytemuck::cast_slice(h),
                HostReals::F32(h) => bytemuck::cast_slice(h),
            };
            self.upload_bytes(at + offset as u64, bytes)?;
            offset += bytes.len();
        }
        Ok(Some(Staged {
            _buffer: buffer,
            params: HostGaugeParams {
                host: at,
                vh: lattice.half_volume() as i64,
                dims: lattice.dims().map(|x| x as i32),
                order: order_code(host.order()),
                ..Default::default()
            },
            suffix: if single { "f32" } else { "f64" },
        }))
    }

    /// The scan of a staged array, folded (`SCAN_N` numbers, the kernel's
    /// order).
    pub(super) fn scan_gauge(&self, lattice: &Lattice, staged: &Staged) -> Result<[f64; SCAN_N]> {
        let kernel = format!("gauge_scan_{}", staged.suffix);
        let partials = self.run_scan(&kernel, lattice.volume(), SCAN_N, staged.params)?;
        Ok(fold_partials(&partials))
    }

    /// Launches the scan kernel `name` over `items` (a
    /// grid-stride loop over at most `SCAN_GRID` blocks) with `params`
    /// writing `per_block` partials a block, and reads the partials back.
    fn run_scan(
        &self,
        name: &str,
        items: usize,
        per_block: usize,
        params: HostGaugeParams,
    ) -> Result<Vec<f64>> {
        let grid = items.div_ceil(SCAN_BLOCK as usize).clamp(1, SCAN_GRID);
        let partials = self
            .stream
            .alloc_zeros::<f64>(grid * per_block)
            .map_err(device_err("device allocation"))?;
        let scan = HostGaugeParams {
            out: partials.device_ptr(&self.stream).0,
            ..params
        };
        let kernel = self.kernel(name)?;
        launch::launch(&self.stream, &kernel, grid as u32, SCAN_BLOCK, &scan)?;
        let mut out = vec![0.0; grid * per_block];
        self.stream
            .memcpy_dtoh(&partials, &mut out)
            .map_err(device_err("reading a gauge scan"))?;
        self.synchronize()?;
        Ok(out)
    }

    /// The staged links stored in `precision`, `reals` reals a link in
    /// vectors of `vec`, `layout` 0 (Wilson SoA) or 1 (staggered), fixed
    /// point relative to `max`; blocks of `block_len` elements.
    #[allow(clippy::too_many_arguments)]
    fn store_gauge(
        &self,
        staged: &Staged,
        precision: Precision,
        reals: usize,
        vec: usize,
        layout: i32,
        stride: usize,
        block_len: usize,
        max: f64,
    ) -> Result<DeviceData> {
        let links = self.alloc_links(precision, 8 * block_len)?;
        let (fixed_max, _) = link_scale(precision, max);
        let params = HostGaugeParams {
            out: links.ptr(&self.stream),
            stride: stride as i64,
            reals: reals as i32,
            vec: vec as i32,
            kind: kind_code(&links)?,
            layout,
            max,
            fixed_max,
            ..staged.params
        };
        let kernel = self.kernel(&format!("gauge_store_{}", staged.suffix))?;
        let threads = 8 * staged.params.vh as usize;
        launch::launch(
            &self.stream,
            &kernel,
            launch::grid_for(threads, 256)?,
            256,
            &params,
        )?;
        Ok(links)
    }

    /// The device side of `Backend::import_gauge`.
    pub(crate) fn import_gauge_impl(
        &self,
        lattice: &std::sync::Arc<Lattice>,
        host: &HostGauge,
        form: GaugeForm,
        formats: &[(Precision, Reconstruct)],
        accept: &dyn Fn(&GaugeScan) -> bool,
    ) -> Result<Option<(GaugeScan, Vec<CudaGauge>)>> {
        check_lattice(lattice)?;
        // (The backend has compiled this kernel's module with those of the
        // solves on these formats: `CudaBackend::prepare_gauge_import`.)
        let Some(mut staged) = self.stage_gauge(lattice, host)? else {
            return Ok(None);
        };
        staged.params.t_sign_given = i32::from(form.sign_in_links);
        let r = self.scan_gauge(lattice, &staged)?;
        let found = scan_found(lattice, &r);
        if found.non_finite > 0 || !accept(&found) {
            return Ok(None);
        }
        // One store per format; fixed point relative to the largest stored
        // number, at least 1 (1 for unitary links), as the host path.
        let vh = lattice.half_volume();
        let mut stored = Vec::with_capacity(formats.len());
        for &(precision, reconstruct) in formats {
            let reals = reconstruct.reals();
            let max = match reconstruct {
                Reconstruct::Full18 => r[3],
                Reconstruct::Twelve => r[4],
                Reconstruct::Eight => r[5],
            }
            .max(1.0);
            let stride = layout::padded_stride(vh);
            let vec = SoaShape::link_vec(precision, reals);
            let shape = SoaShape::link(reals, vec, vh, stride);
            let links = self.store_gauge(
                &staged,
                precision,
                reals,
                vec,
                0,
                stride,
                shape.block_len(),
                max,
            )?;
            stored.push(CudaGauge {
                lattice: lattice.clone(),
                stride,
                links,
                precision,
                reconstruct,
                scale: link_scale(precision, max).1,
                t_sign: form.t_boundary.sign(),
                halo: None,
            });
        }
        // The stores finished before any later kernel starts: some hopping
        // terms load their first links before they wait for the kernel
        // before them (kernels/wilson_dslash.cuh, `links_first`), which must
        // not be the one writing them.
        self.synchronize()?;
        Ok(Some((found, stored)))
    }

    /// The device side of `Backend::import_staggered`: links of 18 reals
    /// as given (phases in them, or folded in as they are read: `fold`),
    /// stored as `upload_staggered` stores them: fat links and long links
    /// of 18 reals as they are, long links compressed to 13 or 9 reals
    /// (`long_links`) after a scan that checks the round trip as the host
    /// path does. `None` where a link is not finite or the long links are
    /// not |s| × U(3) to the stored precision (the host path names either),
    /// or the arrays cannot be staged.
    pub(crate) fn import_staggered_impl(
        &self,
        lattice: &std::sync::Arc<Lattice>,
        fat: &HostGauge,
        long: Option<&HostGauge>,
        fold: Option<crate::backend::PhaseFold>,
        formats: &[(Precision, LongReconstruct)],
    ) -> Result<Option<Vec<CudaStaggeredLinks>>> {
        check_lattice(lattice)?;
        let modules: Vec<_> = self.module_named("host_gauge").into_iter().collect();
        self.prepare_modules(&modules)?;
        let vh = lattice.half_volume();
        let stride = layout::padded_stride(vh);
        // Each field staged, scanned and stored in every format in turn, so
        // that one staged array is on the device at a time.
        let mut fat_links = Vec::with_capacity(formats.len());
        let mut long_links = Vec::with_capacity(formats.len());
        for (host, hops, coefficient) in std::iter::once((fat, 1, 1.0))
            .chain(long.map(|l| (l, 3, fold.map_or(1.0, |f| f.long_coefficient))))
        {
            let is_long = hops == 3;
            let Some(mut staged) = self.stage_gauge(lattice, host)? else {
                return Ok(None);
            };
            if let Some(f) = fold {
                staged.params.fold_hops = hops;
                staged.params.fold_coefficient = coefficient;
                staged.params.fold_t_sign = f.t_boundary.sign();
            }
            let r = self.scan_gauge(lattice, &staged)?;
            if r[0] > 0.0 {
                return Ok(None);
            }
            let max = if r[3] > 0.0 { r[3] } else { 1.0 };
            // (reconstruct, its scan) for the compressions asked for.
            let mut scans: Vec<(LongReconstruct, [f64; 3])> = Vec::new();
            let scale = first_row_norm(host, coefficient);
            staged.params.long_scale = scale;
            for &(precision, reconstruct) in formats {
                let w = staggered::long_vec(precision);
                if !is_long || reconstruct == LongReconstruct::Full18 {
                    let data =
                        self.store_gauge(&staged, precision, 18, w, 1, stride, 18 * stride, max)?;
                    let links = staggered::FixedLinks::new(data, precision, max);
                    if is_long {
                        long_links.push(staggered::DeviceLong::Full(links));
                    } else {
                        fat_links.push(links);
                    }
                    continue;
                }
                let scan = match scans.iter().find(|(r, _)| *r == reconstruct) {
                    Some((_, scan)) => *scan,
                    None => {
                        let scan = self.scan_long(lattice, &staged, reconstruct)?;
                        scans.push((reconstruct, scan));
                        scan
                    }
                };
                // `api::staggered`'s rule: within 10 units of the stored
                // links' precision (at least 1e-12) of |s|, and every link a number.
                let tolerance = 10.0 * precision.link_epsilon().max(1e-12);
                if scan[2] > 0.0 || scan[1] > tolerance || !scale.is_finite() || scale == 0.0 {
                    return Ok(None);
                }
                let max = if scan[0] > 0.0 { scan[0] } else { 1.0 };
                let reals = reconstruct.reals();
                let data =
                    self.store_gauge(&staged, precision, reals, w, 2, stride, reals * stride, max)?;
                long_links.push(staggered::DeviceLong::Compressed {
                    links: staggered::FixedLinks::new(data, precision, max),
                    reconstruct,
                    scale,
                });
            }
        }
        let mut long_links = long_links.into_iter();
        Ok(Some(
            fat_links
                .into_iter()
                .zip(formats)
                .map(|(fat, &(precision, _))| CudaStaggeredLinks {
                    lattice: lattice.clone(),
                    precision,
                    stride,
                    fat,
                    long: long_links.next(),
                    // Not imported on a cut lattice (the host path stores them).
                    halo: None,
                })
                .collect(),
        ))
    }

    /// The long links' scan for `reconstruct` (kernels/host_gauge.cu,
    /// `long_scan`): the largest stored magnitude, the largest round-trip
    /// deviation relative to |s|, the links whose deviation is no number.
    fn scan_long(
        &self,
        lattice: &Lattice,
        staged: &Staged,
        reconstruct: LongReconstruct,
    ) -> Result<[f64; 3]> {
        let params = HostGaugeParams {
            reals: reconstruct.reals() as i32,
            ..staged.params
        };
        let kernel = format!("long_scan_{}", staged.suffix);
        let partials = self.run_scan(&kernel, 4 * lattice.volume(), 3, params)?;
        Ok(partials.chunks_exact(3).fold([0.0; 3], |a, b| {
            [a[0].max(b[0]), a[1].max(b[1]), a[2] + b[2]]
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_struct_matches_the_kernel() {
        // kernels/host_links.cuh: 2 u64, 2 long long, 10 int, 2 double,
        // 2 int, 3 double.
        assert_eq!(std::mem::size_of::<HostGaugeParams>(), 120);
        assert_eq!(std::mem::offset_of!(HostGaugeParams, dims), 32);
        assert_eq!(std::mem::offset_of!(HostGaugeParams, max), 72);
        assert_eq!(std::mem::offset_of!(HostGaugeParams, fold_hops), 88);
        assert_eq!(std::mem::offset_of!(HostGaugeParams, fold_t_sign), 104);
    }

    #[test]
    fn kernel_names_exist_in_the_source() {
        let text = include_str!("../../../kernels/host_gauge.cu");
        for k in kernel_names() {
            assert!(text.contains(&format!("void {k}(")), "{k}");
        }
    }

    #[test]
    fn partials_fold_as_the_kernel_defines() {
        let p = [
            [0.0, 1e-15, 0.0, 1.0, 0.5, 0.25, 2.5, 3.0],
            [2.0, 3e-15, 1e-9, 1.5, 0.25, 0.125, 0.5, 1.0],
        ];
        let r = fold_partials(p.as_flattened());
        assert_eq!(r, [2.0, 3e-15, 1e-9, 1.5, 0.5, 0.25, 3.0, 4.0]);
    }
}
