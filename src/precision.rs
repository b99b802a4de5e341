//! Storage precisions and gauge-link compression, the knobs a caller sets for
//! the precise and the sloppy fields of a solve.

/// How the numbers of a field are stored. Arithmetic is at least single.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    Double,
    Single,
    /// 16-bit fixed point with a per-site norm (mixed-precision issue).
    Half,
    /// 8-bit fixed point with a per-site norm (mixed-precision issue).
    Quarter,
}

impl Precision {
    /// Unit roundoff of the storage format.
    pub fn epsilon(self) -> f64 {
        match self {
            Precision::Double => f64::EPSILON / 2.0,
            Precision::Single => f32::EPSILON as f64 / 2.0,
            Precision::Half => 1.0 / 32767.0 / 2.0,
            Precision::Quarter => 1.0 / 127.0 / 2.0,
        }
    }

    /// Bytes per real number in storage (norms excluded).
    pub fn bytes_per_real(self) -> usize {
        match self {
            Precision::Double => 8,
            Precision::Single => 4,
            Precision::Half => 2,
            Precision::Quarter => 1,
        }
    }
}

/// How many reals of each 3×3 link are stored; the rest are rebuilt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reconstruct {
    /// All 18 reals.
    Full18,
    /// Two rows; the third is `(a × b)*` (mixed-precision issue).
    Twelve,
    /// Eight reals, seed clark2010 Appendix A (mixed-precision issue).
    Eight,
}

/// Periodic or anti-periodic in time (space is always periodic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TBoundary {
    Periodic,
    AntiPeriodic,
}

impl TBoundary {
    /// The factor a hop across the T boundary carries.
    pub fn sign(self) -> f64 {
        match self {
            TBoundary::Periodic => 1.0,
            TBoundary::AntiPeriodic => -1.0,
        }
    }
}
