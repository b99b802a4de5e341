//! The Wilson gauge action `S = β Σ_p (1 − Re tr U_p / 3)` on a periodic
//! lattice: the staple sum of a link and the average plaquette.
//!
//! Staple convention: for the link `U = U_μ(x)`,
//! `A = Σ_{ν≠μ} [U_ν(x+μ) U_μ(x+ν)† U_ν(x)† + U_ν(x+μ−ν)† U_μ(x−ν)† U_ν(x−ν)]`,
//! so that the part of the action that depends on `U` is
//! `−(β/3) Re tr(U A)` and the Boltzmann weight of `U` given its neighbours
//! is `exp((β/3) Re tr(U A))`.
//!
//! The staple of `U_μ(x)` touches `U_μ` only at `x ± ν`, which have the
//! other parity: all links of one direction on one parity are independent
//! given their staples, which is what lets a sweep update them in parallel.

use rayon::prelude::*;

use crate::field::GaugeField;
use crate::lattice::Parity;
use crate::su3::Su3;

/// `a b`.
#[inline(always)]
pub(crate) fn mul_nn(a: &Su3, b: &Su3) -> Su3 {
    let mut m = Su3::zero();
    for r in 0..3 {
        for c in 0..3 {
            m.0[r][c] = a.0[r][0] * b.0[0][c] + a.0[r][1] * b.0[1][c] + a.0[r][2] * b.0[2][c];
        }
    }
    m
}

/// `a b†`.
#[inline(always)]
pub(crate) fn mul_na(a: &Su3, b: &Su3) -> Su3 {
    let mut m = Su3::zero();
    for r in 0..3 {
        for c in 0..3 {
            m.0[r][c] = a.0[r][0] * b.0[c][0].conj()
                + a.0[r][1] * b.0[c][1].conj()
                + a.0[r][2] * b.0[c][2].conj();
        }
    }
    m
}

/// `a† b`.
#[inline(always)]
pub(crate) fn mul_an(a: &Su3, b: &Su3) -> Su3 {
    let mut m = Su3::zero();
    for r in 0..3 {
        for c in 0..3 {
            m.0[r][c] = a.0[0][r].conj() * b.0[0][c]
                + a.0[1][r].conj() * b.0[1][c]
                + a.0[2][r].conj() * b.0[2][c];
        }
    }
    m
}

#[inline(always)]
fn add_assign(a: &mut Su3, b: &Su3) {
    for (x, y) in a.0.iter_mut().flatten().zip(b.0.iter().flatten()) {
        *x += y;
    }
}

/// `Re tr(a b†) = Re Σ a_rc conj(b_rc)`.
#[inline(always)]
fn re_tr_na(a: &Su3, b: &Su3) -> f64 {
    a.0.iter()
        .flatten()
        .zip(b.0.iter().flatten())
        .map(|(x, y)| x.re * y.re + x.im * y.im)
        .sum()
}

/// The staple sum `A` of the link `U_μ(x)`, `x` the checkerboard site `cb`
/// of parity `p` (see the module doc for the convention).
pub fn staple(field: &GaugeField, p: Parity, cb: usize, mu: usize) -> Su3 {
    let lat = field.lattice();
    let q = p.other();
    let xpmu = lat.neighbour_table(p, mu, true)[cb] as usize; // x+μ, parity q
    let mut a = Su3::zero();
    for nu in (0..4).filter(|&nu| nu != mu) {
        let xpnu = lat.neighbour_table(p, nu, true)[cb] as usize; // x+ν, q
        let xmnu = lat.neighbour_table(p, nu, false)[cb] as usize; // x−ν, q
        let xpmu_mnu = lat.neighbour_table(q, nu, false)[xpmu] as usize; // x+μ−ν, p

        // U_ν(x+μ) U_μ(x+ν)† U_ν(x)†
        let upper = mul_na(
            &mul_na(field.link(q, xpmu, nu), field.link(q, xpnu, mu)),
            field.link(p, cb, nu),
        );
        // (U_μ(x−ν) U_ν(x+μ−ν))† U_ν(x−ν)
        let lower = mul_an(
            &mul_nn(field.link(q, xmnu, mu), field.link(p, xpmu_mnu, nu)),
            field.link(q, xmnu, nu),
        );
        add_assign(&mut a, &upper);
        add_assign(&mut a, &lower);
    }
    a
}

/// Sites per parallel chunk of the plaquette sum. Fixed, so that the
/// partial sums, and therefore the rounding of the total, do not depend on
/// the number of threads.
const PLAQUETTE_CHUNK: usize = 256;

/// `Re tr U_p / 3` averaged over all plaquettes, over the three spatial
/// planes and over the three temporal planes: the same numbers as
/// `GaugeField::plaquette`, computed in parallel and reproducible bit for
/// bit whatever the number of threads.
pub fn plaquette(field: &GaugeField) -> [f64; 3] {
    let lat = field.lattice();
    let vh = lat.half_volume();
    let mut partial: Vec<[f64; 2]> = Vec::new();
    for p in [Parity::Even, Parity::Odd] {
        let q = p.other();
        let chunks: Vec<[f64; 2]> = (0..vh.div_ceil(PLAQUETTE_CHUNK))
            .into_par_iter()
            .map(|chunk| {
                let mut sum = [0.0; 2]; // spatial, temporal
                for cb in chunk * PLAQUETTE_CHUNK..((chunk + 1) * PLAQUETTE_CHUNK).min(vh) {
                    for mu in 0..4 {
                        let xpmu = lat.neighbour_table(p, mu, true)[cb] as usize;
                        for nu in (mu + 1)..4 {
                            let xpnu = lat.neighbour_table(p, nu, true)[cb] as usize;
                            // Re tr[(U_μ(x) U_ν(x+μ)) (U_ν(x) U_μ(x+ν))†]
                            let a = mul_nn(field.link(p, cb, mu), field.link(q, xpmu, nu));
                            let b = mul_nn(field.link(p, cb, nu), field.link(q, xpnu, mu));
                            sum[usize::from(nu == 3)] += re_tr_na(&a, &b) / 3.0;
                        }
                    }
                }
                sum
            })
            .collect();
        partial.extend(chunks);
    }
    let (spatial, temporal) = partial
        .iter()
        .fold((0.0, 0.0), |(s, t), c| (s + c[0], t + c[1]));
    let planes = 3.0 * lat.volume() as f64;
    let (s, t) = (spatial / planes, temporal / planes);
    [(s + t) / 2.0, s, t]
}

/// The Wilson action `β Σ_p (1 − Re tr U_p / 3)`, summed over the `6 V`
/// plaquettes.
pub fn action(field: &GaugeField, beta: f64) -> f64 {
    let plaquettes = 6.0 * field.lattice().volume() as f64;
    beta * plaquettes * (1.0 - plaquette(field)[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lattice::Lattice;
    use crate::random;
    use std::sync::Arc;

    #[test]
    fn plaquette_matches_the_field_plaquette() {
        let lat = Arc::new(Lattice::new([4, 2, 6, 4]).unwrap());
        let g = random::smooth_gauge(&lat, 0.4, 3);
        let a = plaquette(&g);
        let b = g.plaquette();
        for k in 0..3 {
            assert!((a[k] - b[k]).abs() < 1e-13, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn staple_gives_the_local_action() {
        // Σ over the 6 plaquettes containing U_μ(x) of Re tr U_p equals
        // Re tr(U A): check by changing one link and comparing the change in
        // the total plaquette sum.
        let lat = Arc::new(Lattice::new([4, 4, 2, 6]).unwrap());
        let mut g = random::hot_gauge(&lat, 8);
        let (x, mu) = ([1usize, 2, 1, 3], 2usize);
        let (p, cb) = (lat.parity_of(x), lat.cb_index(x));
        let a = staple(&g, p, cb, mu);
        let sum = |g: &GaugeField| plaquette(g)[0] * 3.0 * 6.0 * lat.volume() as f64;
        let before = sum(&g);
        let local_before = mul_nn(g.link(p, cb, mu), &a).trace().re;
        let mut rng = random::rng(9);
        *g.link_mut(p, cb, mu) = random::su3(&mut rng);
        let after = sum(&g);
        let local_after = mul_nn(g.link(p, cb, mu), &a).trace().re;
        assert!(
            ((after - before) - (local_after - local_before)).abs() < 1e-10,
            "{} vs {}",
            after - before,
            local_after - local_before
        );
    }
}
