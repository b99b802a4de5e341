//! The fixed-point integers of the half, quarter and 32-bit link formats
//! (docs/conventions.md, "Precision formats"; seed clark2010 §4.6): a value
//! `x` is stored as `round(x / scale · MAX)` in a signed integer, clamped to
//! ±MAX. Both backends and the clover storage quantise through this trait,
//! so that a number stored on the CPU and on the GPU is the same integer.

/// A fixed-point integer type of the half and quarter formats.
pub trait Fixed: Copy + Send + Sync + Default + 'static {
    /// The largest magnitude stored: 2^(bits−1) − 1.
    const MAX: f64;
    fn to_f64(self) -> f64;
    fn from_scaled(v: f64) -> Self;
}

impl Fixed for i16 {
    const MAX: f64 = 32767.0;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_scaled(v: f64) -> Self {
        v.round().clamp(-<Self as Fixed>::MAX, <Self as Fixed>::MAX) as i16
    }
}

impl Fixed for i32 {
    const MAX: f64 = 2147483647.0;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_scaled(v: f64) -> Self {
        v.round().clamp(-<Self as Fixed>::MAX, <Self as Fixed>::MAX) as i32
    }
}

impl Fixed for i8 {
    const MAX: f64 = 127.0;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn from_scaled(v: f64) -> Self {
        v.round().clamp(-<Self as Fixed>::MAX, <Self as Fixed>::MAX) as i8
    }
}
