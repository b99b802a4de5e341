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
//! With the generalised staple of a field `M` of links along μ,
//! `S[M; μ, ν](x) = U_ν(x) M(x+ν̂) U_ν(x+μ̂)† + U_ν(x−ν̂)† M(x−ν̂) U_ν(x−ν̂+μ̂)`:
//! `F_μ = (c₁ − 6c_L) U_μ + Σ_ν [c₃ S₃ + c_L S[S₃; μ, ν] + Σ_ρ (c₅ S₅ + Σ_σ c₇ S[S₅; μ, σ])]`,
//! `S₃ = S[U_μ; μ, ν]`, `S₅ = S[S₃; μ, ρ]`, over distinct ν, ρ, σ ≠ μ; the
//! `−6c_L` removes the retraced paths `S[S₃; μ, ν]` contains (exact for
//! unitary thin links). `L_μ(x) = c_N U_μ(x) U_μ(x+μ̂) U_μ(x+2μ̂)`.
//! Coefficients with tadpole factor u0: `c₁ = 5/8`, `c_N = −1/(24 u0²)`,
//! `c₃ = −1/(16 u0²)`, `c₅ = 1/(64 u0⁴)`, `c₇ = −1/(384 u0⁶)`,
//! `c_L = −1/(16 u0⁴)`. Free field (unit links, u0 = 1): `F = 9/8 η`,
//! `L = −1/24 η`.

use num_complex::Complex64 as C64;
use rayon::prelude::*;

use crate::dirac::staggered::milc_phase;
use crate::error::Result;
use crate::field::GaugeField;
use crate::lattice::{Lattice, Parity};
use crate::precision::TBoundary;
use crate::su3::Su3;

/// The asqtad path coefficients for tadpole factor `u0`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AsqtadCoefficients {
    pub one_link: f64,
    pub naik: f64,
    pub three_staple: f64,
    pub five_staple: f64,
    pub seven_staple: f64,
    pub lepage: f64,
}

impl AsqtadCoefficients {
    pub fn new(u0: f64) -> Self {
        let (u2, u4, u6) = (u0.powi(2), u0.powi(4), u0.powi(6));
        AsqtadCoefficients {
            one_link: 5.0 / 8.0,
            naik: -1.0 / (24.0 * u2),
            three_staple: -1.0 / (16.0 * u2),
            five_staple: 1.0 / (64.0 * u4),
            seven_staple: -1.0 / (384.0 * u6),
            lepage: -1.0 / (16.0 * u4),
        }
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

/// A field of one matrix per site, in even-odd site order.
type SiteField = Vec<Su3>;

fn eo(lat: &Lattice, x: [usize; 4]) -> usize {
    lat.parity_of(x).index() * lat.half_volume() + lat.cb_index(x)
}

fn coords(lat: &Lattice, i: usize) -> [usize; 4] {
    let vh = lat.half_volume();
    lat.coords(Parity::from_index(i / vh), i % vh)
}

/// `S[M; μ, ν]` of a field `m` of links along μ; `u[ν]` the phased thin
/// links along ν.
fn staple(lat: &Lattice, u: &[SiteField; 4], m: &SiteField, mu: usize, nu: usize) -> SiteField {
    (0..lat.volume())
        .into_par_iter()
        .map(|i| {
            let x = coords(lat, i);
            let xn = lat.shift(x, nu, 1);
            let xm = lat.shift(x, mu, 1);
            let xb = lat.shift(x, nu, -1);
            let xbm = lat.shift(xb, mu, 1);
            let upper = u[nu][i]
                .mul(&m[eo(lat, xn)])
                .mul(&u[nu][eo(lat, xm)].adjoint());
            let lower = u[nu][eo(lat, xb)]
                .adjoint()
                .mul(&m[eo(lat, xb)])
                .mul(&u[nu][eo(lat, xbm)]);
            add(&upper, &lower, 1.0)
        })
        .collect()
}

fn add(a: &Su3, b: &Su3, cb: f64) -> Su3 {
    let mut out = *a;
    for r in 0..3 {
        for c in 0..3 {
            out.0[r][c] += cb * b.0[r][c];
        }
    }
    out
}

fn axpy(y: &mut SiteField, a: f64, x: &SiteField) {
    y.par_iter_mut()
        .zip(x.par_iter())
        .for_each(|(y, x)| *y = add(y, x, a));
}

/// The asqtad fat and long links of the thin links `thin` (SU(3), no
/// phases), with MILC's phases and the `t_boundary` sign folded in.
pub fn asqtad(thin: &GaugeField, u0: f64, t_boundary: TBoundary) -> Result<AsqtadLinks> {
    let lat = thin.lattice().clone();
    let c = AsqtadCoefficients::new(u0);
    let v = lat.volume();
    // Phased thin links, one field per direction, even-odd site order.
    let u: [SiteField; 4] = std::array::from_fn(|mu| {
        (0..v)
            .into_par_iter()
            .map(|i| {
                let x = coords(&lat, i);
                let s = phase(&lat, x, mu, t_boundary);
                thin.link_at(x, mu).scale(C64::new(s, 0.0))
            })
            .collect()
    });
    let mut fat = GaugeField::try_unit(lat.clone())?;
    let mut long = GaugeField::try_unit(lat.clone())?;
    for mu in 0..4 {
        let mut f: SiteField = u[mu]
            .iter()
            .map(|l| l.scale(C64::new(c.one_link - 6.0 * c.lepage, 0.0)))
            .collect();
        for nu in (0..4).filter(|&n| n != mu) {
            let s3 = staple(&lat, &u, &u[mu], mu, nu);
            axpy(&mut f, c.three_staple, &s3);
            axpy(&mut f, c.lepage, &staple(&lat, &u, &s3, mu, nu));
            for rho in (0..4).filter(|&r| r != mu && r != nu) {
                let s5 = staple(&lat, &u, &s3, mu, rho);
                axpy(&mut f, c.five_staple, &s5);
                for sigma in (0..4).filter(|&s| s != mu && s != nu && s != rho) {
                    axpy(&mut f, c.seven_staple, &staple(&lat, &u, &s5, mu, sigma));
                }
            }
        }
        for (i, fi) in f.iter().enumerate() {
            let x = coords(&lat, i);
            *fat.link_at_mut(x, mu) = *fi;
            let x1 = lat.shift(x, mu, 1);
            let x2 = lat.shift(x, mu, 2);
            *long.link_at_mut(x, mu) = u[mu][i]
                .mul(&u[mu][eo(&lat, x1)])
                .mul(&u[mu][eo(&lat, x2)])
                .scale(C64::new(c.naik, 0.0));
        }
    }
    Ok(AsqtadLinks { fat, long })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random;
    use std::sync::Arc;

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
