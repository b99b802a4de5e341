//! Host-side index maps between the canonical fields (`field.rs`: site-major,
//! even-odd sites) and the device's structure-of-arrays layout
//! (`kernels/core.cuh`, seed clark2010 §4.1), and the one-pass reorders that
//! upload and download use. Pure host code: unit-tested without a GPU.
//!
//! A field's reals are grouped into vectors of `vec` reals (spinor: 2 for
//! double2, 4 for float4; gauge links: 2 for double2 / float2). Within one
//! block of `stride` sites, vector `j` of site `cb` lies at
//! `(j · stride + cb) · vec`; a site's real `n` is in vector `n / vec` at
//! position `n % vec`. Spinor blocks are parity halves (even first); the
//! gauge field has one block per (parity, direction), `[parity][mu]`.

use rayon::prelude::*;

use crate::field::SPINOR_REALS;

/// Reals per stored link (reconstruct 18).
pub const LINK_REALS: usize = 18;

/// Where the structure-of-arrays layout puts one site's reals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoaShape {
    /// Reals per site and block (24 for a spinor, 18 for a link).
    pub reals: usize,
    /// Reals per vector load (2 or 4).
    pub vec: usize,
    /// Sites per block (Vh), the distance between one vector of
    /// consecutive components.
    pub stride: usize,
}

impl SoaShape {
    pub fn spinor(vec: usize, stride: usize) -> SoaShape {
        SoaShape {
            reals: SPINOR_REALS,
            vec,
            stride,
        }
    }

    pub fn link(stride: usize) -> SoaShape {
        SoaShape {
            reals: LINK_REALS,
            vec: 2,
            stride,
        }
    }

    /// Reals in one block.
    pub fn block_len(&self) -> usize {
        self.reals * self.stride
    }

    /// Index, within its block, of real `n` of site `cb`.
    #[inline(always)]
    pub fn index(&self, cb: usize, n: usize) -> usize {
        ((n / self.vec) * self.stride + cb) * self.vec + n % self.vec
    }

    /// The inverse of `index`: `(cb, n)` of a position within a block.
    pub fn site_of(&self, i: usize) -> (usize, usize) {
        let (v, e) = (i / self.vec, i % self.vec);
        let (j, cb) = (v / self.stride, v % self.stride);
        (cb, j * self.vec + e)
    }
}

/// Canonical → device: `src` holds blocks of `stride` sites of `reals`
/// reals each, site-major; `dst` receives the same blocks in SoA order. One
/// pass, parallel over the vector rows of the output.
pub fn to_soa<T: Copy + Send + Sync, U: Copy + Send + Sync>(
    shape: SoaShape,
    src: &[T],
    dst: &mut [U],
    conv: impl Fn(T) -> U + Sync,
) {
    assert_eq!(src.len(), dst.len());
    assert_eq!(src.len() % shape.block_len(), 0);
    let row = shape.stride * shape.vec;
    let rows_per_block = shape.reals / shape.vec;
    dst.par_chunks_mut(row).enumerate().for_each(|(r, out)| {
        let (block, j) = (r / rows_per_block, r % rows_per_block);
        let base = block * shape.block_len();
        for (cb, o) in out.chunks_exact_mut(shape.vec).enumerate() {
            let s = base + cb * shape.reals + j * shape.vec;
            for (e, v) in o.iter_mut().enumerate() {
                *v = conv(src[s + e]);
            }
        }
    });
}

/// Device → canonical, the inverse of `to_soa`. One pass, parallel over
/// sites of the output.
pub fn from_soa<T: Copy + Send + Sync, U: Copy + Send + Sync>(
    shape: SoaShape,
    src: &[T],
    dst: &mut [U],
    conv: impl Fn(T) -> U + Sync,
) {
    assert_eq!(src.len(), dst.len());
    assert_eq!(src.len() % shape.block_len(), 0);
    const SITES: usize = 256;
    dst.par_chunks_mut(SITES * shape.reals)
        .enumerate()
        .for_each(|(chunk, out)| {
            for (k, site) in out.chunks_exact_mut(shape.reals).enumerate() {
                let global = chunk * SITES + k;
                let (block, cb) = (global / shape.stride, global % shape.stride);
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
            SoaShape::spinor(2, 10),
            SoaShape::spinor(4, 6),
            SoaShape::link(8),
        ] {
            let mut seen = vec![false; shape.block_len()];
            for cb in 0..shape.stride {
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
    fn spinor_layout_matches_the_kernels() {
        // core.cuh: double: complex c of site cb is double2 number c·stride + cb.
        let d = SoaShape::spinor(2, 7);
        assert_eq!(d.index(3, 2 * 5), (5 * 7 + 3) * 2);
        assert_eq!(d.index(3, 2 * 5 + 1), (5 * 7 + 3) * 2 + 1);
        // single: complex c is in float4 c/2 at position 2·(c % 2).
        let s = SoaShape::spinor(4, 7);
        assert_eq!(s.index(3, 2 * 5 + 1), ((5 / 2) * 7 + 3) * 4 + 2 + 1);
        // The upper spin pair (complex 0..6) fills the first half of the vectors.
        assert!((0..12).all(|n| s.index(6, n) < s.block_len() / 2));
        assert!((12..24).all(|n| s.index(0, n) >= s.block_len() / 2));
        // gauge: complex k = 3 row + col of the link is double2/float2 number k·stride + cb.
        let g = SoaShape::link(9);
        assert_eq!(g.index(4, 2 * 8 + 1), (8 * 9 + 4) * 2 + 1);
    }

    #[test]
    fn reorder_round_trips() {
        for shape in [
            SoaShape::spinor(2, 12),
            SoaShape::spinor(4, 12),
            SoaShape::link(12),
        ] {
            let blocks = 3;
            let canonical: Vec<f64> = (0..blocks * shape.block_len()).map(|i| i as f64).collect();
            let mut soa = vec![0.0f32; canonical.len()];
            to_soa(shape, &canonical, &mut soa, |v| v as f32);
            for b in 0..blocks {
                for cb in 0..shape.stride {
                    for n in 0..shape.reals {
                        let want = canonical[b * shape.block_len() + cb * shape.reals + n];
                        assert_eq!(soa[b * shape.block_len() + shape.index(cb, n)] as f64, want);
                    }
                }
            }
            let mut back = vec![0.0f64; canonical.len()];
            from_soa(shape, &soa, &mut back, |v| v as f64);
            assert_eq!(back, canonical);
        }
    }
}
