//! `Clover`: a clover field (the site term `A` of the Wilson-clover
//! operator, with its inverse) loaded from the host in QUDA's packed order
//! or computed from a gauge field and c_SW, checked, inverted and stored
//! on its context's backend for the precise and sloppy precisions.

use std::any::Any;
use std::sync::Arc;

use super::context_inner::ContextInner;
use super::gauge::Gauge;
use super::params::Verbosity;
use crate::clover::{self, CloverField};
use crate::error::{Error, Result};
use crate::lattice::Lattice;
use crate::layout::{self, HostGauge, HostReals};
use crate::precision::Precision;

/// Where a clover field comes from.
#[derive(Debug, Clone, Copy)]
pub enum CloverSource<'a> {
    /// QUDA's packed order (72 reals per site, even-odd sites, DeGrand–
    /// Rossi chiral blocks), optionally with the caller's inverse in the
    /// same order (checked against the field, then used as given).
    Packed {
        clover: HostReals<'a>,
        inverse: Option<HostReals<'a>>,
    },
    /// From the gauge field: `A = 1 − κ c_SW Σ_{μ<ν} ½[γ_μ, γ_ν] F_μν`
    /// (`clover::compute`). The library keeps no host copy of a loaded
    /// gauge field, so the caller passes its links again, in the order
    /// and precision it loaded them with; they are checked against the
    /// loaded field's plaquette.
    Computed {
        c_sw: f64,
        kappa: f64,
        links: HostGauge<'a>,
    },
}

/// How a clover field is stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CloverParams {
    /// The spinor precision of the solves that use it (double or single).
    pub precision: Precision,
    /// The sloppy spinor precision (mixed-precision solves).
    pub precision_sloppy: Precision,
}

impl Default for CloverParams {
    fn default() -> Self {
        CloverParams {
            precision: Precision::Double,
            precision_sloppy: Precision::Double,
        }
    }
}

/// A clover field loaded into a context, for the lattice of a gauge field.
pub struct Clover {
    context: Arc<ContextInner>,
    params: CloverParams,
    lattice: Arc<Lattice>,
    storage: Box<dyn Any + Send + Sync>,
    sloppy: Option<Box<dyn Any + Send + Sync>>,
    /// The κ of a computed field (its term is κ c_SW F): solves must use it.
    kappa: Option<f64>,
}

/// Largest accepted `|A A⁻¹ − 1|` entry for a caller's inverse, by the
/// host precision of the arrays (a few units of its roundoff times the
/// condition of a clover block, which is O(1–10) in practice).
fn inverse_tolerance(host: &HostReals) -> f64 {
    match host {
        HostReals::F64(_) => 1e-10,
        HostReals::F32(_) => 1e-4,
    }
}

impl Clover {
    /// The call's parameters against the gauge field.
    fn check(ctx: &Arc<ContextInner>, gauge: &Gauge, params: &CloverParams) -> Result<()> {
        if !Arc::ptr_eq(gauge.context(), ctx) {
            return Err(Error::InvalidHandle(
                "gauge: the field was loaded into another context".into(),
            ));
        }
        if params.precision.is_sloppy_only() {
            return Err(Error::InvalidArgument(format!(
                "clover precision = {:?}: the precise field must be double or single",
                params.precision
            )));
        }
        if params.precision_sloppy.epsilon() < params.precision.epsilon() {
            return Err(Error::InvalidArgument(format!(
                "clover precision_sloppy = {:?} is more precise than precision = {:?}",
                params.precision_sloppy, params.precision
            )));
        }
        Ok(())
    }

    pub(crate) fn load(
        ctx: &Arc<ContextInner>,
        gauge: &Gauge,
        params: &CloverParams,
        source: CloverSource,
    ) -> Result<Clover> {
        // On many ranks every check is agreed before the first collective
        // step: a bad argument on one rank fails the call on all.
        ctx.agree(Clover::check(ctx, gauge, params))?;
        let lattice = gauge.lattice().clone();
        let start = std::time::Instant::now();
        // Seconds of each stage, for the debug line: links, field, inverse.
        let mut stages = [0.0f64; 3];
        let kappa = match source {
            CloverSource::Computed { kappa, .. } => Some(kappa),
            CloverSource::Packed { .. } => None,
        };
        if let CloverSource::Computed { c_sw, kappa, links } = source {
            ctx.agree(
                check_coefficients(c_sw, kappa)
                    .and_then(|()| layout::gauge::check_lengths(&lattice, &links)),
            )?;
            // The backend's own computation, where it has one: the links
            // accepted when their plaquette is the gauge field's (as below).
            let mut precisions = vec![params.precision];
            if params.precision_sloppy != params.precision {
                precisions.push(params.precision_sloppy);
            }
            let q = gauge.plaquette()[0];
            let accept = |scan: &crate::backend::GaugeScan| same_plaquette(scan.plaquette[0], q);
            let computed =
                ctx.compute_clover(&lattice, &links, kappa * c_sw, &precisions, &accept)?;
            if let Some(mut stored) = computed {
                let sloppy = (stored.len() > 1).then(|| stored.pop().expect("two stored"));
                let storage = stored.pop().expect("one stored");
                ctx.log(
                    Verbosity::Verbose,
                    &format!("clover field {:?} loaded", lattice.dims()),
                );
                ctx.log(
                    Verbosity::Debug,
                    &format!(
                        "clover field {:?} computed on the backend in {:.3} s",
                        lattice.dims(),
                        start.elapsed().as_secs_f64()
                    ),
                );
                return Ok(Clover {
                    context: ctx.clone(),
                    params: *params,
                    lattice,
                    storage,
                    sloppy,
                    kappa: Some(kappa),
                });
            }
        }
        let (field, inverse) = match source {
            CloverSource::Packed { clover, inverse } => {
                let imported = (|| {
                    let field = clover::packed::import(&lattice, clover, "clover")?;
                    stages = [start.elapsed().as_secs_f64(); 3];
                    let inverse = match inverse {
                        Some(host) => {
                            let inv = clover::packed::import(&lattice, host, "clover inverse")?;
                            check_inverse(&field, &inv, inverse_tolerance(&host))?;
                            inv
                        }
                        None => field.inverse()?,
                    };
                    stages[2] = start.elapsed().as_secs_f64();
                    Ok((field, inverse))
                })();
                ctx.agree(imported)?
            }
            CloverSource::Computed { c_sw, kappa, links } => {
                let host = ctx.agree(layout::gauge::import(&lattice, &links))?;
                let (p, q) = (ctx.plaquette(&host)?[0], gauge.plaquette()[0]);
                if !same_plaquette(p, q) {
                    return Err(Error::InvalidArgument(format!(
                        "links: their plaquette {p:.10} is not the gauge field's {q:.10}; pass \
                         the links the gauge field was loaded from"
                    )));
                }
                stages[0] = start.elapsed().as_secs_f64();
                let field = ctx.compute_clover_on_host(&host, kappa * c_sw)?;
                stages[1] = start.elapsed().as_secs_f64();
                let inverse = ctx.agree(field.inverse())?;
                stages[2] = start.elapsed().as_secs_f64();
                (field, inverse)
            }
        };
        let storage = ctx.agree(ctx.upload_clover(&field, &inverse, params.precision))?;
        let sloppy = if params.precision_sloppy != params.precision {
            Some(ctx.upload_clover(&field, &inverse, params.precision_sloppy)?)
        } else {
            None
        };
        ctx.log(
            Verbosity::Verbose,
            &format!("clover field {:?} loaded", lattice.dims()),
        );
        let total = start.elapsed().as_secs_f64();
        ctx.log(
            Verbosity::Debug,
            &format!(
                "clover load {total:.3} s: source read and checked {:.3} s, field computed \
                 {:.3} s, inverted {:.3} s, stored {:.3} s",
                stages[0],
                stages[1] - stages[0],
                stages[2] - stages[1],
                total - stages[2]
            ),
        );
        Ok(Clover {
            context: ctx.clone(),
            params: *params,
            lattice,
            storage,
            sloppy,
            kappa,
        })
    }

    /// The hopping parameter a computed field was made for (None for a
    /// field from the host, which holds any normalization the caller chose).
    pub fn kappa(&self) -> Option<f64> {
        self.kappa
    }

    pub fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    pub fn params(&self) -> &CloverParams {
        &self.params
    }
    pub(crate) fn context(&self) -> &Arc<ContextInner> {
        &self.context
    }
    pub(crate) fn storage(&self) -> &(dyn Any + Send + Sync) {
        self.storage.as_ref()
    }
    pub(crate) fn storage_sloppy(&self) -> &(dyn Any + Send + Sync) {
        self.sloppy.as_deref().unwrap_or(self.storage.as_ref())
    }
}

/// A computed field's coefficients: c_SW ≥ 0 and κ > 0, both finite.
fn check_coefficients(c_sw: f64, kappa: f64) -> Result<()> {
    // Either sign (QUDA takes a negative coefficient as given).
    if !c_sw.is_finite() {
        return Err(Error::InvalidArgument(format!(
            "c_sw = {c_sw}: must be a finite number"
        )));
    }
    if !(kappa.is_finite() && kappa > 0.0) {
        return Err(Error::InvalidArgument(format!(
            "kappa = {kappa}: must be a positive number"
        )));
    }
    Ok(())
}

/// Whether the links passed for a computed field are the gauge field's:
/// their average plaquette `p` equals its `q` to well within the rounding
/// of a single-precision host array.
fn same_plaquette(p: f64, q: f64) -> bool {
    (p - q).abs() <= 1e-6 * q.abs().max(1e-3)
}

/// Refuses a caller's inverse that is not the inverse of the field.
#[allow(clippy::needless_range_loop)] // dense 6×6 products
fn check_inverse(field: &CloverField, inverse: &CloverField, tol: f64) -> Result<()> {
    for (i, (a, b)) in field.sites().iter().zip(inverse.sites()).enumerate() {
        for k in 0..2 {
            let mut dev = 0.0f64;
            for r in 0..6 {
                for c in 0..6 {
                    let z: num_complex::Complex64 = (0..6).map(|j| a[k][r][j] * b[k][j][c]).sum();
                    let e = if r == c { 1.0 } else { 0.0 };
                    dev = dev.max((z - e).norm());
                }
            }
            if dev > tol {
                return Err(Error::InvalidArgument(format!(
                    "clover inverse: block {k} at x = {:?} is not the inverse of the clover \
                     block (|A A⁻¹ − 1| = {dev:.3e} > {tol:.0e})",
                    field.coords_of(i)
                )));
            }
        }
    }
    Ok(())
}
