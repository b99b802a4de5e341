//! The backend trait: everything a solver or a Dirac operator needs from the
//! hardware. Solvers are written once against it, so CI (CPU backend) tests
//! the very solver code that runs on the GPU (CUDA backend).
//!
//! Fields are single-parity (`Vh` sites) or full (`V` sites, even half then
//! odd half). Vector operations take fields of one subset and, except
//! `copy`, of one precision; reductions are accumulated in f64 in a fixed
//! order, so a result is the same bit for bit on every run. The fused forms
//! follow seed clark2010 §4.8 (one pass over memory instead of two).

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
mod field_checks;
mod signatures;

use std::sync::Arc;

use num_complex::Complex64 as C64;

use crate::clover::CloverField;
use crate::domains::Domains;
use crate::error::Result;
use crate::fat_links::{PathCoefficients, UnitarizeParams};
use crate::field::{Fermion, GaugeField, HostSpinor};
use crate::lattice::{Lattice, Parity, Subset};
use crate::layout::{DiracOrder, GammaBasis, HostGauge, HostReals, HostRealsMut};
use crate::long_links::LongReconstruct;
use crate::precision::{Precision, Reconstruct, TBoundary};

pub(crate) use field_checks::{
    check_block_fields, check_many_precisions, check_parity_pair, name_source,
};
pub use signatures::{
    CloverForm, CloverStorage, FatAndLong, GaugeForm, GaugeScan, GaugeStorage, OperatorFamily,
    OvrSweeps, PhaseFold, SpinorField, StaggeredStorage,
};

/// A compute backend: memory, vector algebra and the Wilson hopping term.
pub trait Backend: Send + Sync {
    type Spinor: SpinorField;
    type Gauge: GaugeStorage;
    type Clover: CloverStorage;
    type StaggeredLinks: StaggeredStorage;

    /// Short name for logs and results ("cpu", "cuda").
    fn name(&self) -> &'static str;

    /// The ranks the lattice is cut over (1: one process).
    fn ranks(&self) -> usize {
        1
    }

    /// Whether `ok` holds on every rank: a local failure made collective
    /// before the next collective step (`agreed`). One process: `ok`.
    fn all_ok(&self, ok: bool) -> Result<bool> {
        Ok(ok)
    }

    /// The largest of `value` over the ranks.
    fn global_max(&self, value: f64) -> Result<f64> {
        Ok(value)
    }

    /// Makes ready, all at once, the code that solves with `family` on
    /// fields and links of `formats` (precision and reconstruct of the
    /// Wilson links; staggered links ignore it) will run: a backend that
    /// compiles kernels compiles those, in parallel, before the solve
    /// rather than one at a time when first launched. Nothing to do on the
    /// CPU.
    fn prepare(
        &self,
        _family: OperatorFamily,
        _formats: &[(Precision, Reconstruct)],
    ) -> Result<()> {
        Ok(())
    }

    /// As `prepare`, for the several-field hopping terms a block solve of
    /// several sources launches (`wilson_dslash_block`,
    /// `wilson_clover_dslash_block`) on links of `formats`.
    fn prepare_block(&self, _formats: &[(Precision, Reconstruct)]) -> Result<()> {
        Ok(())
    }

    /// Frees the memory kept for the next solves (the buffers of freed
    /// fields, which a backend may keep to serve later fields of their
    /// shape without allocating). Nothing to free on the CPU.
    fn release_workspaces(&self) {}

    /// Fields allocated and fields served from kept buffers since the
    /// backend started; (0, 0) where nothing is kept (the CPU).
    fn field_allocations(&self) -> (usize, usize) {
        (0, 0)
    }

    // ---- memory and transfers -------------------------------------------

    /// Stores a host gauge field; the anti-periodic sign, if asked for, is
    /// folded into the T links of the last time slice.
    fn upload_gauge(
        &self,
        gauge: &GaugeField,
        t_boundary: TBoundary,
        precision: Precision,
        reconstruct: Reconstruct,
    ) -> Result<Self::Gauge>;

    /// A caller's gauge array checked and stored in every format of
    /// `formats` by the backend itself, with no canonical host copy in
    /// between (issue 18): the array crosses as it is, and the reordering,
    /// compression and precision change run where the links will live.
    /// The scan's numbers (non-finite links, SU(3) and temporal-gauge
    /// deviations, plaquette) go to `accept` before anything is stored;
    /// `None` when it refuses them, or when this backend converts on the
    /// host (the default: the CPU), or could not stage the array: the
    /// caller then takes the host path (`import`, checks, `upload_gauge`),
    /// which also words any error. The lengths are the caller's to check.
    /// `form.temporal`: the storage of `upload_gauge_temporal` (the caller
    /// has checked the field is in temporal gauge when `accept` says yes);
    /// `form.sign_in_links`: the sign is taken out before the scan.
    fn import_gauge(
        &self,
        _lattice: &Arc<Lattice>,
        _host: &HostGauge,
        _form: GaugeForm,
        _formats: &[(Precision, Reconstruct)],
        _accept: &dyn Fn(&GaugeScan) -> bool,
    ) -> Result<Option<(GaugeScan, Vec<Self::Gauge>)>> {
        Ok(None)
    }

    /// Staggered links (fat, and long if given; 18 reals a link as the
    /// caller gives them, phases included unless `fold` says to fold them
    /// in) stored in each of `formats` (precision, long links' storage) by
    /// the backend itself, as `upload_staggered` stores them (after
    /// `dirac::staggered::fold_phases`). `None` where this backend converts on
    /// the host (the default), where a link is not finite or the arrays
    /// cannot be staged: the caller then takes the host path, which words
    /// the error.
    fn import_staggered(
        &self,
        _lattice: &Arc<Lattice>,
        _fat: &HostGauge,
        _long: Option<&HostGauge>,
        _fold: Option<PhaseFold>,
        _formats: &[(Precision, LongReconstruct)],
    ) -> Result<Option<Vec<Self::StaggeredLinks>>> {
        Ok(None)
    }

    /// As `upload_gauge`, for a field in temporal gauge: every T link off
    /// the last time slice is the unit matrix (the caller has checked it),
    /// so a backend may leave those links out of storage and out of the
    /// dslash. The default stores them as they are: correct, saving nothing.
    fn upload_gauge_temporal(
        &self,
        gauge: &GaugeField,
        t_boundary: TBoundary,
        precision: Precision,
        reconstruct: Reconstruct,
    ) -> Result<Self::Gauge> {
        self.upload_gauge(gauge, t_boundary, precision, reconstruct)
    }

    /// Stores a box operator's links (`Domains::cut_links`) uncompressed:
    /// its hopping terms never leave this rank; periodic in time (cut).
    fn upload_domain_gauge(&self, gauge: &GaugeField, precision: Precision) -> Result<Self::Gauge>;

    /// The stored links on the host, decompressed (the time boundary's sign
    /// not folded in): what a box operator is cut from.
    fn download_gauge(&self, gauge: &Self::Gauge) -> Result<GaugeField>;

    /// Zeroes the sites of `field` outside the boxes of `colour`.
    fn domain_project(&self, field: &mut Self::Spinor, d: &Domains, colour: usize) -> Result<()>;

    /// This rank's place in the grid of ranks (zeros on one process).
    fn rank_coords(&self) -> [usize; 4] {
        [0; 4]
    }

    /// `part = full_p`: the sites of parity `p` of a full field into a
    /// single-parity field of that parity, both in one precision.
    fn extract_parity(&self, part: &mut Self::Spinor, full: &Self::Spinor, p: Parity)
        -> Result<()>;

    /// `full_p = part`, the converse of `extract_parity`.
    fn insert_parity(&self, full: &mut Self::Spinor, p: Parity, part: &Self::Spinor) -> Result<()>;

    /// A zeroed field of `fermion` (Wilson spinors or staggered colour
    /// vectors).
    fn alloc_field(
        &self,
        lattice: &Arc<Lattice>,
        subset: Subset,
        precision: Precision,
        fermion: Fermion,
    ) -> Result<Self::Spinor>;

    /// A zeroed Wilson spinor field.
    fn alloc_spinor(
        &self,
        lattice: &Arc<Lattice>,
        subset: Subset,
        precision: Precision,
    ) -> Result<Self::Spinor> {
        self.alloc_field(lattice, subset, precision, Fermion::Wilson)
    }

    /// Host (canonical, UKQCD basis) → backend; subsets must agree.
    fn upload_spinor(&self, dst: &mut Self::Spinor, src: &HostSpinor) -> Result<()>;

    /// Backend → host (canonical, UKQCD basis); subsets must agree.
    fn download_spinor(&self, src: &Self::Spinor, dst: &mut HostSpinor) -> Result<()>;

    /// A caller's Wilson spinor array (its order, basis and precision; a
    /// full field or the parity of `dst`'s subset), or for a staggered
    /// `dst` colour vectors (`layout::colour`; order and basis unused), into `dst`, scaled by
    /// `2^exp`; with `exp` None, by the power of two that brings its
    /// largest magnitude near 1 (`layout::normalising_exponent`). Returns
    /// the exponent. Errors (wrong length, a non-finite number, named by
    /// its site) are those of `layout::spinor::import_scaled`. The default
    /// converts on the host and uploads; a backend may instead move the
    /// caller's bytes and convert where the field lives.
    fn import_spinor(
        &self,
        dst: &mut Self::Spinor,
        host: HostReals,
        order: DiracOrder,
        basis: GammaBasis,
        exp: Option<i32>,
    ) -> Result<i32> {
        import_on_host(self, dst, host, order, basis, exp)
    }

    /// The caller's sources imported one after another (`import_spinor`,
    /// each normalised by its own power of two) into fields made by
    /// `alloc`, each handed with its exponent to `solve` before the next
    /// is imported. A backend may move source k + 1 towards itself while
    /// solve k runs (CUDA: the raw bytes over a second stream, behind the
    /// solver's kernels). Stops at the first error; an import error names
    /// the source (`sources[k]`). `solve` runs on the calling thread; the
    /// backend's own work uses the calling thread's pool only.
    fn import_each(
        &self,
        sources: &[HostReals],
        order: DiracOrder,
        basis: GammaBasis,
        alloc: &mut dyn FnMut() -> Result<Self::Spinor>,
        solve: &mut SolveEach<'_, Self::Spinor>,
    ) -> Result<()> {
        import_in_turn(self, sources, order, basis, alloc, solve)
    }

    /// `src`, scaled by `2^exp`, into a caller's array in its order, basis
    /// and precision; refused with nothing written where the result would
    /// not fit the host precision (`layout::spinor::export_scaled`).
    fn export_spinor(
        &self,
        src: &Self::Spinor,
        out: HostRealsMut,
        order: DiracOrder,
        basis: GammaBasis,
        exp: i32,
    ) -> Result<()> {
        export_on_host(self, src, out, order, basis, exp)
    }

    /// Whether `export_spinor(src, out, .., exp)` would fit the host
    /// precision: the same refusal, with nothing written, so that a call
    /// with several solutions can check them all before writing any.
    fn check_export(&self, src: &Self::Spinor, out: &HostRealsMut, exp: i32) -> Result<()> {
        check_export_on_host(self, src, out, exp)
    }

    // ---- vector algebra (BLAS-1) ------------------------------------------

    /// `dst = src`, converting precision.
    fn copy(&self, dst: &mut Self::Spinor, src: &Self::Spinor) -> Result<()>;
    /// `x = 0`.
    fn zero(&self, x: &mut Self::Spinor) -> Result<()>;
    /// `x = a x`.
    fn ax(&self, a: f64, x: &mut Self::Spinor) -> Result<()>;
    /// `y = a x + y`.
    fn axpy(&self, a: f64, x: &Self::Spinor, y: &mut Self::Spinor) -> Result<()>;
    /// `y = x + a y`.
    fn xpay(&self, x: &Self::Spinor, a: f64, y: &mut Self::Spinor) -> Result<()>;
    /// `y = a x + b y`.
    fn axpby(&self, a: f64, x: &Self::Spinor, b: f64, y: &mut Self::Spinor) -> Result<()>;
    /// `y = a x + y`, complex `a`.
    fn caxpy(&self, a: C64, x: &Self::Spinor, y: &mut Self::Spinor) -> Result<()>;
    /// `z = x + a y + b z`, complex `a`, `b` (BiCGstab's direction update).
    fn cxpaypbz(
        &self,
        x: &Self::Spinor,
        a: C64,
        y: &Self::Spinor,
        b: C64,
        z: &mut Self::Spinor,
    ) -> Result<()>;
    /// `‖x‖²`.
    fn norm2(&self, x: &Self::Spinor) -> Result<f64>;
    /// `x† y`.
    fn cdot(&self, x: &Self::Spinor, y: &Self::Spinor) -> Result<C64>;
    /// `(x† y, ‖x‖²)` in one pass.
    fn cdot_norm2(&self, x: &Self::Spinor, y: &Self::Spinor) -> Result<(C64, f64)>;
    /// MILC's heavy-quark residual before the square root: the mean over
    /// the field's sites of `|r(x)|² / |x(x)|²` (sites where `x` vanishes
    /// left out of the sum, not of the count), as QUDA's
    /// `HeavyQuarkResidualNorm` computes it.
    fn heavy_quark_residual2(&self, x: &Self::Spinor, r: &Self::Spinor) -> Result<f64>;
    /// `y = a x + y`, then `‖y‖²`, in one pass.
    fn axpy_norm2(&self, a: f64, x: &Self::Spinor, y: &mut Self::Spinor) -> Result<f64>;
    /// `y = a x + y` (complex `a`), then `‖y‖²`, in one pass.
    fn caxpy_norm2(&self, a: C64, x: &Self::Spinor, y: &mut Self::Spinor) -> Result<f64>;
    /// `y = x − y` then `‖y‖²`: the residual `r = b − A x` from `y = A x`.
    fn xmy_norm2(&self, x: &Self::Spinor, y: &mut Self::Spinor) -> Result<f64>;
    /// `y += Σ_j a[j] x[j]`, term by term in order, in one pass over `y`:
    /// the solution updates of the mixed-precision solvers (CG's buffered
    /// directions, BiCGstab's partial solution), which add sloppy fields to
    /// the high-precision solution. The `x[j]` share one precision; `y` is
    /// double or single. Each `x[j]` is converted and each term rounded to
    /// `y`'s precision as `copy` to it then `axpy` would, so the result is
    /// that of the unfused sequence, without its temporary field and passes.
    fn axpy_many(&self, a: &[f64], x: &[&Self::Spinor], y: &mut Self::Spinor) -> Result<()>;
    /// `out = x + a y` (`out` neither `x` nor `y`): CG's next direction
    /// written into the next slot of its ring, instead of a copy and `xpay`.
    fn xpay_into(
        &self,
        x: &Self::Spinor,
        a: f64,
        y: &Self::Spinor,
        out: &mut Self::Spinor,
    ) -> Result<()>;
    /// `y' = y + a x`, then `(‖y'‖², Re⟨y', y' − y⟩)`: the residual update of
    /// CG with the numerator of the Polak–Ribière β (clark2022 §3.1), using
    /// `⟨y', y' − y⟩ = a ⟨y', x⟩`. Backends may fuse it into one pass.
    fn axpy_norm2_pr(&self, a: f64, x: &Self::Spinor, y: &mut Self::Spinor) -> Result<(f64, f64)> {
        let n = self.axpy_norm2(a, x, y)?;
        Ok((n, a * self.cdot(y, x)?.re))
    }

    /// BiCGstab's closing update (seed clark2010 §4.8: one pass where QUDA
    /// fuses it): `x += α p + ω s`, then `s −= ω t` (now the new residual
    /// `r`); returns `(r̂† r, ‖r‖²)`. All fields in one precision, except that
    /// `x` may be in single when the others are half or quarter (the widened
    /// partial solution of `solver::bicgstab_reliable`).
    #[allow(clippy::too_many_arguments)]
    fn bicgstab_update(
        &self,
        alpha: C64,
        p: &Self::Spinor,
        omega: C64,
        s: &mut Self::Spinor,
        x: &mut Self::Spinor,
        t: &Self::Spinor,
        r_hat: &Self::Spinor,
    ) -> Result<(C64, f64)> {
        self.caxpy(alpha, p, x)?;
        self.caxpy(omega, s, x)?;
        let rr = self.caxpy_norm2(-omega, t, s)?;
        Ok((self.cdot(r_hat, s)?, rr))
    }

    // ---- blocks of fields (many right-hand sides, seed 002) ---------------

    /// The Gram block of two blocks of fields: `g[i·y.len() + j] = x_i† y_j`
    /// (row-major, `x.len()` rows). By default one `cdot` a pair; a backend
    /// may read each field once (in another order of summation).
    fn block_cdot(&self, x: &[&Self::Spinor], y: &[&Self::Spinor]) -> Result<Vec<C64>> {
        block_cdot_by_pairs(self, x, y)
    }

    /// `Y += X A`: `y_j += Σ_i a[i·y.len() + j] x_i` (`a` row-major,
    /// `x.len()` rows), the terms added in order of `i`. By default one
    /// `caxpy` a term; a backend may read each field once.
    fn block_caxpy(&self, a: &[C64], x: &[&Self::Spinor], y: &mut [Self::Spinor]) -> Result<()> {
        block_caxpy_by_terms(self, a, x, y)
    }

    /// `Y = X A`, or `Y = W + X A` with a `base` W (`y` overwritten; `a`
    /// as in `block_caxpy`).
    fn block_combine(
        &self,
        a: &[C64],
        x: &[&Self::Spinor],
        base: Option<&[&Self::Spinor]>,
        y: &mut [Self::Spinor],
    ) -> Result<()> {
        block_combine_by_terms(self, a, x, base, y)
    }

    /// `X ← X A` in place, `A` square (`x.len()` rows, row-major): a change
    /// of basis of the block (its QR's `Q = P R⁻¹`).
    fn block_transform(&self, a: &[C64], x: &mut [Self::Spinor]) -> Result<()> {
        block_transform_by_copies(self, a, x)
    }

    // ---- operators ----------------------------------------------------------

    /// The Wilson hopping term on one parity, in the UKQCD basis:
    /// `out[p] = a · D_{p,p̄} in[p̄] (+ x[p])`, with
    /// `D ψ(x) = Σ_μ (1 − γ_μ) U_μ(x) ψ(x+μ̂) + (1 + γ_μ) U_μ†(x−μ̂) ψ(x−μ̂)`
    /// and the projector signs swapped for `dagger` (`D† = γ5 D γ5`).
    /// A full `out`/`x` is written/read at parity `p`, a full `inp` is read at
    /// parity `p̄`; single-parity fields are used as they are.
    #[allow(clippy::too_many_arguments)]
    fn wilson_dslash(
        &self,
        out: &mut Self::Spinor,
        parity: Parity,
        gauge: &Self::Gauge,
        inp: &Self::Spinor,
        dagger: bool,
        a: f64,
        x: Option<&Self::Spinor>,
    ) -> Result<()>;

    /// `wilson_dslash` for several fields on the same links (`inp[k]` into
    /// `out[k]`, with `x[k]`): one pass over the links for all where the
    /// backend has such a kernel (seed 002 §2.1), else one call each.
    #[allow(clippy::too_many_arguments)]
    fn wilson_dslash_block(
        &self,
        out: &mut [Self::Spinor],
        parity: Parity,
        gauge: &Self::Gauge,
        inp: &[&Self::Spinor],
        dagger: bool,
        a: f64,
        x: Option<&[&Self::Spinor]>,
    ) -> Result<()> {
        check_block_fields(
            "wilson_dslash_block",
            out.len(),
            inp.len(),
            x.map(|x| x.len()),
        )?;
        for (k, (o, i)) in out.iter_mut().zip(inp).enumerate() {
            self.wilson_dslash(o, parity, gauge, i, dagger, a, x.map(|x| x[k]))?;
        }
        Ok(())
    }

    /// `wilson_clover_dslash` for several fields on the same links and
    /// clover term, as `wilson_dslash_block`.
    #[allow(clippy::too_many_arguments)]
    fn wilson_clover_dslash_block(
        &self,
        out: &mut [Self::Spinor],
        parity: Parity,
        gauge: &Self::Gauge,
        clover: &Self::Clover,
        inp: &[&Self::Spinor],
        dagger: bool,
        a: f64,
        form: CloverForm,
        x: Option<&[&Self::Spinor]>,
    ) -> Result<()> {
        let what = "wilson_clover_dslash_block";
        check_block_fields(what, out.len(), inp.len(), x.map(|x| x.len()))?;
        for (k, (o, i)) in out.iter_mut().zip(inp).enumerate() {
            let xk = x.map(|x| x[k]);
            self.wilson_clover_dslash(o, parity, gauge, clover, i, dagger, a, form, xk)?;
        }
        Ok(())
    }

    /// The clover field of a caller's links with coefficient `c` (= κ c_SW,
    /// `clover::compute`) and its inverse, computed and stored for spinors
    /// of each of `precisions` by the backend itself, as `upload_clover`
    /// stores `clover::compute` and `CloverField::inverse`. `accept` sees
    /// the links' scan (the caller's check that they are its gauge field's).
    /// `None` where this backend computes on the host (the default), where
    /// the scan is refused, a link is not finite, a block is not safely
    /// invertible or the links cannot be staged: the caller then takes the
    /// host path, which words any error.
    fn compute_clover(
        &self,
        _lattice: &Arc<Lattice>,
        _links: &HostGauge,
        _c: f64,
        _precisions: &[Precision],
        _accept: &dyn Fn(&GaugeScan) -> bool,
    ) -> Result<Option<Vec<Self::Clover>>> {
        Ok(None)
    }

    /// The fat links of the periodic field `links` with path coefficients
    /// `c`, and its long links where `long` (`fat_links::paths`), computed
    /// by the backend itself; `None` where this backend computes on the
    /// host (the default) or lacks the memory.
    fn fat_links(
        &self,
        _links: &GaugeField,
        _c: &PathCoefficients,
        _long: bool,
    ) -> Result<Option<FatAndLong>> {
        Ok(None)
    }

    /// Gauge fixing's steps on a copy of the periodic field `links` held by
    /// the backend (`OvrSweeps`), fixing `dirs` directions with
    /// over-relaxation `relax_boost`; `None` where the host does them.
    fn ovr_sweeps(
        &self,
        _links: &GaugeField,
        _dirs: usize,
        _relax_boost: f64,
    ) -> Result<Option<Box<dyn OvrSweeps + '_>>> {
        Ok(None)
    }

    /// The U(3) projection of every link of `v` by Cayley–Hamilton
    /// (`fat_links::unitarize::cayley_hamilton`), computed by the backend
    /// itself, with the canonical indices of the links it leaves to the
    /// host's SVD; `None` where this backend computes on the host.
    fn unitarize_links(
        &self,
        _v: &GaugeField,
        _p: &UnitarizeParams,
    ) -> Result<Option<(GaugeField, Vec<usize>)>> {
        Ok(None)
    }

    /// Stores a clover field and its inverse (host, DeGrand–Rossi blocks)
    /// for spinors of `precision`, in the format `clover_format` picks.
    fn upload_clover(
        &self,
        clover: &CloverField,
        inverse: &CloverField,
        precision: Precision,
    ) -> Result<Self::Clover>;

    /// `out[p] = A_pp in[p]` (`A⁻¹` with `inverse`), site by site; full or
    /// single-parity fields as for `wilson_dslash`, `out` not `in`.
    fn clover(
        &self,
        out: &mut Self::Spinor,
        parity: Parity,
        clover: &Self::Clover,
        inp: &Self::Spinor,
        inverse: bool,
    ) -> Result<()>;

    /// The Wilson hopping term with the clover term in its epilogue
    /// (`CloverForm`): `out[p] = a · A⁻¹_pp D_{p,p̄} in[p̄] (+ x[p])` or
    /// `out[p] = a · D_{p,p̄} in[p̄] + A_pp x[p]`; fields as for
    /// `wilson_dslash`.
    #[allow(clippy::too_many_arguments)]
    fn wilson_clover_dslash(
        &self,
        out: &mut Self::Spinor,
        parity: Parity,
        gauge: &Self::Gauge,
        clover: &Self::Clover,
        inp: &Self::Spinor,
        dagger: bool,
        a: f64,
        form: CloverForm,
        x: Option<&Self::Spinor>,
    ) -> Result<()>;

    /// Stores the links of a staggered operator: one-hop links `fat` (fat
    /// links, or thin ones for the naive operator) and, for the improved
    /// operator, three-hop `long` links, each with the staggered phases,
    /// the boundary signs and the Naik coefficient already folded in (as
    /// MILC passes them). All 18 reals a link: they are not unitary.
    /// `long_reconstruct` compresses the long links (`long_links`; the
    /// caller has checked that they are `|s|` × U(3)).
    fn upload_staggered(
        &self,
        fat: &GaugeField,
        long: Option<&GaugeField>,
        precision: Precision,
        long_reconstruct: LongReconstruct,
    ) -> Result<Self::StaggeredLinks>;

    /// The staggered hopping term on one parity:
    /// `out[p] = a · D_{p,p̄} in[p̄] + b · x[p]` (`x` given as `(b, x)`), with
    /// `D χ(x) = Σ_μ [F_μ(x) χ(x+μ̂) − F_μ(x−μ̂)† χ(x−μ̂) + L_μ(x) χ(x+3μ̂) − L_μ(x−3μ̂)† χ(x−3μ̂)]`
    /// (no long terms for naive links); `D† = −D`. Staggered fields; full or
    /// single-parity as for `wilson_dslash`.
    fn staggered_dslash(
        &self,
        out: &mut Self::Spinor,
        parity: Parity,
        links: &Self::StaggeredLinks,
        inp: &Self::Spinor,
        a: f64,
        x: Option<(f64, &Self::Spinor)>,
    ) -> Result<()>;

    /// `staggered_dslash` for several fields on the same links (`inp[k]`
    /// into `out[k]`, with `x[k]` scaled by the one `b`): one pass over the
    /// links for all where the backend has such a kernel (seed 002 §2.1),
    /// else one call each.
    #[allow(clippy::too_many_arguments)]
    fn staggered_dslash_block(
        &self,
        out: &mut [Self::Spinor],
        parity: Parity,
        links: &Self::StaggeredLinks,
        inp: &[&Self::Spinor],
        a: f64,
        x: Option<(f64, &[&Self::Spinor])>,
    ) -> Result<()> {
        let what = "staggered_dslash_block";
        check_block_fields(what, out.len(), inp.len(), x.map(|x| x.1.len()))?;
        for (k, (o, i)) in out.iter_mut().zip(inp).enumerate() {
            self.staggered_dslash(o, parity, links, i, a, x.map(|(b, x)| (b, x[k])))?;
        }
        Ok(())
    }

    /// `out = γ5 in` (UKQCD basis: γ5 swaps the upper and lower spin pairs
    /// with a minus sign).
    fn gamma5(&self, out: &mut Self::Spinor, inp: &Self::Spinor) -> Result<()>;

    // ---- resources ------------------------------------------------------------

    /// Bytes free for new fields, if the backend can tell; the multi-mass
    /// policy uses it to refuse a multi-shift solver whose 2n+1 extra
    /// fields would not fit. `None`: unknown (the policy then decides by
    /// cost alone).
    fn memory_available(&self) -> Option<usize> {
        None
    }
}

/// `Backend::block_cdot` one `cdot` a field pair: what a backend without
/// a fused Gram block does, and a fused one for the fields its kernels
/// do not take.
pub(crate) fn block_cdot_by_pairs<B: Backend + ?Sized>(
    backend: &B,
    x: &[&B::Spinor],
    y: &[&B::Spinor],
) -> Result<Vec<C64>> {
    let mut g = Vec::with_capacity(x.len() * y.len());
    for xi in x {
        for yj in y {
            g.push(backend.cdot(xi, yj)?);
        }
    }
    Ok(g)
}

/// `Backend::block_transform` through new fields that then take the old
/// ones' place (as `block_cdot_by_pairs`).
pub(crate) fn block_transform_by_copies<B: Backend + ?Sized>(
    backend: &B,
    a: &[C64],
    x: &mut [B::Spinor],
) -> Result<()> {
    let Some(first) = x.first() else {
        return Ok(());
    };
    let mut out = Vec::with_capacity(x.len());
    for _ in 0..x.len() {
        out.push(backend.alloc_field(
            first.lattice(),
            first.subset(),
            first.precision(),
            first.fermion(),
        )?);
    }
    backend.block_combine(a, &x.iter().collect::<Vec<_>>(), None, &mut out)?;
    for (xj, oj) in x.iter_mut().zip(out.iter_mut()) {
        std::mem::swap(xj, oj);
    }
    Ok(())
}

/// `Backend::block_combine` by a copy (or zero) a field and one `caxpy`
/// a term (as `block_cdot_by_pairs`).
pub(crate) fn block_combine_by_terms<B: Backend + ?Sized>(
    backend: &B,
    a: &[C64],
    x: &[&B::Spinor],
    base: Option<&[&B::Spinor]>,
    y: &mut [B::Spinor],
) -> Result<()> {
    match base {
        Some(w) if w.len() != y.len() => {
            return Err(crate::error::Error::Internal(format!(
                "block_combine: {} base fields for {} outputs",
                w.len(),
                y.len()
            )))
        }
        Some(w) => {
            for (yj, wj) in y.iter_mut().zip(w) {
                backend.copy(yj, wj)?;
            }
        }
        None => {
            for yj in y.iter_mut() {
                backend.zero(yj)?;
            }
        }
    }
    block_caxpy_by_terms(backend, a, x, y)
}

/// `Backend::block_caxpy` one `caxpy` a term (as `block_cdot_by_pairs`).
pub(crate) fn block_caxpy_by_terms<B: Backend + ?Sized>(
    backend: &B,
    a: &[C64],
    x: &[&B::Spinor],
    y: &mut [B::Spinor],
) -> Result<()> {
    let m = y.len();
    if a.len() != x.len() * m {
        return Err(crate::error::Error::Internal(format!(
            "block_caxpy: {} coefficients for {} × {m} fields",
            a.len(),
            x.len()
        )));
    }
    for (j, yj) in y.iter_mut().enumerate() {
        for (i, xi) in x.iter().enumerate() {
            backend.caxpy(a[i * m + j], xi, yj)?;
        }
    }
    Ok(())
}

/// `result` made collective over the backend's ranks: an error on one
/// rank is an error on all (`Error::OtherRank` where this rank's part was
/// in order), so no rank goes on to a collective step the others left.
pub(crate) fn agreed<B: Backend + ?Sized, T>(backend: &B, result: Result<T>) -> Result<T> {
    let all = backend.all_ok(result.is_ok())?;
    match result {
        Ok(_) if !all => Err(crate::error::Error::OtherRank(
            "another rank failed this step of the call (its status says why)".into(),
        )),
        r => r,
    }
}

/// The host path of `Backend::import_spinor` (its default): the caller's
/// array converted into a canonical host field, then uploaded.
pub(crate) fn import_on_host<B: Backend + ?Sized>(
    backend: &B,
    dst: &mut B::Spinor,
    host: HostReals,
    order: DiracOrder,
    basis: GammaBasis,
    exp: Option<i32>,
) -> Result<i32> {
    // On many ranks one power of two for the whole field: that of the
    // largest magnitude on any rank.
    let exp = match exp {
        Some(e) => e,
        None => crate::layout::normalising_exponent(backend.global_max(host.max_abs())?),
    };
    let (lat, sub) = (dst.lattice().clone(), dst.subset());
    let field = match dst.fermion() {
        Fermion::Wilson => crate::layout::spinor::import_scaled(&lat, sub, order, basis, host, exp),
        Fermion::Staggered => crate::layout::colour::import_scaled(&lat, sub, host, exp),
    };
    let field = agreed(backend, field)?;
    backend.upload_spinor(dst, &field)?;
    Ok(exp)
}

/// The host path of `Backend::export_spinor` (its default).
pub(crate) fn export_on_host<B: Backend + ?Sized>(
    backend: &B,
    src: &B::Spinor,
    out: HostRealsMut,
    order: DiracOrder,
    basis: GammaBasis,
    exp: i32,
) -> Result<()> {
    let field = download_on_host(backend, src)?;
    if backend.ranks() > 1 {
        // Every rank writes, or none: the range checked on all first.
        let fits = match src.fermion() {
            Fermion::Wilson => crate::layout::spinor::check_export_range(&field, &out, exp),
            Fermion::Staggered => crate::layout::colour::check_export_range(&field, &out, exp),
        };
        agreed(backend, fits)?;
    }
    match src.fermion() {
        Fermion::Wilson => crate::layout::spinor::export_scaled(&field, order, basis, out, exp),
        Fermion::Staggered => crate::layout::colour::export_scaled(&field, out, exp),
    }
}

/// The solve `Backend::import_each` calls for source k with its field and
/// exponent (`Send`: it may run beside the next source's upload).
pub type SolveEach<'a, S> = dyn FnMut(usize, S, i32) -> Result<()> + Send + 'a;

/// `Backend::import_each` with no overlap: import, solve, next.
pub(crate) fn import_in_turn<B: Backend + ?Sized>(
    backend: &B,
    sources: &[HostReals],
    order: DiracOrder,
    basis: GammaBasis,
    alloc: &mut dyn FnMut() -> Result<B::Spinor>,
    solve: &mut SolveEach<'_, B::Spinor>,
) -> Result<()> {
    for (k, &source) in sources.iter().enumerate() {
        let mut dst = alloc()?;
        let exp = backend
            .import_spinor(&mut dst, source, order, basis, None)
            .map_err(|e| name_source(e, k))?;
        solve(k, dst, exp)?;
    }
    Ok(())
}

/// The host path of `Backend::check_export` (its default).
pub(crate) fn check_export_on_host<B: Backend + ?Sized>(
    backend: &B,
    src: &B::Spinor,
    out: &HostRealsMut,
    exp: i32,
) -> Result<()> {
    let field = download_on_host(backend, src)?;
    match src.fermion() {
        Fermion::Wilson => crate::layout::spinor::check_export_range(&field, out, exp),
        Fermion::Staggered => crate::layout::colour::check_export_range(&field, out, exp),
    }
}

fn download_on_host<B: Backend + ?Sized>(backend: &B, src: &B::Spinor) -> Result<HostSpinor> {
    let mut field = HostSpinor::try_zeros_of(src.lattice().clone(), src.subset(), src.fermion())?;
    backend.download_spinor(src, &mut field)?;
    Ok(field)
}
