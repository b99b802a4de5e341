//! Fields and links stored as plain floats (double or single), seen as the
//! slices they are: the hopping terms' fast path reads them without the
//! per-site format dispatch of `storage` and `links`, monomorphised for
//! each float type, so that the compiler keeps the arithmetic in registers
//! and the loads contiguous (issue 34: the CPU backend as fast as MILC's C).
//! Fixed-point and compressed formats keep the general path.

/// A stored float (`format::Float`) that picks its own slices out of
/// `Floats`.
pub trait Float: crate::format::Float {
    /// `f` as a slice of this type, if it is one.
    fn slice(f: Floats<'_>) -> Option<&[Self]>;
}

/// Read-only floats of one type.
#[derive(Clone, Copy)]
pub enum Floats<'a> {
    F64(&'a [f64]),
    F32(&'a [f32]),
}

/// Writable floats of one type.
pub enum FloatsMut<'a> {
    F64(&'a mut [f64]),
    F32(&'a mut [f32]),
}

impl Float for f64 {
    fn slice(f: Floats<'_>) -> Option<&[f64]> {
        match f {
            Floats::F64(v) => Some(v),
            Floats::F32(_) => None,
        }
    }
}

impl Float for f32 {
    fn slice(f: Floats<'_>) -> Option<&[f32]> {
        match f {
            Floats::F32(v) => Some(v),
            Floats::F64(_) => None,
        }
    }
}

/// Owned floats of one type.
#[derive(Debug, Clone)]
pub enum FloatVec {
    F64(Vec<f64>),
    F32(Vec<f32>),
}

impl FloatVec {
    pub fn floats(&self) -> Floats<'_> {
        match self {
            FloatVec::F64(v) => Floats::F64(v),
            FloatVec::F32(v) => Floats::F32(v),
        }
    }
}
