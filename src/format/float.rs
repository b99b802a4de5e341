//! The two float types fields are stored in on the host and the CPU
//! backend (`f64`, `f32`), computed with in double: the copy loops of the
//! host layouts and the CPU hopping terms are monomorphised over them
//! instead of matching on the type for every number.

/// A stored float, read as and written from a double.
pub trait Float: Copy + Send + Sync + 'static {
    fn to_f64(self) -> f64;
    fn from_f64(x: f64) -> Self;
}

impl Float for f64 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x
    }
}

impl Float for f32 {
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}
