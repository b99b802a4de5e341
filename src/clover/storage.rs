//! The stored numbers of a clover field beside spinors of each format, one
//! definition for both backends (so the CUDA kernels and the CPU backend
//! apply the same rounded numbers): double and single as floats; half and
//! quarter as 16- and 8-bit fixed point with one f32 norm per chiral block
//! (its largest absolute stored real), as QUDA stores its fixed-point
//! clover; the packed spinor formats pair with 16-bit (20-bit spinors) and
//! single (30-bit spinors) clover fields, as they do with their links.

use super::chiral;
use super::packed::BLOCK_REALS;
use super::{CloverField, PACKED_REALS};
use crate::error::Result;
use crate::format::Fixed;
use crate::precision::Precision;

/// How a clover field is stored beside spinors of a given format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloverFormat {
    Double,
    Single,
    /// 16-bit fixed point, one norm per block.
    Half,
    /// 8-bit fixed point, one norm per block.
    Quarter,
}

impl CloverFormat {
    pub fn for_spinors(p: Precision) -> CloverFormat {
        match p {
            Precision::Double => CloverFormat::Double,
            Precision::Single | Precision::Packed30 => CloverFormat::Single,
            Precision::Half | Precision::Packed20 => CloverFormat::Half,
            Precision::Quarter => CloverFormat::Quarter,
        }
    }

    /// Unit roundoff of a stored entry relative to its block's largest.
    pub fn epsilon(self) -> f64 {
        match self {
            CloverFormat::Double => Precision::Double.epsilon(),
            CloverFormat::Single => Precision::Single.epsilon(),
            CloverFormat::Half => Precision::Half.epsilon(),
            CloverFormat::Quarter => Precision::Quarter.epsilon(),
        }
    }

    /// Bytes per site (72 reals, and two f32 norms for fixed point).
    pub fn bytes_per_site(self) -> usize {
        match self {
            CloverFormat::Double => 8 * PACKED_REALS,
            CloverFormat::Single => 4 * PACKED_REALS,
            CloverFormat::Half => 2 * PACKED_REALS + 8,
            CloverFormat::Quarter => PACKED_REALS + 8,
        }
    }
}

/// The stored numbers of a field (`chiral::storage_site` per site, then
/// rounded to the format), sites in canonical order.
#[derive(Debug, Clone)]
pub enum CloverData {
    F64(Vec<f64>),
    F32(Vec<f32>),
    Half { v: Vec<i16>, norm: Vec<f32> },
    Quarter { v: Vec<i8>, norm: Vec<f32> },
}

/// The per-block norm and fixed-point integers of one block.
pub(crate) fn quantize_block<T: Fixed>(block: &[f64], v: &mut [T]) -> f32 {
    let max = block.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let norm = max as f32;
    if norm == 0.0 {
        v.iter_mut().for_each(|e| *e = T::default());
        return 0.0;
    }
    let scale = T::MAX / norm as f64;
    for (e, x) in v.iter_mut().zip(block) {
        *e = T::from_scaled(x * scale);
    }
    norm
}

/// Every site's stored numbers (`chiral::storage_site`) rounded to the
/// fixed-point `v` with their two block norms, one parallel pass.
fn quantize_sites<T: Fixed + Send>(field: &CloverField, v: &mut [T], norm: &mut [f32]) {
    use rayon::prelude::*;
    v.par_chunks_mut(PACKED_REALS)
        .zip(norm.par_chunks_mut(2))
        .zip(field.sites().par_iter())
        .for_each(|((v, norm), site)| {
            let s = chiral::storage_site(site);
            for k in 0..2 {
                let block = &s[k * BLOCK_REALS..(k + 1) * BLOCK_REALS];
                norm[k] = quantize_block(block, &mut v[k * BLOCK_REALS..(k + 1) * BLOCK_REALS]);
            }
        });
}

/// Every site's stored numbers converted by `conv`, one parallel pass.
fn convert_sites<T: Copy + Default + Send>(
    field: &CloverField,
    what: &str,
    conv: impl Fn(f64) -> T + Sync,
) -> Result<Vec<T>> {
    use rayon::prelude::*;
    let mut v = crate::alloc::filled(field.sites().len() * PACKED_REALS, T::default(), what)?;
    v.par_chunks_mut(PACKED_REALS)
        .zip(field.sites().par_iter())
        .for_each(|(out, site)| {
            let s = chiral::storage_site(site);
            out.iter_mut().zip(s).for_each(|(o, x)| *o = conv(x));
        });
    Ok(v)
}

impl CloverData {
    /// The stored form of `field` for `format` (the sites converted in
    /// parallel straight into the stored arrays).
    pub fn new(field: &CloverField, format: CloverFormat) -> Result<CloverData> {
        use crate::alloc::filled;
        let n = field.sites().len();
        let what = &format!("the {format:?} clover field of {n} sites");
        Ok(match format {
            CloverFormat::Double => CloverData::F64(convert_sites(field, what, |x| x)?),
            CloverFormat::Single => CloverData::F32(convert_sites(field, what, |x| x as f32)?),
            CloverFormat::Half => {
                let (mut v, mut norm) = (
                    filled(n * PACKED_REALS, 0i16, what)?,
                    filled(2 * n, 0.0, what)?,
                );
                quantize_sites(field, &mut v, &mut norm);
                CloverData::Half { v, norm }
            }
            CloverFormat::Quarter => {
                let (mut v, mut norm) = (
                    filled(n * PACKED_REALS, 0i8, what)?,
                    filled(2 * n, 0.0, what)?,
                );
                quantize_sites(field, &mut v, &mut norm);
                CloverData::Quarter { v, norm }
            }
        })
    }

    pub fn format(&self) -> CloverFormat {
        match self {
            CloverData::F64(_) => CloverFormat::Double,
            CloverData::F32(_) => CloverFormat::Single,
            CloverData::Half { .. } => CloverFormat::Half,
            CloverData::Quarter { .. } => CloverFormat::Quarter,
        }
    }

    /// The 72 stored reals of canonical site `i`, as numbers.
    #[inline]
    pub fn site(&self, i: usize) -> [f64; PACKED_REALS] {
        let r = i * PACKED_REALS;
        fn decode<T: Fixed>(v: &[T], norm: &[f32], i: usize) -> [f64; PACKED_REALS] {
            let r = i * PACKED_REALS;
            std::array::from_fn(|j| {
                let n = norm[2 * i + j / BLOCK_REALS] as f64;
                v[r + j].to_f64() * (n / T::MAX)
            })
        }
        match self {
            CloverData::F64(v) => std::array::from_fn(|j| v[r + j]),
            CloverData::F32(v) => std::array::from_fn(|j| v[r + j] as f64),
            CloverData::Half { v, norm } => decode(v, norm, i),
            CloverData::Quarter { v, norm } => decode(v, norm, i),
        }
    }
}
