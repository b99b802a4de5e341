//! What every MILC call reads: the lattice layout of `qudaSetLayout` /
//! `qudaInit` (MILC passes the global extents and its machine grid; each
//! rank holds the local part, the grid's ranks numbered x fastest, as
//! QUDA's lib/milc_interface.cpp `rankFromCoords` numbers them), and the
//! precision code of MILC's host arrays.

use std::os::raw::c_int;
use std::sync::Mutex;

use crate::comm::{local_of_global, RankMap};
use crate::error::{Error, Result};
use crate::ffi::quda::abi::*;
use crate::ffi::quda::host::not_null;
use crate::ffi::quda::{comms, state};
use crate::ffi::ranks::grid_of;

/// This rank's part of the lattice of `qudaSetLayout` / `qudaInit`.
static LAYOUT: Mutex<Option<[usize; 4]>> = Mutex::new(None);

pub(crate) fn dims() -> Result<[usize; 4]> {
    LAYOUT.lock().ok().and_then(|l| *l).ok_or_else(|| {
        Error::InvalidArgument("no lattice layout: call qudaInit or qudaSetLayout first".into())
    })
}

/// Reads a `QudaLayout_t`: the global extents divided by the machine
/// grid (NULL: one rank) give this rank's part, which every MILC call's
/// arrays hold; the grid goes to `initCommsGridQuda` with MILC's rank
/// order (x fastest). As QUDA's `qudaSetLayout`, the context is started.
///
/// # Safety
/// `latsize` and `machsize` are null or point to 4 ints.
pub(crate) unsafe fn set_layout(layout: &QudaLayout_t) -> Result<()> {
    not_null(layout.latsize, "layout.latsize")?;
    // SAFETY: 4 ints, as the caller promises.
    let lat = unsafe { std::slice::from_raw_parts(layout.latsize, 4) };
    let global = grid_of([lat[0], lat[1], lat[2], lat[3]], "layout.latsize")?;
    let grid = if layout.machsize.is_null() {
        [1; 4]
    } else {
        // SAFETY: as above.
        let m = unsafe { std::slice::from_raw_parts(layout.machsize, 4) };
        grid_of([m[0], m[1], m[2], m[3]], "layout.machsize")?
    };
    let local = local_of_global(global, grid)?;
    if local.iter().any(|&x| x % 2 != 0) {
        return Err(Error::InvalidArgument(format!(
            "layout.latsize = {global:?} over machsize = {grid:?}: local extents {local:?}, \
             every one even"
        )));
    }
    comms::set_grid(grid, RankMap::XFastest)?;
    if let Ok(mut l) = LAYOUT.lock() {
        *l = Some(local);
    }
    // MILC's `device` (-1: the rank's place on its node, as QUDA's).
    state::init(usize::try_from(layout.device).ok())
}

/// The host arrays' precision from MILC's code (2 double, else single).
pub(crate) fn host_double(code: c_int) -> bool {
    code == 2
}
