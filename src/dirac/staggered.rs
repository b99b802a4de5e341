//! The staggered Dirac matrix in QUDA's normalisation (docs/conventions.md,
//! "The staggered operator"): `M = 2m − D` with the hopping term `D` of
//! `Backend::staggered_dslash` (improved: fat and long links; naive: thin
//! links), `M† = 2m + D` since `D† = −D`.
//! - full: `(M χ)_p = 2m χ_p − D_{p p̄} χ_p̄` on both parities;
//! - even-odd on parity p: `M̂ = 4m² − D_pq D_qp = [M† M]_pp`, Hermitian
//!   positive definite (for m > 0), solved by CG; the source
//!   `b̂_p = 2m b_p + D_pq b_q` and the other parity
//!   `x_q = (b_q + D_qp x_p) / 2m` (`StaggeredSchur`).

use std::sync::Arc;

use super::operator::grow_block;
use super::DiracOperator;
use crate::backend::{Backend, SpinorField, StaggeredStorage};
use crate::error::Result;
use crate::field::Fermion;
use crate::lattice::{Lattice, Parity, Subset};
use crate::precision::Precision;

/// Flops per site of the improved hopping term: 16 link-vector products
/// (66 each) and 15 vector sums (6 each), as QUDA counts them; the naive
/// term has 8 products and 7 sums.
pub const IMPROVED_DSLASH_FLOPS_PER_SITE: f64 = 1146.0;
pub const NAIVE_DSLASH_FLOPS_PER_SITE: f64 = 570.0;
/// An axpy-type update of a colour vector.
pub const AXPY_FLOPS_PER_SITE: f64 = 12.0;

/// MILC's staggered phase `η_μ(x)`: `η_x = (−1)^t`, `η_y = (−1)^(t+x)`,
/// `η_z = (−1)^(t+x+y)`, `η_t = 1` (MILC `generic_ks/rephase.c`).
pub fn milc_phase(x: [usize; 4], mu: usize) -> f64 {
    let sum = match mu {
        0 => x[3],
        1 => x[3] + x[0],
        2 => x[3] + x[0] + x[1],
        _ => 0,
    };
    if sum % 2 == 0 {
        1.0
    } else {
        -1.0
    }
}

/// Multiplies `field` by MILC's phases (`milc_phase`) and `coefficient`,
/// and, with an anti-periodic `t_boundary`, negates the T links whose hop of
/// `hops` sites crosses the last time slice (1 for one-hop links, 3 for the
/// Naik links): what `PhaseFolding::Fold` asks of a load. `field` is the
/// part of a lattice of extents `global` whose site 0 is the global site
/// `origin` (`[0; 4]` and its own extents on one rank): the phases and the
/// boundary belong to the global coordinates.
pub fn fold_phases(
    field: &mut crate::field::GaugeField,
    origin: [usize; 4],
    global: [usize; 4],
    hops: usize,
    t_boundary: crate::precision::TBoundary,
    coefficient: f64,
) {
    let lat = field.lattice().clone();
    for p in [Parity::Even, Parity::Odd] {
        for cb in 0..lat.half_volume() {
            let local = lat.coords(p, cb);
            let x = [0, 1, 2, 3].map(|mu| origin[mu] + local[mu]);
            for mu in 0..4 {
                let mut s = milc_phase(x, mu) * coefficient;
                if mu == 3 && x[3] + hops >= global[3] {
                    s *= t_boundary.sign();
                }
                let u = field.link_mut(p, cb, mu);
                *u = u.scale(num_complex::Complex64::new(s, 0.0));
            }
        }
    }
}

/// `fold_phases` on a whole lattice (one rank).
pub fn fold_phases_whole(
    field: &mut crate::field::GaugeField,
    hops: usize,
    t_boundary: crate::precision::TBoundary,
    coefficient: f64,
) {
    let dims = field.lattice().dims();
    fold_phases(field, [0; 4], dims, hops, t_boundary, coefficient);
}

fn dslash_flops<B: Backend>(links: &B::StaggeredLinks) -> f64 {
    if links.improved() {
        IMPROVED_DSLASH_FLOPS_PER_SITE
    } else {
        NAIVE_DSLASH_FLOPS_PER_SITE
    }
}

/// `M = 2m − D` on the full lattice.
pub struct StaggeredFull<'a, B: Backend> {
    backend: &'a B,
    links: &'a B::StaggeredLinks,
    mass: f64,
    precision: Precision,
}

impl<'a, B: Backend> StaggeredFull<'a, B> {
    pub fn new(
        backend: &'a B,
        links: &'a B::StaggeredLinks,
        mass: f64,
        precision: Precision,
    ) -> Self {
        StaggeredFull {
            backend,
            links,
            mass,
            precision,
        }
    }
}

impl<B: Backend> DiracOperator<B> for StaggeredFull<'_, B> {
    fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor, dagger: bool) -> Result<()> {
        let a = if dagger { 1.0 } else { -1.0 };
        for p in [Parity::Even, Parity::Odd] {
            let x = Some((2.0 * self.mass, inp));
            self.backend
                .staggered_dslash(out, p, self.links, inp, a, x)?;
        }
        Ok(())
    }
    fn apply_block(
        &mut self,
        out: &mut [B::Spinor],
        inp: &[&B::Spinor],
        dagger: bool,
    ) -> Result<()> {
        let a = if dagger { 1.0 } else { -1.0 };
        for p in [Parity::Even, Parity::Odd] {
            let x = Some((2.0 * self.mass, inp));
            self.backend
                .staggered_dslash_block(out, p, self.links, inp, a, x)?;
        }
        Ok(())
    }
    fn subset(&self) -> Subset {
        Subset::Full
    }
    fn lattice(&self) -> &Arc<Lattice> {
        self.links.lattice()
    }
    fn precision(&self) -> Precision {
        self.precision
    }
    fn fermion(&self) -> Fermion {
        Fermion::Staggered
    }
    fn flops(&self) -> f64 {
        self.links.lattice().volume() as f64 * (dslash_flops::<B>(self.links) + AXPY_FLOPS_PER_SITE)
    }
}

/// `M̂ = 4m² − D_pq D_qp` on the sites of parity `p` (its own dagger).
pub struct StaggeredEvenOdd<'a, B: Backend> {
    backend: &'a B,
    links: &'a B::StaggeredLinks,
    mass: f64,
    parity: Parity,
    precision: Precision,
    /// The intermediate `D_qp χ` on the other parity.
    tmp: B::Spinor,
    /// The intermediates of a block application.
    tmp_block: Vec<B::Spinor>,
}

impl<'a, B: Backend> StaggeredEvenOdd<'a, B> {
    pub fn new(
        backend: &'a B,
        links: &'a B::StaggeredLinks,
        mass: f64,
        parity: Parity,
        precision: Precision,
    ) -> Result<Self> {
        let tmp = backend.alloc_field(
            links.lattice(),
            Subset::Single(parity.other()),
            precision,
            Fermion::Staggered,
        )?;
        Ok(StaggeredEvenOdd {
            backend,
            links,
            mass,
            parity,
            precision,
            tmp,
            tmp_block: Vec::new(),
        })
    }
}

impl<B: Backend> DiracOperator<B> for StaggeredEvenOdd<'_, B> {
    fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor, _dagger: bool) -> Result<()> {
        let (p, q) = (self.parity, self.parity.other());
        self.backend
            .staggered_dslash(&mut self.tmp, q, self.links, inp, 1.0, None)?;
        let x = Some((4.0 * self.mass * self.mass, inp));
        self.backend
            .staggered_dslash(out, p, self.links, &self.tmp, -1.0, x)
    }
    fn apply_block(
        &mut self,
        out: &mut [B::Spinor],
        inp: &[&B::Spinor],
        _dagger: bool,
    ) -> Result<()> {
        let (p, q, b, links) = (self.parity, self.parity.other(), self.backend, self.links);
        let n = inp.len();
        let (lat, sub) = (links.lattice(), Subset::Single(q));
        let fermion = Fermion::Staggered;
        grow_block(b, &mut self.tmp_block, n, lat, sub, self.precision, fermion)?;
        let tmp = &mut self.tmp_block[..n];
        b.staggered_dslash_block(tmp, q, links, inp, 1.0, None)?;
        let mid: Vec<&B::Spinor> = tmp.iter().collect();
        let x = Some((4.0 * self.mass * self.mass, inp));
        b.staggered_dslash_block(out, p, links, &mid, -1.0, x)
    }
    fn subset(&self) -> Subset {
        Subset::Single(self.parity)
    }
    fn lattice(&self) -> &Arc<Lattice> {
        self.links.lattice()
    }
    fn precision(&self) -> Precision {
        self.precision
    }
    fn fermion(&self) -> Fermion {
        Fermion::Staggered
    }
    fn flops(&self) -> f64 {
        self.links.lattice().half_volume() as f64
            * (2.0 * dslash_flops::<B>(self.links) + AXPY_FLOPS_PER_SITE)
    }
}

/// The source and the other parity of the even-odd staggered system.
pub struct StaggeredSchur;

impl StaggeredSchur {
    /// `rhs = b̂_p = 2m b_p + D_pq b_q` from the full source `b`.
    pub fn prepare<B: Backend>(
        backend: &B,
        links: &B::StaggeredLinks,
        mass: f64,
        parity: Parity,
        b: &B::Spinor,
        rhs: &mut B::Spinor,
    ) -> Result<()> {
        let bp = Some((2.0 * mass, b));
        backend.staggered_dslash(rhs, parity, links, b, 1.0, bp)
    }

    /// Completes the full solution `x` (its parity-`p` half already set):
    /// `x_q = (b_q + D_qp x_p) / 2m`.
    pub fn reconstruct<B: Backend>(
        backend: &B,
        links: &B::StaggeredLinks,
        mass: f64,
        parity: Parity,
        b: &B::Spinor,
        x: &mut B::Spinor,
    ) -> Result<()> {
        let q = parity.other();
        let inv = 1.0 / (2.0 * mass);
        let mut xq = backend.alloc_field(
            x.lattice(),
            Subset::Single(q),
            x.precision(),
            Fermion::Staggered,
        )?;
        backend.staggered_dslash(&mut xq, q, links, x, inv, Some((inv, b)))?;
        backend.insert_parity(x, q, &xq)
    }
}
