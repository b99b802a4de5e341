//! What every MILC call reads: the lattice layout of `qudaSetLayout` /
//! `qudaInit` (MILC passes the global extents; one process), and the
//! precision code of MILC's host arrays.

use std::os::raw::c_int;
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::ffi::quda::abi::*;
use crate::ffi::quda::host::not_null;

/// The lattice of `qudaSetLayout` / `qudaInit` (MILC passes the global
/// extents; one process).
static LAYOUT: Mutex<Option<[usize; 4]>> = Mutex::new(None);

pub(crate) fn dims() -> Result<[usize; 4]> {
    LAYOUT.lock().ok().and_then(|l| *l).ok_or_else(|| {
        Error::InvalidArgument("no lattice layout: call qudaInit or qudaSetLayout first".into())
    })
}

/// Reads a `QudaLayout_t`.
///
/// # Safety
/// `latsize` and `machsize` are null or point to 4 ints.
pub(crate) unsafe fn set_layout(layout: &QudaLayout_t) -> Result<()> {
    not_null(layout.latsize, "layout.latsize")?;
    // SAFETY: 4 ints, as the caller promises.
    let lat = unsafe { std::slice::from_raw_parts(layout.latsize, 4) };
    if !layout.machsize.is_null() {
        // SAFETY: as above.
        let mach = unsafe { std::slice::from_raw_parts(layout.machsize, 4) };
        if mach.iter().any(|&m| m != 1) {
            return Err(Error::Unsupported(format!(
                "layout.machsize = {mach:?}: latsol's QUDA interface runs on one process"
            )));
        }
    }
    if lat.iter().any(|&x| x <= 0 || x % 2 != 0) {
        return Err(Error::InvalidArgument(format!(
            "layout.latsize = {lat:?}: positive even extents"
        )));
    }
    let d = [
        lat[0] as usize,
        lat[1] as usize,
        lat[2] as usize,
        lat[3] as usize,
    ];
    if let Ok(mut l) = LAYOUT.lock() {
        *l = Some(d);
    }
    Ok(())
}

/// The host arrays' precision from MILC's code (2 double, else single).
pub(crate) fn host_double(code: c_int) -> bool {
    code == 2
}
