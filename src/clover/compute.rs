//! The clover term computed from a gauge field, in QUDA's convention for a
//! clover it computes itself (`loadCloverQuda` with `compute_clover`,
//! coefficient `c = clover_coeff = κ c_SW` in the kappa normalization),
//! which is also MILC's and, divided by 2κ, Chroma's (docs/conventions.md,
//! "The clover term", cites the files):
//!
//! `A(x) = 1 − c Σ_{μ<ν} ½[γ_μ, γ_ν] ⊗ F_μν(x)`, DeGrand–Rossi γ,
//! `F_μν = (Q_μν − Q_μν†)/8`, `Q_μν` the sum of the four plaquette leaves
//! in the μν plane that start and end at x, each taken μ first. F is
//! anti-Hermitian and its trace is kept; `½[γ_μ, γ_ν] F = σ_μν (F/i)` with
//! `σ_μν = (i/2)[γ_μ, γ_ν]` and the Hermitian `F/i`. The product commutes
//! with γ5, so A is block diagonal in chirality.
//!
//! The time boundary sign drops out: every leaf crosses the boundary
//! either not at all or twice.

use num_complex::Complex64 as C64;
use rayon::prelude::*;

use super::{CloverField, SiteBlocks};
use crate::error::Result;
use crate::field::GaugeField;
use crate::gamma::{self, SpinMatrix};
use crate::su3::Su3;

/// `Q_μν(x)`: the four leaves of the clover at x in the μν plane.
pub fn clover_leaves(gauge: &GaugeField, x: [usize; 4], mu: usize, nu: usize) -> Su3 {
    let lat = gauge.lattice();
    let u = |y: [usize; 4], d: usize| gauge.link_at(y, d);
    let s = |y: [usize; 4], d: usize, step: isize| lat.shift(y, d, step);
    let xm = s(x, mu, -1);
    let xn = s(x, nu, -1);
    let xmn = s(xm, nu, -1);
    // x → x+μ → x+μ+ν → x+ν → x
    let l1 = u(x, mu)
        .mul(u(s(x, mu, 1), nu))
        .mul(&u(s(x, nu, 1), mu).adjoint())
        .mul(&u(x, nu).adjoint());
    // x → x+ν → x+ν−μ → x−μ → x
    let l2 = u(x, nu)
        .mul(&u(s(xm, nu, 1), mu).adjoint())
        .mul(&u(xm, nu).adjoint())
        .mul(u(xm, mu));
    // x → x−μ → x−μ−ν → x−ν → x
    let l3 = u(xm, mu)
        .adjoint()
        .mul(&u(xmn, nu).adjoint())
        .mul(u(xmn, mu))
        .mul(u(xn, nu));
    // x → x−ν → x−ν+μ → x+μ → x
    let l4 = u(xn, nu)
        .adjoint()
        .mul(u(xn, mu))
        .mul(u(s(xn, mu, 1), nu))
        .mul(&u(x, mu).adjoint());
    let mut q = Su3::zero();
    for l in [l1, l2, l3, l4] {
        for i in 0..3 {
            for j in 0..3 {
                q.0[i][j] += l.0[i][j];
            }
        }
    }
    q
}

/// `F_μν(x) = (Q_μν − Q_μν†)/8`, anti-Hermitian.
pub fn field_strength(gauge: &GaugeField, x: [usize; 4], mu: usize, nu: usize) -> Su3 {
    let q = clover_leaves(gauge, x, mu, nu);
    let mut f = Su3::zero();
    for i in 0..3 {
        for j in 0..3 {
            f.0[i][j] = (q.0[i][j] - q.0[j][i].conj()) * 0.125;
        }
    }
    f
}

/// `½[γ_μ, γ_ν]` in the DeGrand–Rossi basis, μ, ν = 0..4 (x, y, z, t).
pub fn half_commutator(mu: usize, nu: usize) -> SpinMatrix {
    let (a, b) = (gamma::degrand_rossi(mu + 1), gamma::degrand_rossi(nu + 1));
    let (ab, ba) = (gamma::mul(&a, &b), gamma::mul(&b, &a));
    let mut m = [[C64::new(0.0, 0.0); 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            m[i][j] = (ab[i][j] - ba[i][j]) * 0.5;
        }
    }
    m
}

/// `½[γ_μ, γ_ν]` of the six planes, in the order every computation of the
/// clover term sums them: xy, xz, xt, yz, yt, zt.
pub fn commutators() -> [SpinMatrix; 6] {
    let pairs = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];
    pairs.map(|(m, n)| half_commutator(m, n))
}

/// The two chiral blocks of `A(x)` with coefficient `c` (= κ c_SW).
pub fn site_blocks(
    gauge: &GaugeField,
    x: [usize; 4],
    c: f64,
    commutators: &[SpinMatrix; 6],
) -> SiteBlocks {
    // The 12×12 matrix, rows and columns (spin, colour).
    let mut a = [[C64::new(0.0, 0.0); 12]; 12];
    for (i, row) in a.iter_mut().enumerate() {
        row[i] = C64::new(1.0, 0.0);
    }
    let mut k = 0;
    for mu in 0..4 {
        for nu in (mu + 1)..4 {
            let f = field_strength(gauge, x, mu, nu);
            let g = &commutators[k];
            k += 1;
            for s in 0..4 {
                for t in 0..4 {
                    if g[s][t] == C64::new(0.0, 0.0) {
                        continue;
                    }
                    for i in 0..3 {
                        for j in 0..3 {
                            a[3 * s + i][3 * t + j] -= c * g[s][t] * f.0[i][j];
                        }
                    }
                }
            }
        }
    }
    // Block k: Dirac spins 2k, 2k+1, rows 3 s + colour.
    std::array::from_fn(|blk| {
        std::array::from_fn(|r| std::array::from_fn(|col| a[6 * blk + r][6 * blk + col]))
    })
}

/// The clover field of `gauge` with coefficient `c` (= κ c_SW).
pub fn compute(gauge: &GaugeField, c: f64) -> Result<CloverField> {
    compute_at(gauge, gauge.lattice().clone(), [0; 4], c)
}

/// The clover field on `lat` whose site `x` is `gauge`'s site
/// `x + offset`: a rank's part of a cut lattice, computed from its links
/// extended by its neighbours' (`comm::extend`).
pub fn compute_at(
    gauge: &GaugeField,
    lat: std::sync::Arc<crate::lattice::Lattice>,
    offset: [usize; 4],
    c: f64,
) -> Result<CloverField> {
    let commutators = commutators();
    let vh = lat.half_volume();
    let sites_iter = (0..lat.volume()).into_par_iter().map(|i| {
        let p = crate::lattice::Parity::from_index(i / vh);
        let x = lat.coords(p, i % vh);
        let at = [0, 1, 2, 3].map(|mu| x[mu] + offset[mu]);
        site_blocks(gauge, at, c, &commutators)
    });
    let what = format!("the clover field of a {:?} lattice", lat.dims());
    let sites = crate::alloc::par_collect(lat.volume(), sites_iter, &what)?;
    CloverField::from_sites(lat, sites)
}
