//! The ranks of the QUDA face's implicit context, as QUDA 9521952 takes
//! them (learned from its lib/interface_quda.cpp, lib/communicator_mpi.cpp
//! and lib/milc_interface.cpp; nothing copied):
//! - `setMPICommHandleQuda(&comm)` (MILC: `qudaSetMPICommHandle`) copies
//!   the host's communicator handle at once; without it the world's is
//!   used. latsol works on a duplicate either way (never the host's own).
//! - `initCommsGridQuda(4, dims, map, data)` fixes the grid of ranks and
//!   which rank sits where (the host's function, or with NULL QUDA's
//!   t-fastest order); the first call counts until `endQuda`. The map is
//!   evaluated here, once: its data may live on the caller's stack.
//! - `initQuda` starts the context on those ranks. On several ranks with
//!   no grid given it refuses, as QUDA's MPI build does; on one process
//!   the grid is one rank.

use std::ffi::c_void;
use std::sync::{Arc, Mutex, PoisonError};

use crate::api::RanksParams;
use crate::comm::{Dims, RankGrid, RankMap, Reduction};
use crate::error::{Error, Result};
use crate::ffi::ranks::{self, HostComm};

/// What the communication calls before `initQuda` left.
struct Comms {
    /// The host's communicator, from `setMPICommHandleQuda`.
    handle: Option<HostComm>,
    /// The ranks of `initCommsGridQuda`; None where it was not called (or
    /// gave a grid of one rank on a process without MPI).
    ranks: Option<RanksParams>,
    /// Whether `initCommsGridQuda` has been called since the last end.
    fixed: bool,
}

static COMMS: Mutex<Comms> = Mutex::new(Comms {
    handle: None,
    ranks: None,
    fixed: false,
});

fn comms() -> std::sync::MutexGuard<'static, Comms> {
    COMMS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `setMPICommHandleQuda(mycomm)`: keeps a copy of `*mycomm`; NULL (a
/// program without MPI passes it) leaves `MPI_COMM_WORLD`.
///
/// # Safety
/// `comm` is NULL or points to the host's `MPI_Comm`.
pub(crate) unsafe fn set_handle(comm: *const c_void) {
    // SAFETY: as the caller promises.
    comms().handle = unsafe { ranks::read_comm(comm) };
}

/// `initCommsGridQuda`'s grid: the engine over the host's communicator,
/// the grid checked against it and the map evaluated (every rank agrees:
/// a grid refused on one is refused on all). A later call before `end`
/// changes nothing (QUDA's first call counts).
pub(crate) fn set_grid(grid: Dims, map: RankMap) -> Result<()> {
    let mut c = comms();
    if c.fixed {
        return Ok(());
    }
    // One process and no MPI: the grid must be one rank.
    if grid == [1; 4] && c.handle.is_none() && !ranks::world_has_ranks() {
        c.fixed = true;
        c.ranks = None;
        return Ok(());
    }
    let comm = ranks::engine(c.handle.as_ref())?;
    let checked = RankGrid::new(grid, comm.size(), comm.rank(), &map);
    let all = comm.all_ok(checked.is_ok())?;
    let table = match (checked, all) {
        (Err(e), _) => return Err(e),
        (Ok(_), false) => {
            return Err(Error::OtherRank(
                "another rank refused the grid of ranks (its status says why)".into(),
            ))
        }
        (Ok(t), true) => t,
    };
    // The host's function is not called again (its data may be gone).
    let map = match map {
        RankMap::Custom(_) => RankMap::Custom(Arc::new(move |g: Dims| table.rank_at(g) as i64)),
        fixed => fixed,
    };
    c.ranks = Some(RanksParams {
        comm,
        grid,
        map,
        reduction: Reduction::Fast,
    });
    c.fixed = true;
    Ok(())
}

/// The ranks `initQuda` starts its context on: those of
/// `initCommsGridQuda`, else one process (refused where MPI runs on
/// several ranks: the grid is the host's to give).
pub(crate) fn for_context() -> Result<Option<RanksParams>> {
    let c = comms();
    if !c.fixed && ranks::world_has_ranks() {
        return Err(Error::InvalidArgument(
            "initQuda on several MPI ranks without initCommsGridQuda: the grid of ranks \
             must be given first (as QUDA requires)"
                .into(),
        ));
    }
    Ok(c.ranks.clone())
}

/// `endQuda`: the grid is given again before the next `initQuda` (the
/// host's handle stays, as in QUDA).
pub(crate) fn end() {
    let mut c = comms();
    c.ranks = None;
    c.fixed = false;
}
