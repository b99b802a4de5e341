//! CPU storage of fields: parity-split, site-major, the 24 reals of a site
//! together (`[spin][color][re, im]`, the canonical order). The GPU uses
//! structure-of-arrays within a parity for coalescing; on the CPU the site's
//! numbers together keep each neighbour gather to one or two cache lines.

use crate::precision::Precision;

/// A real storage type of the CPU backend.
pub trait Real: Copy + Send + Sync + Default + 'static {
    const PRECISION: Precision;
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

impl Real for f64 {
    const PRECISION: Precision = Precision::Double;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
}

impl Real for f32 {
    const PRECISION: Precision = Precision::Single;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

/// The numbers of a field in one of the CPU backend's precisions.
#[derive(Debug, Clone)]
pub enum Data {
    F64(Vec<f64>),
    F32(Vec<f32>),
}

impl Data {
    pub fn zeros(precision: Precision, len: usize) -> Option<Data> {
        match precision {
            Precision::Double => Some(Data::F64(vec![0.0; len])),
            Precision::Single => Some(Data::F32(vec![0.0; len])),
            Precision::Half | Precision::Quarter => None,
        }
    }

    pub fn precision(&self) -> Precision {
        match self {
            Data::F64(_) => Precision::Double,
            Data::F32(_) => Precision::Single,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Data::F64(v) => v.len(),
            Data::F32(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
