//! Host side of the staggered operator on the device
//! (`kernels/staggered_dslash.cuh`): the links (fat or thin, and long,
//! 18 reals each, stored as reconstruct-18 gauge links without a boundary
//! sign: the caller's signs are in them), the hopping term
//! `out[p] = a · D_{p,p̄} in[p̄] + b · x[p]` of `Backend::staggered_dslash`,
//! the double ↔ single conversions of colour-vector fields and the
//! heavy-quark residual. Double and single so far; long links in 18, 13 or
//! 9 reals.

use std::sync::Arc;

use cudarc::driver::DeviceRepr;

use super::dslash::block_of;
use super::{same_lattice, CudaBackend, CudaGauge, CudaSpinor};
use crate::backend::{Backend, SpinorField, StaggeredStorage};
use crate::error::{Error, Result};
use crate::field::{Fermion, GaugeField, HostSpinor};
use crate::lattice::{Lattice, Parity};
use crate::long_links::LongReconstruct;
use crate::precision::{Precision, Reconstruct, TBoundary};

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
    pub dims: [i32; 4],
    pub parity: i32,
    pub vh: i32,
    pub stride: i32,
    pub gauge_stride: i32,
}
// SAFETY: plain old data with the C layout of `StaggeredParams`.
unsafe impl DeviceRepr for StaggeredParams {}

/// Kernel arguments (`struct ConvertParams` in staggered_dslash.cuh).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct ConvertParams {
    dst: u64,
    src: u64,
    n: i64,
}
// SAFETY: plain old data with the C layout of `ConvertParams`.
unsafe impl DeviceRepr for ConvertParams {}

/// The kernels of `kernels/staggered_dslash.cu`.
pub fn kernel_names() -> Vec<String> {
    [
        "staggered_dslash_f64",
        "staggered_dslash_f64_l13",
        "staggered_dslash_f64_l9",
        "staggered_dslash_f32",
        "staggered_dslash_f32_l13",
        "staggered_dslash_f32_l9",
        "staggered_convert_f64_to_f32",
        "staggered_convert_f32_to_f64",
    ]
    .map(String::from)
    .to_vec()
}

/// Long links on the device: 18 reals (the layout of gauge links), or
/// compressed to 13 or 9 (`long_links`), one real per load.
enum DeviceLong {
    Full(CudaGauge),
    Compressed {
        links: super::DeviceData,
        reconstruct: LongReconstruct,
        /// `|s|`, by which the rebuilt U(3) matrix is multiplied.
        scale: f64,
    },
}

/// The links of a staggered operator in device memory.
pub struct CudaStaggeredLinks {
    lattice: Arc<Lattice>,
    precision: Precision,
    fat: CudaGauge,
    long: Option<DeviceLong>,
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

impl CudaBackend {
    pub(crate) fn upload_staggered_impl(
        &self,
        fat: &GaugeField,
        long: Option<&GaugeField>,
        precision: Precision,
        long_reconstruct: LongReconstruct,
    ) -> Result<CudaStaggeredLinks> {
        if !matches!(precision, Precision::Double | Precision::Single) {
            return Err(Error::Unsupported(format!(
                "staggered links in {precision:?} on the CUDA backend (double and single so far)"
            )));
        }
        // Periodic: the caller's boundary signs are in the links.
        let store = |g: &GaugeField| {
            self.upload_gauge(g, TBoundary::Periodic, precision, Reconstruct::Full18)
        };
        let fat_links = store(fat)?;
        let long = match (long, long_reconstruct) {
            (None, _) => None,
            (Some(l), LongReconstruct::Full18) => Some(DeviceLong::Full(store(l)?)),
            (Some(l), r) => Some(self.upload_compressed_long(l, precision, r, fat_links.stride)?),
        };
        Ok(CudaStaggeredLinks {
            lattice: fat.lattice().clone(),
            precision,
            fat: fat_links,
            long,
        })
    }

    /// Long links in 13 or 9 reals, one real per element, blocks
    /// `[parity][mu]` of `stride` sites (the fat links' stride).
    fn upload_compressed_long(
        &self,
        long: &GaugeField,
        precision: Precision,
        r: LongReconstruct,
        stride: usize,
    ) -> Result<DeviceLong> {
        let lat = long.lattice();
        let vh = lat.half_volume();
        let reals = r.reals();
        let scale = crate::long_links::scale_of(long.links());
        let what = format!("staging the long links of a {:?} lattice", lat.dims());
        let mut canonical = crate::alloc::filled(8 * vh * reals, 0.0f64, &what)?;
        let mut buf = [0.0; 18];
        for p in [Parity::Even, Parity::Odd] {
            for cb in 0..vh {
                for mu in 0..4 {
                    let at = ((p.index() * 4 + mu) * vh + cb) * reals;
                    crate::long_links::compress(long.link(p, cb, mu), r, scale, &mut buf);
                    canonical[at..at + reals].copy_from_slice(&buf[..reals]);
                }
            }
        }
        let shape = super::layout::SoaShape::link(reals, 1, vh, stride);
        let mut links = self.alloc_links(precision, 8 * shape.block_len())?;
        self.upload_soa(&mut links, shape, &canonical, 1.0)?;
        Ok(DeviceLong::Compressed {
            links,
            reconstruct: r,
            scale,
        })
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
        let lat = &links.lattice;
        let prec = links.precision;
        for f in [Some(&*out), Some(inp), x.map(|x| x.1)]
            .into_iter()
            .flatten()
        {
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
        let params = StaggeredParams {
            out: at(out, parity, "the output")?,
            inp: at(inp, parity.other(), "the input")?,
            x: match x {
                Some((_, x)) => at(x, parity, "the xpay field")?,
                None => 0,
            },
            fat: links.fat.links.ptr(s),
            lng: match &links.long {
                None => 0,
                Some(DeviceLong::Full(g)) => g.links.ptr(s),
                Some(DeviceLong::Compressed { links, .. }) => links.ptr(s),
            },
            a,
            b: x.map_or(0.0, |x| x.0),
            long_scale: match &links.long {
                Some(DeviceLong::Compressed { scale, .. }) => *scale,
                _ => 1.0,
            },
            dims: d.map(|v| v as i32),
            parity: parity.index() as i32,
            vh: vh as i32,
            stride: out.stride as i32,
            gauge_stride: links.fat.stride as i32,
        };
        let base = match prec {
            Precision::Double => "staggered_dslash_f64",
            _ => "staggered_dslash_f32",
        };
        let name = match &links.long {
            Some(DeviceLong::Compressed { reconstruct, .. }) => {
                format!("{base}_l{}", reconstruct.reals())
            }
            _ => base.to_string(),
        };
        // The output is written only: timing runs while tuning are harmless.
        self.launch_tuned(&name, vh, 128, &params, None)
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
    pub(crate) fn heavy_quark_residual2_impl(&self, x: &CudaSpinor, r: &CudaSpinor) -> Result<f64> {
        let down = |f: &CudaSpinor| -> Result<HostSpinor> {
            let mut d = if f.precision() == Precision::Double {
                None
            } else {
                let mut d = self.alloc_field(&f.lattice, f.subset, Precision::Double, f.fermion)?;
                self.copy_impl(&mut d, f)?;
                Some(d)
            };
            let src = d.as_mut().map_or(f, |d| &*d);
            let mut h = HostSpinor::try_zeros_of(f.lattice.clone(), f.subset, f.fermion)?;
            self.download_spinor(src, &mut h)?;
            Ok(h)
        };
        let (hx, hr) = (down(x)?, down(r)?);
        let sites = hx.sites();
        let sum: f64 = (0..sites)
            .map(|i| {
                let xx: f64 = hx.site(i).iter().map(|z| z.norm_sqr()).sum();
                let rr: f64 = hr.site(i).iter().map(|z| z.norm_sqr()).sum();
                if xx > 0.0 {
                    rr / xx
                } else {
                    0.0
                }
            })
            .sum();
        Ok(sum / sites as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_structs_match_the_kernels() {
        // staggered_dslash.cuh static_asserts the same sizes.
        assert_eq!(std::mem::size_of::<StaggeredParams>(), 96);
        assert_eq!(std::mem::offset_of!(StaggeredParams, a), 40);
        assert_eq!(std::mem::offset_of!(StaggeredParams, dims), 64);
        assert_eq!(std::mem::offset_of!(StaggeredParams, gauge_stride), 92);
        assert_eq!(std::mem::size_of::<ConvertParams>(), 24);
    }

    #[test]
    fn kernel_names_exist_in_the_source() {
        let text = include_str!("../../../kernels/staggered_dslash.cu");
        for n in kernel_names() {
            let declared = text.contains(&format!("void {n}("))
                || text.contains(&format!("LATSOL_STAGGERED({n},"));
            assert!(declared, "{n}");
        }
    }
}
