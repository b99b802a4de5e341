//! Asqtad fat and long links from thin links, on the host, as MILC's
//! `ks_imp` code and QUDA's `computeKSLinkQuda` compute them (learned from
//! MILC `generic_ks/imp_actions/asqtad_action.h`,
//! `generic_ks/fermion_links_fn_load_milc.c`, `generic_ks/rephase.c` and
//! QUDA `include/kernels/llfat.cuh`, `tests/utils/llfat_utils.cpp`; nothing
//! copied). For the tools and tests that need realistic improved staggered
//! links (benchmarks on thermalised fields); a production code brings its
//! own.
//!
//! The staggered phases (MILC's: `η_x = (−1)^t`, `η_y = (−1)^(t+x)`,
//! `η_z = (−1)^(t+x+y)`, `η_t = 1`) and the anti-periodic sign on the T links
//! of the last slice go into the thin links first, so the fat and long links
//! come out with them folded in, as the operator expects.
//!
//! The paths are those of `fat_links::paths` (the fat link's one-link
//! coefficient `c₁ − 6c_L`, the Lepage paths' retracing taken out).
//! Coefficients with tadpole factor u0: `c₁ = 5/8`, `c_N = −1/(24 u0²)`,
//! `c₃ = −1/(16 u0²)`, `c₅ = 1/(64 u0⁴)`, `c₇ = −1/(384 u0⁶)`,
//! `c_L = −1/(16 u0⁴)`. Free field (unit links, u0 = 1): `F = 9/8 η`,
//! `L = −1/24 η`.

use num_complex::Complex64 as C64;
use rayon::prelude::*;

use crate::dirac::staggered::milc_phase;
use crate::error::Result;
use crate::fat_links::{fat_links, long_links, PathCoefficients};
use crate::field::GaugeField;
use crate::lattice::{Lattice, Parity};
use crate::precision::TBoundary;

/// The asqtad path coefficients for tadpole factor `u0`.
pub fn asqtad_coefficients(u0: f64) -> PathCoefficients {
    let (u2, u4, u6) = (u0.powi(2), u0.powi(4), u0.powi(6));
    PathCoefficients {
        one_link: 5.0 / 8.0,
        naik: -1.0 / (24.0 * u2),
        three_staple: -1.0 / (16.0 * u2),
        five_staple: 1.0 / (64.0 * u4),
        seven_staple: -1.0 / (384.0 * u6),
        lepage: -1.0 / (16.0 * u4),
    }
}

/// The fat and long links of a thin field.
pub struct AsqtadLinks {
    pub fat: GaugeField,
    pub long: GaugeField,
}

/// MILC's phase of direction `mu` at `x`, with the `t_boundary` sign on
/// the T links of the last slice.
fn phase(lat: &Lattice, x: [usize; 4], mu: usize, t_boundary: TBoundary) -> f64 {
    let mut s = milc_phase(x, mu);
    if mu == 3 && x[3] + 1 == lat.dims()[3] {
        s *= t_boundary.sign();
    }
    s
}

/// The asqtad fat and long links of the thin links `thin` (SU(3), no
/// phases), with MILC's phases and the `t_boundary` sign folded in.
pub fn asqtad(thin: &GaugeField, u0: f64, t_boundary: TBoundary) -> Result<AsqtadLinks> {
    let lat = thin.lattice().clone();
    let c = asqtad_coefficients(u0);
    let vh = lat.half_volume();
    let mut phased = thin.clone();
    phased
        .links_mut()
        .par_chunks_mut(4)
        .enumerate()
        .for_each(|(i, site)| {
            let x = lat.coords(Parity::from_index(i / vh), i % vh);
            for (mu, l) in site.iter_mut().enumerate() {
                *l = l.scale(C64::new(phase(&lat, x, mu, t_boundary), 0.0));
            }
        });
    Ok(AsqtadLinks {
        fat: fat_links(&phased, &c)?,
        long: long_links(&phased, c.naik)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random;
    use std::sync::Arc;

    use crate::su3::Su3;

    fn max_diff(a: &Su3, b: &Su3) -> f64 {
        a.max_diff(b)
    }

    #[test]
    fn unit_links_give_the_free_field_values() {
        let lat = Arc::new(Lattice::new([4, 4, 4, 6]).unwrap());
        let links = asqtad(&GaugeField::unit(lat.clone()), 1.0, TBoundary::AntiPeriodic).unwrap();
        for p in [Parity::Even, Parity::Odd] {
            for cb in 0..lat.half_volume() {
                let x = lat.coords(p, cb);
                for mu in 0..4 {
                    let eta = phase(&lat, x, mu, TBoundary::Periodic);
                    let t_fat = if mu == 3 && x[3] == 5 { -1.0 } else { 1.0 };
                    let t_long = if mu == 3 && x[3] >= 3 { -1.0 } else { 1.0 };
                    let id = Su3::identity();
                    let f = id.scale(C64::new(9.0 / 8.0 * eta * t_fat, 0.0));
                    let l = id.scale(C64::new(-eta * t_long / 24.0, 0.0));
                    assert!(
                        max_diff(links.fat.link(p, cb, mu), &f) < 1e-14,
                        "{x:?} {mu}"
                    );
                    assert!(
                        max_diff(links.long.link(p, cb, mu), &l) < 1e-15,
                        "{x:?} {mu}"
                    );
                }
            }
        }
    }

    #[test]
    fn fat_and_long_links_are_gauge_covariant() {
        // U'_μ(x) = g(x) U_μ(x) g(x+μ̂)†: F and L transform alike.
        let lat = Arc::new(Lattice::new([4, 4, 4, 4]).unwrap());
        let u = random::hot_gauge(&lat, 3);
        let g = random::hot_gauge(&lat, 4); // its μ = 0 links as g(x)
        let gx = |x: [usize; 4]| *g.link_at(x, 0);
        let mut ug = u.clone();
        for p in [Parity::Even, Parity::Odd] {
            for cb in 0..lat.half_volume() {
                let x = lat.coords(p, cb);
                for mu in 0..4 {
                    let y = lat.shift(x, mu, 1);
                    *ug.link_at_mut(x, mu) = gx(x).mul(u.link_at(x, mu)).mul(&gx(y).adjoint());
                }
            }
        }
        let a = asqtad(&u, 0.87, TBoundary::AntiPeriodic).unwrap();
        let b = asqtad(&ug, 0.87, TBoundary::AntiPeriodic).unwrap();
        for p in [Parity::Even, Parity::Odd] {
            for cb in 0..lat.half_volume() {
                let x = lat.coords(p, cb);
                for mu in 0..4 {
                    let y1 = lat.shift(x, mu, 1);
                    let y3 = lat.shift(x, mu, 3);
                    let f = gx(x).mul(a.fat.link(p, cb, mu)).mul(&gx(y1).adjoint());
                    let l = gx(x).mul(a.long.link(p, cb, mu)).mul(&gx(y3).adjoint());
                    assert!(max_diff(&f, b.fat.link(p, cb, mu)) < 1e-13);
                    assert!(max_diff(&l, b.long.link(p, cb, mu)) < 1e-14);
                }
            }
        }
    }
}
