//! The communication layer: what the operators and solvers need of the
//! other ranks of a partitioned lattice, and nothing about how it travels.
//! An operator asks for faces (`Comm::exchange`), a solver for global sums
//! (`Comm::sum`), a C entry point for a collective verdict (`Comm::all_ok`:
//! a bad argument on one rank fails the call on every rank, and no rank
//! waits in a collective another has left). It never names MPI: the
//! engines are `SingleProcess` (one rank, the default build) and, with the
//! cargo feature `mpi`, `MpiComm` (`mpi_comm.rs`) over the host program's
//! own communicator.
//!
//! - `devices`: which GPU a rank uses (its place on its node, QUDA's rule);
//! - `faces`: where a cut lattice's faces are, in the order both backends
//!   send and read them;
//! - `extend`: a rank's links with its neighbours' around them (the
//!   plaquette and the clover term reach a diagonal neighbour's corner);
//! - `gauge_file`: a gauge file read by every rank in parts, checked on the
//!   whole lattice;
//! - `partition`: how the lattice is cut over the grid of ranks (QUDA's
//!   semantics: local sub-lattices, the caller's rank map);
//! - `polyakov`: the Polyakov loop, whose lines cross the cut in time.

pub mod devices;
pub mod extend;
pub mod faces;
pub mod gauge_file;
#[cfg(feature = "mpi")]
mod mpi_comm;
pub mod partition;
pub mod polyakov;
mod ranks;
mod single;

#[cfg(feature = "mpi")]
pub use mpi_comm::MpiComm;
pub use partition::{local_of_global, Dims, Partition, RankGrid, RankMap};
pub use ranks::Ranks;
pub use single::SingleProcess;

use crate::error::Result;

/// How global sums are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reduction {
    /// The engine's own (`MPI_Allreduce`): fastest, its order the
    /// library's to choose, so the last bits may differ from run to run.
    #[default]
    Fast,
    /// Every rank's numbers gathered and summed in rank order on every
    /// rank: the same bits on every run and every rank.
    Deterministic,
}

impl Reduction {
    /// `LATSOL_DETERMINISTIC_SUMS=1` asks for deterministic sums whatever
    /// the caller chose.
    pub fn from_env_or(chosen: Reduction) -> Reduction {
        match std::env::var("LATSOL_DETERMINISTIC_SUMS").as_deref() {
            Ok("1") => Reduction::Deterministic,
            Ok("0") => Reduction::Fast,
            _ => chosen,
        }
    }
}

/// One face of a halo exchange: `send` goes to rank `to`, and `recv` is
/// filled with what rank `from` sent under the same `tag` (a direction
/// and sense: the partner's send of that tag lands here).
pub struct Message<'a> {
    pub to: usize,
    pub send: &'a [u8],
    pub from: usize,
    pub recv: &'a mut [u8],
    pub tag: i32,
}

/// What a rank can ask of the others. Every method is collective over the
/// ranks of the partition: all call it, in the same order.
pub trait Comm: Send + Sync {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Sums `values` over the ranks, in place, as `reduction` says.
    fn sum(&self, values: &mut [f64], reduction: Reduction) -> Result<()>;
    /// The largest of `values` over the ranks, in place (exact in any order).
    fn max(&self, values: &mut [f64]) -> Result<()>;
    /// Whether `ok` holds on every rank: the verdict of a collective call.
    fn all_ok(&self, ok: bool) -> Result<bool>;
    /// How many verdicts (`all_ok`) have come out false here: a C face
    /// whose own checks fail a call tells the other ranks once, unless a
    /// failed verdict in that call has told them already.
    fn failed_verdicts(&self) -> u64 {
        0
    }
    /// How many ranks share this rank's node (its cores and memory).
    fn node_ranks(&self) -> usize {
        1
    }
    /// This rank's place among the ranks of its node (0 ..
    /// `node_ranks()`), in the communicator's order.
    fn node_rank(&self) -> usize {
        0
    }
    /// The node's number: the lowest rank on it.
    fn node_id(&self) -> usize {
        0
    }
    /// Every message's send and receive at once (non-blocking underneath);
    /// returns when all have arrived.
    fn exchange(&self, messages: &mut [Message<'_>]) -> Result<()>;
    /// Runs `work` on `pool`'s threads while this thread waits, as
    /// `ThreadPool::install` does; an engine that may only be called from
    /// the host's thread (MPI initialised below `MPI_THREAD_SERIALIZED`)
    /// has this thread make the calls the pool's threads ask for.
    fn serve_while(&self, pool: &rayon::ThreadPool, work: &mut (dyn FnMut() + Send)) {
        pool.install(work)
    }
}

/// `pool.install(f)` for work that may talk to the other ranks through
/// `comm`: the calling thread serves the engine's calls if it must.
pub fn install<R: Send>(
    comm: &dyn Comm,
    pool: &rayon::ThreadPool,
    f: impl FnOnce() -> R + Send,
) -> R {
    let mut f = Some(f);
    let mut out = None;
    comm.serve_while(pool, &mut || {
        if let Some(f) = f.take() {
            out = Some(f());
        }
    });
    out.expect("serve_while runs its work once")
}
