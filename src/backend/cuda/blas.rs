//! Host side of the vector algebra (`kernels/blas.cuh`, one module
//! `blas_<format>.cu` per storage format): checks the fields,
//! fills the parameter struct and launches. Element-wise kernels get a
//! tuned block size; reductions run on a fixed geometry (`RED_BLOCK`
//! threads, a grid fixed by the length alone) with a fixed-order final sum
//! by the last block, so their results are the same bit for bit on every
//! run. A reduction is one launch; its result lands in mapped host memory,
//! read after one stream synchronisation.

use std::sync::Mutex;

use cudarc::driver::DeviceRepr;
use num_complex::Complex64 as C64;

use super::driver::device::Device;
use super::driver::errors::device_err;
use super::driver::launch;
use super::driver::memory::DeviceData;
use super::driver::scratch::Scratch;
use super::fields::{
    alloc_spinor, check_same, colour_suffix, per_site, spinor_vec, suffix, CudaSpinor,
};
use super::halo::DeferredFailure;
use crate::backend::SpinorField;
use crate::comm::Ranks;
use crate::error::{Error, Result};
use crate::field::Fermion;
use crate::lattice::Subset;
use crate::precision::Precision;

/// Threads per block of a reduction (`RED_BLOCK` in blas.cuh).
pub const RED_BLOCK: u32 = 256;
/// Most blocks of a reduction's first pass (about one wave on an H100).
pub const RED_GRID_MAX: usize = 1024;
/// Most numbers one reduction returns.
pub const RED_MAX: usize = 8;

/// Element-wise ops (one kernel per precision each).
pub(crate) const MAPS: &[&str] = &[
    "ax",
    "axpy",
    "xpay",
    "axpby",
    "caxpy",
    "cxpaypbz",
    "xpay_into",
];
/// Reductions and how many numbers each returns.
pub(crate) const REDUCTIONS: &[(&str, usize)] = &[
    ("norm2", 1),
    ("cdot", 2),
    ("cdot_norm2", 3),
    ("axpy_norm2", 1),
    ("caxpy_norm2", 1),
    ("xmy_norm2", 1),
    ("axpy_norm2_pr", 2),
    ("bicgstab_update", 3),
];

/// Most fields one `axpy_many` launch adds (`MANY_MAX` in blas.cuh).
pub const MANY_MAX: usize = 8;

/// The kernels of module `kernels/blas_<suffix(p)>.cu`: every op and
/// reduction on fields of format `p`, the widened BiCGstab update beside
/// them, the sums of them into double and single, γ5, and the conversions
/// from `p` to every other format.
pub fn kernel_names(p: Precision) -> Vec<String> {
    let f = suffix(p);
    let mut v: Vec<String> = MAPS
        .iter()
        .chain(REDUCTIONS.iter().map(|r| &r.0))
        .map(|op| format!("blas_{op}_{f}"))
        .collect();
    if WIDE_FORMATS.contains(&f) {
        v.push(format!("blas_bicgstab_update_wide_{f}"));
    }
    v.push(format!("blas_cdot4_{f}"));
    if FORMATS[..2].contains(&f) {
        v.push(format!("blas_block_caxpy_{f}"));
        v.push(format!("blas_block_cdot_{f}"));
    }
    for hi in &FORMATS[..2] {
        v.push(format!("blas_axpy_many_{hi}_{f}"));
    }
    v.push(format!("gamma5_{f}"));
    v.push(format!("domain_project_{f}"));
    if FORMATS[..2].contains(&f) {
        v.push(format!("blas_heavy_quark_{f}"));
    }
    for q in FORMATS.iter().filter(|&&q| q != f) {
        v.push(format!("convert_{f}_to_{q}"));
    }
    v
}

/// The kernels' names of the storage formats.
const FORMATS: [&str; 6] = ["f64", "f32", "f16", "f8", "p20", "p30"];
/// The formats whose fused BiCGstab update also takes x̂ in single: those
/// coarser than single, where `bicgstab_reliable` widens x̂ (30-bit is finer).
const WIDE_FORMATS: [&str; 3] = ["f16", "f8", "p20"];

/// Blocks of a reduction over `n` vectors: fixed by `n` alone.
pub fn reduction_grid(n: usize) -> u32 {
    n.div_ceil(RED_BLOCK as usize).clamp(1, RED_GRID_MAX) as u32
}

/// Kernel arguments of blas.cuh (`struct BlasParams`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct BlasParams {
    pub x: u64,
    pub y: u64,
    pub z: u64,
    pub partials: u64,
    pub a_re: f64,
    pub a_im: f64,
    pub b_re: f64,
    pub b_im: f64,
    pub n: i64,
    pub stride: i64,
    pub w: u64,
    pub v: u64,
    pub counter: u64,
    pub out: u64,
}
// SAFETY: plain old data with the C layout of `BlasParams` in blas.cuh.
unsafe impl DeviceRepr for BlasParams {}

/// Kernel arguments of `axpy_many` (`struct ManyParams` in blas.cuh).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct ManyParams {
    pub y: u64,
    pub x: [u64; MANY_MAX],
    pub a: [f64; MANY_MAX],
    pub stride: i64,
    pub sites: i64,
    pub nx: i32,
    pub pad: i32,
}
// SAFETY: plain old data with the C layout of `ManyParams` in blas.cuh.
unsafe impl DeviceRepr for ManyParams {}

/// Kernel arguments of `gamma5` and `convert` (`struct SiteParams`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SiteParams {
    pub dst: u64,
    pub src: u64,
    pub stride: i32,
    pub blocks: i32,
}
// SAFETY: plain old data with the C layout of `SiteParams` in blas.cuh.
unsafe impl DeviceRepr for SiteParams {}

/// Items an op walks over, padding included (zeros that every op keeps
/// zero): vectors (double2 / float4), or sites for half, quarter and the
/// packed formats, whose twelve complex numbers share a norm or exponent.
pub(super) fn vectors(x: &CudaSpinor) -> usize {
    match x.precision() {
        p if per_site(p) => x.blocks() * x.stride,
        // A staggered block (6 reals a site, the stride a multiple of 32) is
        // a flat array of double2 / float4 too.
        // Double and single: flat arrays of double2 / float4.
        p => x.blocks() * x.stride * x.fermion().reals() / spinor_vec(p),
    }
}

/// The name of `x`'s format in the element-wise and reduction kernels:
/// its precision's, but the colour-vector kernels for staggered fields in
/// half and quarter (a norm scales 3 complex numbers there, not 12).
pub(super) fn format_of(x: &CudaSpinor) -> &'static str {
    match (x.fermion(), x.precision()) {
        (Fermion::Staggered, p) if per_site(p) => colour_suffix(p),
        (_, p) => suffix(p),
    }
}

/// Kernel arguments of the colour-vector conversions (`struct ConvertParams`
/// in staggered_dslash.cuh).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ConvertParams {
    dst: u64,
    src: u64,
    n: i64,
}
// SAFETY: plain old data with the C layout of `ConvertParams`.
unsafe impl DeviceRepr for ConvertParams {}

/// The second field of a reduction: read only, or updated in place.
pub(crate) enum ReduceOut<'a> {
    Read,
    Write(&'a mut CudaSpinor),
}

/// The vector operations on one device, with the reductions' scratch memory.
pub(crate) struct Blas<'d> {
    pub(crate) dev: &'d Device,
    pub(crate) scratch: &'d Mutex<Scratch>,
    /// On many ranks: the reductions' sums are global, and carry the
    /// verdict of the work since the last one (`DeferredFailure::sum`).
    pub(crate) ranks: Option<&'d Ranks>,
    pub(crate) failure: &'d DeferredFailure,
}

impl std::ops::Deref for Blas<'_> {
    type Target = Device;
    fn deref(&self) -> &Device {
        self.dev
    }
}

/// The colour-vector kernels of a staggered module (`Double` names
/// `kernels/staggered_dslash.cu`, `Half`, `Quarter`, `Packed20` and
/// `Packed30` `staggered_f16.cu`, `staggered_f8.cu`, `staggered_p20.cu`
/// and `staggered_p30.cu`): the conversions, the heavy-quark residual, and
/// the vector algebra of its formats (kernels/staggered_blas.cuh); the
/// hopping terms' names are `staggered::kernel_names`.
pub fn colour_kernel_names(module: Precision) -> Vec<String> {
    let mut v = Vec::new();
    if module == Precision::Double {
        v.push("staggered_convert_f64_to_f32".into());
        v.push("staggered_convert_f32_to_f64".into());
        v.push("blas_heavy_quark_s64".into());
        v.push("blas_heavy_quark_s32".into());
    } else {
        let s = colour_suffix(module);
        v.extend(
            MAPS.iter()
                .chain(REDUCTIONS.iter().map(|r| &r.0))
                .map(|op| format!("blas_{op}_{s}")),
        );
    }
    let formats = match module {
        Precision::Double => vec![Precision::Double, Precision::Single],
        p => vec![p],
    };
    for p in formats {
        let s = colour_suffix(p);
        v.push(format!("blas_axpy_many_s64_{s}"));
        v.push(format!("blas_axpy_many_s32_{s}"));
        if WIDE_FORMATS.contains(&suffix(p)) {
            v.push(format!("blas_bicgstab_update_wide_{s}"));
        }
        for q in Precision::ALL {
            let fixed = |p: Precision| matches!(p, Precision::Half | Precision::Quarter);
            let packed = |p: Precision| matches!(p, Precision::Packed20 | Precision::Packed30);
            // A packed module holds every conversion to and from its format
            // (the other packed one's: from it only).
            let held = if packed(p) {
                true
            } else {
                !packed(q) && (fixed(p) || fixed(q))
            };
            if q != p && held {
                v.push(format!("convert_{s}_to_{}", colour_suffix(q)));
            }
            if q != p && packed(p) && !packed(q) {
                v.push(format!("convert_{}_to_{s}", colour_suffix(q)));
            }
        }
    }
    v
}

/// Where an element-wise op writes: the kernel's y or z slot.
pub(crate) enum Out<'a> {
    Y(&'a mut CudaSpinor),
    Z(&'a mut CudaSpinor),
}

impl Blas<'_> {
    fn check_precision(what: &str, fields: &[&CudaSpinor]) -> Result<()> {
        if fields
            .windows(2)
            .any(|w| w[0].precision() != w[1].precision())
        {
            return Err(Error::Internal(format!(
                "{what}: fields of different precisions"
            )));
        }
        Ok(())
    }

    /// An element-wise op: `x`, `y` read, `out` updated (coefficients
    /// `[a_re, a_im, b_re, b_im]`).
    pub(crate) fn map(
        &self,
        op: &str,
        x: Option<&CudaSpinor>,
        y: Option<&CudaSpinor>,
        out: Out<'_>,
        c: [f64; 4],
    ) -> Result<()> {
        let (w, in_z) = match out {
            Out::Y(w) => (w, false),
            Out::Z(w) => (w, true),
        };
        let reads: Vec<&CudaSpinor> = x.iter().chain(y.iter()).copied().collect();
        for r in &reads {
            check_same(op, r, w)?;
        }
        let mut all = reads.clone();
        all.push(w);
        Self::check_precision(op, &all)?;
        let s = &self.stream;
        let p = |f: Option<&CudaSpinor>| f.map(|f| f.data.ptr(s)).unwrap_or(0);
        let wp = w.data.ptr(s);
        let params = BlasParams {
            x: p(x),
            y: if in_z { p(y) } else { wp },
            z: if in_z { wp } else { 0 },
            partials: 0,
            a_re: c[0],
            a_im: c[1],
            b_re: c[2],
            b_im: c[3],
            n: vectors(w) as i64,
            stride: w.stride as i64,
            ..Default::default()
        };
        let name = format!("blas_{op}_{}", format_of(w));
        self.launch_tuned(&name, vectors(w), 256, &params, Some(&*w.data))
    }

    /// A reduction over `x` (and `y`, read or updated in place); returns up
    /// to `RED_MAX` numbers.
    pub(crate) fn reduce(
        &self,
        op: &str,
        x: &CudaSpinor,
        y: Option<&CudaSpinor>,
        w: ReduceOut<'_>,
        c: [f64; 4],
    ) -> Result<[f64; RED_MAX]> {
        let nred = REDUCTIONS
            .iter()
            .find(|r| r.0 == op)
            .map(|r| r.1)
            .ok_or_else(|| Error::Internal(format!("no reduction {op}")))?;
        let s = &self.stream;
        let yp = match (&w, y) {
            (ReduceOut::Write(w), _) => {
                check_same(op, x, w)?;
                Self::check_precision(op, &[x, w])?;
                w.data.ptr(s)
            }
            (ReduceOut::Read, Some(y)) => {
                check_same(op, x, y)?;
                Self::check_precision(op, &[x, y])?;
                y.data.ptr(s)
            }
            (ReduceOut::Read, None) => 0,
        };
        let n = vectors(x);
        let params = BlasParams {
            x: x.data.ptr(s),
            y: yp,
            a_re: c[0],
            a_im: c[1],
            b_re: c[2],
            b_im: c[3],
            n: n as i64,
            stride: x.stride as i64,
            ..Default::default()
        };
        self.run_global_reduction(op, nred, format_of(x), params)
    }

    /// `x† y_j` for up to four `y_j` in one pass over `x` (the rows of
    /// `Backend::block_cdot`); Wilson spinor fields.
    pub(crate) fn cdot4_impl(&self, x: &CudaSpinor, ys: &[&CudaSpinor]) -> Result<Vec<C64>> {
        let (Some(&first), true) = (ys.first(), ys.len() <= 4) else {
            return Err(Error::Internal(format!("cdot4: {} fields", ys.len())));
        };
        for y in ys {
            check_same("cdot4", x, y)?;
        }
        let mut all = vec![x];
        all.extend_from_slice(ys);
        Self::check_precision("cdot4", &all)?;
        let s = &self.stream;
        let at = |j: usize| ys.get(j).copied().unwrap_or(first).data.ptr(s);
        let params = BlasParams {
            x: x.data.ptr(s),
            y: at(0),
            z: at(1),
            w: at(2),
            v: at(3),
            n: vectors(x) as i64,
            stride: x.stride as i64,
            ..Default::default()
        };
        let r = self.run_global_reduction("cdot4", 8, format_of(x), params)?;
        Ok((0..ys.len())
            .map(|j| C64::new(r[2 * j], r[2 * j + 1]))
            .collect())
    }

    /// BiCGstab's fused closing update (`Backend::bicgstab_update`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn bicgstab_update_impl(
        &self,
        alpha: C64,
        p: &CudaSpinor,
        omega: C64,
        s: &mut CudaSpinor,
        x: &mut CudaSpinor,
        t: &CudaSpinor,
        r_hat: &CudaSpinor,
    ) -> Result<(C64, f64)> {
        for f in [p, &*x, t, r_hat] {
            check_same("bicgstab_update", f, s)?;
        }
        // x̂ in single beside half, quarter or 20-bit fields: the widened kernel.
        let wide =
            x.precision() == Precision::Single && WIDE_FORMATS.contains(&suffix(s.precision()));
        let (op, one_precision): (_, &[&CudaSpinor]) = if wide {
            ("bicgstab_update_wide", &[p, s, t, r_hat])
        } else {
            ("bicgstab_update", &[p, s, x, t, r_hat])
        };
        Self::check_precision(op, one_precision)?;
        let st = &self.stream;
        let params = BlasParams {
            x: p.data.ptr(st),
            y: s.data.ptr(st),
            z: x.data.ptr(st),
            w: t.data.ptr(st),
            v: r_hat.data.ptr(st),
            a_re: alpha.re,
            a_im: alpha.im,
            b_re: omega.re,
            b_im: omega.im,
            n: vectors(s) as i64,
            stride: s.stride as i64,
            ..Default::default()
        };
        let r = self.run_global_reduction(op, 3, format_of(s), params)?;
        Ok((C64::new(r[0], r[1]), r[2]))
    }

    /// Runs reduction `op` (`nred` numbers) on `params` (whose scratch
    /// pointers this fills in) and waits for its result.
    pub(crate) fn run_reduction(
        &self,
        op: &str,
        nred: usize,
        format: &str,
        mut params: BlasParams,
    ) -> Result<[f64; RED_MAX]> {
        let s = &self.stream;
        let grid = reduction_grid(params.n as usize);
        // One reduction at a time owns the scratch memory.
        let scratch = self
            .scratch
            .lock()
            .map_err(|_| Error::Internal("reduction scratch poisoned".into()))?;
        params.partials = cudarc::driver::DevicePtr::device_ptr(&scratch.partials, s).0;
        params.counter = cudarc::driver::DevicePtr::device_ptr(&scratch.counter, s).0;
        params.out = scratch.result_device;
        let kernel = self.kernel(&format!("blas_{op}_{format}"))?;
        launch::launch(s, &kernel, grid, RED_BLOCK, &params)?;
        s.synchronize().map_err(device_err("reduction result"))?;
        let host = scratch
            .result
            .as_ptr()
            .map_err(device_err("reduction result"))?;
        let mut out = [0.0f64; RED_MAX];
        for (k, o) in out.iter_mut().enumerate().take(nred) {
            // SAFETY: `result` holds RED_MAX doubles of pinned host memory;
            // the kernel that wrote them has finished (stream synchronised).
            // Volatile: the device wrote them behind the compiler's back.
            *o = unsafe { std::ptr::read_volatile(host.add(k)) };
        }
        Ok(out)
    }

    /// `run_reduction`, its sums over all ranks where there are several.
    fn run_global_reduction(
        &self,
        op: &str,
        nred: usize,
        format: &str,
        params: BlasParams,
    ) -> Result<[f64; RED_MAX]> {
        let local = self.run_reduction(op, nred, format, params);
        let Some(r) = self.ranks else {
            return local;
        };
        let (mut out, local) = match local {
            Ok(v) => (v, Ok(())),
            Err(e) => ([0.0; RED_MAX], Err(e)),
        };
        self.failure.sum(r, &mut out[..nred], local)?;
        Ok(out)
    }

    /// Ranks the lattice is cut over (1: one process).
    fn ranks(&self) -> usize {
        self.ranks.map_or(1, |r| r.comm.size())
    }

    /// `y += Σ_j a_j x_j` (`Backend::axpy_many`), `MANY_MAX` fields per
    /// launch, in order.
    pub(crate) fn axpy_many_impl(
        &self,
        a: &[f64],
        x: &[&CudaSpinor],
        y: &mut CudaSpinor,
    ) -> Result<()> {
        crate::backend::check_many_precisions("axpy_many", a.len(), x, y)?;
        for f in x {
            check_same("axpy_many", f, y)?;
        }
        let Some(first) = x.first() else {
            return Ok(());
        };
        let name = match y.fermion() {
            Fermion::Wilson => format!(
                "blas_axpy_many_{}_{}",
                suffix(y.precision()),
                suffix(first.precision())
            ),
            Fermion::Staggered => format!(
                "blas_axpy_many_{}_{}",
                colour_suffix(y.precision()),
                colour_suffix(first.precision())
            ),
        };
        let s = &self.stream;
        let sites = y.blocks() * y.stride;
        for (a, x) in a.chunks(MANY_MAX).zip(x.chunks(MANY_MAX)) {
            let mut params = ManyParams {
                y: y.data.ptr(s),
                stride: y.stride as i64,
                sites: sites as i64,
                nx: x.len() as i32,
                ..Default::default()
            };
            for (j, (&a, x)) in a.iter().zip(x).enumerate() {
                params.a[j] = a;
                params.x[j] = x.data.ptr(s);
            }
            self.launch_tuned(&name, sites, 256, &params, Some(&*y.data))?;
        }
        Ok(())
    }

    /// `dst = src`, converting precision.
    pub(crate) fn copy_impl(&self, dst: &mut CudaSpinor, src: &CudaSpinor) -> Result<()> {
        let s = &self.stream;
        let what = "device-to-device copy";
        match (&mut *dst.data, &*src.data) {
            (DeviceData::F64(d), DeviceData::F64(x)) => {
                s.memcpy_dtod(x, d).map_err(device_err(what))
            }
            (DeviceData::F32(d), DeviceData::F32(x)) => {
                s.memcpy_dtod(x, d).map_err(device_err(what))
            }
            (DeviceData::I16(d), DeviceData::I16(x)) => {
                s.memcpy_dtod(x, d).map_err(device_err(what))
            }
            (DeviceData::I8(d), DeviceData::I8(x)) => s.memcpy_dtod(x, d).map_err(device_err(what)),
            (DeviceData::P20(d), DeviceData::P20(x)) | (DeviceData::P30(d), DeviceData::P30(x)) => {
                s.memcpy_dtod(x, d).map_err(device_err(what))
            }
            (DeviceData::F32(_), DeviceData::F64(_)) if src.fermion() == Fermion::Staggered => {
                self.convert_staggered("staggered_convert_f64_to_f32", dst, src)
            }
            (DeviceData::F64(_), DeviceData::F32(_)) if src.fermion() == Fermion::Staggered => {
                self.convert_staggered("staggered_convert_f32_to_f64", dst, src)
            }
            // To or from half and quarter colour vectors: one thread per site.
            _ if src.fermion() == Fermion::Staggered => {
                let name = format!(
                    "convert_{}_to_{}",
                    colour_suffix(src.precision()),
                    colour_suffix(dst.precision())
                );
                self.site_op(&name, dst, src, 1)
            }
            (DeviceData::F32(_), DeviceData::F64(_)) => {
                self.site_op("convert_f64_to_f32", dst, src, 6)
            }
            (DeviceData::F64(_), DeviceData::F32(_)) => {
                self.site_op("convert_f32_to_f64", dst, src, 6)
            }
            // Any conversion to or from fixed point or packed: one thread per site.
            _ => {
                let name = format!(
                    "convert_{}_to_{}",
                    suffix(src.precision()),
                    suffix(dst.precision())
                );
                self.site_op(&name, dst, src, 1)
            }
        }
    }

    pub(crate) fn gamma5_impl(&self, out: &mut CudaSpinor, inp: &CudaSpinor) -> Result<()> {
        Self::check_precision("gamma5", &[out, inp])?;
        let name = format!("gamma5_{}", suffix(out.precision()));
        let threads_per_site = match out.precision() {
            p if per_site(p) => 1,
            p => 24 / spinor_vec(p),
        };
        self.site_op(&name, out, inp, threads_per_site)
    }

    /// A kernel of one thread per `vecs_per_site` vectors of each site.
    fn site_op(
        &self,
        name: &str,
        dst: &mut CudaSpinor,
        src: &CudaSpinor,
        vecs_per_site: usize,
    ) -> Result<()> {
        let stride = dst.stride;
        let params = SiteParams {
            dst: dst.data.ptr(&self.stream),
            src: src.data.ptr(&self.stream),
            stride: stride as i32,
            blocks: dst.blocks() as i32,
        };
        let threads = vecs_per_site * stride * dst.blocks();
        debug_assert!(matches!(dst.subset, Subset::Full | Subset::Single(_)));
        // dst is written only: re-running it while tuning is harmless.
        self.launch_tuned(name, threads, 256, &params, None)
    }

    /// `dst = src` between double and single colour-vector fields.
    pub(crate) fn convert_staggered(
        &self,
        kernel: &str,
        dst: &mut CudaSpinor,
        src: &CudaSpinor,
    ) -> Result<()> {
        let n = src.blocks() * src.block_len();
        let params = ConvertParams {
            dst: dst.data.ptr(&self.stream),
            src: src.data.ptr(&self.stream),
            n: n as i64,
        };
        self.launch_tuned(kernel, n, 256, &params, None)
    }

    /// The heavy-quark residual through the host (one download of each
    /// field, once a solve): mean over sites of `|r|²/|x|²`.
    /// MILC's heavy-quark residual squared, `mean_x |r(x)|²/|x(x)|²`,
    /// reduced on the device (double and single fields; the sloppy formats
    /// through a double copy).
    pub(crate) fn heavy_quark_residual2_impl(&self, x: &CudaSpinor, r: &CudaSpinor) -> Result<f64> {
        check_same("heavy_quark_residual2", x, r)?;
        let wide = |f: &CudaSpinor| -> Result<Option<CudaSpinor>> {
            if matches!(f.precision(), Precision::Double | Precision::Single) {
                return Ok(None);
            }
            let mut d = alloc_spinor(self.dev, &f.lattice, f.subset, Precision::Double, f.fermion)?;
            self.copy_impl(&mut d, f)?;
            Ok(Some(d))
        };
        let (wx, wr) = (wide(x)?, wide(r)?);
        let (x, r) = (wx.as_ref().unwrap_or(x), wr.as_ref().unwrap_or(r));
        if x.precision() != r.precision() {
            return Err(Error::Internal(
                "heavy_quark_residual2: fields of different precisions".into(),
            ));
        }
        let s = &self.stream;
        let blocks = x.lattice.sites(x.subset) / x.lattice.half_volume();
        let params = BlasParams {
            x: x.data.ptr(s),
            y: r.data.ptr(s),
            n: (blocks * x.stride) as i64,
            stride: x.stride as i64,
            ..Default::default()
        };
        // Colour vectors (staggered_blas.cuh) or Wilson spinors (blas.cuh).
        let format = match x.fermion {
            crate::field::Fermion::Staggered => colour_suffix(x.precision()),
            _ => suffix(x.precision()),
        };
        let [sum, ..] = self.run_global_reduction("heavy_quark", 1, format, params)?;
        Ok(sum / (x.lattice.sites(x.subset) * self.ranks()) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_structs_match_the_kernels() {
        // staggered_dslash.cuh static_asserts the conversions' size.
        assert_eq!(std::mem::size_of::<ConvertParams>(), 24);
        // static_asserts in blas.cuh state the same sizes.
        assert_eq!(std::mem::size_of::<BlasParams>(), 112);
        assert_eq!(std::mem::size_of::<ManyParams>(), 160);
        assert_eq!(std::mem::offset_of!(ManyParams, a), 72);
        assert_eq!(std::mem::offset_of!(ManyParams, nx), 152);
        assert_eq!(std::mem::size_of::<SiteParams>(), 24);
        assert_eq!(std::mem::offset_of!(BlasParams, a_re), 32);
        assert_eq!(std::mem::offset_of!(BlasParams, n), 64);
        assert_eq!(std::mem::offset_of!(BlasParams, stride), 72);
    }

    #[test]
    fn reduction_geometry_depends_on_the_length_only() {
        assert_eq!(reduction_grid(1), 1);
        assert_eq!(reduction_grid(256), 1);
        assert_eq!(reduction_grid(257), 2);
        assert_eq!(reduction_grid(1 << 30), RED_GRID_MAX as u32);
        assert!(RED_GRID_MAX * RED_BLOCK as usize >= 1024 * 256);
    }

    #[test]
    fn packed_fields_are_walked_a_site_at_a_time() {
        assert_eq!(suffix(Precision::Packed20), "p20");
        assert_eq!(suffix(Precision::Packed30), "p30");
        for p in [Precision::Packed20, Precision::Packed30] {
            assert!(crate::backend::cuda::fields::per_site(p));
        }
        // The solver widens x̂ to single exactly for the formats coarser
        // than single (bicgstab_reliable.rs): those need the wide kernel.
        for p in [
            Precision::Half,
            Precision::Quarter,
            Precision::Packed20,
            Precision::Packed30,
        ] {
            let widened = p.partial_solution() != p;
            assert_eq!(WIDE_FORMATS.contains(&suffix(p)), widened, "{p:?}");
        }
    }
}
