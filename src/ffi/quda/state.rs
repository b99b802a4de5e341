//! The QUDA face's process-wide state. QUDA's interface has one implicit
//! context (`initQuda` … `endQuda`) and resident fields (the gauge field of
//! `loadGaugeQuda`, the clover field of `loadCloverQuda`); this module holds
//! their latsol counterparts, and the status of the last failed call.

use std::sync::{Mutex, MutexGuard};

use crate::api::{Clover, Context, Gauge, InitParams, Verbosity};
use crate::error::{Error, Result};
use crate::ffi::status::latsol_status;
use crate::lattice::Parity;

/// A gauge field loaded by `loadGaugeQuda`, with the host copy of its links
/// (QDP order, double, boundary sign removed) that a clover field computed
/// later (`compute_clover`) is built from: QUDA computes it from its
/// resident field, and latsol keeps no host copy of a loaded field.
pub(crate) struct LoadedGauge {
    pub gauge: Gauge,
    pub links_qdp: Vec<f64>,
    /// The sign the caller's links carried on the last time slice.
    pub t_boundary: crate::precision::TBoundary,
}

impl LoadedGauge {
    /// The links as the caller gave them (QDP order, double): the
    /// boundary sign put back on the T links of the last time slice.
    pub fn links_as_given(&self) -> Result<Vec<f64>> {
        let mut v = crate::alloc::collect(
            self.links_qdp.len(),
            self.links_qdp.iter().copied(),
            "the links as given",
        )?;
        if self.t_boundary == crate::precision::TBoundary::AntiPeriodic {
            let lat = self.gauge.lattice();
            let n = lat.volume() * 18;
            let t_last = lat.dims()[3] - 1;
            let vh = lat.half_volume();
            for (i, link) in v[3 * n..].chunks_mut(18).enumerate() {
                let p = if i < vh { Parity::Even } else { Parity::Odd };
                if lat.coords(p, i % vh)[3] == t_last {
                    link.iter_mut().for_each(|x| *x = -*x);
                }
            }
        }
        Ok(v)
    }
}

/// Everything between `initQuda` and `endQuda`.
pub(crate) struct State {
    pub context: Context,
    pub gauge: Option<LoadedGauge>,
    pub clover: Option<Clover>,
    /// Staggered links of `loadGaugeQuda` (ASQTAD_FAT/LONG_LINKS).
    pub staggered: Option<super::staggered::StaggeredHost>,
    /// `setVerbosityQuda`'s prefix for messages.
    pub prefix: String,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Status and message of the last failed QUDA-interface call.
static LAST_FAILURE: Mutex<Option<(latsol_status, String)>> = Mutex::new(None);

/// Verbosity asked for by `setVerbosityQuda` before `initQuda`.
static VERBOSITY: Mutex<Verbosity> = Mutex::new(Verbosity::Summarize);

pub(crate) fn record_failure(status: latsol_status, message: &str) {
    if let Ok(mut l) = LAST_FAILURE.lock() {
        *l = Some((status, message.to_string()));
    }
}

pub(crate) fn clear_failure() {
    if let Ok(mut l) = LAST_FAILURE.lock() {
        *l = None;
    }
}

pub(crate) fn last_failure() -> Option<(latsol_status, String)> {
    LAST_FAILURE.lock().ok().and_then(|l| l.clone())
}

pub(crate) fn set_verbosity(v: Verbosity) {
    if let Ok(mut g) = VERBOSITY.lock() {
        *g = v;
    }
}

/// The state; a panic caught in an earlier call leaves it as that call
/// left it (every field a valid value), so the lock is taken back rather
/// than the interface disabled for the rest of the process.
fn lock() -> Result<MutexGuard<'static, Option<State>>> {
    Ok(STATE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner))
}

/// Starts the implicit context (a second call keeps the first, as QUDA's
/// `initQuda` does once initialised).
pub(crate) fn init() -> Result<()> {
    let mut s = lock()?;
    if s.is_none() {
        let verbosity = VERBOSITY.lock().map(|v| *v).unwrap_or(Verbosity::Summarize);
        let context = Context::new(InitParams {
            verbosity,
            ..Default::default()
        })?;
        *s = Some(State {
            context,
            gauge: None,
            clover: None,
            staggered: None,
            prefix: String::new(),
        });
    }
    Ok(())
}

/// Ends the context and frees its fields.
pub(crate) fn end() -> Result<()> {
    lock()?.take();
    Ok(())
}

/// Runs `f` on the state, which `initQuda` must have created.
pub(crate) fn with<T>(f: impl FnOnce(&mut State) -> Result<T>) -> Result<T> {
    let mut s = lock()?;
    let state = s.as_mut().ok_or_else(|| {
        Error::InvalidArgument("the QUDA interface is not initialised: call initQuda first".into())
    })?;
    f(state)
}
