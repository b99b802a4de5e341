//! The MPI engine (cargo feature `mpi`, through the `mpi` crate): the host
//! program's own MPI, never initialised or finalised here. The host's
//! communicator is duplicated (`MPI_Comm_dup`), so that latsol's messages
//! never match the host's, and the duplicate is freed when the engine is
//! dropped (unless the host has finalised MPI by then: it is then left, as
//! freeing it would be an error).
//!
//! Deterministic sums gather every rank's numbers and add them in rank
//! order on every rank; fast sums are `MPI_Allreduce`'s.

use std::sync::{Mutex, MutexGuard};

use ::mpi::collective::SystemOperation;
use ::mpi::ffi::MPI_Comm;
use ::mpi::point_to_point::{Destination, Source};
use ::mpi::raw::FromRaw;
use ::mpi::topology::{Communicator, SimpleCommunicator};
use ::mpi::traits::CommunicatorCollectives;

use super::{Comm, Message, Reduction};
use crate::error::{Error, Result};

/// latsol's duplicate of a communicator of the host's.
pub struct MpiComm {
    /// `None` once given up at drop.
    comm: Option<SimpleCommunicator>,
    /// Held through every call: one MPI call of this engine at a time.
    calls: Mutex<()>,
    rank: usize,
    size: usize,
}

// SAFETY: the communicator is a handle of the MPI library's, used by one
// thread at a time (every call holds `calls`), which MPI allows at
// MPI_THREAD_SERIALIZED; a host that initialised MPI with less
// (MPI_THREAD_FUNNELED, MILC's and QUDA's habit) calls latsol from the
// thread that initialised it, as it calls MPI itself.
unsafe impl Send for MpiComm {}
// SAFETY: as for `Send`: shared use is serialised by `calls`.
unsafe impl Sync for MpiComm {}

impl std::fmt::Debug for MpiComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MpiComm(rank {} of {})", self.rank, self.size)
    }
}

fn check_initialised() -> Result<()> {
    if !::mpi::environment::is_initialized() || ::mpi::environment::is_finalized() {
        return Err(Error::InvalidArgument(
            "MPI is not initialised: the host program initialises MPI (MPI_Init) before it \
             hands latsol a communicator, and finalises it after latsol's end"
                .into(),
        ));
    }
    Ok(())
}

impl MpiComm {
    /// A duplicate of the host's communicator `comm`.
    ///
    /// # Safety
    /// `comm` is a live intra-communicator of the host's.
    pub unsafe fn duplicate_raw(comm: MPI_Comm) -> Result<MpiComm> {
        check_initialised()?;
        let mut dup = std::mem::MaybeUninit::<MPI_Comm>::uninit();
        // SAFETY: `comm` is live (the caller's promise); `dup` receives the
        // new handle.
        let status = unsafe { ::mpi::ffi::MPI_Comm_dup(comm, dup.as_mut_ptr()) };
        if status != 0 {
            return Err(Error::InvalidArgument(format!(
                "MPI_Comm_dup of the host's communicator failed ({status})"
            )));
        }
        // SAFETY: a fresh duplicate, owned by the engine from here on.
        let comm = unsafe { SimpleCommunicator::from_raw(dup.assume_init()) };
        Ok(MpiComm::of(comm))
    }

    /// A duplicate of `MPI_COMM_WORLD` (QUDA's choice when the host hands
    /// no communicator).
    pub fn duplicate_world() -> Result<MpiComm> {
        check_initialised()?;
        Ok(MpiComm::of(SimpleCommunicator::world().duplicate()))
    }

    fn of(comm: SimpleCommunicator) -> MpiComm {
        MpiComm {
            rank: comm.rank() as usize,
            size: comm.size() as usize,
            comm: Some(comm),
            calls: Mutex::new(()),
        }
    }

    /// The communicator, with the right to call MPI until the guard drops.
    fn comm(&self) -> Result<(MutexGuard<'_, ()>, &SimpleCommunicator)> {
        let guard = self
            .calls
            .lock()
            .map_err(|_| Error::Internal("the MPI engine's lock is poisoned".into()))?;
        Ok((guard, self.comm.as_ref().expect("live until drop")))
    }
}

impl Drop for MpiComm {
    fn drop(&mut self) {
        if let Some(c) = self.comm.take() {
            if ::mpi::environment::is_finalized() {
                // Freeing after MPI_Finalize is an error; the process ends anyway.
                std::mem::forget(c);
            }
        }
    }
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn sum(&self, values: &mut [f64], reduction: Reduction) -> Result<()> {
        match reduction {
            Reduction::Fast => {
                let mine = values.to_vec();
                let (_calls, comm) = self.comm()?;
                comm.all_reduce_into(&mine[..], values, SystemOperation::sum());
            }
            Reduction::Deterministic => {
                let n = values.len();
                let mut all = vec![0.0; n * self.size];
                let (_calls, comm) = self.comm()?;
                comm.all_gather_into(&values[..], &mut all[..]);
                for (i, v) in values.iter_mut().enumerate() {
                    *v = (0..self.size).fold(0.0, |s, r| s + all[r * n + i]);
                }
            }
        }
        Ok(())
    }

    fn max(&self, values: &mut [f64]) -> Result<()> {
        let mine = values.to_vec();
        let (_calls, comm) = self.comm()?;
        comm.all_reduce_into(&mine[..], values, SystemOperation::max());
        Ok(())
    }

    fn all_ok(&self, ok: bool) -> Result<bool> {
        let mut all = 0i32;
        let (_calls, comm) = self.comm()?;
        comm.all_reduce_into(&i32::from(ok), &mut all, SystemOperation::min());
        Ok(all == 1)
    }

    fn exchange(&self, messages: &mut [Message<'_>]) -> Result<()> {
        for m in messages.iter() {
            if m.to >= self.size || m.from >= self.size {
                return Err(Error::Internal(format!(
                    "a face for rank {} or from rank {} of {}",
                    m.to, m.from, self.size
                )));
            }
        }
        let (_calls, comm) = self.comm()?;
        ::mpi::request::scope(|scope| {
            let mut receives = Vec::with_capacity(messages.len());
            let mut sends = Vec::with_capacity(messages.len());
            for m in messages.iter_mut() {
                let (to, from, tag) = (m.to as i32, m.from as i32, m.tag);
                receives.push(comm.process_at_rank(from).immediate_receive_into_with_tag(
                    scope,
                    &mut *m.recv,
                    tag,
                ));
                sends.push(
                    comm.process_at_rank(to)
                        .immediate_send_with_tag(scope, m.send, tag),
                );
            }
            for r in receives {
                r.wait();
            }
            for s in sends {
                s.wait();
            }
        });
        Ok(())
    }
}
