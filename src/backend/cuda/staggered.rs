//! Host side of the staggered operator on the device
//! (`kernels/staggered_dslash.cuh`): the links (fat or thin, and long, 18
//! reals each in wide vectors, or long links compressed to 13 or 9; no
//! boundary sign: the caller's signs are in them), the hopping term
//! `out[p] = a · D_{p,p̄} in[p̄] + b · x[p]` of `Backend::staggered_dslash`.
//! Double, single, half and quarter; long links in 18, 13 or 9 reals. Three
//! modules, compiled on first use: `staggered_dslash` (double and single),
//! `staggered_f16`, `staggered_f8`; their colour-vector algebra, the
//! conversions and the heavy-quark residual (`kernels/staggered_blas.cuh`)
//! are the vector algebra's (`blas.rs`, `colour_kernel_names`).

use std::sync::Arc;

use cudarc::driver::DeviceRepr;

use super::driver::device::Device;
use super::driver::launch;
use super::driver::memory::DeviceData;
use super::fields::{check_lattice, same_lattice, suffix, CudaSpinor};
use super::halo::{Block, DeferredFailure, GaugeHalo, HaloView, LinkFaces, LinkPart, SiteRows};
use super::hopping_params::{block_of, division_magic, MAX_RHS, RHS_BLOCK};
use super::layout;
use crate::backend::{SpinorField, StaggeredStorage};
use crate::comm::Ranks;
use crate::error::{Error, Result};
use crate::field::{Fermion, GaugeField};
use crate::lattice::{Lattice, Parity};
use crate::long_links::LongReconstruct;
use crate::precision::Precision;
use rayon::prelude::*;

/// Kernel arguments (`struct StaggeredParams` in staggered_dslash.cuh).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct StaggeredParams {
    pub out: u64,
    pub inp: u64,
    pub x: u64,
    pub fat: u64,
    pub lng: u64,
    pub a: f64,
    pub b: f64,
    pub long_scale: f64,
    pub fat_fixed: f64,
    pub long_fixed: f64,
    pub dims: [i32; 4],
    pub parity: i32,
    pub vh: i32,
    pub stride: i32,
    pub gauge_stride: i32,
    /// On a cut lattice, bit mu where mu is cut: the launch computes the
    /// interior sites only; 0: every site.
    pub interior_cut: i32,
    /// The longest hop (1, or 3 with long links).
    pub depth: i32,
    /// n / dims[mu] by multiplication (`division_magic`), mu < 3.
    pub div_magic: [u32; 3],
    pub div_shift: [u32; 3],
}
// SAFETY: plain old data with the C layout of `StaggeredParams`.
unsafe impl DeviceRepr for StaggeredParams {}

/// The edges' launch (`struct StaggeredEdgeParams` in staggered_dslash.cuh).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct StaggeredEdgeParams {
    d: StaggeredParams,
    h: HaloView,
}
// SAFETY: plain old data with the C layout of `StaggeredEdgeParams`.
unsafe impl DeviceRepr for StaggeredEdgeParams {}

/// The several-field launch (`struct StaggeredRhsParams` in
/// staggered_dslash.cuh): the one-field arguments and each field's output,
/// input and xpay blocks.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct StaggeredRhsParams {
    d: StaggeredParams,
    out: [u64; MAX_RHS],
    inp: [u64; MAX_RHS],
    x: [u64; MAX_RHS],
    count: i32,
    pad: i32,
}
// SAFETY: plain old data with the C layout of `StaggeredRhsParams`.
unsafe impl DeviceRepr for StaggeredRhsParams {}

/// The hopping terms of a staggered module: `Double` names
/// `kernels/staggered_dslash.cu` (double and single), the others
/// `kernels/staggered_<f16, f8, p20, p30>.cu` (`module_name`), each with
/// long links of 18, 13 or 9 reals (the module's other kernels:
/// `blas::colour_kernel_names`).
pub fn kernel_names(module: Precision) -> Vec<String> {
    let formats = match module {
        Precision::Double => vec![Precision::Double, Precision::Single],
        p => vec![p],
    };
    let mut v = Vec::new();
    for p in formats {
        let f = suffix(p);
        v.push(format!("staggered_dslash_{f}"));
        v.push(format!("staggered_dslash_{f}_l13"));
        v.push(format!("staggered_dslash_{f}_l9"));
    }
    v
}

/// The module of the staggered kernels of format `p`.
pub(crate) fn module_name(p: Precision) -> &'static str {
    match p {
        Precision::Double | Precision::Single => "staggered_dslash",
        Precision::Half => "staggered_f16",
        Precision::Quarter => "staggered_f8",
        Precision::Packed20 => "staggered_p20",
        Precision::Packed30 => "staggered_p30",
    }
}

/// Bytes of one stored link real beside fields of format `p`: beside the
/// packed formats 16- and 32-bit fixed point (seed clark2022 §4).
pub(crate) fn link_real_bytes(p: Precision) -> usize {
    match p {
        Precision::Packed20 => 2,
        Precision::Packed30 => 4,
        p => p.bytes_per_real(),
    }
}

/// Reals a wide load of compressed long links takes (`LongVec` in
/// staggered_dslash.cuh): 16 bytes in double and single, 4 reals in half
/// and quarter.
pub(crate) fn long_vec(p: Precision) -> usize {
    match p {
        Precision::Double => 2,
        _ => 4,
    }
}

/// A stored real as fixed point `T` relative to `max`, by the CPU
/// backend's rule (`Fixed::from_scaled`).
fn fixed_point<T: crate::format::Fixed>(max: f64) -> impl Fn(f64) -> T + Sync {
    move |x| T::from_scaled(x / max * T::MAX)
}

/// Where real `k` of the compressed long link of site `cb` sits in its
/// `(parity, mu)` block (`load_long` in staggered_dslash.cuh): the first
/// `reals − 1` in vectors of `w`, vector j at `j stride + cb`, then the
/// phase alone at `(reals − 1) stride + cb`; in reals.
pub(crate) fn long_index(
    r: LongReconstruct,
    w: usize,
    stride: usize,
    cb: usize,
    k: usize,
) -> usize {
    let last = r.reals() - 1;
    if k == last {
        last * stride + cb
    } else {
        ((k / w) * stride + cb) * w + k % w
    }
}

/// The reals a link is stored in (18 as given, or compressed to 13 or 9
/// with `|s| = u3_scale`), into `buf`; returns how many.
fn stored_reals(
    u: &crate::su3::Su3,
    compressed: Option<LongReconstruct>,
    u3_scale: f64,
    buf: &mut [f64; 18],
) -> usize {
    match compressed {
        None => {
            u.to_row_major(buf);
            18
        }
        Some(r) => {
            crate::long_links::compress(u, r, u3_scale, buf);
            r.reals()
        }
    }
}

/// The link field at `ptr` (links of `reals` reals in `precision`, in the
/// layout of `fat_index` for 18, `long_index` for 13 and 9) as a halo
/// fetches its faces: 18 reals are 16 in vectors of `long_vec`, then the
/// last complex number alone; 13 or 9, all but the phase in vectors, then
/// the phase.
pub(crate) fn link_faces(
    ptr: u64,
    stride: usize,
    reals: usize,
    precision: Precision,
    depth: usize,
) -> LinkFaces {
    let (rb, w) = (link_real_bytes(precision), long_vec(precision));
    let (vectors, last) = if reals == 18 { (16, 2) } else { (reals - 1, 1) };
    LinkFaces {
        ptr,
        stride,
        reals,
        real_bytes: rb,
        parts: vec![
            LinkPart {
                start: 0,
                elem: w * rb,
                rows: vectors / w,
            },
            LinkPart {
                start: vectors,
                elem: last * rb,
                rows: 1,
            },
        ],
        depth,
    }
}

/// Where real `k` of the 18-real link of site `cb` sits in its `(parity,
/// mu)` block (`load_link` in staggered_dslash.cuh): reals 0..15 in
/// vectors of `w`, vector j at `j stride + cb`, then reals 16, 17 at
/// `16 stride + 2 cb`; in reals.
fn fat_index(w: usize, stride: usize, cb: usize, k: usize) -> usize {
    if k < 16 {
        ((k / w) * stride + cb) * w + k % w
    } else {
        16 * stride + 2 * cb + (k - 16)
    }
}

/// Long links on the device: 18 reals (the layout of gauge links), or
/// compressed to 13 or 9 (`long_links`), one real per load.
pub(crate) enum DeviceLong {
    Full(FixedLinks),
    Compressed {
        links: FixedLinks,
        reconstruct: LongReconstruct,
        /// `|s|`, by which the rebuilt U(3) matrix is multiplied.
        scale: f64,
    },
}

/// Links in device memory, any precision: in half and quarter (and the
/// 16- and 32-bit fixed point beside packed fields), `value = stored · fixed` (the largest stored magnitude over the
/// fixed-point maximum, as `cpu/links.rs` stores staggered links).
pub(crate) struct FixedLinks {
    data: DeviceData,
    pub(crate) fixed: f64,
}

impl FixedLinks {
    /// Links stored in `precision` relative to `max`, their largest
    /// stored magnitude: fixed point's unit is `max / MAX`.
    pub(crate) fn new(data: DeviceData, precision: Precision, max: f64) -> FixedLinks {
        let fixed = match precision {
            Precision::Half | Precision::Packed20 => max / <i16 as crate::format::Fixed>::MAX,
            Precision::Quarter => max / <i8 as crate::format::Fixed>::MAX,
            Precision::Packed30 => max / <i32 as crate::format::Fixed>::MAX,
            _ => 1.0,
        };
        FixedLinks { data, fixed }
    }

    /// The stored elements as they lie on the device.
    pub(crate) fn data(&self) -> &DeviceData {
        &self.data
    }
}

/// The links of a staggered operator in device memory.
pub struct CudaStaggeredLinks {
    pub(crate) lattice: Arc<Lattice>,
    pub(crate) precision: Precision,
    /// Sites between consecutive link elements (Vh plus padding).
    pub(crate) stride: usize,
    pub(crate) fat: FixedLinks,
    pub(crate) long: Option<DeviceLong>,
    /// On a cut lattice: the faces of its hopping terms (`halo`).
    pub(crate) halo: Option<Arc<GaugeHalo>>,
}

impl StaggeredStorage for CudaStaggeredLinks {
    fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    fn precision(&self) -> Precision {
        self.precision
    }
    fn improved(&self) -> bool {
        self.long.is_some()
    }
}

/// The staggered hopping terms' kernels on one device, and the storage of their links.
pub(crate) struct StaggeredKernels<'d> {
    pub(crate) dev: &'d Device,
    /// On many ranks: the stored forms are the whole lattice's, and on a
    /// cut lattice the hopping terms read the other ranks' faces.
    pub(crate) ranks: Option<&'d Ranks>,
    pub(crate) failure: &'d DeferredFailure,
}

impl std::ops::Deref for StaggeredKernels<'_> {
    type Target = Device;
    fn deref(&self) -> &Device {
        self.dev
    }
}

impl StaggeredKernels<'_> {
    pub(crate) fn upload_staggered_impl(
        &self,
        fat: &GaugeField,
        long: Option<&GaugeField>,
        precision: Precision,
        long_reconstruct: LongReconstruct,
    ) -> Result<CudaStaggeredLinks> {
        let lat = fat.lattice();
        let mut checked = check_lattice(lat);
        if let Some(r) = self.ranks {
            // A rank's part, deep enough for the Naik term's hops where
            // the lattice is cut (as the CPU backend checks it), agreed.
            checked = checked.and_then(|()| r.check_local(lat, "upload_staggered"));
            checked = checked.and_then(|()| match long {
                Some(_) => r.grid.with_local(lat.dims())?.check_naik_depth(),
                None => Ok(()),
            });
            r.agree(checked)?;
        } else {
            checked?;
        }
        let stride = layout::padded_stride(lat.half_volume());
        // No boundary sign: the caller's signs are in the links.
        let fat_links = self.upload_staggered_links(fat, precision, None, stride)?;
        let long = match (long, long_reconstruct) {
            (None, _) => None,
            (Some(l), LongReconstruct::Full18) => Some(DeviceLong::Full(
                self.upload_staggered_links(l, precision, None, stride)?,
            )),
            (Some(l), r) => Some(DeviceLong::Compressed {
                links: self.upload_staggered_links(l, precision, Some(r), stride)?,
                reconstruct: r,
                scale: self.u3_scale(l)?,
            }),
        };
        let halo = match self.ranks.filter(|r| r.partitioned()) {
            None => None,
            Some(r) => {
                let faces = |links: &FixedLinks, reals: usize, depth: usize| {
                    let ptr = links.data.ptr(&self.stream);
                    link_faces(ptr, stride, reals, precision, depth)
                };
                let mut fields = vec![faces(&fat_links, 18, 1)];
                match &long {
                    None => {}
                    Some(DeviceLong::Full(l)) => fields.push(faces(l, 18, 3)),
                    Some(DeviceLong::Compressed {
                        links, reconstruct, ..
                    }) => fields.push(faces(links, reconstruct.reals(), 3)),
                }
                let depth = if long.is_some() { 3 } else { 1 };
                Some(Arc::new(GaugeHalo::new(
                    self.dev, r, lat, &fields, depth, 1.0,
                )?))
            }
        };
        Ok(CudaStaggeredLinks {
            lattice: lat.clone(),
            precision,
            stride,
            fat: fat_links,
            long,
            halo,
        })
    }

    /// `|s|` of the long links' compression: the first link's of the whole
    /// lattice (the rank at the grid's origin holds it), as one device
    /// chooses it.
    fn u3_scale(&self, field: &GaugeField) -> Result<f64> {
        let mut u3 = [crate::long_links::scale_of(field.links())];
        if let Some(r) = self.ranks {
            if r.grid.coords() != [0; 4] {
                u3[0] = 0.0;
            }
            r.comm.max(&mut u3)?;
        }
        Ok(u3[0])
    }

    /// Links of 18 reals (`compressed` None: one complex number per
    /// vector, the layout of reconstruct-18 gauge links) or long links
    /// compressed to 13 or 9 reals (one real per element), blocks
    /// `[parity][mu]` of `stride` sites; fixed point relative to the
    /// largest stored magnitude, as the CPU backend stores them.
    fn upload_staggered_links(
        &self,
        field: &GaugeField,
        precision: Precision,
        compressed: Option<LongReconstruct>,
        stride: usize,
    ) -> Result<FixedLinks> {
        let u3_scale = self.u3_scale(field)?;
        // Fixed point relative to the largest stored magnitude: one
        // parallel pass over the links first.
        let max = field
            .links()
            .par_iter()
            .map(|u| {
                let mut buf = [0.0; 18];
                let n = stored_reals(u, compressed, u3_scale, &mut buf);
                buf[..n].iter().fold(0.0f64, |m, v| m.max(v.abs()))
            })
            .reduce(|| 0.0, f64::max);
        // On many ranks the whole lattice's largest, as one device scales.
        let mut max = [max];
        if let Some(r) = self.ranks {
            r.comm.max(&mut max)?;
        }
        let max = if max[0] > 0.0 { max[0] } else { 1.0 };
        let stored =
            self.store_staggered_links(field, precision, compressed, u3_scale, stride, max);
        // Agreed: no rank leaves while the others go on to the next sum.
        let data = match self.ranks {
            Some(r) => r.agree(stored)?,
            None => stored?,
        };
        Ok(FixedLinks::new(data, precision, max))
    }

    /// `upload_staggered_links`' local part: the links in the kernel's
    /// layout, fixed point relative to `max`, on the device.
    fn store_staggered_links(
        &self,
        field: &GaugeField,
        precision: Precision,
        compressed: Option<LongReconstruct>,
        u3_scale: f64,
        stride: usize,
        max: f64,
    ) -> Result<DeviceData> {
        let reals = compressed.map_or(18, LongReconstruct::reals);
        let stored =
            |u: &crate::su3::Su3, buf: &mut [f64; 18]| stored_reals(u, compressed, u3_scale, buf);
        let data = self.alloc_links(precision, 8 * reals * stride)?;
        // Placed in the kernel's layout (`fat_index`, `long_index`) and
        // converted in one parallel pass, then one transfer through the
        // pinned staging buffers.
        let w = long_vec(precision);
        let index = |cb: usize, k: usize| match compressed {
            None => fat_index(w, stride, cb, k),
            Some(r) => long_index(r, w, stride, cb, k),
        };
        let block_len = reals * stride;
        let at = data.ptr(&self.stream);
        match &data {
            DeviceData::F64(_) => {
                let v = layout::place_links(field, block_len, stored, index, |x| x)?;
                self.upload_bytes(at, bytemuck::cast_slice(&v))?
            }
            DeviceData::F32(_) => {
                let v = layout::place_links(field, block_len, stored, index, |x| x as f32)?;
                self.upload_bytes(at, bytemuck::cast_slice(&v))?
            }
            DeviceData::I16(_) => {
                let conv = fixed_point::<i16>(max);
                let v = layout::place_links(field, block_len, stored, index, conv)?;
                self.upload_bytes(at, bytemuck::cast_slice(&v))?
            }
            DeviceData::I8(_) => {
                let conv = fixed_point::<i8>(max);
                let v = layout::place_links(field, block_len, stored, index, conv)?;
                self.upload_bytes(at, bytemuck::cast_slice(&v))?
            }
            DeviceData::I32(_) => {
                let conv = fixed_point::<i32>(max);
                let v = layout::place_links(field, block_len, stored, index, conv)?;
                self.upload_bytes(at, bytemuck::cast_slice(&v))?
            }
            DeviceData::P20(_) | DeviceData::P30(_) => {
                return Err(Error::Internal(
                    "staggered links stored as packed colour vectors".into(),
                ))
            }
        }
        Ok(data)
    }

    /// The arguments and kernel name of `staggered_dslash` of these fields.
    fn staggered_params(
        &self,
        out: &CudaSpinor,
        parity: Parity,
        links: &CudaStaggeredLinks,
        inp: &CudaSpinor,
        a: f64,
        x: Option<(f64, &CudaSpinor)>,
    ) -> Result<(StaggeredParams, String)> {
        let lat = &links.lattice;
        let prec = links.precision;
        for f in [Some(out), Some(inp), x.map(|x| x.1)].into_iter().flatten() {
            if !same_lattice(&f.lattice, lat)
                || f.fermion != Fermion::Staggered
                || f.precision() != prec
                || f.stride != out.stride
            {
                return Err(Error::Internal(format!(
                    "staggered_dslash: a field of another lattice, kind or precision (links {prec:?}, \
                     field {:?} {:?})",
                    f.fermion,
                    f.precision()
                )));
            }
        }
        let s = &self.stream;
        let block = out.block_bytes() as u64;
        let at = |f: &CudaSpinor, p: Parity, what: &str| -> Result<u64> {
            Ok(f.data.ptr(s) + block_of(f.subset, p, what)? as u64 * block)
        };
        let d = lat.dims();
        let vh = lat.half_volume();
        let magic = [0, 1, 2].map(|mu| division_magic(d[mu] as u32));
        let params = StaggeredParams {
            out: at(out, parity, "the output")?,
            inp: at(inp, parity.other(), "the input")?,
            x: match x {
                Some((_, x)) => at(x, parity, "the xpay field")?,
                None => 0,
            },
            fat: links.fat.data.ptr(s),
            lng: match &links.long {
                None => 0,
                Some(DeviceLong::Full(l)) | Some(DeviceLong::Compressed { links: l, .. }) => {
                    l.data.ptr(s)
                }
            },
            a,
            b: x.map_or(0.0, |x| x.0),
            long_scale: match &links.long {
                Some(DeviceLong::Compressed { scale, .. }) => *scale,
                _ => 1.0,
            },
            fat_fixed: links.fat.fixed,
            long_fixed: match &links.long {
                None => 1.0,
                Some(DeviceLong::Full(l)) | Some(DeviceLong::Compressed { links: l, .. }) => {
                    l.fixed
                }
            },
            dims: d.map(|v| v as i32),
            parity: parity.index() as i32,
            vh: vh as i32,
            stride: out.stride as i32,
            gauge_stride: links.stride as i32,
            interior_cut: 0,
            depth: if links.long.is_some() { 3 } else { 1 },
            div_magic: magic.map(|(m, _)| m),
            div_shift: magic.map(|(_, s)| s),
        };
        let base = format!("staggered_dslash_{}", suffix(prec));
        let name = match &links.long {
            Some(DeviceLong::Compressed { reconstruct, .. }) => {
                format!("{base}_l{}", reconstruct.reals())
            }
            _ => base,
        };
        Ok((params, name))
    }

    /// `staggered_dslash_impl` for several fields on the same links, in
    /// launches of up to `MAX_RHS` (kernels/staggered_rhs.cu); on a cut
    /// lattice one field at a time.
    pub(crate) fn staggered_dslash_rhs_impl(
        &self,
        out: &mut [CudaSpinor],
        parity: Parity,
        links: &CudaStaggeredLinks,
        inp: &[&CudaSpinor],
        a: f64,
        x: Option<(f64, &[&CudaSpinor])>,
    ) -> Result<()> {
        let xk = |k: usize| x.map(|(b, x)| (b, x[k]));
        if links.halo.is_some() {
            for (k, (o, i)) in out.iter_mut().zip(inp).enumerate() {
                self.staggered_dslash_impl(o, parity, links, i, a, xk(k))?;
            }
            return Ok(());
        }
        let mut params = Vec::with_capacity(out.len());
        let mut name = String::new();
        for (k, (o, i)) in out.iter().zip(inp).enumerate() {
            let (p, n) = self.staggered_params(o, parity, links, i, a, xk(k))?;
            params.push(p);
            name = n;
        }
        let Some(first) = params.first() else {
            return Ok(());
        };
        let kernel = self.kernel(&format!("{name}_rhs"))?;
        let blocks = (first.vh as u32).div_ceil(RHS_BLOCK);
        for chunk in params.chunks(MAX_RHS) {
            let mut m = StaggeredRhsParams {
                d: StaggeredParams {
                    out: 0,
                    inp: 0,
                    x: 0,
                    ..*first
                },
                out: [0; MAX_RHS],
                inp: [0; MAX_RHS],
                x: [0; MAX_RHS],
                count: chunk.len() as i32,
                pad: 0,
            };
            for (k, p) in chunk.iter().enumerate() {
                (m.out[k], m.inp[k], m.x[k]) = (p.out, p.inp, p.x);
            }
            let grid = blocks * chunk.len() as u32;
            launch::launch(&self.stream, &kernel, grid, RHS_BLOCK, &m)?;
        }
        Ok(())
    }

    pub(crate) fn staggered_dslash_impl(
        &self,
        out: &mut CudaSpinor,
        parity: Parity,
        links: &CudaStaggeredLinks,
        inp: &CudaSpinor,
        a: f64,
        x: Option<(f64, &CudaSpinor)>,
    ) -> Result<()> {
        let (params, name) = self.staggered_params(out, parity, links, inp, a, x)?;
        let prec = links.precision;
        let vh = links.lattice.half_volume();
        // The output is written only: timing runs while tuning are harmless.
        let Some(halo) = &links.halo else {
            return self.launch_tuned(&name, vh, 128, &params, None);
        };
        // On a cut lattice: the interior beside the faces, then the edges.
        let inside = StaggeredParams {
            interior_cut: halo.cut_bits(),
            ..params
        };
        let input = Block {
            ptr: params.inp,
            stride: inp.stride,
            rows: SiteRows::of_field(prec, Fermion::Staggered),
        };
        let key = (prec, Fermion::Staggered);
        let interior = || self.launch_tuned(&name, vh, 128, &inside, None);
        let edges = |stream: &Arc<cudarc::driver::CudaStream>, view: &HaloView| {
            let kernel = self.kernel(&format!("{name}_edges"))?;
            let p = StaggeredEdgeParams {
                d: params,
                h: *view,
            };
            const BLOCK: u32 = 128;
            let grid = launch::grid_for(view.n_edges as usize, BLOCK)?;
            launch::launch(stream, &kernel, grid, BLOCK, &p)
        };
        halo.apply(self.dev, self.failure, parity, input, key, interior, edges)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_structs_match_the_kernels() {
        // staggered_dslash.cuh static_asserts the same sizes.
        assert_eq!(std::mem::size_of::<StaggeredParams>(), 144);
        assert_eq!(std::mem::offset_of!(StaggeredParams, interior_cut), 112);
        assert_eq!(std::mem::offset_of!(StaggeredParams, div_magic), 120);
        assert_eq!(std::mem::offset_of!(StaggeredParams, div_shift), 132);
        assert_eq!(std::mem::size_of::<StaggeredEdgeParams>(), 144 + 288);
        assert_eq!(std::mem::offset_of!(StaggeredParams, a), 40);
        assert_eq!(std::mem::offset_of!(StaggeredParams, long_fixed), 72);
        assert_eq!(std::mem::offset_of!(StaggeredParams, dims), 80);
        assert_eq!(std::mem::offset_of!(StaggeredParams, gauge_stride), 108);
        assert_eq!(
            std::mem::size_of::<StaggeredRhsParams>(),
            144 + 3 * 8 * MAX_RHS + 8
        );
        let text = include_str!("../../../kernels/staggered_dslash.cuh");
        assert!(text.contains(&format!("#define LATSOL_STAGGERED_MAX_RHS {MAX_RHS}\n")));
    }

    /// The parts a halo packs a link by (`link_faces`) put real k of each
    /// site where `fat_index` / `long_index` say, at the face's stride: the
    /// edges' kernel loads a face's link as the one-device kernel loads it.
    #[test]
    fn link_faces_keep_the_kernels_layout() {
        let (stride, face_stride) = (96, 32);
        let sites: Vec<usize> = (0..20).map(|k| (k * 37) % stride).collect();
        for p in [
            Precision::Double,
            Precision::Single,
            Precision::Half,
            Precision::Quarter,
        ] {
            let (rb, w) = (p.bytes_per_real(), long_vec(p));
            for r in [
                None,
                Some(LongReconstruct::Thirteen),
                Some(LongReconstruct::Nine),
            ] {
                let reals = r.map_or(18, LongReconstruct::reals);
                let at = |stride: usize, cb: usize, k: usize| match r {
                    None => fat_index(w, stride, cb, k),
                    Some(r) => long_index(r, w, stride, cb, k),
                };
                // Real k of site cb holds the bytes of (cb, k).
                let mut block = vec![0u8; reals * stride * rb];
                for cb in 0..stride {
                    for k in 0..reals {
                        let i = at(stride, cb, k) * rb;
                        block[i..i + rb].fill((cb * 19 + k) as u8);
                    }
                }
                let faces = link_faces(0, stride, reals, p, 1);
                let mut face = vec![0u8; reals * face_stride * rb];
                for part in &faces.parts {
                    for j in 0..part.rows {
                        for (slot, &cb) in sites.iter().enumerate() {
                            let from = part.start * stride * rb + (j * stride + cb) * part.elem;
                            let to = part.start * face_stride * rb
                                + (j * face_stride + slot) * part.elem;
                            face[to..to + part.elem]
                                .copy_from_slice(&block[from..from + part.elem]);
                        }
                    }
                }
                for (slot, &cb) in sites.iter().enumerate() {
                    for k in 0..reals {
                        let i = at(face_stride, slot, k) * rb;
                        assert!(
                            face[i..i + rb].iter().all(|&b| b == (cb * 19 + k) as u8),
                            "{p:?} {r:?} slot {slot} real {k}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn compressed_long_links_fill_their_blocks_once() {
        for r in [LongReconstruct::Thirteen, LongReconstruct::Nine] {
            for w in [2, 4] {
                let (vh, stride) = (40, 64);
                let mut seen = vec![0u8; r.reals() * stride];
                for cb in 0..vh {
                    for k in 0..r.reals() {
                        seen[long_index(r, w, stride, cb, k)] += 1;
                    }
                }
                assert!(seen.iter().all(|&c| c <= 1), "{r:?} {w}");
                assert_eq!(
                    seen.iter().map(|&c| c as usize).sum::<usize>(),
                    vh * r.reals()
                );
            }
        }
    }

    #[test]
    fn full_links_fill_their_blocks_once() {
        for w in [2, 4] {
            let (vh, stride) = (40, 64);
            let mut seen = vec![0u8; 18 * stride];
            for cb in 0..vh {
                for k in 0..18 {
                    seen[fat_index(w, stride, cb, k)] += 1;
                }
            }
            assert!(seen.iter().all(|&c| c <= 1), "{w}");
            assert_eq!(seen.iter().map(|&c| c as usize).sum::<usize>(), vh * 18);
        }
        // In double the layout of reconstruct-18 gauge links: complex k at
        // (k stride + cb) · 2.
        for k in 0..18 {
            assert_eq!(fat_index(2, 64, 5, k), ((k / 2) * 64 + 5) * 2 + k % 2);
        }
    }
}
