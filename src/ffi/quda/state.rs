//! The QUDA face's process-wide state. QUDA's interface has one implicit
//! context (`initQuda` … `endQuda`) and resident fields (the gauge field of
//! `loadGaugeQuda`, the clover field of `loadCloverQuda`, the staggered
//! links of `loadGaugeQuda`); this module holds their latsol counterparts,
//! and the status of the last failed call.

use std::sync::{Mutex, MutexGuard};

use crate::api::{Clover, Context, Gauge, InitParams, StaggeredLinks, Verbosity};
use crate::error::{Error, Result};
use crate::ffi::status::latsol_status;
use crate::layout::{GaugeOrder, HostGauge, HostReals};
use crate::long_links::LongReconstruct;
use crate::precision::Precision;

/// A gauge field loaded by `loadGaugeQuda`, with a copy of the caller's
/// array as it was given (its order and precision, the boundary sign in
/// it) for what is later built from the resident field: a computed clover
/// term (`compute_clover`; QUDA computes it from its resident field, and
/// latsol keeps no host copy of a loaded field) and naive staggered links,
/// both made from this copy on the device where there is one. A plain
/// copy, made in parallel.
pub(crate) struct LoadedGauge {
    pub gauge: Gauge,
    pub links: HostLinks,
}

/// The caller's links, copied as they were given: one array, or QDP's four.
pub(crate) struct HostLinks {
    order: GaugeOrder,
    arrays: Vec<HostCopy>,
}

enum HostCopy {
    F64(Vec<f64>),
    F32(Vec<f32>),
}

/// A parallel copy of `src`, allocated fallibly.
fn copy_of<T: Copy + Send + Sync>(src: &[T]) -> Result<Vec<T>> {
    use rayon::prelude::*;
    crate::alloc::par_collect(
        src.len(),
        src.par_iter().copied(),
        "the QUDA interface's copy of the links",
    )
}

impl HostLinks {
    /// A copy of the caller's array(s).
    pub fn copy(host: &HostGauge) -> Result<HostLinks> {
        let given: &[HostReals] = match host {
            HostGauge::Qdp(a) => a,
            HostGauge::Milc(a) | HostGauge::CpsWilson(a) => std::slice::from_ref(a),
        };
        let arrays = given
            .iter()
            .map(|a| {
                Ok(match a {
                    HostReals::F64(x) => HostCopy::F64(copy_of(x)?),
                    HostReals::F32(x) => HostCopy::F32(copy_of(x)?),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(HostLinks {
            order: host.order(),
            arrays,
        })
    }

    /// Links already made in QDP order and double (the four arrays kept,
    /// not copied).
    pub fn from_qdp(arrays: [Vec<f64>; 4]) -> HostLinks {
        HostLinks {
            order: GaugeOrder::Qdp,
            arrays: arrays.into_iter().map(HostCopy::F64).collect(),
        }
    }

    /// Whether every number is finite.
    pub fn all_finite(&self) -> bool {
        use rayon::prelude::*;
        self.arrays.iter().all(|a| match a {
            HostCopy::F64(v) => v.par_iter().all(|x| x.is_finite()),
            HostCopy::F32(v) => v.par_iter().all(|x| x.is_finite()),
        })
    }

    /// The copy as a host gauge field in the caller's order.
    pub fn host_gauge(&self) -> HostGauge<'_> {
        let reals = |k: usize| match &self.arrays[k] {
            HostCopy::F64(v) => HostReals::F64(v),
            HostCopy::F32(v) => HostReals::F32(v),
        };
        match self.order {
            GaugeOrder::Qdp => HostGauge::Qdp(std::array::from_fn(reals)),
            GaugeOrder::Milc => HostGauge::Milc(reals(0)),
            GaugeOrder::CpsWilson => HostGauge::CpsWilson(reals(0)),
        }
    }
}

/// The staggered links loaded through `loadGaugeQuda`: copies of the
/// caller's arrays as given (order and precision; QDP beside a CPS_WILSON
/// one, which the staggered loader does not read) and how to store them,
/// turned into latsol's links on the device when a solve first needs them
/// and kept for the next solves with the same operator and precisions (a
/// new load drops them).
pub(crate) struct StaggeredHost {
    pub dims: [usize; 4],
    pub fat: Option<HostLinks>,
    pub long: Option<HostLinks>,
    pub long_reconstruct: LongReconstruct,
    /// (improved, from the WILSON_LINKS field, precision, sloppy precision)
    /// and the links made for them.
    pub stored: Option<((bool, bool, Precision, Precision), StaggeredLinks)>,
}

impl StaggeredHost {
    /// No links yet, for a lattice of `dims`.
    pub fn empty(dims: [usize; 4]) -> StaggeredHost {
        StaggeredHost {
            dims,
            fat: None,
            long: None,
            long_reconstruct: LongReconstruct::Full18,
            stored: None,
        }
    }
}

/// Everything between `initQuda` and `endQuda`.
pub(crate) struct State {
    pub context: Context,
    pub gauge: Option<LoadedGauge>,
    pub clover: Option<Clover>,
    /// Staggered links of `loadGaugeQuda` (ASQTAD_FAT/LONG_LINKS).
    pub staggered: Option<StaggeredHost>,
    /// The links of MILC's last `qudaSpinTaste` with `reloadGaugeField`,
    /// and the precision code they came in.
    pub spin_taste_links: Option<(crate::field::GaugeField, bool)>,
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

/// The verbosity of the call in progress where its parameters name one
/// (QUDA's `pushVerbosity(param->verbosity)`, `CallVerbosity`).
static CALL_VERBOSITY: Mutex<Option<Verbosity>> = Mutex::new(None);

/// `setVerbosityQuda`: the level of the interface's messages and of the
/// implicit context's log, from now on (before or after `initQuda`).
pub(crate) fn set_verbosity(v: Verbosity) {
    if let Ok(mut g) = VERBOSITY.lock() {
        *g = v;
    }
    apply_verbosity();
}

/// The level the interface prints at now: the call's, else the global one.
pub(crate) fn verbosity() -> Verbosity {
    let global = VERBOSITY.lock().map(|v| *v).unwrap_or(Verbosity::Summarize);
    CALL_VERBOSITY
        .lock()
        .ok()
        .and_then(|c| *c)
        .unwrap_or(global)
}

/// How often a solve reports its residual: every iteration at
/// `QUDA_VERBOSE` and above (QUDA's per-iteration lines), never below.
pub(crate) fn progress_every() -> usize {
    usize::from(verbosity() >= Verbosity::Verbose)
}

/// The implicit context logs at `verbosity()`.
fn apply_verbosity() {
    let v = verbosity();
    if let Ok(s) = lock() {
        if let Some(state) = s.as_ref() {
            state.context.set_verbosity(v);
        }
    }
}

/// A warning of the interface (QUDA's `warningQuda`): printed unless the
/// verbosity is `QUDA_SILENT`.
pub(crate) fn warn(message: &str) {
    if verbosity() > Verbosity::Silent {
        eprintln!("latsol (QUDA interface) WARNING: {message}");
    }
}

/// A call's own verbosity (its `QudaInvertParam.verbosity`, unless
/// `QUDA_INVALID_VERBOSITY`) for as long as the guard lives, as QUDA's
/// `pushVerbosity` / `popVerbosity`. Made outside `with` (it takes the
/// state's lock).
pub(crate) struct CallVerbosity(Option<Option<Verbosity>>);

impl CallVerbosity {
    pub(crate) fn push(v: super::abi::QudaVerbosity) -> CallVerbosity {
        if v == super::abi::QUDA_INVALID_VERBOSITY {
            return CallVerbosity(None);
        }
        let previous = CALL_VERBOSITY
            .lock()
            .map(|mut c| c.replace(super::convert::verbosity(v)))
            .unwrap_or(None);
        apply_verbosity();
        CallVerbosity(Some(previous))
    }
}

impl Drop for CallVerbosity {
    fn drop(&mut self) {
        if let Some(previous) = self.0 {
            if let Ok(mut c) = CALL_VERBOSITY.lock() {
                *c = previous;
            }
            apply_verbosity();
        }
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

/// Starts the implicit context on `device` (None: the rank's place on its
/// node, QUDA's `initQuda(-1)`); a second call keeps the first, as QUDA's
/// `initQuda` does once initialised.
pub(crate) fn init(device: Option<usize>) -> Result<()> {
    let mut s = lock()?;
    if s.is_none() {
        let verbosity = VERBOSITY.lock().map(|v| *v).unwrap_or(Verbosity::Summarize);
        let context = Context::new(InitParams {
            device,
            verbosity,
            ranks: super::comms::for_context()?,
            ..Default::default()
        })?;
        *s = Some(State {
            context,
            gauge: None,
            clover: None,
            staggered: None,
            spin_taste_links: None,
            prefix: String::new(),
        });
    }
    Ok(())
}

/// Ends the context and frees its fields; the grid of ranks is given
/// again before the next start.
/// Whether `initQuda` (or MILC's `qudaInit`) has started the interface
/// and no `endQuda` has ended it since.
pub(crate) fn is_initialised() -> bool {
    lock().map(|s| s.is_some()).unwrap_or(false)
}

pub(crate) fn end() -> Result<()> {
    lock()?.take();
    super::comms::end();
    Ok(())
}

/// How many collective verdicts have failed on this rank, where there is
/// a context (`errors::quda_collective`).
pub(crate) fn failed_verdicts() -> Option<u64> {
    lock().ok()?.as_ref().map(|s| s.context.failed_verdicts())
}

/// Tells the other ranks that this rank's call failed (`error`), where
/// there is a context and no failed verdict since `before` has told them.
pub(crate) fn announce(before: Option<u64>, error: &Error) {
    let Ok(s) = lock() else { return };
    if let (Some(s), Some(before)) = (s.as_ref(), before) {
        if s.context.failed_verdicts() == before {
            let _ = s.context.agree(Err::<(), _>(error.clone()));
        }
    }
}

/// Runs `f` on the state, which `initQuda` must have created.
pub(crate) fn with<T>(f: impl FnOnce(&mut State) -> Result<T>) -> Result<T> {
    let mut s = lock()?;
    let state = s.as_mut().ok_or_else(|| {
        Error::InvalidArgument("the QUDA interface is not initialised: call initQuda first".into())
    })?;
    f(state)
}

/// The error of a call that needs the gauge field when none is loaded.
pub(crate) fn no_gauge(what: &str) -> Error {
    Error::InvalidArgument(format!(
        "{what}: no gauge field is loaded (call loadGaugeQuda first)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::quda::abi::{QUDA_INVALID_VERBOSITY, QUDA_SILENT, QUDA_VERBOSE};

    /// A call's verbosity holds for the call (nested calls too) and the
    /// global one comes back after it; `QUDA_INVALID_VERBOSITY` keeps the
    /// level in force, as QUDA's `pushVerbosity` of an unset field.
    #[test]
    fn a_calls_verbosity_lasts_for_the_call() {
        let global = verbosity();
        {
            let _outer = CallVerbosity::push(QUDA_SILENT);
            assert_eq!(verbosity(), Verbosity::Silent);
            assert_eq!(progress_every(), 0);
            {
                let _inner = CallVerbosity::push(QUDA_VERBOSE);
                assert_eq!(verbosity(), Verbosity::Verbose);
                assert_eq!(progress_every(), 1);
            }
            assert_eq!(verbosity(), Verbosity::Silent);
            let _unset = CallVerbosity::push(QUDA_INVALID_VERBOSITY);
            assert_eq!(verbosity(), Verbosity::Silent);
        }
        assert_eq!(verbosity(), global);
    }
}
