//! `Context`: the backend a host program talks to. Several contexts may live
//! at once, in different threads; they share nothing. Its solves are in
//! `invert.rs` (one or several sources) and `invert_multi.rs` (several
//! shifts or masses).

use std::sync::Arc;

use super::clover::{Clover, CloverParams, CloverSource};
use super::context_inner::ContextInner;
use super::gauge::Gauge;
use super::operator_fields::{with_backend, OperatorFields};
use super::params::{DslashType, GaugeParams, InitParams, InvertParams, OperatorKind, Verbosity};
use crate::dispatch;
use crate::error::{Error, Result};
use crate::field::HostSpinor;
use crate::layout::{self, HostGauge, HostReals, HostRealsMut};

/// A latsol context.
pub struct Context {
    pub(crate) inner: Arc<ContextInner>,
}

impl Context {
    /// Starts a context on the backend asked for (`Auto`: CUDA if usable).
    pub fn new(params: InitParams) -> Result<Context> {
        Ok(Context {
            inner: Arc::new(ContextInner::start(&params)?),
        })
    }

    /// `result` made collective over the context's ranks: an error on any
    /// rank is an error on every rank (`Error::OtherRank` where this one's
    /// was fine). Every public call agrees on its own checks before its
    /// first collective step; a caller that fails its own checks before a
    /// call passes the error here instead of making it, which answers the
    /// other ranks' agreement in that call. One process: `result`.
    pub fn agree<T>(&self, result: Result<T>) -> Result<T> {
        self.inner.agree(result)
    }

    /// How many collective verdicts have come out false on this rank (0
    /// on one process; `ContextInner::failed_verdicts`).
    pub(crate) fn failed_verdicts(&self) -> u64 {
        self.inner.failed_verdicts()
    }

    /// The whole lattice's average, spatial and temporal plaquette of
    /// links held on the host, this rank's part (collective; the C faces'
    /// observables of the caller's links).
    pub(crate) fn plaquette_of(&self, field: &crate::field::GaugeField) -> Result<[f64; 3]> {
        self.inner.plaquette(field)
    }

    /// The sums over the ranks of `values` (collective; the context's
    /// reduction mode, deterministic where asked for): for the C faces'
    /// host-side observables.
    pub(crate) fn sum_over_ranks(&self, values: &mut [f64]) -> Result<()> {
        self.inner.sum_over_ranks(values)
    }

    /// Where this rank's part of extents `local` sits: its first site's
    /// global coordinates and the whole lattice's extents.
    pub(crate) fn place(&self, local: [usize; 4]) -> ([usize; 4], [usize; 4]) {
        self.inner.place(local)
    }

    /// The whole lattice's Polyakov loop in time (collective; as
    /// `plaquette_of`).
    pub(crate) fn polyakov_loop_of(
        &self,
        field: &crate::field::GaugeField,
    ) -> Result<num_complex::Complex64> {
        self.inner.polyakov_loop(field)
    }

    /// Logs at `v` from now on (QUDA's `setVerbosityQuda` on a live
    /// context), unless `LATSOL_VERBOSITY` chose the level.
    pub fn set_verbosity(&self, v: Verbosity) {
        self.inner.set_verbosity(v)
    }

    /// The level this context logs at now.
    pub fn verbosity(&self) -> Verbosity {
        self.inner.verbosity()
    }

    /// "cpu" or "cuda".
    pub fn backend_name(&self) -> &'static str {
        self.inner.backend_name()
    }

    /// Device fields allocated, and fields served from the buffers of
    /// freed ones, since the context started: a solve's vectors are kept
    /// when it ends, so the next solve of the same shape and precisions
    /// allocates nothing (its first count stays); (0, 0) on the CPU. The
    /// buffers are freed with a gauge field or the context.
    pub fn device_field_allocations(&self) -> (usize, usize) {
        self.inner.field_allocations()
    }

    /// Converts, checks and stores a host gauge field.
    pub fn load_gauge(&self, params: &GaugeParams, host: &HostGauge) -> Result<Gauge> {
        self.inner
            .install(|| Gauge::load(&self.inner, params, host))
    }

    /// Loads a clover field for the lattice of `gauge` (see `Clover`).
    pub fn load_clover(
        &self,
        gauge: &Gauge,
        params: &CloverParams,
        source: CloverSource,
    ) -> Result<Clover> {
        self.inner
            .install(|| Clover::load(&self.inner, gauge, params, source))
    }

    /// `out = op in` on full fields in the caller's order, basis and
    /// normalization.
    pub fn apply<'a>(
        &self,
        fields: impl Into<OperatorFields<'a>> + Send,
        params: &InvertParams,
        op: OperatorKind,
        input: HostReals,
        out: HostRealsMut,
    ) -> Result<()> {
        self.inner.install(|| {
            let fields = fields.into();
            let checked = params
                .validate_operator()
                .and_then(|()| self.check_fields(fields, params))
                .and_then(|()| dispatch::apply_subset(params, op, fields.clover.is_some()));
            let sub = self.inner.agree(checked)?;
            let lat = fields.gauge.lattice().clone();
            // One power of two for the whole field, over every rank.
            let scale = layout::normalising_exponent(self.inner.global_max(input.max_abs())?);
            let (order, basis) = (params.dirac_order, params.gamma_basis);
            let imported = layout::spinor::import_scaled(&lat, sub, order, basis, input, scale)
                .map_err(|e| name_field(e, "input"))
                .and_then(|inp| Ok((inp, HostSpinor::try_zeros(lat, sub)?)));
            let (inp, mut res) = self.inner.agree(imported)?;
            // Agreed: a failure kept on one rank (a GPU's faces) ends the
            // call on every rank here, where no global sum follows.
            with_backend!(self.inner, fields, |b, f, _fs| {
                let applied = dispatch::apply(b, f, params, op, &inp, &mut res);
                crate::backend::agreed(b, applied)?
            });
            let fits = layout::spinor::check_export_range(&res, &out, -scale);
            self.inner.agree(fits.map_err(|e| name_field(e, "out")))?;
            layout::spinor::export_scaled(&res, order, basis, out, -scale)
                .map_err(|e| name_field(e, "out"))
        })
    }

    /// The operator's fields belong to this context, match each other and
    /// the parameters.
    pub(super) fn check_fields(&self, fields: OperatorFields, params: &InvertParams) -> Result<()> {
        self.check_gauge(fields.gauge, params)?;
        match (params.dslash, fields.clover) {
            (DslashType::Wilson, None) | (DslashType::CloverWilson, Some(_)) => {}
            (DslashType::Wilson, Some(_)) => {
                return Err(Error::InvalidArgument(
                    "dslash = Wilson with a clover field: set dslash to CloverWilson".into(),
                ))
            }
            (DslashType::CloverWilson, None) => {
                return Err(Error::InvalidArgument(
                    "dslash = CloverWilson needs a clover field".into(),
                ))
            }
        }
        let Some(clover) = fields.clover else {
            return Ok(());
        };
        if !Arc::ptr_eq(clover.context(), &self.inner) {
            return Err(Error::InvalidHandle(
                "clover: the field was loaded into another context".into(),
            ));
        }
        if clover.lattice().dims() != fields.gauge.lattice().dims() {
            return Err(Error::InvalidArgument(format!(
                "clover: a field on {:?}, the gauge field is on {:?}",
                clover.lattice().dims(),
                fields.gauge.lattice().dims()
            )));
        }
        if let Some(k) = clover.kappa() {
            if (k - params.kappa).abs() > 1e-12 * k {
                return Err(Error::InvalidArgument(format!(
                    "kappa = {} but the clover field was computed for kappa = {k} (its term is \
                     kappa c_sw F): compute it with the solve's kappa",
                    params.kappa
                )));
            }
        }
        let cp = clover.params();
        check_stored_precisions(params, "clover", cp.precision, cp.precision_sloppy)
    }

    pub(super) fn check_gauge(&self, gauge: &Gauge, params: &InvertParams) -> Result<()> {
        if !Arc::ptr_eq(gauge.context(), &self.inner) {
            return Err(Error::InvalidHandle(
                "gauge: the field was loaded into another context".into(),
            ));
        }
        let gp = gauge.params();
        check_stored_precisions(params, "gauge", gp.precision, gp.precision_sloppy)
    }
}

/// The solve's precisions against those a field (`what`: gauge, clover)
/// was stored for: the precise one always, the sloppy one in a mixed solve.
fn check_stored_precisions(
    params: &InvertParams,
    what: &str,
    precision: crate::precision::Precision,
    precision_sloppy: crate::precision::Precision,
) -> Result<()> {
    if precision != params.precision {
        return Err(Error::InvalidArgument(format!(
            "precision = {:?} but the {what} field was stored in {precision:?}",
            params.precision
        )));
    }
    if params.precision_sloppy != params.precision && precision_sloppy != params.precision_sloppy {
        return Err(Error::InvalidArgument(format!(
            "precision_sloppy = {:?} but the {what} field's sloppy copy is {precision_sloppy:?}",
            params.precision_sloppy
        )));
    }
    Ok(())
}

/// Prefixes an import error with the field it concerns.
pub(super) fn name_field(e: Error, what: &str) -> Error {
    match e {
        Error::InvalidArgument(m) => Error::InvalidArgument(format!("{what}: {m}")),
        other => other,
    }
}
