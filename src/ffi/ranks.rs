//! The host's MPI communicator and rank map, as both C faces take them
//! (`latsol_init_param`'s `mpi_comm`, `grid`, `rank_map`; QUDA's
//! `initCommsGridQuda` and `setMPICommHandleQuda`), turned into the safe
//! API's `RanksParams`. The only place that reads an `MPI_Comm`: the
//! header itself needs no MPI (a pointer to the host's handle, whatever
//! its type in the host's MPI).

use std::ffi::c_void;
use std::sync::Arc;

use crate::api::{Context, RanksParams};
use crate::comm::{Comm, Dims, RankMap, Reduction};
use crate::error::{Error, Result};

/// The rank at grid coordinates `coords` (x, y, z, t), as the host numbers
/// its ranks; `user_data` is the pointer given with it. QUDA's
/// `QudaCommsMap` has this shape.
pub type latsol_rank_map_fn =
    Option<unsafe extern "C" fn(coords: *const i32, user_data: *mut c_void) -> i32>;

/// A C rank map and its user pointer as a `RankMap`.
struct CallbackMap {
    map: unsafe extern "C" fn(*const i32, *mut c_void) -> i32,
    user_data: *mut c_void,
}

// The map is called during init only, on the caller's thread.
unsafe impl Send for CallbackMap {}
unsafe impl Sync for CallbackMap {}

impl CallbackMap {
    fn rank_at(&self, g: Dims) -> i64 {
        let coords = g.map(|c| c as i32);
        // SAFETY: the host's function, given four coordinates.
        i64::from(unsafe { (self.map)(coords.as_ptr(), self.user_data) })
    }
}

/// The host's map, or QUDA's default (t fastest) where it gave none.
pub(crate) fn rank_map(map: latsol_rank_map_fn, user_data: *mut c_void) -> RankMap {
    match map {
        None => RankMap::TFastest,
        Some(map) => {
            let cb = CallbackMap { map, user_data };
            RankMap::Custom(Arc::new(move |g: Dims| cb.rank_at(g)))
        }
    }
}

/// A grid of `int`s checked: every extent at least 1.
pub(crate) fn grid_of(grid: [i32; 4], what: &str) -> Result<Dims> {
    let mut out = [1; 4];
    for (mu, &g) in grid.iter().enumerate() {
        if g < 1 {
            return Err(Error::InvalidArgument(format!(
                "{what}[{mu}] = {g}: every extent of the grid of ranks is at least 1"
            )));
        }
        out[mu] = g as usize;
    }
    Ok(out)
}

/// A copy of the host's communicator handle (`MPI_Comm`, whatever its
/// type in the host's MPI), read where the host hands a pointer to it.
#[cfg(feature = "mpi")]
pub(crate) struct HostComm(::mpi::ffi::MPI_Comm);

/// Without MPI there is no handle to keep.
#[cfg(not(feature = "mpi"))]
pub(crate) struct HostComm;

// SAFETY: a handle of the MPI library's (an integer or a pointer to the
// library's own object), only duplicated, on the thread the host calls from.
unsafe impl Send for HostComm {}

/// The handle `*comm` (QUDA's `setMPICommHandleQuda` copies it at once
/// too); None for NULL.
///
/// # Safety
/// `comm` is NULL or points to a live `MPI_Comm` of the host's.
pub(crate) unsafe fn read_comm(comm: *const c_void) -> Option<HostComm> {
    if comm.is_null() {
        return None;
    }
    #[cfg(feature = "mpi")]
    // SAFETY: the caller's promise; MPI_Comm is a plain handle.
    return Some(HostComm(unsafe {
        comm.cast::<::mpi::ffi::MPI_Comm>().read()
    }));
    #[cfg(not(feature = "mpi"))]
    Some(HostComm)
}

/// The C handle of a Fortran communicator handle (`MPI_Comm_f2c`).
#[cfg(feature = "mpi")]
pub(crate) fn fortran_comm(handle: i32) -> Result<HostComm> {
    if crate::comm::MpiComm::world_size().is_none() {
        return Err(Error::InvalidArgument(
            "fortran_comm: MPI is not initialised (the host calls MPI_Init first)".into(),
        ));
    }
    // SAFETY: MPI is initialised; an invalid handle gives MPI_COMM_NULL,
    // which the duplication refuses.
    Ok(HostComm(unsafe { ::mpi::ffi::RSMPI_Comm_f2c(handle) }))
}

#[cfg(not(feature = "mpi"))]
pub(crate) fn fortran_comm(_handle: i32) -> Result<HostComm> {
    engine(None).map(|_| HostComm)
}

/// The engine over a duplicate of the host's communicator, or of
/// `MPI_COMM_WORLD` where it gave none.
#[cfg(feature = "mpi")]
pub(crate) fn engine(comm: Option<&HostComm>) -> Result<Arc<dyn Comm>> {
    use crate::comm::MpiComm;
    Ok(match comm {
        None => Arc::new(MpiComm::duplicate_world()?),
        // SAFETY: a handle the host handed over as live.
        Some(c) => Arc::new(unsafe { MpiComm::duplicate_raw(c.0)? }),
    })
}

#[cfg(not(feature = "mpi"))]
pub(crate) fn engine(_comm: Option<&HostComm>) -> Result<Arc<dyn Comm>> {
    Err(Error::Unsupported(
        "a communicator or a grid of several ranks, but this latsol was built without MPI: \
         rebuild with `cargo build --release --features mpi` (or `scripts/install.sh --mpi \
         PREFIX`)"
            .into(),
    ))
}

/// Whether the host runs MPI (initialised, not finalised) with more than
/// one rank in `MPI_COMM_WORLD`; false without the `mpi` feature.
pub(crate) fn world_has_ranks() -> bool {
    #[cfg(feature = "mpi")]
    return crate::comm::MpiComm::world_size().is_some_and(|n| n > 1);
    #[cfg(not(feature = "mpi"))]
    false
}

/// The ranks a context spans: None for one process (no communicator and a
/// grid of one), else the host's communicator (or the world's) cut by
/// `grid`.
///
pub(crate) fn ranks_params(
    comm: Option<HostComm>,
    grid: Dims,
    map: RankMap,
    deterministic: bool,
) -> Result<Option<RanksParams>> {
    if comm.is_none() && grid == [1; 4] {
        return Ok(None);
    }
    Ok(Some(RanksParams {
        comm: engine(comm.as_ref())?,
        grid,
        map,
        reduction: if deterministic {
            Reduction::Deterministic
        } else {
            Reduction::Fast
        },
    }))
}

/// A C entry point's own checks (pointers, lengths, enums) on a context
/// that may span many ranks: a failure here is announced to the other
/// ranks, whose call's first collective step (the safe API's agreement on
/// its checks) it answers, so every rank fails the call together and none
/// waits for this one. Success costs nothing.
pub(crate) fn collective<T>(context: &Context, checked: Result<T>) -> Result<T> {
    if let Err(e) = &checked {
        let _ = context.agree(Err::<(), _>(e.clone()));
    }
    checked
}
