//! What the QUDA face does on an error, and the call guard every QUDA
//! entry point runs in (`quda_call`). QUDA aborts the process (its
//! `errorQuda`); so, by default, does this layer, but first it prints the
//! function, the field and its value, and it exits with status 1 rather
//! than crashing. With `LATSOL_QUDA_ON_ERROR=return` in the environment it
//! returns instead (outputs untouched), and the status and message of the
//! last failed call are read with `latsol_quda_last_status` and
//! `latsol_last_error`.

use super::state;
use crate::error::{Error, Result};
use crate::ffi::status::{latsol_status, LATSOL_SUCCESS};

/// The shape of every QUDA entry point: `body` under latsol's call guard
/// (panics caught, the message kept for `latsol_last_error`); a failure
/// goes to `report`, which exits as QUDA would abort, or records it and
/// returns.
pub(crate) fn quda_call(function: &'static str, body: impl FnOnce() -> Result<()>) {
    let status = crate::ffi::boundary::call(function, body);
    if status == LATSOL_SUCCESS {
        state::clear_failure();
    } else {
        report(status);
    }
}

/// `quda_call` for an entry point that is collective over the ranks of a
/// cut lattice (every rank calls it; its safe-API calls agree on their
/// checks before their first collective step). Where `body` fails on this
/// rank in the QUDA face's own code (a NULL pointer, a parameter refused
/// here) and no failed verdict has told the others, this rank answers
/// their next agreement with its failure once, so every rank fails the
/// call and none waits for this one. One process: `quda_call`.
pub(crate) fn quda_collective(function: &'static str, body: impl FnOnce() -> Result<()>) {
    let before = state::failed_verdicts();
    quda_call(function, || {
        let result = body();
        if let Err(e) = &result {
            state::announce(before, e);
        }
        result
    })
}

/// Whether a failed call returns (`LATSOL_QUDA_ON_ERROR=return`) rather
/// than exiting.
fn returns() -> bool {
    std::env::var("LATSOL_QUDA_ON_ERROR").is_ok_and(|v| v == "return")
}

/// A call failed with `status`; its message (function, field, value) is
/// the thread's last error. Prints it, then exits with status 1 or (return
/// mode) records the status and returns.
pub(crate) fn report(status: latsol_status) {
    // SAFETY: last_error_ptr is a NUL-terminated string owned by this thread.
    let message = unsafe { std::ffi::CStr::from_ptr(crate::ffi::status::last_error_ptr()) }
        .to_string_lossy()
        .into_owned();
    state::record_failure(status, &message);
    eprintln!("latsol (QUDA interface) ERROR: {message}");
    if !returns() {
        eprintln!(
            "latsol (QUDA interface): exiting with status 1, as QUDA would abort \
             (LATSOL_QUDA_ON_ERROR=return makes the call return instead)"
        );
        std::process::exit(1);
    }
}

/// A QUDA function latsol does not provide was called.
pub(crate) fn unprovided(function: &'static str) {
    quda_call(function, || {
        Err(Error::Unsupported(format!(
            "{function} is not provided by latsol's QUDA interface (docs/quda-compat.md lists \
             what is)"
        )))
    });
}
