//! Compressed storage of staggered long links (QUDA's reconstruct 13 and 9;
//! learned from QUDA `include/gauge_field_order.h`, `Reconstruct<13>` and
//! `Reconstruct<9>`, and `lib/milc_interface.cpp`; nothing copied).
//!
//! An improved staggered long link is `L = s W` with `W` in U(3) (the Naik
//! coefficient `s`, the staggered phase and the boundary sign folded in: a
//! sign only changes `det W`). With `e^{iφ} = det W`:
//! - 13 reals: the first two rows of `W = L/s` and `φ/π`; the third row is
//!   `e^{iφ} (w0 × w1)*` (for U(3), `w2 = det W · (w0 × w1)*`);
//! - 9 reals: the 8 of `V = e^{−iφ/3} W` (in SU(3); `reconstruct::compress`,
//!   `Reconstruct::Eight`) and `φ/π`; `W = e^{iφ/3} V`.
//!
//! `|s|` is the rows' common norm, measured from the field (`scale_of`); its
//! sign needs no storing (`−W` is in U(3) too). Every stored number lies in
//! [−1, 1], as the fixed-point formats need. The field is checked to be
//! `|s|` times U(3) before it is stored (`check`).

use num_complex::Complex64 as C64;

use crate::precision::Reconstruct;
use crate::reconstruct;
use crate::su3::{conj_cross, Su3};

/// How long links are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LongReconstruct {
    /// All 18 reals.
    Full18,
    /// Two rows and the phase of the determinant.
    Thirteen,
    /// Eight reals of the SU(3) part and the phase of the determinant.
    Nine,
}

impl LongReconstruct {
    /// Reals stored per link.
    pub fn reals(self) -> usize {
        match self {
            LongReconstruct::Full18 => 18,
            LongReconstruct::Thirteen => 13,
            LongReconstruct::Nine => 9,
        }
    }
}

impl std::str::FromStr for LongReconstruct {
    type Err = String;
    fn from_str(s: &str) -> Result<LongReconstruct, String> {
        Ok(match s {
            "18" => LongReconstruct::Full18,
            "13" => LongReconstruct::Thirteen,
            "9" => LongReconstruct::Nine,
            _ => return Err(format!("'{s}' is not a long-link compression (18|13|9)")),
        })
    }
}

/// `|s|` of a field of `s × U(3)` links: the norm of the first row of the
/// first link (every row of every link is checked against it by `check`).
pub fn scale_of(links: &[Su3]) -> f64 {
    links
        .first()
        .map(|u| u.0[0].iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt())
        .unwrap_or(1.0)
}

/// The stored reals of `l = s W` with `|s| = scale`, into `out[..r.reals()]`.
pub fn compress(l: &Su3, r: LongReconstruct, scale: f64, out: &mut [f64]) {
    let pi = std::f64::consts::PI;
    let w = l.scale(C64::new(1.0 / scale, 0.0));
    let phi = w.determinant().arg();
    match r {
        LongReconstruct::Full18 => l.to_row_major(&mut out[..18]),
        LongReconstruct::Thirteen => {
            reconstruct::compress(&w, Reconstruct::Twelve, out);
            out[12] = phi / pi;
        }
        LongReconstruct::Nine => {
            let v = w.scale(C64::from_polar(1.0, -phi / 3.0));
            reconstruct::compress(&v, Reconstruct::Eight, out);
            out[8] = phi / pi;
        }
    }
}

/// The long link from its stored reals.
#[inline(always)]
pub fn decompress(v: &[f64], r: LongReconstruct, scale: f64) -> Su3 {
    let pi = std::f64::consts::PI;
    match r {
        LongReconstruct::Full18 => Su3::from_row_major(&v[..18]),
        LongReconstruct::Thirteen => {
            let c = |k: usize| C64::new(v[k], v[k + 1]);
            let (a, b) = ([c(0), c(2), c(4)], [c(6), c(8), c(10)]);
            let e = C64::from_polar(1.0, v[12] * pi);
            let third = conj_cross(&a, &b).map(|z| e * z);
            Su3([a, b, third]).scale(C64::new(scale, 0.0))
        }
        LongReconstruct::Nine => {
            let su3 = reconstruct::decompress(&v[..8], Reconstruct::Eight);
            su3.scale(C64::from_polar(scale, v[8] * pi / 3.0))
        }
    }
}

/// The link whose round trip through `r` strays furthest, and how far
/// (relative to `scale`): a field that is not `|s|` times U(3) cannot be
/// stored compressed.
pub fn check(links: &[Su3], r: LongReconstruct, scale: f64) -> (f64, usize) {
    use rayon::prelude::*;
    // In parallel, reduced in link order: the first link of the largest
    // deviation, or the last one that is NaN (what a serial scan keeps).
    links
        .par_iter()
        .enumerate()
        .map(|(i, l)| {
            let mut buf = [0.0; 18];
            compress(l, r, scale, &mut buf);
            let back = decompress(&buf, r, scale);
            let d =
                l.0.iter()
                    .flatten()
                    .zip(back.0.iter().flatten())
                    .map(|(a, b)| (a - b).norm())
                    .fold(0.0, f64::max)
                    / scale;
            (d, i)
        })
        .reduce(
            || (0.0, 0),
            |a, b| {
                if b.0.is_nan() || (!a.0.is_nan() && b.0 > a.0) {
                    b
                } else {
                    a
                }
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random;

    #[test]
    fn scaled_u3_links_round_trip_through_13_and_9() {
        let mut rng = random::rng(5);
        let s = -1.0 / 24.0;
        let links: Vec<Su3> = (0..200)
            .map(|i| {
                let u = random::su3(&mut rng);
                // A U(3) phase, and a sign on some (a folded η or T sign).
                let phase = C64::from_polar(if i % 3 == 0 { -1.0 } else { 1.0 }, 0.37 * i as f64);
                u.scale(phase * s)
            })
            .collect();
        let scale = scale_of(&links);
        assert!((scale - 1.0 / 24.0).abs() < 1e-15);
        for r in [LongReconstruct::Thirteen, LongReconstruct::Nine] {
            let (d, i) = check(&links, r, scale);
            assert!(d < 1e-13, "{r:?}: link {i} off by {d:e}");
            let mut buf = [0.0; 18];
            compress(&links[7], r, scale, &mut buf);
            assert!(
                buf[..r.reals()].iter().all(|v| v.abs() <= 1.0 + 1e-15),
                "{r:?}: {buf:?}"
            );
        }
        // A link that is not s × U(3) fails the check.
        let mut bad = links.clone();
        bad[3].0[1][2] += C64::new(0.01, 0.0);
        assert_eq!(check(&bad, LongReconstruct::Thirteen, scale).1, 3);
        assert!(check(&bad, LongReconstruct::Nine, scale).0 > 1e-3);
        // The parallel scan keeps what a serial one does: the first of two
        // equal worst links, and the last NaN over any number.
        let mut twice = links.clone();
        twice[150] = bad[3];
        twice[40] = bad[3];
        assert_eq!(check(&twice, LongReconstruct::Thirteen, scale).1, 40);
        let (d, i) = check(&twice, LongReconstruct::Thirteen, f64::NAN);
        assert!(d.is_nan() && i == links.len() - 1, "{d} at {i}");
    }
}
