//! The projection of fat links on U(3): `W = V (V†V)^{−1/2}`, the unitary
//! factor of V's polar decomposition, as HISQ's first level ends (QUDA's
//! `unitarizeLinks` with `computeKSLinkQuda`'s constants; learned from
//! QUDA 9521952 lib/unitarize_links_quda.cu and MILC's
//! generic_ks/fermion_links_hisq_load.c; nothing copied).
//!
//! With `Q = V†V` (Hermitian, positive for a regular V) and the square
//! roots `s_k` of its eigenvalues, `Q^{−1/2} = f₀ + f₁ Q + f₂ Q²` where,
//! with `u = Σ s_k`, `v = Σ_{j<k} s_j s_k`, `w = Π s_k`, `d = w (u v − w)`:
//! `f₀ = (u v² − w (u² + v)) / d`, `f₁ = (2 u v − u³ − w) / d`, `f₂ = u / d`
//! (the quadratic through the three points `(λ_k, 1/s_k)`, by dividing
//! `f₂ s⁵ + f₁ s³ + f₀ s − 1` by `Π (s − s_k)`). The eigenvalues come from
//! the characteristic polynomial of Q's traceless part in closed form; all
//! equal where that part is below `eps`. Where V is close to singular
//! (`|det Q|` below `svd_abs_error`) or the eigenvalues' product misses
//! `det Q` by more than `svd_rel_error` relative, the polar factor comes
//! from V's singular value decomposition instead (`V = A Σ B†`,
//! `W = A B†`). Every W is checked unitary to `max_error` in each entry of
//! `W†W − 1`.

use nalgebra::Matrix3;
use num_complex::Complex64 as C64;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::su3::Su3;

/// QUDA's reunitarisation constants (`setUnitarizeLinksConstants`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnitarizeParams {
    /// Below this the traceless part of `V†V` counts as zero.
    pub eps: f64,
    /// The largest entry of `W†W − 1` a result may have.
    pub max_error: f64,
    /// Whether a near-singular link takes the SVD.
    pub allow_svd: bool,
    /// Every link by SVD.
    pub svd_only: bool,
    pub svd_rel_error: f64,
    pub svd_abs_error: f64,
}

impl Default for UnitarizeParams {
    /// `computeKSLinkQuda`'s constants.
    fn default() -> Self {
        UnitarizeParams {
            eps: 1e-14,
            max_error: 1e-10,
            allow_svd: true,
            svd_only: false,
            svd_rel_error: 1e-6,
            svd_abs_error: 1e-6,
        }
    }
}

fn hermitian_product(v: &Su3) -> Su3 {
    v.adjoint().mul(v)
}

/// The eigenvalues of Hermitian `q`, from its characteristic polynomial.
pub fn eigenvalues(q: &Su3, eps: f64) -> [f64; 3] {
    let mean = q.trace().re / 3.0;
    let mut t = *q;
    for k in 0..3 {
        t.0[k][k] -= mean;
    }
    let p = t.mul(&t).trace().re / 6.0;
    if p < eps {
        return [mean; 3];
    }
    let r = t.determinant().re / 2.0;
    let phi = (r / p.powf(1.5)).clamp(-1.0, 1.0).acos() / 3.0;
    let sp = p.sqrt();
    let third = 2.0 * std::f64::consts::PI / 3.0;
    [0.0, 1.0, 2.0].map(|k| mean + 2.0 * sp * (phi + k * third).cos())
}

/// `W` by Cayley–Hamilton, or `None` where the SVD must decide (see the
/// module's text).
pub fn cayley_hamilton(v: &Su3, p: &UnitarizeParams) -> Option<Su3> {
    let q = hermitian_product(v);
    let l = eigenvalues(&q, p.eps);
    if p.allow_svd {
        let det = q.determinant().re;
        if p.svd_only
            || det.abs() < p.svd_abs_error
            || ((l[0] * l[1] * l[2] - det) / det).abs() > p.svd_rel_error
        {
            return None;
        }
    }
    let s = l.map(f64::sqrt);
    let u = s[0] + s[1] + s[2];
    let vv = s[0] * s[1] + s[0] * s[2] + s[1] * s[2];
    let w = s[0] * s[1] * s[2];
    let d = w * (u * vv - w);
    let f = [
        (u * vv * vv - w * (u * u + vv)) / d,
        (2.0 * u * vv - u * u * u - w) / d,
        u / d,
    ];
    let q2 = q.mul(&q);
    let mut inv_sqrt = Su3::zero();
    for r in 0..3 {
        for c in 0..3 {
            inv_sqrt.0[r][c] = f[1] * q.0[r][c] + f[2] * q2.0[r][c];
        }
        inv_sqrt.0[r][r] += f[0];
    }
    Some(v.mul(&inv_sqrt))
}

/// `W = A B†` from `V = A Σ B†`.
pub fn svd_polar(v: &Su3) -> Su3 {
    let m = Matrix3::<C64>::from_fn(|r, c| v.0[r][c]);
    let svd = m.svd(true, true);
    let (Some(a), Some(bt)) = (svd.u, svd.v_t) else {
        return Su3([[C64::new(f64::NAN, 0.0); 3]; 3]);
    };
    let w = a * bt;
    Su3(std::array::from_fn(|r| std::array::from_fn(|c| w[(r, c)])))
}

/// Whether every entry of `W†W − 1` is within `max_error`.
pub fn is_unitary(w: &Su3, max_error: f64) -> bool {
    let q = hermitian_product(w);
    (0..3).all(|r| {
        (0..3).all(|c| {
            let one = if r == c { 1.0 } else { 0.0 };
            (q.0[r][c] - one).norm() <= max_error
        })
    })
}

/// One link's U(3) projection (Cayley–Hamilton, else the SVD).
pub fn unitarize_link(v: &Su3, p: &UnitarizeParams) -> Su3 {
    cayley_hamilton(v, p).unwrap_or_else(|| svd_polar(v))
}

/// Every link of `field` projected on U(3); refused (with the count and
/// the first link) where a result is not unitary to `max_error`.
pub fn unitarize(field: &GaugeField, p: &UnitarizeParams) -> Result<GaugeField> {
    let mut out = field.clone();
    out.links_mut()
        .par_iter_mut()
        .for_each(|l| *l = unitarize_link(l, p));
    check_unitary(&out, p.max_error)?;
    Ok(out)
}

/// Refuses a field with links not unitary to `max_error` (counted, the
/// first named), as QUDA's fattening fails with its count.
pub fn check_unitary(field: &GaugeField, max_error: f64) -> Result<()> {
    let links = field.links();
    let failed: Vec<usize> = (0..links.len())
        .into_par_iter()
        .filter(|&i| !is_unitary(&links[i], max_error))
        .collect();
    if let Some(&first) = failed.first() {
        return Err(Error::InvalidArgument(format!(
            "the U(3) projection of the fat links failed at {} links (first: site {} of the \
             even-odd order, direction {}): not unitary to {max_error:e}",
            failed.len(),
            first / 4,
            first % 4
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random;
    use num_complex::Complex64 as C64;

    fn general(seed: u64) -> Su3 {
        let mut rng = random::rng(seed);
        Su3(std::array::from_fn(|_| {
            std::array::from_fn(|_| random::gaussian(&mut rng))
        }))
    }

    #[test]
    fn the_result_is_the_unitary_polar_factor() {
        // W unitary and W†V = (V†V)^{1/2} Hermitian with positive
        // eigenvalues: the polar factor, which is unique for a regular V.
        let p = UnitarizeParams::default();
        for seed in 0..200 {
            let v = general(seed);
            let w = cayley_hamilton(&v, &p).expect("a regular matrix");
            assert!(is_unitary(&w, 1e-12), "{seed}");
            let h = w.adjoint().mul(&v);
            assert!(h.max_diff(&h.adjoint()) < 1e-12, "{seed}");
            assert!(eigenvalues(&h, p.eps).iter().all(|&l| l > 0.0));
            assert!(w.max_diff(&svd_polar(&v)) < 1e-11, "{seed}");
        }
    }

    #[test]
    fn a_unitary_link_is_left_as_it_is() {
        let p = UnitarizeParams::default();
        let mut rng = random::rng(5);
        let u = random::su3(&mut rng).scale(C64::from_polar(1.0, 0.7));
        assert!(unitarize_link(&u, &p).max_diff(&u) < 1e-14);
        // The identity has a degenerate V†V: all eigenvalues tr/3.
        let id = Su3::identity().scale(C64::new(-1.0, 0.0));
        assert!(cayley_hamilton(&id, &p).unwrap().max_diff(&id) < 1e-15);
    }

    #[test]
    fn near_singular_links_take_the_svd() {
        let p = UnitarizeParams::default();
        let mut v = general(3);
        // Third row a combination of the first two: det V = 0.
        for c in 0..3 {
            v.0[2][c] = v.0[0][c] * 0.5 + v.0[1][c] * C64::new(0.0, 2.0);
        }
        assert!(cayley_hamilton(&v, &p).is_none());
        let w = unitarize_link(&v, &p);
        assert!(is_unitary(&w, 1e-12));
        // Without the SVD the projection fails, and the field is refused.
        let no_svd = UnitarizeParams {
            allow_svd: false,
            ..p
        };
        let lat = std::sync::Arc::new(crate::lattice::Lattice::new([2, 2, 2, 2]).unwrap());
        let mut f = GaugeField::unit(lat);
        f.links_mut()[9] = v;
        let e = unitarize(&f, &no_svd).unwrap_err().to_string();
        assert!(e.contains("1 links") && e.contains("direction 1"), "{e}");
        assert!(unitarize(&f, &p).is_ok());
    }
}
