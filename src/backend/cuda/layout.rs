//! Host-side index maps between the canonical fields (`field.rs`: site-major,
//! even-odd sites) and the device's structure-of-arrays layout
//! (`kernels/core.cuh`, seed clark2010 §4.1), and the one-pass reorders that
//! upload and download use. Pure host code: unit-tested without a GPU.
//!
//! A field's reals are grouped into vectors of `vec` reals (spinor: 2 for
//! double2, 4 for float4; gauge links: 2 for double2 / float2). Within one
//! block of `sites` sites, vector `j` of site `cb` lies at
//! `(j · stride + cb) · vec`; a site's real `n` is in vector `n / vec` at
//! position `n % vec`. Spinor blocks are parity halves (even first); the
//! gauge field has one block per (parity, direction), `[parity][mu]`.
//!
//! The stride is padded (`padded_stride`): with `stride = Vh`, the ~100
//! arrays one thread of the hopping term reads start at the same address
//! modulo a large power of two on the usual lattices, so their concurrent
//! accesses collide in caches and DRAM (the "partition camping" of seed
//! clark2010 §4.4). The padding sites hold zeros and are never read as sites.

use rayon::prelude::*;

use crate::field::SPINOR_REALS;
use crate::precision::Precision;

/// Reals per stored link (reconstruct 18).
pub const LINK_REALS: usize = 18;

/// Sites per padding quantum: a row of double2 then starts on a 512-byte boundary.
const PAD_QUANTUM: usize = 32;

/// The block stride for `sites` sites: a multiple of `PAD_QUANTUM` sites
/// whose count of quanta is odd, so that consecutive rows are shifted by an
/// odd multiple of 512 bytes (double2) or 256 bytes (float2) and spread over
/// the memory channels. `LATSOL_NO_PAD=1` (an experiment switch) disables it.
pub fn padded_stride(sites: usize) -> usize {
    if std::env::var("LATSOL_NO_PAD").is_ok_and(|v| v == "1") {
        return sites;
    }
    let quanta = sites.div_ceil(PAD_QUANTUM);
    PAD_QUANTUM * (quanta | 1)
}

/// Where the structure-of-arrays layout puts one site's reals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoaShape {
    /// Reals per site and block (24 for a spinor, 18 for a link).
    pub reals: usize,
    /// Reals per vector load (2 or 4).
    pub vec: usize,
    /// Sites per block (Vh).
    pub sites: usize,
    /// Distance (in vectors) between one vector of consecutive components;
    /// `stride ≥ sites`, the rest is padding.
    pub stride: usize,
}

impl SoaShape {
    pub fn spinor(vec: usize, sites: usize, stride: usize) -> SoaShape {
        SoaShape {
            reals: SPINOR_REALS,
            vec,
            sites,
            stride,
        }
    }

    /// Links of `reals` (18, 12 or 8) reals, `vec` (2 or 4) reals per vector.
    pub fn link(reals: usize, vec: usize, sites: usize, stride: usize) -> SoaShape {
        debug_assert!(reals.is_multiple_of(vec));
        SoaShape {
            reals,
            vec,
            sites,
            stride,
        }
    }

    /// The vector width of stored links (`kernels/core.cuh`, `GaugeSoA`):
    /// two complex numbers per float4 / short4 / char4 for reconstruct 12
    /// and 8 in the narrow precisions, one per vector otherwise (18 is odd
    /// in complex numbers; a double2 is already a 16-byte load).
    pub fn link_vec(precision: Precision, reals: usize) -> usize {
        if precision != Precision::Double && reals.is_multiple_of(4) {
            4
        } else {
            2
        }
    }

    /// Reals in one device block (padding included).
    pub fn block_len(&self) -> usize {
        self.reals * self.stride
    }

    /// Reals in one canonical block.
    pub fn canonical_len(&self) -> usize {
        self.reals * self.sites
    }

    /// Index, within its device block, of real `n` of site `cb`.
    #[inline(always)]
    pub fn index(&self, cb: usize, n: usize) -> usize {
        ((n / self.vec) * self.stride + cb) * self.vec + n % self.vec
    }

    #[cfg(test)]
    /// The inverse of `index`: `(cb, n)` of a position within a block.
    pub fn site_of(&self, i: usize) -> (usize, usize) {
        let (v, e) = (i / self.vec, i % self.vec);
        let (j, cb) = (v / self.stride, v % self.stride);
        (cb, j * self.vec + e)
    }
}

/// Canonical → device: `src` holds blocks of `shape.sites` sites of
/// `reals` reals each, site-major; `dst` (as long as the blocks with their
/// padding) receives them in SoA order, zeros in the padding. One pass,
/// parallel over the vector rows of the output.
pub fn to_soa<T: Copy + Send + Sync, U: Copy + Send + Sync + Default>(
    shape: SoaShape,
    src: &[T],
    dst: &mut [U],
    conv: impl Fn(T) -> U + Sync,
) {
    let blocks = src.len() / shape.canonical_len();
    assert_eq!(src.len(), blocks * shape.canonical_len());
    assert_eq!(dst.len(), blocks * shape.block_len());
    let row = shape.stride * shape.vec;
    let rows_per_block = shape.reals / shape.vec;
    dst.par_chunks_mut(row).enumerate().for_each(|(r, out)| {
        let (block, j) = (r / rows_per_block, r % rows_per_block);
        let base = block * shape.canonical_len();
        let (sites, pad) = out.split_at_mut(shape.sites * shape.vec);
        for (cb, o) in sites.chunks_exact_mut(shape.vec).enumerate() {
            let s = base + cb * shape.reals + j * shape.vec;
            for (e, v) in o.iter_mut().enumerate() {
                *v = conv(src[s + e]);
            }
        }
        pad.fill(U::default());
    });
}

/// A raw pointer shared by the threads of `links_to_soa` (and the clover
/// field's `soa_of`), each writing its own elements.
pub(crate) struct SharedOut<U>(pub(crate) *mut U);
// SAFETY: the threads write disjoint elements of one live allocation.
unsafe impl<U> Sync for SharedOut<U> {}
impl<U> SharedOut<U> {
    pub(crate) fn at(&self, i: usize) -> *mut U {
        // SAFETY: callers index within the allocation.
        unsafe { self.0.add(i) }
    }
}

/// The links of `gauge` compressed to `reconstruct` (as the CPU backend
/// compresses them) in the device layout of `shape`, blocks
/// `[parity][mu]`, each stored real through `conv`; zeros in the padding.
/// One parallel pass over the links, each compressed once, with no
/// canonical copy in between.
pub fn links_to_soa<U: Copy + Send + Sync + Default>(
    gauge: &crate::field::GaugeField,
    reconstruct: crate::precision::Reconstruct,
    shape: SoaShape,
    conv: impl Fn(f64) -> U + Sync,
) -> crate::error::Result<Vec<U>> {
    place_links(
        gauge,
        shape.block_len(),
        |u, buf| {
            crate::reconstruct::compress(u, reconstruct, buf);
            shape.reals
        },
        |cb, n| shape.index(cb, n),
        conv,
    )
}

/// The links of `gauge` placed in a device layout in one parallel pass:
/// 8 blocks `[parity][mu]` of `block_len` elements; `stored` writes a
/// link's stored reals into the buffer and returns how many, `index`
/// gives the place of real `k` of site `cb` within its block (one-to-one,
/// below `block_len`), `conv` the stored element; zeros elsewhere.
pub fn place_links<U: Copy + Send + Sync + Default>(
    gauge: &crate::field::GaugeField,
    block_len: usize,
    stored: impl Fn(&crate::su3::Su3, &mut [f64; LINK_REALS]) -> usize + Sync,
    index: impl Fn(usize, usize) -> usize + Sync,
    conv: impl Fn(f64) -> U + Sync,
) -> crate::error::Result<Vec<U>> {
    use crate::lattice::Parity;
    let vh = gauge.lattice().half_volume();
    let what = "staging the links for the device";
    let mut v = crate::alloc::filled(8 * block_len, U::default(), what)?;
    const CHUNK: usize = 1024;
    let chunks = vh.div_ceil(CHUNK);
    let out = SharedOut(v.as_mut_ptr());
    let out = &out;
    (0..8 * chunks).into_par_iter().for_each(|task| {
        let (block, chunk) = (task / chunks, task % chunks);
        let (p, mu) = (Parity::from_index(block / 4), block % 4);
        let base = block * block_len;
        for cb in chunk * CHUNK..((chunk + 1) * CHUNK).min(vh) {
            let mut buf = [0.0; LINK_REALS];
            let reals = stored(gauge.link(p, cb, mu), &mut buf);
            for (k, &x) in buf[..reals].iter().enumerate() {
                let i = index(cb, k);
                // Bounds kept even in release: the write below is unchecked.
                assert!(
                    i < block_len,
                    "link element {k} of site {cb} outside its block"
                );
                // SAFETY: within block `block` of `v` (checked above), and
                // (cb, k) ↦ i is one-to-one (`index_is_a_bijection_with_site_of`,
                // `staggered::tests`), so no two threads write one element.
                unsafe { *out.at(base + i) = conv(x) };
            }
        }
    });
    Ok(v)
}

/// Device → canonical, the inverse of `to_soa` (padding skipped). One
/// pass, parallel over sites of the output.
pub fn from_soa<T: Copy + Send + Sync, U: Copy + Send + Sync>(
    shape: SoaShape,
    src: &[T],
    dst: &mut [U],
    conv: impl Fn(T) -> U + Sync,
) {
    let blocks = dst.len() / shape.canonical_len();
    assert_eq!(dst.len(), blocks * shape.canonical_len());
    assert_eq!(src.len(), blocks * shape.block_len());
    const SITES: usize = 256;
    dst.par_chunks_mut(SITES * shape.reals)
        .enumerate()
        .for_each(|(chunk, out)| {
            for (k, site) in out.chunks_exact_mut(shape.reals).enumerate() {
                let global = chunk * SITES + k;
                let (block, cb) = (global / shape.sites, global % shape.sites);
                let base = block * shape.block_len();
                for (n, v) in site.iter_mut().enumerate() {
                    *v = conv(src[base + shape.index(cb, n)]);
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_is_a_bijection_with_site_of() {
        for shape in [
            SoaShape::spinor(2, 10, 10),
            SoaShape::spinor(4, 6, 6),
            SoaShape::link(LINK_REALS, 2, 8, 8),
            SoaShape::link(12, 4, 8, 8),
            SoaShape::link(8, 4, 7, 7),
        ] {
            let mut seen = vec![false; shape.block_len()];
            for cb in 0..shape.sites {
                for n in 0..shape.reals {
                    let i = shape.index(cb, n);
                    assert!(!seen[i], "{shape:?}: ({cb}, {n}) collides");
                    seen[i] = true;
                    assert_eq!(shape.site_of(i), (cb, n));
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn links_to_soa_is_compress_then_to_soa() {
        use crate::lattice::{Lattice, Parity};
        use crate::precision::Reconstruct;
        let lat = std::sync::Arc::new(Lattice::new([4, 2, 2, 6]).unwrap());
        let gauge = crate::random::hot_gauge(&lat, 5);
        let vh = lat.half_volume();
        for (r, vec) in [
            (Reconstruct::Full18, 2),
            (Reconstruct::Twelve, 4),
            (Reconstruct::Eight, 4),
        ] {
            let reals = r.reals();
            let shape = SoaShape::link(reals, vec, vh, padded_stride(vh));
            let mut canonical = vec![0.0; 8 * vh * reals];
            for (k, out) in canonical.chunks_mut(reals).enumerate() {
                let (block, cb) = (k / vh, k % vh);
                let mut buf = [0.0; LINK_REALS];
                let u = gauge.link(Parity::from_index(block / 4), cb, block % 4);
                crate::reconstruct::compress(u, r, &mut buf);
                out.copy_from_slice(&buf[..reals]);
            }
            let mut want = vec![f64::NAN; 8 * shape.block_len()];
            to_soa(shape, &canonical, &mut want, |x| x);
            let got = links_to_soa(&gauge, r, shape, |x| x).unwrap();
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{r:?}"
            );
        }
    }

    #[test]
    fn spinor_layout_matches_the_kernels() {
        // core.cuh: double: complex c of site cb is double2 number c·stride + cb.
        let d = SoaShape::spinor(2, 5, 7);
        assert_eq!(d.index(3, 2 * 5), (5 * 7 + 3) * 2);
        assert_eq!(d.index(3, 2 * 5 + 1), (5 * 7 + 3) * 2 + 1);
        // single: complex c is in float4 c/2 at position 2·(c % 2).
        let s = SoaShape::spinor(4, 7, 7);
        assert_eq!(s.index(3, 2 * 5 + 1), ((5 / 2) * 7 + 3) * 4 + 2 + 1);
        // The upper spin pair (complex 0..6) fills the first half of the vectors.
        assert!((0..12).all(|n| s.index(6, n) < s.block_len() / 2));
        assert!((12..24).all(|n| s.index(0, n) >= s.block_len() / 2));
        // gauge: complex k = 3 row + col of the link is double2/float2 number k·stride + cb.
        let g = SoaShape::link(LINK_REALS, 2, 9, 9);
        assert_eq!(g.index(4, 2 * 8 + 1), (8 * 9 + 4) * 2 + 1);
        // reconstruct 12 in single: complex k in float4 k/2 at position 2·(k % 2).
        let g = SoaShape::link(12, 4, 9, 11);
        assert_eq!(g.index(4, 2 * 5 + 1), ((5 / 2) * 11 + 4) * 4 + 2 + 1);
        assert_eq!(SoaShape::link_vec(Precision::Half, 12), 4);
        assert_eq!(SoaShape::link_vec(Precision::Quarter, 8), 4);
        assert_eq!(SoaShape::link_vec(Precision::Single, 18), 2);
        assert_eq!(SoaShape::link_vec(Precision::Double, 12), 2);
        // The packed formats' fixed-point links: short4 / int4 pairs for 12
        // and 8, short2 / int2 for 18 (core.cuh, LinkElem).
        assert_eq!(SoaShape::link_vec(Precision::Packed20, 12), 4);
        assert_eq!(SoaShape::link_vec(Precision::Packed30, 8), 4);
        assert_eq!(SoaShape::link_vec(Precision::Packed30, 18), 2);
    }

    #[test]
    fn reorder_round_trips_with_padding() {
        for shape in [
            SoaShape::spinor(2, 12, 12),
            SoaShape::spinor(2, 12, 17),
            SoaShape::spinor(4, 12, 32),
            SoaShape::link(LINK_REALS, 2, 12, 13),
            SoaShape::link(8, 4, 12, 13),
        ] {
            let blocks = 3;
            let canonical: Vec<f64> = (0..blocks * shape.canonical_len())
                .map(|i| i as f64 + 1.0)
                .collect();
            let mut soa = vec![f32::NAN; blocks * shape.block_len()];
            to_soa(shape, &canonical, &mut soa, |v| v as f32);
            let mut real = 0;
            for b in 0..blocks {
                for cb in 0..shape.sites {
                    for n in 0..shape.reals {
                        let want = canonical[b * shape.canonical_len() + cb * shape.reals + n];
                        assert_eq!(soa[b * shape.block_len() + shape.index(cb, n)] as f64, want);
                        real += 1;
                    }
                }
            }
            // Everything else is padding, zeroed.
            assert_eq!(soa.iter().filter(|&&v| v == 0.0).count(), soa.len() - real);
            let mut back = vec![0.0f64; canonical.len()];
            from_soa(shape, &soa, &mut back, |v| v as f64);
            assert_eq!(back, canonical);
        }
    }

    #[test]
    fn padded_strides_are_odd_multiples_of_the_quantum() {
        for sites in [1usize, 31, 32, 33, 2048, 32768, 165888, 1 << 20] {
            let s = padded_stride(sites);
            assert!(s >= sites && s < sites + 2 * PAD_QUANTUM);
            assert_eq!(s % PAD_QUANTUM, 0);
            assert_eq!((s / PAD_QUANTUM) % 2, 1);
        }
    }
}
