//! The CPU backend on a partitioned lattice (issue 34): this rank's place
//! among the others (`Ranks`) and the faces its hopping terms read from
//! them, exchanged through the communication layer (`crate::comm`).
//!
//! A field here is the rank's local sub-lattice. Where the faces are, and
//! the order of their sites, is `crate::comm::faces` (shared with the CUDA
//! backend). The spinor faces travel at every application (the decoded
//! site numbers: exactly what a single rank's hop loads), the links' once,
//! at the gauge field's upload.

use super::links::Links;
use super::storage::Sites;
pub(crate) use crate::comm::faces::face_index;
use crate::comm::faces::{face_len, interior_sites, layer_sites, sent_sites, SentSites};
use crate::comm::Message;
pub use crate::comm::Ranks;
use crate::error::Result;
use crate::lattice::{Lattice, Parity};
use crate::su3::Su3;

/// The links `U_μ(x − d μ̂)` of the hops of length `d` (the depth: 1, or 3
/// for the Naik term's long links) from the sites `x` of the first `d`
/// layers of every partitioned direction, which the rank behind holds:
/// `[μ][parity of x]`, by `layer · face_len + face index` (empty where μ is
/// not cut). An implicit unit link (temporal gauge) is the unit matrix.
#[derive(Debug, Clone, Default)]
pub struct GaugeFaces {
    pub(crate) backward: [[Vec<Su3>; 2]; 4],
    /// Sites of one parity in a layer, per direction.
    len: [usize; 4],
    /// Which sites keep every hop of this depth on the rank
    /// (`interior_sites`), `[parity][cb]`.
    pub(crate) interior: [Vec<bool>; 2],
    /// The sites a spinor exchange of this depth sends, found once here
    /// rather than at every application: `[parity of the input][mu]
    /// [first layers, last layers]`, the checkerboard index of each slot
    /// `layer · face_len + face index` (layer counted from the face sent).
    sent_sites: SentSites,
}

/// Which output sites of a hopping term one pass computes on a cut
/// lattice: the interior ones while the faces travel, the edge ones when
/// they have arrived.
#[derive(Clone, Copy)]
pub(crate) enum Region<'a> {
    /// Every site (nothing is cut).
    Whole,
    /// The sites `interior[cb]` marks.
    Interior(&'a [bool]),
    /// The others.
    Edges(&'a [bool]),
}

impl Region<'_> {
    #[inline(always)]
    pub(crate) fn has(&self, cb: usize) -> bool {
        match self {
            Region::Whole => true,
            Region::Interior(inside) => inside[cb],
            Region::Edges(inside) => !inside[cb],
        }
    }
}

impl GaugeFaces {
    /// The link of the hop into the site of face index `i` in layer
    /// `layer` (< depth) of direction `mu`, parity `p`.
    #[inline(always)]
    pub(crate) fn behind(&self, mu: usize, p: Parity, layer: usize, i: usize) -> Su3 {
        self.backward[mu][p.index()][layer * self.len[mu] + i]
    }
}

fn su3_reals(u: &Su3) -> [f64; 18] {
    let mut r = [0.0; 18];
    for (i, row) in u.0.iter().enumerate() {
        for (j, z) in row.iter().enumerate() {
            r[6 * i + 2 * j] = z.re;
            r[6 * i + 2 * j + 1] = z.im;
        }
    }
    r
}

fn su3_of(r: &[f64]) -> Su3 {
    let mut u = Su3::identity();
    for i in 0..3 {
        for j in 0..3 {
            u.0[i][j] = num_complex::Complex64::new(r[6 * i + 2 * j], r[6 * i + 2 * j + 1]);
        }
    }
    u
}

/// Sends the last `depth` layers of the links in each partitioned
/// direction to the rank ahead and receives the rank behind's: the links
/// of the hops of length `depth` that enter this rank (`GaugeFaces`).
pub(crate) fn exchange_gauge_faces(
    ranks: &Ranks,
    lat: &Lattice,
    links: &Links,
    depth: usize,
) -> Result<GaugeFaces> {
    let p = &ranks.grid;
    let local = lat.dims();
    let partitioned = [0, 1, 2, 3].map(|mu| p.is_partitioned(mu));
    // Agreed before the first exchange: no rank waits on one that failed.
    let mut faces = GaugeFaces {
        interior: ranks.agree(interior_sites(lat, partitioned, depth))?,
        sent_sites: sent_sites(lat, partitioned, depth),
        ..Default::default()
    };
    for mu in (0..4).filter(|&mu| p.is_partitioned(mu)) {
        let n = face_len(local, mu);
        faces.len[mu] = n;
        // [parity of the receiving site][layer][face index][18 reals]: a
        // link at y (parity q) in layer L − depth + j serves the site
        // y + depth μ̂ (parity q̄, depth being odd) in layer j ahead.
        let mut send = vec![0.0f64; 2 * depth * n * 18];
        for q in [Parity::Even, Parity::Odd] {
            let slot = q.other().index();
            for j in 0..depth {
                for (i, cb) in layer_sites(lat, q, mu, local[mu] - depth + j) {
                    let u = links.link(q, cb, mu).unwrap_or_else(Su3::identity);
                    let at = ((slot * depth + j) * n + i) * 18;
                    send[at..at + 18].copy_from_slice(&su3_reals(&u));
                }
            }
        }
        let mut recv = vec![0.0f64; send.len()];
        ranks.comm.exchange(&mut [Message {
            to: p.neighbour(mu, true),
            send: bytemuck::cast_slice(&send),
            from: p.neighbour(mu, false),
            recv: bytemuck::cast_slice_mut(&mut recv),
            tag: 100 + mu as i32,
        }])?;
        let per_parity = depth * n * 18;
        faces.backward[mu] = [0, 1].map(|slot| {
            recv[slot * per_parity..(slot + 1) * per_parity]
                .chunks(18)
                .map(su3_of)
                .collect()
        });
    }
    Ok(faces)
}

/// What the rank ahead and the rank behind hold next to this rank's faces,
/// for one application of a hopping term of depth `d` on parity `p`: the
/// input (parity p̄) of the first `d` layers of the rank ahead and of the
/// last `d` layers of the rank behind, `reals` numbers a site, by
/// `layer · face_len + face index`.
#[derive(Debug, Default)]
pub struct SpinorFaces {
    forward: [Vec<f64>; 4],
    backward: [Vec<f64>; 4],
    len: [usize; 4],
    reals: usize,
}

impl SpinorFaces {
    /// The site of face index `i` in layer `layer` of the rank ahead in
    /// direction `mu` (layer 0 touches this rank).
    #[inline(always)]
    pub(crate) fn ahead(&self, mu: usize, layer: usize, i: usize) -> &[f64] {
        let at = (layer * self.len[mu] + i) * self.reals;
        &self.forward[mu][at..at + self.reals]
    }

    /// The site of face index `i` `from_end` layers before the last one of
    /// the rank behind in direction `mu` (0: the layer touching this rank).
    #[inline(always)]
    pub(crate) fn behind(&self, mu: usize, from_end: usize, i: usize) -> &[f64] {
        let at = (from_end * self.len[mu] + i) * self.reals;
        &self.backward[mu][at..at + self.reals]
    }
}

/// Exchanges the faces of `inp` (the sites of parity `p̄`, the hopping
/// term's input on parity `p`), as deep as the hops of `links` (the gauge
/// faces of the operator's longest hop, whose `sent_sites` say which sites
/// go), the first `reals` numbers of each site (24 a Wilson spinor, 6 a
/// colour vector), in every partitioned direction at once: each rank sends
/// its first layers back and its last layers ahead.
pub(crate) fn exchange_spinor_faces(
    ranks: &Ranks,
    lat: &Lattice,
    p: Parity,
    inp: &Sites,
    links: &GaugeFaces,
    reals: usize,
) -> Result<SpinorFaces> {
    let part = &ranks.grid;
    let local = lat.dims();
    let q = p.other();
    let mut faces = SpinorFaces {
        reals,
        ..Default::default()
    };
    let cut: Vec<usize> = (0..4).filter(|&mu| part.is_partitioned(mu)).collect();
    // The layers this rank sends, [first, last] per cut direction.
    let mut sent = Vec::with_capacity(cut.len());
    for &mu in &cut {
        faces.len[mu] = face_len(local, mu);
        let [first, last] = links.sent_sites[q.index()][mu].each_ref().map(|sites| {
            let mut reals_sent = vec![0.0; sites.len() * reals];
            for (slot, &cb) in reals_sent.chunks_exact_mut(reals).zip(sites) {
                slot.copy_from_slice(&inp.load(cb as usize)[..reals]);
            }
            reals_sent
        });
        faces.forward[mu] = vec![0.0; first.len()];
        faces.backward[mu] = vec![0.0; last.len()];
        sent.push((first, last));
    }
    let SpinorFaces {
        forward, backward, ..
    } = &mut faces;
    let mut messages = Vec::with_capacity(2 * cut.len());
    let received = forward.iter_mut().zip(backward.iter_mut()).enumerate();
    let received = received.filter(|(mu, _)| part.is_partitioned(*mu));
    for ((mu, (ahead, behind)), (first, last)) in received.zip(&sent) {
        // The rank behind reads these first layers as its ahead ones.
        messages.push(Message {
            to: part.neighbour(mu, false),
            send: bytemuck::cast_slice(first),
            from: part.neighbour(mu, true),
            recv: bytemuck::cast_slice_mut(ahead),
            tag: 2 * mu as i32,
        });
        // The rank ahead reads these last layers as its behind ones.
        messages.push(Message {
            to: part.neighbour(mu, true),
            send: bytemuck::cast_slice(last),
            from: part.neighbour(mu, false),
            recv: bytemuck::cast_slice_mut(behind),
            tag: 2 * mu as i32 + 1,
        });
    }
    ranks.comm.exchange(&mut messages)?;
    Ok(faces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn su3_travels_as_18_reals() {
        let u = crate::random::su3(&mut crate::random::rng(3));
        let v = su3_of(&su3_reals(&u));
        assert_eq!(u.0, v.0);
    }
}
