//! CPU storage of gauge links: `[parity][cb][mu]`, each link as 18, 12 or 8
//! reals (`reconstruct`) in double, single, half or quarter precision, and
//! for the packed spinor formats the links seed clark2022 §4 pairs with
//! them: 16-bit fixed point beside 20-bit spinors, 32-bit fixed point beside
//! 30-bit ones. The fixed-point formats store `value / scale` with `scale`
//! the largest stored magnitude (1 for SU(3) links: docs/conventions.md,
//! "Precision formats").
//! Links are stored as the caller gave them; the anti-periodic sign is
//! applied by the dslash on the hops across the T boundary, since 12/8
//! compression cannot carry a sign.
//!
//! Temporal gauge (`gauge_fixed`): every T link off the last time slice is
//! the unit matrix, so only the spatial links (`[parity][cb][mu < 3]`) and
//! the T links of the last slice (`[parity][cb of that slice]`) are stored,
//! and `load` answers `None` (the identity) for the others: a quarter less
//! link traffic, as seed clark2010 §4.6 counts it.

use super::floats::Floats;
use crate::error::Result;
use crate::field::GaugeField;
use crate::format::Fixed;
use crate::lattice::{Lattice, Parity};
use crate::long_links::{self, LongReconstruct};
use crate::precision::{Precision, Reconstruct};
use crate::reconstruct;
use crate::su3::Su3;

#[derive(Debug, Clone)]
enum LinkData {
    F64(Vec<f64>),
    F32(Vec<f32>),
    Half(Vec<i16>),
    Quarter(Vec<i8>),
    Fixed32(Vec<i32>),
}

/// The links of one gauge field in one storage format.
#[derive(Debug, Clone)]
pub struct Links {
    data: LinkData,
    /// The precision asked for (packed formats share the fixed-point data).
    precision: Precision,
    reconstruct: Reconstruct,
    /// Fixed-point scale (`stored · scale / MAX` is the value).
    scale: f64,
    /// Set when the field is in temporal gauge (unit T links not stored).
    temporal: Option<Temporal>,
    /// Sites per parity.
    vh: usize,
    /// Staggered long links stored as `|s|` × U(3) (`long_links`): the
    /// compression and `|s|`; then `reconstruct` is unused.
    long: Option<(LongReconstruct, f64)>,
}

/// Where the stored T links of a field in temporal gauge live.
#[derive(Debug, Clone, Copy)]
struct Temporal {
    /// Sites of one parity on one time slice.
    slice: usize,
    /// The first checkerboard index of the last time slice.
    last_start: usize,
}

fn to_fixed<T: Fixed>(reals: &[f64], scale: f64, what: &str) -> Result<Vec<T>> {
    let values = reals.iter().map(|&v| T::from_scaled(v / scale * T::MAX));
    crate::alloc::collect(reals.len(), values, what)
}

/// A gauge field's links compressed to their stored reals (`reconstruct`),
/// in double, before the storage format rounds them: `Links::new` in two
/// steps, so that on many ranks the fixed-point scale can be the largest
/// stored number of the whole lattice (`largest`, then a global maximum),
/// as one rank would choose it.
pub struct Compressed {
    reals: Vec<f64>,
    precision: Precision,
    reconstruct: Reconstruct,
    temporal: Option<Temporal>,
    vh: usize,
    what: String,
}

impl Compressed {
    pub fn of(
        field: &GaugeField,
        precision: Precision,
        reconstruct: Reconstruct,
        temporal_gauge: bool,
    ) -> Result<Compressed> {
        let lat: &Lattice = field.lattice();
        let vh = lat.half_volume();
        let temporal = temporal_gauge.then(|| {
            let d = lat.dims();
            let slice = d[0] * d[1] * d[2] / 2;
            Temporal {
                slice,
                last_start: (d[3] - 1) * slice,
            }
        });
        let stored = match temporal {
            None => 4 * 2 * vh,
            Some(t) => 3 * 2 * vh + 2 * t.slice,
        };
        let r = reconstruct.reals();
        let what = format!("the {precision:?} links of a {:?} lattice", lat.dims());
        let mut reals = crate::alloc::filled(stored * r, 0.0f64, &what)?;
        for p in [Parity::Even, Parity::Odd] {
            for cb in 0..vh {
                for mu in 0..4 {
                    if let Some(i) = slot(temporal, vh, p.index(), cb, mu) {
                        let mut buf = [0.0; 18];
                        reconstruct::compress(field.link(p, cb, mu), reconstruct, &mut buf);
                        reals[i * r..(i + 1) * r].copy_from_slice(&buf[..r]);
                    }
                }
            }
        }
        Ok(Compressed {
            reals,
            precision,
            reconstruct,
            temporal,
            vh,
            what,
        })
    }

    /// The largest stored magnitude, at least 1: the fixed-point scale.
    pub fn largest(&self) -> f64 {
        self.reals.iter().fold(1.0f64, |m, v| m.max(v.abs()))
    }

    /// The links in their storage format, fixed point relative to `scale`
    /// (at least `largest()`).
    pub fn store(self, scale: f64) -> Result<Links> {
        let (reals, what) = (self.reals, &self.what);
        let data = match self.precision {
            Precision::Double => LinkData::F64(reals),
            Precision::Single => LinkData::F32(crate::alloc::collect(
                reals.len(),
                reals.iter().map(|&v| v as f32),
                what,
            )?),
            Precision::Half | Precision::Packed20 => LinkData::Half(to_fixed(&reals, scale, what)?),
            Precision::Quarter => LinkData::Quarter(to_fixed(&reals, scale, what)?),
            Precision::Packed30 => LinkData::Fixed32(to_fixed(&reals, scale, what)?),
        };
        Ok(Links {
            data,
            precision: self.precision,
            reconstruct: self.reconstruct,
            scale,
            temporal: self.temporal,
            vh: self.vh,
            long: None,
        })
    }
}

/// A staggered operator's links, which are not unitary, as the reals they
/// are stored from: all 18 (fat or thin links), or long links compressed
/// as `|s|` × U(3) with a given `|s|` (`long_links`; the caller has
/// checked the field with `long_links::check`), before the storage format
/// rounds them. The fixed-point formats scale by the largest stored
/// magnitude, not by 1; on many ranks `|s|` and that scale are the whole
/// lattice's, as one rank would choose them.
pub struct StaggeredReals {
    reals: Vec<f64>,
    long: Option<(LongReconstruct, f64)>,
    vh: usize,
    what: String,
}

impl StaggeredReals {
    /// The links of `field`: long links compressed (`long`) with `|s| =
    /// u3_scale`.
    pub fn of(
        field: &GaugeField,
        long: Option<LongReconstruct>,
        u3_scale: f64,
    ) -> Result<StaggeredReals> {
        let lat: &Lattice = field.lattice();
        let vh = lat.half_volume();
        let r = long.map_or(18, LongReconstruct::reals);
        let what = format!("the staggered links of a {:?} lattice", lat.dims());
        let mut reals = crate::alloc::filled(8 * vh * r, 0.0f64, &what)?;
        let mut buf = [0.0; 18];
        for (i, u) in field.links().iter().enumerate() {
            // GaugeField links are ordered [parity][cb][mu], as `slot`.
            match long {
                None => u.to_row_major(&mut buf),
                Some(lr) => long_links::compress(u, lr, u3_scale, &mut buf),
            }
            reals[i * r..(i + 1) * r].copy_from_slice(&buf[..r]);
        }
        Ok(StaggeredReals {
            reals,
            long: long.map(|lr| (lr, u3_scale)),
            vh,
            what,
        })
    }

    /// The largest stored magnitude (1 if all are zero).
    pub fn largest(&self) -> f64 {
        let max = self.reals.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if max > 0.0 {
            max
        } else {
            1.0
        }
    }

    /// The links in `precision`, fixed point relative to `scale` (at
    /// least `largest()`).
    pub fn store(self, precision: Precision, scale: f64) -> Result<Links> {
        let (reals, what) = (self.reals, &self.what);
        let data = match precision {
            Precision::Double => LinkData::F64(reals),
            Precision::Single => LinkData::F32(crate::alloc::collect(
                reals.len(),
                reals.iter().map(|&v| v as f32),
                what,
            )?),
            // Beside 20-bit colour vectors 16-bit links, beside 30-bit ones
            // 32-bit fixed point (seed clark2022 §4), as for Wilson fields.
            Precision::Half | Precision::Packed20 => LinkData::Half(to_fixed(&reals, scale, what)?),
            Precision::Quarter => LinkData::Quarter(to_fixed(&reals, scale, what)?),
            Precision::Packed30 => LinkData::Fixed32(to_fixed(&reals, scale, what)?),
        };
        Ok(Links {
            data,
            precision,
            reconstruct: Reconstruct::Full18,
            scale,
            temporal: None,
            vh: self.vh,
            long: self.long,
        })
    }
}

impl Links {
    /// Whether the T links off the last slice are implicit unit matrices.
    pub fn temporal_gauge(&self) -> bool {
        self.temporal.is_some()
    }

    /// The stored reals as a slice, where every link is 18 doubles or
    /// singles at `((parity · Vh + cb) · 4 + mu) · 18` (no compression, no
    /// implicit unit links): the fast paths' view.
    pub fn floats(&self) -> Option<Floats<'_>> {
        let r = match self.long {
            Some((lr, _)) => lr.reals(),
            None => self.reconstruct.reals(),
        };
        if r != 18 || self.temporal.is_some() {
            return None;
        }
        match &self.data {
            LinkData::F64(d) => Some(Floats::F64(d)),
            LinkData::F32(d) => Some(Floats::F32(d)),
            _ => None,
        }
    }

    /// The link `U_mu` at checkerboard site `cb` of parity `p`; `None` for
    /// an unstored unit link (temporal gauge).
    #[inline(always)]
    pub fn link(&self, p: Parity, cb: usize, mu: usize) -> Option<Su3> {
        slot(self.temporal, self.vh, p.index(), cb, mu).map(|i| self.load(i))
    }

    pub fn precision(&self) -> Precision {
        self.precision
    }

    pub fn reconstruct(&self) -> Reconstruct {
        self.reconstruct
    }

    /// The stored link with index `index` (`slot`).
    #[inline(always)]
    fn load(&self, index: usize) -> Su3 {
        let r = match self.long {
            Some((lr, _)) => lr.reals(),
            None => self.reconstruct.reals(),
        };
        if let (LinkData::F64(d), 18) = (&self.data, r) {
            return Su3::from_row_major(&d[index * 18..index * 18 + 18]);
        }
        let mut v = [0.0f64; 18];
        let range = index * r..(index + 1) * r;
        match &self.data {
            LinkData::F64(d) => v[..r].copy_from_slice(&d[range]),
            LinkData::F32(d) => {
                for (o, x) in v.iter_mut().zip(&d[range]) {
                    *o = *x as f64;
                }
            }
            LinkData::Half(d) => {
                let s = self.scale / <i16 as Fixed>::MAX;
                for (o, x) in v.iter_mut().zip(&d[range]) {
                    *o = x.to_f64() * s;
                }
            }
            LinkData::Quarter(d) => {
                let s = self.scale / <i8 as Fixed>::MAX;
                for (o, x) in v.iter_mut().zip(&d[range]) {
                    *o = x.to_f64() * s;
                }
            }
            LinkData::Fixed32(d) => {
                let s = self.scale / <i32 as Fixed>::MAX;
                for (o, x) in v.iter_mut().zip(&d[range]) {
                    *o = x.to_f64() * s;
                }
            }
        }
        match self.long {
            Some((lr, u3_scale)) => long_links::decompress(&v[..r], lr, u3_scale),
            None => reconstruct::decompress(&v[..r], self.reconstruct),
        }
    }
}

/// The storage index of link `(parity, cb, mu)`: `(parity · Vh + cb) · 4 + mu`,
/// or in temporal gauge `(parity · Vh + cb) · 3 + mu` for the spatial links
/// and `6 Vh + parity · slice + (cb − last_start)` for the T links of the last
/// slice; `None` for the unstored unit T links.
#[inline(always)]
fn slot(
    temporal: Option<Temporal>,
    vh: usize,
    parity: usize,
    cb: usize,
    mu: usize,
) -> Option<usize> {
    match temporal {
        None => Some((parity * vh + cb) * 4 + mu),
        Some(_) if mu < 3 => Some((parity * vh + cb) * 3 + mu),
        Some(t) if cb >= t.last_start => Some(6 * vh + parity * t.slice + (cb - t.last_start)),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::random;

    /// In temporal gauge only the spatial links and the last slice's T links
    /// are stored (3/4 of the links plus one slice), every stored link reads
    /// back as given, and the others read as the implicit unit matrix.
    #[test]
    fn temporal_gauge_stores_only_what_is_not_unit() {
        let lat = Arc::new(Lattice::new([4, 4, 2, 6]).unwrap());
        let field = random::hot_gauge(&lat, 9);
        let full = {
            let c = Compressed::of(&field, Precision::Double, Reconstruct::Full18, false).unwrap();
            let scale = c.largest();
            c.store(scale).unwrap()
        };
        let tg = {
            let c = Compressed::of(&field, Precision::Double, Reconstruct::Full18, true).unwrap();
            let scale = c.largest();
            c.store(scale).unwrap()
        };
        let len = |l: &Links| match &l.data {
            LinkData::F64(v) => v.len() / 18,
            _ => unreachable!(),
        };
        let slice = 4 * 4 * 2;
        assert_eq!(len(&full), 4 * lat.volume());
        assert_eq!(len(&tg), 3 * lat.volume() + slice);
        for p in [Parity::Even, Parity::Odd] {
            for cb in 0..lat.half_volume() {
                let t = lat.coords(p, cb)[3];
                for mu in 0..4 {
                    let u = tg.link(p, cb, mu);
                    assert_eq!(full.link(p, cb, mu), Some(*field.link(p, cb, mu)));
                    if mu == 3 && t != 5 {
                        assert!(u.is_none(), "{p:?} {cb} {mu}");
                    } else {
                        assert_eq!(u, Some(*field.link(p, cb, mu)), "{p:?} {cb} {mu}");
                    }
                }
            }
        }
    }
}
