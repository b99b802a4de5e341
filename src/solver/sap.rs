//! The Schwarz alternating procedure as a right preconditioner (seed 002
//! §2.2, eqs. 7–10, after Lüscher's SAP): the lattice tiled by boxes
//! (`crate::domains`) coloured black and white, the Wilson(-clover)
//! operator `M` split into the box operators `M_E` (black boxes) and `M_O`
//! (white ones) with Dirichlet boundaries, and
//!
//! `M_SAP = K Σ_{j<N} (1 − M K)^j`, `K = ((B_E, 0), (−B_O M_OE B_E, B_O))`,
//!
//! `B_E ≈ M_E⁻¹` by SSOR(ω) (eq. 9–10). `N` (`cycles`) counts applications
//! of `K`: the seed's eq. 8 sums `j = 0 … N_SAP`, so its `N_SAP` is our
//! `cycles − 1`. One application of `K` is one multiplicative sweep: the
//! black boxes solved on the residual, the residual updated, the white
//! boxes solved on it.
//!
//! The box solve: with `D = diag(A_ee, A_oo)` (the clover term, 1 for
//! Wilson) the box operator is `D (1 − L − U)`, `L = κ A⁻¹_oo D_oe`,
//! `U = κ A⁻¹_ee D_eo`. The seed's SSOR runs over a box's sites in
//! lexicographic order, a sequential sweep; here the sites of a box are
//! ordered even before odd, so that `(1 − ωL)⁻¹ = 1 + ωL` and
//! `(1 − ωU)⁻¹ = 1 + ωU` are one hopping term each, over every box at
//! once. With that ordering eq. 10's `A^SSOR = (1 − ωL)⁻¹ (1 − L − U)
//! (1 − ωU)⁻¹ = ((1, (ω−1)U), ((ω−1)L, 1 + ω(ω−2)LU))`, and eq. 9 is
//! `B = (1 + ωU) [Σ_{j≤N_SSOR} (1 − A^SSOR)^j] (1 + ωL) D⁻¹`: `N_SSOR`
//! Richardson steps of two hopping terms each (for ω = 1, Jacobi steps on
//! the box's even-odd Schur complement `1 − LU`). Every piece is linear,
//! so `M_SAP` is a fixed linear map: a stationary preconditioner, as block
//! BiCGstab needs.
//!
//! The box operator's links are the operator's with every link that leaves
//! a box set to zero (`Backend::upload_domain_gauge`): its hopping terms
//! run over the whole local lattice and never reach another rank. The box
//! solves of one colour run over the sites of both (those of the other
//! colour stay zero): twice the work of a box-by-box solve, in exchange for
//! the backends' own hopping kernels.

use std::sync::Arc;

use crate::backend::{Backend, CloverForm};
use crate::dirac::WilsonFields;
use crate::domains::Domains;
use crate::error::{Error, Result};
use crate::lattice::{Lattice, Parity, Subset};
use crate::precision::Precision;

use super::block::BlockPreconditioner;

/// How the boxes' solves combine within a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Schwarz {
    /// The seed's: black boxes on the residual, the residual updated, white
    /// boxes on it (QUDA's `QUDA_MULTIPLICATIVE_SCHWARZ`).
    #[default]
    Multiplicative,
    /// Every box on the same residual at once, the residual updated between
    /// cycles only (QUDA's `QUDA_ADDITIVE_SCHWARZ`): one box solve a cycle.
    Additive,
}

/// How a box's system is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoxSolver {
    /// `ssor_iterations` Richardson steps of SSOR(ω) (seed 002 eqs. 9–10):
    /// a fixed linear map.
    #[default]
    Ssor,
    /// `ssor_iterations` minimal-residual steps from zero, relaxed by ω
    /// (QUDA's `QUDA_MR_INVERTER` as a Schwarz preconditioner, its `omega`):
    /// its step lengths depend on the residual, so `M_SAP` is no fixed map
    /// and only the flexible GCR takes it. The step lengths are summed
    /// over all the boxes solved at once (and over the ranks).
    Mr,
}

/// What a caller chooses of SAP.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SapParams {
    /// A box's extents; zeros: `Domains::default_extent`.
    pub extent: [usize; 4],
    /// Applications of `K` (the seed: N_SAP + 1 = 6).
    pub cycles: usize,
    /// Steps of a box solve (the seed: N_SSOR = 1; QUDA's
    /// `maxiter_precondition` for MR).
    pub ssor_iterations: usize,
    /// The relaxation ω, in (0, 2): SSOR's (the seed: 1.26) or MR's.
    pub omega: f64,
    pub schwarz: Schwarz,
    pub box_solver: BoxSolver,
}

impl Default for SapParams {
    fn default() -> Self {
        SapParams {
            extent: [0; 4],
            cycles: 6,
            ssor_iterations: 1,
            omega: 1.0,
            schwarz: Schwarz::Multiplicative,
            box_solver: BoxSolver::Ssor,
        }
    }
}

impl SapParams {
    /// Refuses what cannot run: no cycles, ω outside (0, 2) or not finite.
    pub fn check(&self) -> Result<()> {
        if self.cycles == 0 || self.cycles > 1000 {
            return Err(Error::InvalidArgument(format!(
                "sap cycles = {}: between 1 and 1000",
                self.cycles
            )));
        }
        if self.ssor_iterations > 1000 {
            return Err(Error::InvalidArgument(format!(
                "sap ssor_iterations = {}: at most 1000",
                self.ssor_iterations
            )));
        }
        if !(self.omega > 0.0 && self.omega < 2.0) {
            return Err(Error::InvalidArgument(format!(
                "sap omega = {}: SSOR and relaxed MR need 0 < omega < 2",
                self.omega
            )));
        }
        if self.box_solver == BoxSolver::Mr && self.ssor_iterations == 0 {
            return Err(Error::InvalidArgument(
                "sap MR box solves of 0 steps: at least 1".into(),
            ));
        }
        Ok(())
    }

    /// The boxes of this rank's lattice `local` (global origin from the
    /// rank's place in the grid).
    pub fn domains(&self, local: [usize; 4], rank_coords: [usize; 4]) -> Result<Domains> {
        let origin = [0, 1, 2, 3].map(|mu| rank_coords[mu] * local[mu]);
        Domains::new(local, self.resolved_extent(local), origin)
    }

    /// A box's extents on the lattice `local`: the caller's, or
    /// `Domains::default_extent` for zeros.
    pub fn resolved_extent(&self, local: [usize; 4]) -> [usize; 4] {
        if self.extent == [0; 4] {
            Domains::default_extent(local)
        } else {
            self.extent
        }
    }

    /// Applications of `M` one `M_SAP` costs: a residual update before
    /// every box solve but the first, and the box solves (each over the
    /// whole lattice): SSOR's `N_SSOR + 1`, MR's one a step. Multiplicative
    /// cycles solve twice (each colour), additive ones once.
    pub fn matvecs(&self) -> f64 {
        let (n, s) = (self.cycles as f64, self.ssor_iterations as f64);
        let solves = match self.schwarz {
            Schwarz::Multiplicative => 2.0 * n,
            Schwarz::Additive => n,
        };
        let per_solve = match self.box_solver {
            BoxSolver::Ssor => s + 1.0,
            BoxSolver::Mr => s,
        };
        (solves - 1.0) + solves * per_solve
    }
}

/// The box operator's links for `domains`, stored for spinors of
/// `precision`: `gauge` read back (`Backend::download_gauge`), every link
/// that leaves a box cut, stored again (`Backend::upload_domain_gauge`).
pub fn box_links<B: Backend>(
    backend: &B,
    gauge: &B::Gauge,
    domains: &Domains,
    precision: Precision,
) -> Result<B::Gauge> {
    let cut = domains.cut_links(backend.download_gauge(gauge)?)?;
    backend.upload_domain_gauge(&cut, precision)
}

/// The single-parity working fields, one per column of a block (outer
/// index: parity).
struct Work<S> {
    /// The right-hand sides, the accumulated solutions, the residuals
    /// (after `D⁻¹` the odd part holds `w_o`, the even part scratch).
    r: [Vec<S>; 2],
    psi: [Vec<S>; 2],
    rho: [Vec<S>; 2],
    /// `c = D⁻¹ ρ` (`c_e` is `w_e`), the Richardson iterate y, `U y_o`.
    c: [Vec<S>; 2],
    y: [Vec<S>; 2],
    u: Vec<S>,
}

/// The fields `v[..n]` as references (what the block hopping terms take).
fn first<S>(v: &[S], n: usize) -> Vec<&S> {
    v[..n].iter().collect()
}

/// The box operator's hopping terms: `out_p = a A⁻¹_pp D_pq in_q (+ x_p)`
/// on the cut links (`L` onto odd, `U` onto even, times a / κ), for every
/// column at once (one pass over the links where the backend can).
struct BoxHopping<'a, B: Backend> {
    backend: &'a B,
    links: &'a B::Gauge,
    clover: Option<&'a B::Clover>,
    dagger: bool,
}

impl<B: Backend> BoxHopping<'_, B> {
    fn apply(
        &self,
        out: &mut [B::Spinor],
        p: Parity,
        inp: &[&B::Spinor],
        a: f64,
        x: Option<&[&B::Spinor]>,
    ) -> Result<()> {
        let (b, g, dag) = (self.backend, self.links, self.dagger);
        match self.clover {
            Some(c) => {
                let form = CloverForm::InverseOnHopping;
                b.wilson_clover_dslash_block(out, p, g, c, inp, dag, a, form, x)
            }
            None => b.wilson_dslash_block(out, p, g, inp, dag, a, x),
        }
    }
}

impl<B: Backend> BoxHopping<'_, B> {
    /// The operator on its links on parity `p`: `out_p = A_pp x_p − κ
    /// D in_p̄` (`M_box` on the cut links, `M` on the operator's; or the
    /// adjoint), every column at once.
    fn apply_operator(
        &self,
        out: &mut [B::Spinor],
        p: Parity,
        inp: &[&B::Spinor],
        kappa: f64,
        x: &[&B::Spinor],
    ) -> Result<()> {
        let (b, g, dag) = (self.backend, self.links, self.dagger);
        match self.clover {
            Some(c) => {
                let form = CloverForm::DirectOnX;
                b.wilson_clover_dslash_block(out, p, g, c, inp, dag, -kappa, form, Some(x))
            }
            None => b.wilson_dslash_block(out, p, g, inp, dag, -kappa, Some(x)),
        }
    }
}

/// `M_SAP` for `M = A − κ D` (or `M†`), in one precision.
pub struct Sap<'a, B: Backend> {
    backend: &'a B,
    /// `M`'s links and clover term (for the residual updates).
    fields: WilsonFields<'a, B>,
    boxes: BoxHopping<'a, B>,
    domains: Domains,
    lattice: Arc<Lattice>,
    kappa: f64,
    dagger: bool,
    params: SapParams,
    precision: Precision,
    work: Work<B::Spinor>,
}

impl<'a, B: Backend> Sap<'a, B> {
    /// `fields` and the box operator's links `boxes`
    /// (`Backend::upload_domain_gauge` of `Domains::cut_links`), stored for
    /// spinors of `precision`, on this rank's lattice `lattice`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        backend: &'a B,
        fields: WilsonFields<'a, B>,
        boxes: &'a B::Gauge,
        lattice: &Arc<Lattice>,
        kappa: f64,
        dagger: bool,
        params: SapParams,
        precision: Precision,
    ) -> Result<Self> {
        params.check()?;
        let domains = params.domains(lattice.dims(), backend.rank_coords())?;
        let boxes = BoxHopping {
            backend,
            links: boxes,
            clover: fields.clover,
            dagger,
        };
        let pair = || [Vec::new(), Vec::new()];
        let mut sap = Sap {
            backend,
            fields,
            boxes,
            domains,
            lattice: lattice.clone(),
            kappa,
            dagger,
            params,
            precision,
            work: Work {
                r: pair(),
                psi: pair(),
                rho: pair(),
                c: pair(),
                y: pair(),
                u: Vec::new(),
            },
        };
        sap.grow(1)?;
        Ok(sap)
    }

    /// The boxes it works on.
    pub fn domains(&self) -> &Domains {
        &self.domains
    }

    /// Working fields for `n` columns.
    fn grow(&mut self, n: usize) -> Result<()> {
        let (b, lat, prec) = (self.backend, &self.lattice, self.precision);
        let field = |p: Parity| b.alloc_spinor(lat, Subset::Single(p), prec);
        let w = &mut self.work;
        while w.u.len() < n {
            for pair in [&mut w.r, &mut w.psi, &mut w.rho, &mut w.c, &mut w.y] {
                pair[0].push(field(Parity::Even)?);
                pair[1].push(field(Parity::Odd)?);
            }
            w.u.push(field(Parity::Even)?);
        }
        Ok(())
    }

    /// `out = M_SAP inp` (full fields).
    pub fn apply(&mut self, out: &mut B::Spinor, inp: &B::Spinor) -> Result<()> {
        self.apply_columns(std::slice::from_mut(out), &[inp])
    }

    /// `out_k = M_SAP inp_k` for every column, the hopping terms of all
    /// columns in one call.
    fn apply_columns(&mut self, out: &mut [B::Spinor], inp: &[&B::Spinor]) -> Result<()> {
        let (b, n) = (self.backend, inp.len());
        self.grow(n)?;
        for p in [Parity::Even, Parity::Odd] {
            let i = p.index();
            let w = &mut self.work;
            for ((r, psi), x) in w.r[i].iter_mut().zip(w.psi[i].iter_mut()).zip(inp) {
                b.extract_parity(r, x, p)?;
                b.zero(psi)?;
            }
        }
        // Multiplicative: each colour's boxes on its own residual;
        // additive: all boxes on one.
        let colours: &[Option<usize>] = match self.params.schwarz {
            Schwarz::Multiplicative => &[Some(0), Some(1)],
            Schwarz::Additive => &[None],
        };
        for cycle in 0..self.params.cycles {
            for (step, colour) in colours.iter().enumerate() {
                if cycle == 0 && step == 0 {
                    for i in 0..2 {
                        for k in 0..n {
                            b.copy(&mut self.work.rho[i][k], &self.work.r[i][k])?;
                        }
                    }
                } else {
                    self.residual(n)?;
                }
                if let Some(colour) = *colour {
                    for rho in self.work.rho.iter_mut().flat_map(|v| &mut v[..n]) {
                        b.domain_project(rho, &self.domains, colour)?;
                    }
                }
                match self.params.box_solver {
                    BoxSolver::Ssor => self.box_solve(n)?,
                    BoxSolver::Mr => self.box_solve_mr(n)?,
                }
            }
        }
        for p in [Parity::Even, Parity::Odd] {
            for (k, o) in out.iter_mut().enumerate() {
                b.insert_parity(o, p, &self.work.psi[p.index()][k])?;
            }
        }
        Ok(())
    }

    /// `ρ = r − M ψ`.
    fn residual(&mut self, n: usize) -> Result<()> {
        let b = self.backend;
        // M itself: the box operator's form on the operator's own links.
        let m = BoxHopping {
            backend: b,
            links: self.fields.gauge,
            clover: self.fields.clover,
            dagger: self.dagger,
        };
        let w = &mut self.work;
        for p in [Parity::Even, Parity::Odd] {
            let (i, j) = (p.index(), p.other().index());
            let (out, x, inp) = (&mut w.rho[i][..n], first(&w.psi[i], n), first(&w.psi[j], n));
            m.apply_operator(out, p, &inp, self.kappa, &x)?;
            for (o, r) in out.iter_mut().zip(&w.r[i]) {
                b.axpby(1.0, r, -1.0, o)?;
            }
        }
        Ok(())
    }

    /// `ψ += x` after `ssor_iterations` minimal-residual steps on the box
    /// system `M_box x = ρ` from `x = 0` (ρ becomes its residual; `c`
    /// holds `M_box ρ`): per column `α = ω (M_box ρ, ρ) / |M_box ρ|²`,
    /// `x += α ρ`, `ρ −= α M_box ρ`.
    fn box_solve_mr(&mut self, n: usize) -> Result<()> {
        let (b, om) = (self.backend, self.params.omega);
        for _ in 0..self.params.ssor_iterations {
            let w = &mut self.work;
            for p in [Parity::Even, Parity::Odd] {
                let (i, j) = (p.index(), p.other().index());
                let (inp, x) = (first(&w.rho[j], n), first(&w.rho[i], n));
                self.boxes
                    .apply_operator(&mut w.c[i][..n], p, &inp, self.kappa, &x)?;
            }
            for k in 0..n {
                let (mut cr, mut cc) = (num_complex::Complex64::new(0.0, 0.0), 0.0);
                for i in 0..2 {
                    let (d, n2) = b.cdot_norm2(&w.c[i][k], &w.rho[i][k])?;
                    (cr, cc) = (cr + d, cc + n2);
                }
                if cc.is_nan() || cc <= 0.0 {
                    // ρ = 0 on every box of this column: nothing to solve.
                    continue;
                }
                let alpha = cr * (om / cc);
                for i in 0..2 {
                    b.caxpy(alpha, &w.rho[i][k], &mut w.psi[i][k])?;
                    b.caxpy(-alpha, &w.c[i][k], &mut w.rho[i][k])?;
                }
            }
        }
        Ok(())
    }

    /// `ψ += B ρ` on the boxes `ρ` lives on (eq. 9 in even-odd order).
    fn box_solve(&mut self, n: usize) -> Result<()> {
        let (b, h, k, om) = (self.backend, &self.boxes, self.kappa, self.params.omega);
        let [e, o] = [Parity::Even, Parity::Odd];
        let w = &mut self.work;
        // c = D⁻¹ ρ.
        for p in [e, o] {
            let i = p.index();
            for (c, rho) in w.c[i][..n].iter_mut().zip(&w.rho[i]) {
                match self.fields.clover {
                    Some(clover) => b.clover(c, p, clover, rho, true)?,
                    None => b.copy(c, rho)?,
                }
            }
        }
        // w = (1 + ωL) c: w_e = c_e, w_o = c_o + ωL c_e (into ρ_o).
        let [rho_e, w_o] = &mut w.rho;
        let (w_e, c_o) = (first(&w.c[0], n), first(&w.c[1], n));
        h.apply(&mut w_o[..n], o, &w_e, om * k, Some(&c_o))?;
        // y = Σ_{j ≤ N} (1 − A^SSOR)^j w by y ← w + (1 − A^SSOR) y:
        // u = U y_o; y_o ← w_o + L((1 − ω) y_e − ω(ω − 2) u) (the old y_e;
        // the sum in ρ_e); y_e ← w_e + (1 − ω) u. For ω = 1: y_o ← w_o + L u,
        // y_e = w_e throughout.
        let [y_e, y_o] = &mut w.y;
        for ((ye, yo), (we, wo)) in y_e
            .iter_mut()
            .zip(y_o.iter_mut())
            .zip(w_e.iter().zip(&*w_o))
            .take(n)
        {
            b.copy(ye, we)?;
            b.copy(yo, wo)?;
        }
        let wo = first(w_o, n);
        for _ in 0..self.params.ssor_iterations {
            h.apply(&mut w.u[..n], e, &first(y_o, n), k, None)?;
            if om == 1.0 {
                h.apply(&mut y_o[..n], o, &first(&w.u, n), k, Some(&wo))?;
                continue;
            }
            for ((s, ye), u) in rho_e.iter_mut().zip(y_e.iter()).zip(&w.u).take(n) {
                b.copy(s, ye)?;
                b.axpby(-om * (om - 2.0), u, 1.0 - om, s)?;
            }
            h.apply(&mut y_o[..n], o, &first(rho_e, n), k, Some(&wo))?;
            for ((ye, we), u) in y_e.iter_mut().zip(&w_e).zip(&w.u).take(n) {
                b.copy(ye, we)?;
                b.axpy(1.0 - om, u, ye)?;
            }
        }
        // x = (1 + ωU) y: x_o = y_o, x_e = y_e + ωU y_o; ψ += x.
        h.apply(
            &mut w.u[..n],
            e,
            &first(y_o, n),
            om * k,
            Some(&first(y_e, n)),
        )?;
        let [psi_e, psi_o] = &mut w.psi;
        for k in 0..n {
            b.axpy(1.0, &w.u[k], &mut psi_e[k])?;
            b.axpy(1.0, &y_o[k], &mut psi_o[k])?;
        }
        Ok(())
    }
}

impl<B: Backend> BlockPreconditioner<B> for Sap<'_, B> {
    fn apply_block(&mut self, out: &mut [B::Spinor], inp: &[&B::Spinor]) -> Result<()> {
        if out.len() != inp.len() {
            return Err(Error::Internal(format!(
                "sap: {} outputs for {} inputs",
                out.len(),
                inp.len()
            )));
        }
        self.apply_columns(out, inp)
    }
    fn precision(&self) -> Precision {
        self.precision
    }
    fn matvecs(&self) -> f64 {
        self.params.matvecs()
    }
}
