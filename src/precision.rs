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
    /// 24 signed 20-bit integers sharing one power-of-two exponent per site
    /// (seed clark2022 §4, Appendix A); links in 16-bit fixed point.
    Packed20,
    /// 24 signed 30-bit integers sharing one exponent per site (seed
    /// clark2022 §4); links in 32-bit fixed point, arithmetic in double.
    Packed30,
}

impl Precision {
    /// Every storage format, finest first.
    pub const ALL: [Precision; 6] = [
        Precision::Double,
        Precision::Single,
        Precision::Half,
        Precision::Quarter,
        Precision::Packed20,
        Precision::Packed30,
    ];

    /// Unit roundoff of the storage format.
    pub fn epsilon(self) -> f64 {
        match self {
            Precision::Double => f64::EPSILON / 2.0,
            Precision::Single => f32::EPSILON as f64 / 2.0,
            Precision::Half => 1.0 / 32767.0 / 2.0,
            Precision::Quarter => 1.0 / 127.0 / 2.0,
            // The shared scale is a power of two between max/M and
            // 2·max/M (M = 2^(B−1) − 1), so the rounding error of a
            // component is at most max/M, not max/(2M) as for half.
            Precision::Packed20 => 1.0 / ((1u64 << 19) - 1) as f64,
            Precision::Packed30 => 1.0 / ((1u64 << 29) - 1) as f64,
        }
    }

    /// Bytes per real number in storage (norms excluded; the packed
    /// formats round up to whole bytes).
    pub fn bytes_per_real(self) -> usize {
        match self {
            Precision::Double => 8,
            Precision::Single => 4,
            Precision::Half => 2,
            Precision::Quarter => 1,
            Precision::Packed20 => 3,
            Precision::Packed30 => 4,
        }
    }

    /// Unit roundoff of the gauge links stored beside spinors of this
    /// format: the packed formats pair with 16-bit (20-bit spinors) and
    /// 32-bit (30-bit spinors) fixed-point links (seed clark2022 §4).
    pub fn link_epsilon(self) -> f64 {
        match self {
            Precision::Packed20 => Precision::Half.epsilon(),
            Precision::Packed30 => 0.5 / 2147483647.0,
            p => p.epsilon(),
        }
    }

    /// The precision the mixed BiCGstab keeps its partial solution x̂ in
    /// beside sloppy fields of this format: single for the formats coarser
    /// than single (half, quarter, 20-bit; see solver::bicgstab_reliable),
    /// else the format itself.
    pub fn partial_solution(self) -> Precision {
        if self.epsilon() > Precision::Single.epsilon() {
            Precision::Single
        } else {
            self
        }
    }

    /// Whether the format is only a sloppy (storage) format: the precise
    /// fields of a solve must be double or single.
    pub fn is_sloppy_only(self) -> bool {
        !matches!(self, Precision::Double | Precision::Single)
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

/// The names the command-line tools (and their docs) use for the formats.
impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Precision, String> {
        Ok(match s {
            "double" => Precision::Double,
            "single" => Precision::Single,
            "half" => Precision::Half,
            "quarter" => Precision::Quarter,
            "packed20" => Precision::Packed20,
            "packed30" => Precision::Packed30,
            _ => {
                return Err(format!(
                    "'{s}' is not a precision (double|single|half|quarter|packed20|packed30)"
                ))
            }
        })
    }
}

/// Reals per link: `18`, `12` or `8`.
impl std::str::FromStr for Reconstruct {
    type Err = String;
    fn from_str(s: &str) -> Result<Reconstruct, String> {
        Ok(match s {
            "18" => Reconstruct::Full18,
            "12" => Reconstruct::Twelve,
            "8" => Reconstruct::Eight,
            _ => return Err(format!("'{s}' is not a link compression (18|12|8)")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_to_their_formats() {
        for (name, p) in [
            ("double", Precision::Double),
            ("single", Precision::Single),
            ("half", Precision::Half),
            ("quarter", Precision::Quarter),
            ("packed20", Precision::Packed20),
            ("packed30", Precision::Packed30),
        ] {
            assert_eq!(name.parse::<Precision>(), Ok(p));
        }
        assert!("float".parse::<Precision>().is_err());
        for r in [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight] {
            assert_eq!(r.reals().to_string().parse::<Reconstruct>(), Ok(r));
        }
        assert!("9".parse::<Reconstruct>().unwrap_err().contains("18|12|8"));
    }
}
