//! The fat and long links of a periodic field of links, on the host.
//!
//! With the staple of a field `M` of links along μ through ν,
//! `S[M; μ, ν](x) = U_ν(x) M(x+ν̂) U_ν(x+μ̂)† + U_ν(x−ν̂)† M(x−ν̂) U_ν(x−ν̂+μ̂)`,
//! `F_μ = (c₀ − 6c_L) U_μ + Σ_ν [c₃ S₃ + c_L S[S₃; μ, ν] + Σ_ρ (c₅ S₅ + Σ_σ c₇ S[S₅; μ, σ])]`,
//! `S₃ = S[U_μ; μ, ν]`, `S₅ = S[S₃; μ, ρ]`, over distinct ν, ρ, σ ≠ μ
//! (6 three-, 24 five-, 48 seven-staples, 6 Lepage paths), and
//! `L_μ(x) = c_N U_μ(x) U_μ(x+μ̂) U_μ(x+2μ̂)`. Free field (unit links):
//! `F = c₀ + 6c₃ + 24c₅ + 48c₇` (the Lepage paths cancel their correction).

use rayon::prelude::*;

use super::PathCoefficients;
use crate::error::Result;
use crate::field::GaugeField;
use crate::lattice::{Lattice, Parity};
use crate::su3::Su3;

/// One matrix per site, in the field's even-odd site order.
pub type SiteField = Vec<Su3>;

/// Every site's neighbours (even-odd indices), `[forward, backward][μ]`.
pub struct Neighbours(Vec<[[u32; 4]; 2]>);

impl Neighbours {
    pub fn of(lat: &Lattice) -> Neighbours {
        let vh = lat.half_volume();
        let table: Vec<[[u32; 4]; 2]> = (0..lat.volume())
            .into_par_iter()
            .map(|i| {
                let p = Parity::from_index(i / vh);
                let other = (1 - p.index()) * vh;
                std::array::from_fn(|dir| {
                    std::array::from_fn(|mu| {
                        (other + lat.neighbour_table(p, mu, dir == 0)[i % vh] as usize) as u32
                    })
                })
            })
            .collect();
        Neighbours(table)
    }

    /// The site one step from `i` along μ, forward or backward.
    pub fn step(&self, i: usize, mu: usize, forward: bool) -> usize {
        self.0[i][usize::from(!forward)][mu] as usize
    }

    /// The whole table, `[site][forward, backward][μ]`.
    pub fn table(&self) -> &[[[u32; 4]; 2]] {
        &self.0
    }
}

/// The links along μ, one field.
pub fn direction(links: &GaugeField, mu: usize) -> SiteField {
    links
        .links()
        .par_iter()
        .skip(mu)
        .step_by(4)
        .copied()
        .collect()
}

/// `S[M; μ, ν]` of a field `m` of links along μ.
pub fn staple(nb: &Neighbours, u: &[SiteField; 4], m: &[Su3], mu: usize, nu: usize) -> SiteField {
    (0..m.len())
        .into_par_iter()
        .map(|x| {
            let xn = nb.step(x, nu, true);
            let xm = nb.step(x, mu, true);
            let xb = nb.step(x, nu, false);
            let xbm = nb.step(xb, mu, true);
            let upper = u[nu][x].mul(&m[xn]).mul(&u[nu][xm].adjoint());
            let lower = u[nu][xb].adjoint().mul(&m[xb]).mul(&u[nu][xbm]);
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

fn axpy(y: &mut [Su3], a: f64, x: &[Su3]) {
    y.par_iter_mut()
        .zip(x.par_iter())
        .for_each(|(y, x)| *y = add(y, x, a));
}

/// The fat link along μ of every site.
fn fat_direction(
    nb: &Neighbours,
    u: &[SiteField; 4],
    c: &PathCoefficients,
    mu: usize,
) -> SiteField {
    let one = c.corrected_one_link();
    let mut f: SiteField = u[mu]
        .par_iter()
        .map(|l| add(&Su3::zero(), l, one))
        .collect();
    if !c.has_staples() {
        return f;
    }
    for nu in (0..4).filter(|&n| n != mu) {
        let s3 = staple(nb, u, &u[mu], mu, nu);
        axpy(&mut f, c.three_staple, &s3);
        if c.has_lepage() {
            axpy(&mut f, c.lepage, &staple(nb, u, &s3, mu, nu));
        }
        for rho in (0..4).filter(|&r| r != mu && r != nu) {
            let s5 = staple(nb, u, &s3, mu, rho);
            axpy(&mut f, c.five_staple, &s5);
            if c.has_seven_staple() {
                for sigma in (0..4).filter(|&s| s != mu && s != nu && s != rho) {
                    axpy(&mut f, c.seven_staple, &staple(nb, u, &s5, mu, sigma));
                }
            }
        }
    }
    f
}

/// Four per-direction fields back into one gauge field.
fn assemble(lat: &std::sync::Arc<Lattice>, dirs: [SiteField; 4]) -> Result<GaugeField> {
    let mut out = GaugeField::try_unit(lat.clone())?;
    out.links_mut()
        .par_chunks_mut(4)
        .enumerate()
        .for_each(|(i, site)| {
            for (mu, l) in site.iter_mut().enumerate() {
                *l = dirs[mu][i];
            }
        });
    Ok(out)
}

/// The fat links of `links` with path coefficients `c` (the Naik
/// coefficient not read).
pub fn fat_links(links: &GaugeField, c: &PathCoefficients) -> Result<GaugeField> {
    let lat = links.lattice();
    let nb = Neighbours::of(lat);
    let u: [SiteField; 4] = std::array::from_fn(|mu| direction(links, mu));
    let dirs = [0, 1, 2, 3].map(|mu| fat_direction(&nb, &u, c, mu));
    assemble(lat, dirs)
}

/// The long (Naik) links of `links` with coefficient `naik`.
pub fn long_links(links: &GaugeField, naik: f64) -> Result<GaugeField> {
    let lat = links.lattice();
    let nb = Neighbours::of(lat);
    let mut out = GaugeField::try_unit(lat.clone())?;
    let all = links.links();
    out.links_mut()
        .par_chunks_mut(4)
        .enumerate()
        .for_each(|(x, site)| {
            for (mu, l) in site.iter_mut().enumerate() {
                let x1 = nb.step(x, mu, true);
                let x2 = nb.step(x1, mu, true);
                let three = all[4 * x + mu]
                    .mul(&all[4 * x1 + mu])
                    .mul(&all[4 * x2 + mu]);
                *l = add(&Su3::zero(), &three, naik);
            }
        });
    Ok(out)
}

/// The sites of `local` cut out of `extended`, whose site `offset` is
/// local site 0 (`comm::extend`).
pub fn interior(
    extended: &GaugeField,
    local: &std::sync::Arc<Lattice>,
    offset: [usize; 4],
) -> Result<GaugeField> {
    let mut out = GaugeField::try_unit(local.clone())?;
    let vh = local.half_volume();
    out.links_mut()
        .par_chunks_mut(4)
        .enumerate()
        .for_each(|(i, site)| {
            let x = local.coords(Parity::from_index(i / vh), i % vh);
            let y = [0, 1, 2, 3].map(|k| x[k] + offset[k]);
            for (mu, l) in site.iter_mut().enumerate() {
                *l = *extended.link_at(y, mu);
            }
        });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fat_links::{HISQ_FIRST_LEVEL, HISQ_SECOND_LEVEL};
    use crate::random;
    use num_complex::Complex64 as C64;
    use std::sync::Arc;

    /// The product of the links along a path of steps (`±(μ+1)`) from `x`:
    /// a forward step multiplies by `U_μ(x)`, a backward one by
    /// `U_μ(x−μ̂)†`. Independent of the staple recursion above.
    fn walk(u: &GaugeField, mut x: [usize; 4], steps: &[i32]) -> Su3 {
        let lat = u.lattice();
        let mut m = Su3::identity();
        for &s in steps {
            let mu = (s.unsigned_abs() - 1) as usize;
            if s > 0 {
                m = m.mul(u.link_at(x, mu));
                x = lat.shift(x, mu, 1);
            } else {
                x = lat.shift(x, mu, -1);
                m = m.mul(&u.link_at(x, mu).adjoint());
            }
        }
        m
    }

    /// The fat link by enumerating every path of every family.
    fn fat_by_paths(u: &GaugeField, c: &PathCoefficients, x: [usize; 4], mu: usize) -> Su3 {
        let m = mu as i32 + 1;
        let mut f = u
            .link_at(x, mu)
            .scale(C64::new(c.corrected_one_link(), 0.0));
        let mut add = |coef: f64, steps: &[i32]| {
            let p = walk(u, x, steps);
            for r in 0..3 {
                for col in 0..3 {
                    f.0[r][col] += coef * p.0[r][col];
                }
            }
        };
        let others: Vec<i32> = (1..=4).filter(|&d| d != m).collect();
        for &nu in &others {
            for s in [1, -1] {
                add(c.three_staple, &[s * nu, m, -s * nu]);
                for t in [1, -1] {
                    add(c.lepage, &[s * nu, t * nu, m, -t * nu, -s * nu]);
                }
                for &rho in others.iter().filter(|&&r| r != nu) {
                    for t in [1, -1] {
                        add(c.five_staple, &[t * rho, s * nu, m, -s * nu, -t * rho]);
                        for &sigma in others.iter().filter(|&&q| q != nu && q != rho) {
                            for w in [1, -1] {
                                let p =
                                    [w * sigma, t * rho, s * nu, m, -s * nu, -t * rho, -w * sigma];
                                add(c.seven_staple, &p);
                            }
                        }
                    }
                }
            }
        }
        f
    }

    #[test]
    fn staples_are_the_sum_over_every_path() {
        let lat = Arc::new(Lattice::new([4, 4, 6, 4]).unwrap());
        let u = random::hot_gauge(&lat, 11);
        let c = PathCoefficients::from_array([0.3, -0.05, -0.07, 0.011, -0.0023, -0.09]);
        let fat = fat_links(&u, &c).unwrap();
        let long = long_links(&u, c.naik).unwrap();
        for p in [Parity::Even, Parity::Odd] {
            for cb in (0..lat.half_volume()).step_by(7) {
                let x = lat.coords(p, cb);
                for mu in 0..4 {
                    let want = fat_by_paths(&u, &c, x, mu);
                    let d = want.max_diff(fat.link(p, cb, mu));
                    assert!(d < 1e-13, "{x:?} {mu}: {d:e}");
                    let m = mu as i32 + 1;
                    let l = walk(&u, x, &[m, m, m]).scale(C64::new(c.naik, 0.0));
                    assert!(l.max_diff(long.link(p, cb, mu)) < 1e-15);
                }
            }
        }
    }

    /// MILC's staggered phase η_μ(x).
    fn eta(x: [usize; 4], mu: usize) -> f64 {
        let n: usize = x[3] + x[..mu.min(3)].iter().sum::<usize>();
        if mu == 3 || n.is_multiple_of(2) {
            1.0
        } else {
            -1.0
        }
    }

    #[test]
    fn hisq_of_the_free_field_with_staggered_phases() {
        // Unit links times η: every plaquette of the phases is −1, so a
        // staple of k links and the one-link path differ by (−1)^(k−1)/2.
        // First level: 1/8 + 6/16 + 24/64 + 48/384 = 1 (V = ηU, unitary);
        // second: 1 + 6/8 + 6/16 + 24/64 + 48/384 − 12/8 = 9/8, Naik −1/24.
        let lat = Arc::new(Lattice::new([4, 4, 4, 6]).unwrap());
        let mut u = GaugeField::unit(lat.clone());
        let vh = lat.half_volume();
        u.links_mut()
            .chunks_mut(4)
            .enumerate()
            .for_each(|(i, site)| {
                let x = lat.coords(Parity::from_index(i / vh), i % vh);
                for (mu, l) in site.iter_mut().enumerate() {
                    let mut s = eta(x, mu);
                    if mu == 3 && x[3] == 5 {
                        s = -s;
                    }
                    *l = l.scale(C64::new(s, 0.0));
                }
            });
        let v = fat_links(&u, &PathCoefficients::from_array(HISQ_FIRST_LEVEL)).unwrap();
        let c2 = PathCoefficients::from_array(HISQ_SECOND_LEVEL);
        let fat = fat_links(&v, &c2).unwrap();
        let long = long_links(&v, c2.naik).unwrap();
        for (i, l) in u.links().iter().enumerate() {
            assert!(v.links()[i].max_diff(l) < 1e-15);
            let f = l.scale(C64::new(9.0 / 8.0, 0.0));
            assert!(fat.links()[i].max_diff(&f) < 1e-14, "{i}");
        }
        for p in [Parity::Even, Parity::Odd] {
            for cb in 0..vh {
                let x = lat.coords(p, cb);
                for mu in 0..4 {
                    let eta = eta(x, mu);
                    let t = if mu == 3 && x[3] >= 3 { -1.0 } else { 1.0 };
                    let want = Su3::identity().scale(C64::new(-eta * t / 24.0, 0.0));
                    assert!(long.link(p, cb, mu).max_diff(&want) < 1e-15);
                }
            }
        }
    }

    #[test]
    fn an_extended_field_cut_back_is_the_local_field() {
        let lat = Arc::new(Lattice::new([4, 4, 4, 4]).unwrap());
        let u = random::hot_gauge(&lat, 2);
        let got = interior(
            &u,
            &Arc::new(Lattice::new([2, 4, 2, 4]).unwrap()),
            [1, 0, 2, 0],
        );
        let got = got.unwrap();
        let x = [1, 3, 1, 2];
        assert_eq!(got.link_at(x, 2), u.link_at([2, 3, 3, 2], 2));
    }
}
