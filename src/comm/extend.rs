//! A rank's gauge field extended by the links of its neighbours: what a
//! computation needs that reaches one site past the local sub-lattice in
//! two directions at once (the plaquette, the clover leaves, whose corner
//! links belong to a diagonal neighbour rank).
//!
//! The extension pads every cut direction by `depth` layers on each side.
//! The directions are exchanged one after the other, each exchange
//! carrying the layers padded so far: the corners (a site displaced in two
//! cut directions) arrive through the second exchange, from the rank that
//! received them in the first, so no diagonal messages are needed. The
//! padded field is an ordinary periodic `GaugeField`; an uncut direction is
//! not padded, its own periodic wrap being the whole lattice's.

use std::sync::Arc;

use rayon::prelude::*;

use super::{Dims, Message, Ranks};
use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::lattice::Lattice;
use crate::su3::Su3;

/// A rank's links with `depth` layers of its neighbours' around them.
pub struct ExtendedGauge {
    pub field: GaugeField,
    /// Where local site 0 sits in `field`: `depth` in every cut direction.
    pub offset: Dims,
}

impl ExtendedGauge {
    /// The coordinates in the extended field of local site `x`.
    pub fn site(&self, x: Dims) -> Dims {
        [0, 1, 2, 3].map(|mu| x[mu] + self.offset[mu])
    }
}

/// The sites of a layer range `layers` of direction `mu` in `lat`, in a
/// fixed lexicographic order (x fastest) that every rank shares.
fn slab(lat: &Lattice, mu: usize, layers: std::ops::Range<usize>) -> Vec<Dims> {
    let d = lat.dims();
    let mut sites = Vec::new();
    for t in 0..d[3] {
        for z in 0..d[2] {
            for y in 0..d[1] {
                for x in 0..d[0] {
                    let s = [x, y, z, t];
                    if layers.contains(&s[mu]) {
                        sites.push(s);
                    }
                }
            }
        }
    }
    sites
}

fn pack(field: &GaugeField, sites: &[Dims]) -> Vec<u8> {
    let mut out = Vec::with_capacity(sites.len() * 4 * 18 * 8);
    for &x in sites {
        for mu in 0..4 {
            for z in field.link_at(x, mu).0.iter().flatten() {
                out.extend_from_slice(&z.re.to_le_bytes());
                out.extend_from_slice(&z.im.to_le_bytes());
            }
        }
    }
    out
}

fn unpack(field: &mut GaugeField, sites: &[Dims], bytes: &[u8]) {
    let mut reals = bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")));
    for &x in sites {
        for mu in 0..4 {
            let u: &mut Su3 = field.link_at_mut(x, mu);
            for z in u.0.iter_mut().flatten() {
                z.re = reals.next().expect("a full face");
                z.im = reals.next().expect("a full face");
            }
        }
    }
}

/// `field` (this rank's links) extended by `depth` layers in every cut
/// direction. Collective: every rank calls it with the same `depth`.
pub fn extend(ranks: &Ranks, field: &GaugeField, depth: usize) -> Result<ExtendedGauge> {
    let local = field.lattice().dims();
    let mut offset = [0; 4];
    let mut current = field.clone();
    for mu in (0..4).filter(|&mu| ranks.grid.is_partitioned(mu)) {
        if local[mu] < depth {
            return Err(Error::InvalidArgument(format!(
                "local extent {} in the cut direction {mu}: an extension by {depth} layers needs \
                 at least {depth}",
                local[mu]
            )));
        }
        let lat = current.lattice().clone();
        let d = lat.dims();
        let mut wide = d;
        wide[mu] += 2 * depth;
        let wide_lat = Arc::new(Lattice::new(wide)?);
        let mut next = GaugeField::try_unit(wide_lat.clone())?;
        // The field so far, shifted by `depth` along mu.
        for x in slab(&lat, mu, 0..d[mu]) {
            let mut y = x;
            y[mu] += depth;
            for nu in 0..4 {
                *next.link_at_mut(y, nu) = *current.link_at(x, nu);
            }
        }
        // The last layers go ahead, the first back; this rank's front pad
        // holds what the rank behind sent ahead, its back pad what the rank
        // ahead sent back.
        let last = pack(&current, &slab(&lat, mu, d[mu] - depth..d[mu]));
        let first = pack(&current, &slab(&lat, mu, 0..depth));
        let mut from_behind = vec![0u8; last.len()];
        let mut from_ahead = vec![0u8; first.len()];
        let (ahead, behind) = (
            ranks.grid.neighbour(mu, true),
            ranks.grid.neighbour(mu, false),
        );
        ranks.comm.exchange(&mut [
            Message {
                to: ahead,
                send: &last,
                from: behind,
                recv: &mut from_behind,
                tag: 100 + 2 * mu as i32,
            },
            Message {
                to: behind,
                send: &first,
                from: ahead,
                recv: &mut from_ahead,
                tag: 101 + 2 * mu as i32,
            },
        ])?;
        unpack(&mut next, &slab(&wide_lat, mu, 0..depth), &from_behind);
        let back = d[mu] + depth..d[mu] + 2 * depth;
        unpack(&mut next, &slab(&wide_lat, mu, back), &from_ahead);
        offset[mu] = depth;
        current = next;
    }
    Ok(ExtendedGauge {
        field: current,
        offset,
    })
}

/// The links of a field reachable one step behind (and ahead of) each
/// local site: the field itself on one rank (periodic), its extension by
/// one layer on many.
pub struct Neighbourhood {
    field: GaugeField,
    offset: [usize; 4],
}

impl Neighbourhood {
    /// Link μ of the site one step from local site `x` along μ
    /// (`step` = −1 behind, 0 the site itself, +1 ahead).
    pub fn link(&self, x: [usize; 4], mu: usize, step: isize) -> Su3 {
        let lat = self.field.lattice();
        let y = [0, 1, 2, 3].map(|k| x[k] + self.offset[k]);
        *self.field.link_at(lat.shift(y, mu, step), mu)
    }

    /// Link 0 of the site one step from `x` along μ (the transformation
    /// fields keep g there).
    pub fn first_link(&self, x: [usize; 4], mu: usize, step: isize) -> Su3 {
        let lat = self.field.lattice();
        let y = [0, 1, 2, 3].map(|k| x[k] + self.offset[k]);
        *self.field.link_at(lat.shift(y, mu, step), 0)
    }
}

/// `field` with one layer of its neighbours' links where the lattice is
/// cut (collective on many ranks).
pub fn neighbourhood(ranks: Option<&Ranks>, field: &GaugeField) -> Result<Neighbourhood> {
    match ranks {
        Some(r) if r.partitioned() => {
            let ext = extend(r, field, 1)?;
            Ok(Neighbourhood {
                field: ext.field,
                offset: ext.offset,
            })
        }
        _ => Ok(Neighbourhood {
            field: field.clone(),
            offset: [0; 4],
        }),
    }
}

/// The average, spatial and temporal plaquette of the whole lattice, from
/// every rank's part (`GaugeField::plaquette` on one rank). Collective.
pub fn plaquette(ranks: &Ranks, field: &GaugeField) -> Result<[f64; 3]> {
    let ext = extend(ranks, field, 1)?;
    let lat = field.lattice().clone();
    // Fixed chunks summed in order: the same bits whatever the threads.
    const CHUNK: usize = 4096;
    let sites = lat.volume();
    let partial: Vec<[f64; 2]> = (0..sites.div_ceil(CHUNK))
        .into_par_iter()
        .map(|k| {
            let mut sum = [0.0; 2];
            for i in k * CHUNK..((k + 1) * CHUNK).min(sites) {
                let x = lat.coords(
                    crate::lattice::Parity::from_index(i / lat.half_volume()),
                    i % lat.half_volume(),
                );
                let [s, t] = ext.field.plaquettes_at(ext.site(x));
                sum[0] += s;
                sum[1] += t;
            }
            sum
        })
        .collect();
    let mut sums = partial
        .iter()
        .fold([0.0; 2], |a, b| [a[0] + b[0], a[1] + b[1]]);
    ranks.sum(&mut sums)?;
    let planes = 3.0 * (sites * ranks.comm.size()) as f64;
    let (s, t) = (sums[0] / planes, sums[1] / planes);
    Ok([(s + t) / 2.0, s, t])
}
