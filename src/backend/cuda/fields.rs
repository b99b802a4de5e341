//! The device fields every kernel family shares: spinors and colour vectors
//! (`CudaSpinor`) and Wilson links (`CudaGauge`) in device memory, the sizes
//! of their parity blocks in every format, the names of the formats in
//! kernel names, and the checks that two fields match. The layout itself is
//! `kernels/core.cuh`'s (host side: `layout.rs`).

use std::sync::Arc;

use super::driver::device::Device;
use super::driver::memory::DeviceData;
use super::driver::pool::Pooled;
use super::halo::GaugeHalo;
use super::layout::{self, SoaShape};
use crate::backend::{GaugeStorage, SpinorField};
use crate::error::{Error, Result};
use crate::field::{Fermion, SPINOR_REALS};
use crate::format::{packed, Fixed};
use crate::lattice::{Lattice, Subset};
use crate::precision::{Precision, Reconstruct};

/// A format's name in the kernels' names (`wilson_dslash_f16_r12`, `blas_p20`).
pub(crate) fn suffix(p: Precision) -> &'static str {
    match p {
        Precision::Double => "f64",
        Precision::Single => "f32",
        Precision::Half => "f16",
        Precision::Quarter => "f8",
        Precision::Packed20 => "p20",
        Precision::Packed30 => "p30",
    }
}

/// The colour-vector formats' names in kernels (`ColourSite<S>` of
/// kernels/staggered_blas.cuh).
pub(crate) fn colour_suffix(p: Precision) -> &'static str {
    match p {
        Precision::Double => "s64",
        Precision::Single => "s32",
        Precision::Half => "s16",
        Precision::Quarter => "s8",
        Precision::Packed20 => "sp20",
        Precision::Packed30 => "sp30",
    }
}

/// Stored elements of one parity block of colour vectors: 6 reals a site,
/// and (half, quarter) one f32 norm a site (half: beside its reals, one
/// 16-byte word a site; quarter: a row after the vectors); packed, a site's
/// 32-bit words (4 for 20-bit, 6 for 30-bit).
pub(crate) fn colour_block_len(p: Precision, stride: usize) -> usize {
    let reals = Fermion::Staggered.reals();
    match p {
        Precision::Half | Precision::Quarter => stride * (reals + 4 / p.bytes_per_real()),
        Precision::Packed20 | Precision::Packed30 => stride * packed::words(packed::bits(p), reals),
        _ => stride * reals,
    }
}

/// Reals per vector load of a spinor field (double2 / float4 / short4 / char4).
pub(crate) fn spinor_vec(p: Precision) -> usize {
    match p {
        Precision::Double => 2,
        _ => 4,
    }
}

/// Whether a site's numbers share a scale (a norm, or the packed formats'
/// exponent): such fields are handled a site at a time (one thread per
/// site in the BLAS) and reach the host through a conversion on the device.
pub(crate) fn per_site(p: Precision) -> bool {
    matches!(
        p,
        Precision::Half | Precision::Quarter | Precision::Packed20 | Precision::Packed30
    )
}

/// Stored elements of one spinor parity block of `stride` sites: 24 reals
/// per site, then (half, quarter) one f32 norm per site; packed: the site's
/// 32-bit words.
pub(crate) fn spinor_block_len(p: Precision, stride: usize) -> usize {
    match p {
        Precision::Half | Precision::Quarter => stride * (SPINOR_REALS + 4 / p.bytes_per_real()),
        Precision::Packed20 | Precision::Packed30 => {
            stride * packed::words(packed::bits(p), SPINOR_REALS)
        }
        _ => stride * SPINOR_REALS,
    }
}

/// Bytes of one stored element of a field in `p`: a real, or a packed
/// format's 32-bit word.
pub(crate) fn element_bytes(p: Precision) -> usize {
    match p {
        Precision::Packed20 | Precision::Packed30 => 4,
        p => p.bytes_per_real(),
    }
}

/// Bytes of one spinor parity block of `stride` sites.
pub(crate) fn spinor_block_bytes(p: Precision, stride: usize) -> usize {
    spinor_block_len(p, stride) * element_bytes(p)
}

/// A spinor field in device memory (layout: `kernels/core.cuh`).
#[derive(Debug)]
pub struct CudaSpinor {
    pub(crate) lattice: Arc<Lattice>,
    pub(crate) subset: Subset,
    /// Sites between consecutive components (Vh plus padding).
    pub(crate) stride: usize,
    /// Wilson spinors (every format) or staggered colour vectors (double,
    /// single, quarter: 3 double2 / float2 / char2 a site, quarter's norms
    /// after them; half one 16-byte word a site, its norm inside;
    /// `kernels/staggered_dslash.cuh`).
    pub(crate) fermion: Fermion,
    /// Back to the backend's pool when the field is dropped.
    pub(crate) data: Pooled,
}

impl SpinorField for CudaSpinor {
    fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    fn subset(&self) -> Subset {
        self.subset
    }
    fn precision(&self) -> Precision {
        self.data.precision()
    }
    fn fermion(&self) -> Fermion {
        self.fermion
    }
}

impl CudaSpinor {
    /// Number of parity blocks (1 or 2).
    pub(crate) fn blocks(&self) -> usize {
        match self.subset {
            Subset::Full => 2,
            Subset::Single(_) => 1,
        }
    }

    /// Stored elements of one parity block.
    pub(crate) fn block_len(&self) -> usize {
        match self.fermion {
            Fermion::Wilson => spinor_block_len(self.precision(), self.stride),
            Fermion::Staggered => colour_block_len(self.precision(), self.stride),
        }
    }

    /// Bytes of one parity block.
    pub(crate) fn block_bytes(&self) -> usize {
        self.block_len() * element_bytes(self.precision())
    }

    /// Where the structure-of-arrays layout puts a site's reals (double and
    /// single fields).
    pub(crate) fn soa_shape(&self) -> SoaShape {
        match self.fermion {
            Fermion::Wilson => SoaShape::spinor(
                spinor_vec(self.precision()),
                self.lattice.half_volume(),
                self.stride,
            ),
            Fermion::Staggered => SoaShape {
                reals: Fermion::Staggered.reals(),
                vec: 2,
                sites: self.lattice.half_volume(),
                stride: self.stride,
            },
        }
    }
}

/// A gauge field in device memory: the links as given (compressed to 12 or
/// 8 reals for reconstruct 12 or 8); the kernel applies the time boundary sign.
#[derive(Debug)]
pub struct CudaGauge {
    pub(crate) lattice: Arc<Lattice>,
    pub(crate) stride: usize,
    pub(crate) links: DeviceData,
    /// The precision asked for (the packed formats store fixed-point links).
    pub(crate) precision: Precision,
    pub(crate) reconstruct: Reconstruct,
    /// Fixed point: value = stored · scale.
    pub(crate) scale: f64,
    pub(crate) t_sign: f64,
    /// On a cut lattice: the faces of its hopping terms (`halo`).
    pub(crate) halo: Option<Arc<GaugeHalo>>,
}

impl GaugeStorage for CudaGauge {
    fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    fn precision(&self) -> Precision {
        self.precision
    }
    fn reconstruct(&self) -> Reconstruct {
        self.reconstruct
    }
}

/// Whether two fields live on the same lattice. By extents, not `==`:
/// `Lattice`'s `PartialEq` compares its neighbour tables, megabytes per call
/// on large lattices (it once cost more than the kernels themselves).
pub(crate) fn same_lattice(a: &Arc<Lattice>, b: &Arc<Lattice>) -> bool {
    Arc::ptr_eq(a, b) || a.dims() == b.dims()
}

/// Fields of one operation must live on one lattice and hold the same sites.
pub(crate) fn check_same(what: &str, a: &CudaSpinor, b: &CudaSpinor) -> Result<()> {
    if a.subset != b.subset
        || !same_lattice(&a.lattice, &b.lattice)
        || a.stride != b.stride
        || a.fermion != b.fermion
    {
        return Err(Error::Internal(format!(
            "{what}: fields of different subsets ({:?} vs {:?}) or lattices",
            a.subset, b.subset
        )));
    }
    Ok(())
}

/// The lattice must allow 32-bit site and element indices in kernels.
pub(crate) fn check_lattice(lattice: &Lattice) -> Result<()> {
    if lattice.volume().saturating_mul(SPINOR_REALS) >= i32::MAX as usize {
        return Err(Error::Unsupported(format!(
            "a lattice of {} sites is too large for one device's 32-bit indexing",
            lattice.volume()
        )));
    }
    Ok(())
}

/// A zeroed field of `precision` holding `fermion`s on `subset`: a freed
/// buffer of its shape from the device's pool, else a new allocation
/// (`Backend::alloc_field`).
pub(crate) fn alloc_spinor(
    dev: &Device,
    lattice: &Arc<Lattice>,
    subset: Subset,
    precision: Precision,
    fermion: Fermion,
) -> Result<CudaSpinor> {
    check_lattice(lattice)?;
    let stride = layout::padded_stride(lattice.half_volume());
    let blocks = lattice.sites(subset) / lattice.half_volume();
    let len = match fermion {
        Fermion::Wilson => spinor_block_len(precision, stride),
        Fermion::Staggered => colour_block_len(precision, stride),
    };
    let data = dev.pooled(precision, blocks * len)?;
    Ok(CudaSpinor {
        lattice: lattice.clone(),
        subset,
        stride,
        fermion,
        data,
    })
}

/// Links stored in `precision` with `max` their largest stored
/// magnitude: the fixed-point type's largest integer and the scale
/// (value = stored · scale); (1, 1) for floating point.
pub(crate) fn link_scale(precision: Precision, max: f64) -> (f64, f64) {
    let fixed_max = match precision {
        Precision::Half | Precision::Packed20 => <i16 as Fixed>::MAX,
        Precision::Quarter => <i8 as Fixed>::MAX,
        Precision::Packed30 => <i32 as Fixed>::MAX,
        _ => return (1.0, 1.0),
    };
    (fixed_max, max / fixed_max)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Packed blocks hold the CPU's words per site (16 for 20-bit, 23 for
    /// 30-bit), and every block starts 16-byte aligned for the uint4 loads
    /// of 20-bit sites (core.cuh).
    #[test]
    fn packed_blocks_hold_the_cpu_words_per_site() {
        let stride = layout::padded_stride(6 * 4 * 8 * 10 / 2);
        assert_eq!(spinor_block_len(Precision::Packed20, stride), 16 * stride);
        assert_eq!(spinor_block_len(Precision::Packed30, stride), 23 * stride);
        assert_eq!(spinor_block_bytes(Precision::Packed20, stride), 64 * stride);
        assert_eq!(spinor_block_bytes(Precision::Packed30, stride), 92 * stride);
        for p in [Precision::Packed20, Precision::Packed30] {
            assert!(per_site(p));
            assert_eq!(spinor_block_bytes(p, stride) % 16, 0);
        }
        // Half: int16 values then one f32 norm per site.
        assert_eq!(spinor_block_bytes(Precision::Half, stride), 52 * stride);
        assert!(!per_site(Precision::Single));
    }

    /// The rows of a site are the block sizes of `fields.rs`.
    #[test]
    fn site_rows_are_the_stored_bytes() {
        use super::super::halo::SiteRows;
        use crate::field::Fermion;
        let stride = 64;
        for p in [
            Precision::Double,
            Precision::Single,
            Precision::Half,
            Precision::Quarter,
            Precision::Packed20,
            Precision::Packed30,
        ] {
            let r = SiteRows::of_field(p, Fermion::Wilson);
            assert_eq!(r.face_bytes(stride), spinor_block_bytes(p, stride), "{p:?}");
        }
        for p in Precision::ALL {
            let r = SiteRows::of_field(p, Fermion::Staggered);
            let bytes = colour_block_len(p, stride) * element_bytes(p);
            assert_eq!(r.face_bytes(stride), bytes, "{p:?}");
        }
    }

    #[test]
    fn colour_vector_blocks() {
        // 6 reals a site; half: + one f32 norm (2 i16); quarter: 4 i8.
        assert_eq!(colour_block_len(Precision::Double, 32), 192);
        assert_eq!(colour_block_len(Precision::Half, 32), 256);
        assert_eq!(colour_block_len(Precision::Quarter, 32), 320);
        // Packed (clark2022 Listings 2, 3): 4 and 6 words a site, 16 and 24 bytes.
        assert_eq!(colour_block_len(Precision::Packed20, 32), 128);
        assert_eq!(colour_block_len(Precision::Packed30, 32), 192);
    }
}
