//! The MPI engine (cargo feature `mpi`, through the `mpi` crate): the host
//! program's own MPI, never initialised or finalised here. The host's
//! communicator is duplicated (`MPI_Comm_dup`), so that latsol's messages
//! never match the host's, and the duplicate is freed when the engine is
//! dropped (unless the host has finalised MPI by then: it is then left, as
//! freeing it would be an error).
//!
//! Below `MPI_THREAD_SERIALIZED` the library's worker threads never call
//! MPI: the host's thread that called latsol serves their calls while they
//! work (`serve_while`), the faces and sums copied through a queue.
//!
//! Deterministic sums gather every rank's numbers and add them in rank
//! order on every rank; fast sums are `MPI_Allreduce`'s.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, MutexGuard};
use std::thread::ThreadId;

use ::mpi::collective::SystemOperation;
use ::mpi::environment::Threading;
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
    /// MPI was initialised below `MPI_THREAD_SERIALIZED`: only the
    /// host's thread may call it, so the pool's threads hand their calls
    /// to it (`serve_while`).
    funnelled: bool,
    /// While a thread serves: that thread, and the queue of calls to it.
    funnel: Mutex<Option<(ThreadId, Sender<Served>)>>,
    /// Verdicts (`all_ok`) that came out false.
    failed_verdicts: AtomicU64,
    /// Ranks of the communicator on this node (sharing its memory).
    node_ranks: usize,
    node_rank: usize,
    node_id: usize,
}

// SAFETY: the communicator is a handle of the MPI library's, used by one
// thread at a time (every call holds `calls`), which MPI allows at
// MPI_THREAD_SERIALIZED; below that (MPI_Init gives MPI_THREAD_SINGLE,
// MILC's and QUDA's habit) every call is made by the host's thread that
// called latsol: the pool's threads hand theirs to it (`serve_while`).
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
    /// The size of `MPI_COMM_WORLD` where the host runs MPI (initialised,
    /// not finalised); None where it does not.
    pub fn world_size() -> Option<usize> {
        check_initialised().ok()?;
        Some(SimpleCommunicator::world().size() as usize)
    }

    pub fn duplicate_world() -> Result<MpiComm> {
        check_initialised()?;
        Ok(MpiComm::of(SimpleCommunicator::world().duplicate()))
    }

    fn of(comm: SimpleCommunicator) -> MpiComm {
        // Collective, as the duplication that made `comm` was: the ranks
        // sharing this node's memory, this rank's place among them, and
        // the lowest of their ranks as the node's number.
        let node = comm.split_shared(comm.rank());
        let mut node_id = comm.rank();
        node.all_reduce_into(&comm.rank(), &mut node_id, SystemOperation::min());
        MpiComm {
            node_ranks: node.size().max(1) as usize,
            node_rank: node.rank().max(0) as usize,
            node_id: node_id.max(0) as usize,
            rank: comm.rank() as usize,
            size: comm.size() as usize,
            comm: Some(comm),
            calls: Mutex::new(()),
            failed_verdicts: AtomicU64::new(0),
            funnelled: !matches!(
                ::mpi::environment::threading_support(),
                Threading::Serialized | Threading::Multiple
            ),
            funnel: Mutex::new(None),
        }
    }

    /// Whether the host's thread makes every MPI call (MPI initialised
    /// below `MPI_THREAD_SERIALIZED`).
    pub fn funnelled(&self) -> bool {
        self.funnelled
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

impl MpiComm {
    fn sum_now(&self, values: &mut [f64], reduction: Reduction) -> Result<()> {
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

    fn max_now(&self, values: &mut [f64]) -> Result<()> {
        let mine = values.to_vec();
        let (_calls, comm) = self.comm()?;
        comm.all_reduce_into(&mine[..], values, SystemOperation::max());
        Ok(())
    }

    fn all_ok_now(&self, ok: bool) -> Result<bool> {
        let mut all = 0i32;
        let (_calls, comm) = self.comm()?;
        comm.all_reduce_into(&i32::from(ok), &mut all, SystemOperation::min());
        Ok(all == 1)
    }

    fn exchange_now(&self, messages: &mut [Message<'_>]) -> Result<()> {
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

/// A call asked of the serving thread, and where its answer goes.
type Call = Box<dyn FnOnce(&MpiComm) + Send>;

enum Served {
    Call(Call),
    /// The work is over (sent even if it panicked).
    Done,
}

/// Sends `Done` when the work ends, however it ends.
struct DoneOnDrop(Sender<Served>);

impl Drop for DoneOnDrop {
    fn drop(&mut self) {
        let _ = self.0.send(Served::Done);
    }
}

/// A face to send and one to receive, owned, for the serving thread.
struct OwnedMessage {
    to: usize,
    send: Vec<u8>,
    from: usize,
    recv: Vec<u8>,
    tag: i32,
}

impl MpiComm {
    /// Where this thread's calls must go instead of MPI: the serving
    /// thread's queue while one serves and this is another thread.
    fn funnel_to(&self) -> Result<Option<Sender<Served>>> {
        let funnel = self
            .funnel
            .lock()
            .map_err(|_| Error::Internal("the MPI engine's funnel lock is poisoned".into()))?;
        Ok(funnel
            .as_ref()
            .filter(|(server, _)| *server != std::thread::current().id())
            .map(|(_, queue)| queue.clone()))
    }

    /// Has the serving thread run `call` and waits for its answer.
    fn through<R: Send + 'static>(
        queue: Sender<Served>,
        call: impl FnOnce(&MpiComm) -> Result<R> + Send + 'static,
    ) -> Result<R> {
        let (answer, answered) = channel();
        queue
            .send(Served::Call(Box::new(move |c| {
                let _ = answer.send(call(c));
            })))
            .map_err(|_| Error::Internal("the thread serving MPI calls has left".into()))?;
        answered
            .recv()
            .map_err(|_| Error::Internal("the thread serving MPI calls dropped a call".into()))?
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
        match self.funnel_to()? {
            None => self.sum_now(values, reduction),
            Some(queue) => {
                let mut owned = values.to_vec();
                let owned = MpiComm::through(queue, move |c| {
                    c.sum_now(&mut owned, reduction).map(|()| owned)
                })?;
                values.copy_from_slice(&owned);
                Ok(())
            }
        }
    }

    fn max(&self, values: &mut [f64]) -> Result<()> {
        match self.funnel_to()? {
            None => self.max_now(values),
            Some(queue) => {
                let mut owned = values.to_vec();
                let owned =
                    MpiComm::through(queue, move |c| c.max_now(&mut owned).map(|()| owned))?;
                values.copy_from_slice(&owned);
                Ok(())
            }
        }
    }

    fn all_ok(&self, ok: bool) -> Result<bool> {
        let all = match self.funnel_to()? {
            None => self.all_ok_now(ok)?,
            Some(queue) => MpiComm::through(queue, move |c| c.all_ok_now(ok))?,
        };
        if !all {
            self.failed_verdicts.fetch_add(1, Ordering::Relaxed);
        }
        Ok(all)
    }

    fn failed_verdicts(&self) -> u64 {
        self.failed_verdicts.load(Ordering::Relaxed)
    }

    fn node_ranks(&self) -> usize {
        self.node_ranks
    }

    fn node_rank(&self) -> usize {
        self.node_rank
    }

    fn node_id(&self) -> usize {
        self.node_id
    }

    fn exchange(&self, messages: &mut [Message<'_>]) -> Result<()> {
        let Some(queue) = self.funnel_to()? else {
            return self.exchange_now(messages);
        };
        let mut owned: Vec<OwnedMessage> = messages
            .iter()
            .map(|m| OwnedMessage {
                to: m.to,
                send: m.send.to_vec(),
                from: m.from,
                recv: vec![0; m.recv.len()],
                tag: m.tag,
            })
            .collect();
        let owned = MpiComm::through(queue, move |c| {
            let mut borrowed: Vec<Message<'_>> = owned
                .iter_mut()
                .map(|m| Message {
                    to: m.to,
                    send: &m.send,
                    from: m.from,
                    recv: &mut m.recv,
                    tag: m.tag,
                })
                .collect();
            c.exchange_now(&mut borrowed)?;
            drop(borrowed);
            Ok(owned)
        })?;
        for (m, o) in messages.iter_mut().zip(owned) {
            m.recv.copy_from_slice(&o.recv);
        }
        Ok(())
    }

    /// Below `MPI_THREAD_SERIALIZED` only the host's thread may call MPI:
    /// it serves the calls the pool's threads ask for until the work ends.
    fn serve_while(&self, pool: &rayon::ThreadPool, work: &mut (dyn FnMut() + Send)) {
        let (queue, served) = channel();
        {
            let Ok(mut funnel) = self.funnel.lock() else {
                return pool.install(work);
            };
            if !self.funnelled || funnel.is_some() {
                // Any thread may call MPI, or a thread already serves (work
                // started from inside work runs where it is).
                drop(funnel);
                return pool.install(work);
            }
            *funnel = Some((std::thread::current().id(), queue.clone()));
        }
        pool.in_place_scope(|scope| {
            scope.spawn(move |_| {
                let _done = DoneOnDrop(queue);
                work();
            });
            for s in served.iter() {
                match s {
                    Served::Call(call) => call(self),
                    Served::Done => break,
                }
            }
        });
        if let Ok(mut funnel) = self.funnel.lock() {
            *funnel = None;
        }
    }
}
