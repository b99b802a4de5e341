//! The QUDA face's process-wide state: QUDA's interface has one implicit
//! context (`initQuda` … `endQuda`), the fields loaded into it, and the
//! status of the last failed call.

use std::sync::Mutex;

use crate::ffi::status::latsol_status;

/// Status and message of the last failed QUDA-interface call.
static LAST_FAILURE: Mutex<Option<(latsol_status, String)>> = Mutex::new(None);

pub(crate) fn record_failure(status: latsol_status, message: &str) {
    if let Ok(mut l) = LAST_FAILURE.lock() {
        *l = Some((status, message.to_string()));
    }
}
