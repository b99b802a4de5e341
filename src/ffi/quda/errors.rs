//! What the QUDA face does on an error. QUDA aborts the process (its
//! `errorQuda`); so, by default, does this layer, but first it prints the
//! function, the field and its value, and it exits with status 1 rather
//! than crashing. With `LATSOL_QUDA_ON_ERROR=return` in the environment it
//! returns instead (outputs untouched), and the status and message of the
//! last failed call are read with `latsol_quda_last_status` and
//! `latsol_last_error`.

use crate::error::Error;

/// Whether a failed call returns (`LATSOL_QUDA_ON_ERROR=return`) rather
/// than exiting.
fn returns() -> bool {
    std::env::var("LATSOL_QUDA_ON_ERROR").is_ok_and(|v| v == "return")
}

/// Reports `error` of QUDA function `function`: prints it and exits with
/// status 1, or (return mode) records it and returns.
pub(crate) fn fail(function: &str, error: &Error) {
    let message = format!("{function}: {error}");
    super::state::record_failure(crate::ffi::status::status_of(error), &message);
    eprintln!("latsol (QUDA interface) ERROR: {message}");
    if !returns() {
        eprintln!("latsol (QUDA interface): exiting with status 1, as QUDA would abort (LATSOL_QUDA_ON_ERROR=return returns instead)");
        std::process::exit(1);
    }
}

/// A QUDA function latsol does not provide was called.
pub(crate) fn unprovided(function: &str) {
    fail(
        function,
        &Error::Unsupported(format!(
            "{function} is not provided by latsol's QUDA interface (docs/quda-compat.md lists what is)"
        )),
    );
}
