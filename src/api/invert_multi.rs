//! A context's solves of several shifted systems (`invert_multishift`) or
//! several masses (`invert_multimass`) for one source.

use super::context::Context;
use super::gauge::Gauge;
use super::invert::{export_all, import_source};
use super::multi::{self, MultiMassPolicy, MultiResult};
use super::operator_fields::{with_backend, OperatorFields};
use super::params::{DslashType, InvertParams, Verbosity};
use crate::dispatch;
use crate::error::{Error, Result};
use crate::lattice::Subset;
use crate::layout::{HostReals, HostRealsMut};

impl Context {
    /// Solves `(A + σ_i) x_i = b` for every shift `σ_i` (in any order,
    /// distinct, ≥ 0), `A = M†M` (full lattice) or `M̂†M̂` (the parity of
    /// `matpc`) as `solve_type` says, in the caller's normalization; `b`
    /// and the `x_i` are fields of that subset (V or V/2 sites). Multi-shift
    /// CG, mixed precision when `precision_sloppy` is coarser (seed
    /// clark2022 §3.2); `tols[i]` (None: `tol`) is shift i's tolerance.
    /// With `measure_phase1` each shift's true residual after the
    /// multi-shift phase is recomputed (one more operator application per
    /// shift). On an error the solutions are untouched.
    #[allow(clippy::too_many_arguments)]
    pub fn invert_multishift<'a>(
        &self,
        fields: impl Into<OperatorFields<'a>> + Send,
        params: &InvertParams,
        shifts: &[f64],
        tols: Option<&[f64]>,
        source: HostReals,
        solutions: Vec<HostRealsMut>,
        measure_phase1: bool,
    ) -> Result<MultiResult> {
        self.inner.install(|| {
            let fields = fields.into();
            // Agreed over the ranks: a bad argument on one fails all.
            let checked = (|| {
                params.validate_solve()?;
                self.check_fields(fields, params)?;
                multi::validate_systems(shifts, "shifts")?;
                if let Some((i, s)) = shifts.iter().enumerate().find(|(_, s)| **s < 0.0) {
                    return Err(Error::InvalidArgument(format!(
                        "shifts[{i}] = {s}: a negative shift can make A + σ indefinite (CG needs \
                         σ ≥ 0)"
                    )));
                }
                let tols = multi::tolerances(tols, shifts.len(), params.tol, "tol_shifts")?;
                for (i, t) in tols.iter().enumerate() {
                    params.check_reachable(*t, &format!("tol_shifts[{i}]"))?;
                }
                let lat = fields.gauge.lattice().clone();
                let sub = dispatch::multishift::system_subset(params);
                let sites = lat.sites(sub);
                multi::check_solution_lengths(
                    solutions.iter().map(|s| s.len()),
                    shifts.len(),
                    sites,
                    crate::field::SPINOR_REALS,
                    &format!("the system ({sub:?})"),
                )?;
                Ok((lat, sub, tols))
            })();
            let (lat, sub, tols) = self.inner.agree(checked)?;
            let inner = &self.inner;
            let monitor = |solver: &str, k: usize, res: f64| inner.progress(solver, k, res);
            // The caller's arrays cross as they are, converted by the
            // backend (on the device for CUDA), as for one solve.
            let result = with_backend!(inner, fields, |b, f, fs| {
                let (src, scale) = import_source(b, &lat, sub, params, source)?;
                let (r, xs) = dispatch::multishift::invert_multishift(
                    b,
                    f,
                    fs,
                    params,
                    shifts,
                    &tols,
                    src,
                    measure_phase1,
                    &monitor,
                )?;
                export_all(b, &xs, params, solutions, scale)?;
                r
            });
            self.inner.log(
                Verbosity::Summarize,
                &format!(
                    "multi-shift CG ({} shifts, {:?}/{:?}) on {}: {} iterations ({} multi-shift), {}",
                    shifts.len(),
                    params.precision,
                    params.precision_sloppy,
                    self.backend_name(),
                    result.iterations,
                    result.multishift_iterations,
                    result.summary_tail()
                ),
            );
            Ok(result)
        })
    }

    /// Solves `M(κ_i) x_i = b` for every hopping parameter `kappas[i]`
    /// (distinct, > 0; `params.kappa` is not used) on full fields, in the
    /// caller's normalization, by BiCGstab-M, the single-mass sequence or
    /// the `Auto` choice between them (see `dispatch::multimass`);
    /// `tols[i]` (None: `tol`) is mass i's tolerance. On an error the
    /// solutions are untouched.
    #[allow(clippy::too_many_arguments)]
    pub fn invert_multimass(
        &self,
        gauge: &Gauge,
        params: &InvertParams,
        kappas: &[f64],
        tols: Option<&[f64]>,
        policy: MultiMassPolicy,
        source: HostReals,
        solutions: Vec<HostRealsMut>,
    ) -> Result<MultiResult> {
        self.inner.install(|| {
            let kappa_max = kappas.iter().copied().fold(f64::MIN, f64::max);
            let params = &InvertParams {
                kappa: kappa_max,
                ..*params
            };
            // Agreed over the ranks: a bad argument on one fails all.
            let checked = (|| {
                multi::validate_systems(kappas, "kappas")?;
                if let Some((i, k)) = kappas.iter().enumerate().find(|(_, k)| **k <= 0.0) {
                    return Err(Error::InvalidArgument(format!(
                        "kappas[{i}] = {k}: must be positive"
                    )));
                }
                params.validate_solve()?;
                if params.dslash != DslashType::Wilson {
                    return Err(Error::Unsupported(format!(
                        "dslash = {:?}: multi-mass solves are of the Wilson operator (the masses of \
                         the clover operator are not a shifted family); solve each mass with its \
                         own clover field",
                        params.dslash
                    )));
                }
                self.check_gauge(gauge, params)?;
                let tols = multi::tolerances(tols, kappas.len(), params.tol, "tol_masses")?;
                for (i, t) in tols.iter().enumerate() {
                    params.check_reachable(*t, &format!("tol_masses[{i}]"))?;
                }
                let lat = gauge.lattice().clone();
                multi::check_solution_lengths(
                    solutions.iter().map(|s| s.len()),
                    kappas.len(),
                    lat.volume(),
                    crate::field::SPINOR_REALS,
                    &format!("a full field on {:?}", lat.dims()),
                )?;
                Ok((lat, tols))
            })();
            let (lat, tols) = self.inner.agree(checked)?;
            let inner = &self.inner;
            let monitor = |solver: &str, k: usize, res: f64| inner.progress(solver, k, res);
            let result = with_backend!(inner, OperatorFields::from(gauge), |b, f, fs| {
                let (g, gs) = (f.gauge, fs.gauge);
                let (src, scale) = import_source(b, &lat, Subset::Full, params, source)?;
                let (r, xs) = dispatch::multimass::invert_multimass(
                    b, g, gs, params, kappas, &tols, policy, src, &monitor,
                )?;
                export_all(b, &xs, params, solutions, scale)?;
                r
            });
            self.inner.log(
                Verbosity::Summarize,
                &format!(
                    "multi-mass ({} masses, {:?}) on {}: {} iterations, {}",
                    kappas.len(),
                    result.policy_used,
                    self.backend_name(),
                    result.iterations,
                    result.summary_tail()
                ),
            );
            Ok(result)
        })
    }
}
