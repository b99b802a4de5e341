//! CPU storage of gauge links: `[parity][cb][mu]`, each link as 18, 12 or 8
//! reals (`reconstruct`) in double, single, half or quarter precision, and
//! for the packed spinor formats the links seed clark2022 §4 pairs with
//! them: 16-bit fixed point beside 20-bit spinors, 32-bit fixed point beside
//! 30-bit ones. The fixed-point formats store `value / scale` with `scale`
//! the largest stored magnitude (1 for SU(3) links: CONVENTIONS.md,
//! "Precision formats").
//! Links are stored as the caller gave them; the anti-periodic sign is
//! applied by the dslash on the hops across the T boundary, since 12/8
//! compression cannot carry a sign.

use super::storage::Fixed;
use crate::field::GaugeField;
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
}

fn to_fixed<T: Fixed>(reals: &[f64], scale: f64) -> Vec<T> {
    reals
        .iter()
        .map(|&v| T::from_scaled(v / scale * T::MAX))
        .collect()
}

impl Links {
    pub fn new(field: &GaugeField, precision: Precision, reconstruct: Reconstruct) -> Links {
        let r = reconstruct.reals();
        let mut reals = vec![0.0f64; field.links().len() * r];
        for (u, out) in field.links().iter().zip(reals.chunks_exact_mut(r)) {
            let mut buf = [0.0; 18];
            reconstruct::compress(u, reconstruct, &mut buf);
            out.copy_from_slice(&buf[..r]);
        }
        let scale = reals.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        let data = match precision {
            Precision::Double => LinkData::F64(reals),
            Precision::Single => LinkData::F32(reals.iter().map(|&v| v as f32).collect()),
            Precision::Half | Precision::Packed20 => LinkData::Half(to_fixed(&reals, scale)),
            Precision::Quarter => LinkData::Quarter(to_fixed(&reals, scale)),
            Precision::Packed30 => LinkData::Fixed32(to_fixed(&reals, scale)),
        };
        Links {
            data,
            precision,
            reconstruct,
            scale,
        }
    }

    pub fn precision(&self) -> Precision {
        self.precision
    }

    pub fn reconstruct(&self) -> Reconstruct {
        self.reconstruct
    }

    /// The link with index `(parity · Vh + cb) · 4 + mu`.
    #[inline(always)]
    pub fn load(&self, index: usize) -> Su3 {
        let r = self.reconstruct.reals();
        if let (LinkData::F64(d), Reconstruct::Full18) = (&self.data, self.reconstruct) {
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
        reconstruct::decompress(&v[..r], self.reconstruct)
    }
}
