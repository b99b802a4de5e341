//! Where a cut lattice's faces are: the geometry both backends' hopping
//! terms share on a partitioned lattice (issue 34 for the CPU, 36 for the
//! GPU), so that a face leaves one backend in the order the other reads it.
//!
//! A hop of length `d` (1; 3 for the staggered Naik term) from a site
//! within `d` layers of the forward end of a cut direction μ reads
//! `ψ(x + d μ̂)` from the rank ahead; within `d` layers of the backward end,
//! `ψ(x − d μ̂)` and the link `U_μ(x − d μ̂)` from the rank behind. A site
//! of a face is found by its coordinates in the three other directions,
//! lexicographic and halved (`face_index`: every local extent is even, so
//! the halving is a bijection on the sites of one parity); a site and its
//! neighbour across the face share them. A face of depth `d` is `d` layers
//! of such sites, slot `layer · face_len + face index`, the layer counted
//! from the face that touches the receiving rank.

use super::Dims;
use crate::error::Result;
use crate::lattice::{Lattice, Parity};

/// The index of site `x` among the sites of its parity in its layer of
/// direction `mu`.
pub(crate) fn face_index(local: Dims, mu: usize, x: Dims) -> usize {
    let (mut index, mut stride) = (0, 1);
    for nu in (0..4).filter(|&nu| nu != mu) {
        index += x[nu] * stride;
        stride *= local[nu];
    }
    index / 2
}

/// Sites of one parity in a layer of direction `mu`.
pub(crate) fn face_len(local: Dims, mu: usize) -> usize {
    (0..4)
        .filter(|&nu| nu != mu)
        .map(|nu| local[nu])
        .product::<usize>()
        / 2
}

/// The sites of parity `p` in the layer `x_μ = layer`, as (face index,
/// checkerboard index): a walk over the layer alone, not the lattice.
pub(crate) fn layer_sites(
    lat: &Lattice,
    p: Parity,
    mu: usize,
    layer: usize,
) -> impl Iterator<Item = (usize, usize)> + '_ {
    let local = lat.dims();
    let n = 2 * face_len(local, mu);
    (0..n).filter_map(move |mut i| {
        let mut x = [0; 4];
        x[mu] = layer;
        for nu in (0..4).filter(|&nu| nu != mu) {
            x[nu] = i % local[nu];
            i /= local[nu];
        }
        (lat.parity_of(x) == p).then(|| (face_index(local, mu, x), lat.cb_index(x)))
    })
}

/// The sites a face exchange of depth `depth` sends, `[parity of the
/// input][mu][first layers, last layers]`: the checkerboard index of each
/// slot `layer · face_len + face index` (layer counted from the face sent;
/// empty where `mu` is not cut). The first layers go to the rank behind,
/// which reads them as its faces ahead; the last ones to the rank ahead.
pub type SentSites = [[[Vec<u32>; 2]; 4]; 2];

/// `SentSites` for the cut directions `partitioned`.
pub(crate) fn sent_sites(lat: &Lattice, partitioned: [bool; 4], depth: usize) -> SentSites {
    let local = lat.dims();
    [Parity::Even, Parity::Odd].map(|q| {
        std::array::from_fn(|mu| {
            if !partitioned[mu] {
                return Default::default();
            }
            let n = face_len(local, mu);
            [false, true].map(|last| {
                let mut slots = vec![0u32; depth * n];
                for j in 0..depth {
                    let layer = if last { local[mu] - 1 - j } else { j };
                    for (i, cb) in layer_sites(lat, q, mu, layer) {
                        slots[j * n + i] = cb as u32;
                    }
                }
                slots
            })
        })
    })
}

/// Which sites of each parity keep every hop of length up to `depth` on
/// this rank (`[parity][cb]`, true inside): the hopping terms compute
/// those while the faces travel, the others (the edges) after.
pub(crate) fn interior_sites(
    lat: &Lattice,
    partitioned: [bool; 4],
    depth: usize,
) -> Result<[Vec<bool>; 2]> {
    let local = lat.dims();
    let vh = lat.half_volume();
    let inside = |x: Dims| {
        (0..4).all(|mu| !partitioned[mu] || (x[mu] >= depth && x[mu] + depth < local[mu]))
    };
    let of = |p: Parity| {
        let flags = (0..vh).map(|cb| inside(lat.coords(p, cb)));
        crate::alloc::collect(vh, flags, "the interior sites of a cut lattice")
    };
    Ok([of(Parity::Even)?, of(Parity::Odd)?])
}

/// The edge sites (not interior) of each parity, by checkerboard index in
/// increasing order.
pub(crate) fn edge_sites(interior: &[Vec<bool>; 2]) -> [Vec<u32>; 2] {
    interior.each_ref().map(|inside| {
        (0..inside.len())
            .filter(|&cb| !inside[cb])
            .map(|cb| cb as u32)
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_face_numbers_the_sites_of_one_parity_once() {
        let local = [4, 2, 6, 4];
        let lat = Lattice::new(local).unwrap();
        for mu in 0..4 {
            for p in [Parity::Even, Parity::Odd] {
                let mut seen = vec![false; face_len(local, mu)];
                for cb in 0..lat.half_volume() {
                    let x = lat.coords(p, cb);
                    if x[mu] == 0 {
                        let i = face_index(local, mu, x);
                        assert!(!seen[i], "{mu} {p:?} {x:?}");
                        seen[i] = true;
                        // The neighbour across the face has the same index.
                        let mut y = x;
                        y[mu] = local[mu] - 1;
                        assert_eq!(face_index(local, mu, y), i);
                    }
                }
                assert!(seen.iter().all(|&s| s), "{mu} {p:?}");
            }
        }
    }

    #[test]
    fn a_layer_walk_finds_the_sites_a_lattice_scan_finds() {
        let lat = Lattice::new([4, 2, 6, 4]).unwrap();
        for mu in 0..4 {
            for p in [Parity::Even, Parity::Odd] {
                for layer in [0, lat.dims()[mu] - 1] {
                    let mut walked: Vec<_> = layer_sites(&lat, p, mu, layer).collect();
                    let mut scanned: Vec<_> = (0..lat.half_volume())
                        .map(|cb| (lat.coords(p, cb), cb))
                        .filter(|(x, _)| x[mu] == layer)
                        .map(|(x, cb)| (face_index(lat.dims(), mu, x), cb))
                        .collect();
                    walked.sort();
                    scanned.sort();
                    assert_eq!(walked, scanned, "{mu} {p:?} {layer}");
                }
            }
        }
    }

    #[test]
    fn edges_and_interior_split_the_sites() {
        let lat = Lattice::new([4, 6, 4, 8]).unwrap();
        let interior = interior_sites(&lat, [false, true, false, true], 1).unwrap();
        let edges = edge_sites(&interior);
        for p in [Parity::Even, Parity::Odd] {
            let inside = interior[p.index()].iter().filter(|&&i| i).count();
            // 4 · 4 · 4 · 6 interior sites of 4 · 6 · 4 · 8, half a parity.
            assert_eq!(inside, 4 * 4 * 4 * 6 / 2);
            assert_eq!(inside + edges[p.index()].len(), lat.half_volume());
            for &cb in &edges[p.index()] {
                let x = lat.coords(p, cb as usize);
                assert!(x[1] == 0 || x[1] == 5 || x[3] == 0 || x[3] == 7, "{x:?}");
            }
        }
    }
}
