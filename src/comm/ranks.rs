//! `Ranks`: the engine that reaches the other ranks, the grid of ranks,
//! and how global sums are formed: what a context on many ranks hands its
//! backend and keeps for its own collective steps.

use std::sync::Arc;

use super::{Comm, RankGrid, Reduction};
use crate::error::{Error, Result};
use crate::lattice::Lattice;

/// The engine that reaches the other ranks, and this rank's part.
#[derive(Clone)]
pub struct Ranks {
    pub comm: Arc<dyn Comm>,
    /// The grid of ranks; every field's lattice is this rank's part.
    pub grid: RankGrid,
    pub reduction: Reduction,
}

impl std::fmt::Debug for Ranks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ranks")
            .field("rank", &self.comm.rank())
            .field("grid", &self.grid)
            .field("reduction", &self.reduction)
            .finish()
    }
}

impl Ranks {
    /// Refuses a field whose lattice cannot be a rank's part of a cut
    /// lattice (an odd extent: local parity must be global parity).
    pub fn check_local(&self, lattice: &Lattice, what: &str) -> Result<()> {
        self.grid
            .with_local(lattice.dims())
            .map(|_| ())
            .map_err(|e| match e {
                Error::InvalidArgument(m) => Error::InvalidArgument(format!("{what}: {m}")),
                other => other,
            })
    }

    /// Whether any direction is cut.
    pub fn partitioned(&self) -> bool {
        self.grid.is_cut()
    }

    /// The global sums of `values`.
    pub fn sum(&self, values: &mut [f64]) -> Result<()> {
        self.comm.sum(values, self.reduction)
    }

    /// Whether this rank holds the last slice of the whole lattice in
    /// direction `mu` (where the time boundary's sign lives).
    pub fn holds_last(&self, mu: usize) -> bool {
        self.grid.coords()[mu] + 1 == self.grid.grid()[mu]
    }

    /// Refuses, on every rank, local extents that differ between ranks
    /// (every rank holds a sub-lattice of the same extents).
    pub fn check_same_local(&self, local: [usize; 4]) -> Result<()> {
        let mut high = local.map(|d| d as f64);
        let mut low = local.map(|d| -(d as f64));
        self.comm.max(&mut high)?;
        self.comm.max(&mut low)?;
        if high.iter().zip(&low).any(|(h, l)| *h != -*l) {
            return Err(Error::InvalidArgument(format!(
                "dims = {local:?} here, but the local lattices of the ranks range from {:?} to \
                 {high:?}: every rank passes its own part, of the same extents",
                low.map(|l| -l)
            )));
        }
        Ok(())
    }

    /// `result` made collective: an error on any rank is an error on every
    /// rank (this rank's own where it failed, `OtherRank` where it did not).
    /// Every rank calls it at the same point of the same call.
    pub fn agree<T>(&self, result: Result<T>) -> Result<T> {
        let all = self.comm.all_ok(result.is_ok())?;
        match result {
            Err(e) => Err(e),
            Ok(_) if !all => Err(Error::OtherRank(
                "the call failed on another rank (its own status says why); nothing was done \
                 here"
                    .into(),
            )),
            ok => ok,
        }
    }
}
