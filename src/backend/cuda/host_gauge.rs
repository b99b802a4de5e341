//! A caller's gauge array checked and stored on the device
//! (`kernels/host_gauge.cu`, issue 18): the array crosses the bus as it is,
//! through the pinned staging buffers, into one device buffer; one kernel
//! scans it (non-finite links, SU(3) and temporal-gauge deviations, each
//! reconstruct's largest stored number, the plaquette) and one per format
//! compresses, converts and stores the links in the device layout, as
//! `upload_gauge` does from a canonical host field: the same numbers (bit
//! for bit for reconstruct 18 and 12; reconstruct 8's phases come from the
//! device's `atan2`, within an ulp of the host's).

use cudarc::driver::{DevicePtr, DeviceRepr};

use super::layout::{self, SoaShape};
use super::{device_err, launch, CudaBackend, CudaGauge, DeviceData, Module};
use crate::backend::GaugeScan;
use crate::backend::OperatorFamily;
use crate::error::{Error, Result};
use crate::lattice::Lattice;
use crate::layout::{GaugeOrder, HostGauge, HostReals};
use crate::precision::{Precision, Reconstruct, TBoundary};

/// Mirrors `HostGaugeParams` in kernels/host_gauge.cu.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct HostGaugeParams {
    host: u64,
    out: u64,
    vh: i64,
    stride: i64,
    dims: [i32; 4],
    order: i32,
    reals: i32,
    vec: i32,
    kind: i32,
    max: f64,
    fixed_max: f64,
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
    let mut r = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0];
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

impl CudaBackend {
    /// The device side of `Backend::import_gauge`.
    pub(crate) fn import_gauge_impl(
        &self,
        lattice: &std::sync::Arc<Lattice>,
        host: &HostGauge,
        t_boundary: TBoundary,
        formats: &[(Precision, Reconstruct)],
        accept: &dyn Fn(&GaugeScan) -> bool,
    ) -> Result<Option<(GaugeScan, Vec<CudaGauge>)>> {
        Self::check_lattice(lattice)?;
        // This kernel's module, and those a Wilson solve on these formats
        // will launch, compiled (or loaded from the cache) together and in
        // parallel: on a first start the solve then finds them ready.
        let mut modules = Self::modules_for(OperatorFamily::Wilson, formats);
        modules.extend(Module::named("host_gauge"));
        self.load_modules(&mut *self.loaded()?, &modules)?;
        let arrays = host.arrays();
        let single = host.is_single();
        if arrays
            .iter()
            .any(|a| matches!(a, HostReals::F32(_)) != single)
        {
            // QDP arrays of mixed precisions: the host path reads them.
            return Ok(None);
        }
        let v = lattice.volume();
        let bytes_per_real = if single { 4 } else { 8 };
        // The whole array on the device; without room for it, the host path
        // (which needs only the stored links there).
        let total = arrays.iter().map(|a| a.len()).sum::<usize>() * bytes_per_real;
        let Ok(mut staged) = self.stream.alloc_zeros::<u8>(total) else {
            return Ok(None);
        };
        let at = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut staged, &self.stream).0;
        let mut offset = 0;
        for a in arrays {
            let bytes: &[u8] = match a {
                HostReals::F64(h) => bytemuck::cast_slice(h),
                HostReals::F32(h) => bytemuck::cast_slice(h),
            };
            self.upload_bytes(at + offset as u64, bytes)?;
            offset += bytes.len();
        }
        let d = lattice.dims();
        let vh = lattice.half_volume();
        let base = HostGaugeParams {
            host: at,
            vh: vh as i64,
            dims: d.map(|x| x as i32),
            order: order_code(host.order()),
            ..Default::default()
        };
        let suffix = if single { "f32" } else { "f64" };

        // The scan: one partial of SCAN_N numbers per block.
        let grid = v.div_ceil(SCAN_BLOCK as usize).clamp(1, SCAN_GRID);
        let partials = self
            .stream
            .alloc_zeros::<f64>(grid * SCAN_N)
            .map_err(device_err("device allocation"))?;
        let scan = HostGaugeParams {
            out: partials.device_ptr(&self.stream).0,
            ..base
        };
        let kernel = self.kernel(&format!("gauge_scan_{suffix}"))?;
        launch::launch(&self.stream, &kernel, grid as u32, SCAN_BLOCK, &scan)?;
        let mut folded = vec![0.0; grid * SCAN_N];
        self.stream
            .memcpy_dtoh(&partials, &mut folded)
            .map_err(device_err("reading the gauge scan"))?;
        self.synchronize()?;
        let r = fold_partials(&folded);
        let planes = 3.0 * v as f64;
        let (s, t) = (r[6] / planes, r[7] / planes);
        let found = GaugeScan {
            non_finite: r[0] as usize,
            max_su3_deviation: r[1],
            max_temporal_deviation: r[2],
            plaquette: [(s + t) / 2.0, s, t],
        };
        if found.non_finite > 0 || !accept(&found) {
            return Ok(None);
        }

        // One store per format, from the staged array.
        let store = self.kernel(&format!("gauge_store_{suffix}"))?;
        let mut stored = Vec::with_capacity(formats.len());
        for &(precision, reconstruct) in formats {
            let reals = reconstruct.reals();
            let max = match reconstruct {
                Reconstruct::Full18 => r[3],
                Reconstruct::Twelve => r[4],
                Reconstruct::Eight => r[5],
            };
            let (fixed_max, scale) = Self::link_scale(precision, max);
            let stride = layout::padded_stride(vh);
            let vec = SoaShape::link_vec(precision, reals);
            let shape = SoaShape::link(reals, vec, vh, stride);
            let links = self.alloc_links(precision, 8 * shape.block_len())?;
            let params = HostGaugeParams {
                out: links.ptr(&self.stream),
                stride: stride as i64,
                reals: reals as i32,
                vec: vec as i32,
                kind: kind_code(&links)?,
                max,
                fixed_max,
                ..base
            };
            let threads = 8 * vh;
            launch::launch(
                &self.stream,
                &store,
                launch::grid_for(threads, 256)?,
                256,
                &params,
            )?;
            stored.push(CudaGauge {
                lattice: lattice.clone(),
                stride,
                links,
                precision,
                reconstruct,
                scale,
                t_sign: t_boundary.sign(),
            });
        }
        // The staged array is freed in stream order, after the stores.
        drop(staged);
        Ok(Some((found, stored)))
    }
}

impl CudaGauge {
    /// The stored links as they lie on the device (layout, padding and
    /// element type of `kernels/core.cuh`), and the fixed-point scale: for
    /// checks that compare two ways of storing one field.
    pub fn stored_bytes(&self, backend: &CudaBackend) -> Result<(Vec<u8>, f64)> {
        let mut out = vec![0u8; self.links.bytes()];
        backend.download_bytes(&mut out, self.links.ptr(&backend.stream))?;
        Ok((out, self.scale))
    }

    /// Bytes per stored real (8, 4, 2, 1 or 4 for 32-bit fixed point).
    pub fn element_bytes(&self) -> usize {
        match self.links {
            DeviceData::F64(_) => 8,
            DeviceData::F32(_) | DeviceData::I32(_) | DeviceData::P20(_) | DeviceData::P30(_) => 4,
            DeviceData::I16(_) => 2,
            DeviceData::I8(_) => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_struct_matches_the_kernel() {
        // kernels/host_gauge.cu: 2 u64, 2 long long, 8 int, 2 double.
        assert_eq!(std::mem::size_of::<HostGaugeParams>(), 80);
        assert_eq!(std::mem::offset_of!(HostGaugeParams, dims), 32);
        assert_eq!(std::mem::offset_of!(HostGaugeParams, max), 64);
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
            [0.0, 1e-15, 0.0, 1.0, 1.0, 1.0, 2.5, 3.0],
            [2.0, 3e-15, 1e-9, 1.5, 1.25, 1.0, 0.5, 1.0],
        ];
        let r = fold_partials(p.as_flattened());
        assert_eq!(r, [2.0, 3e-15, 1e-9, 1.5, 1.25, 1.0, 3.0, 4.0]);
    }
}
