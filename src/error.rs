//! The library's one error type. Each variant maps 1:1 onto a C status code
//! (`ffi::status`), and its message names the parameter and the bad value.

use thiserror::Error;

/// Every way a latsol call can fail.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum Error {
    /// A parameter is out of range, inconsistent or not a number.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A required pointer was null.
    #[error("null pointer: {0}")]
    NullPointer(String),
    /// A handle is stale, freed already, or belongs to another context.
    #[error("invalid handle: {0}")]
    InvalidHandle(String),
    /// A valid request that this build or backend does not implement.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The solver stopped at `maxiter` above the tolerance.
    #[error("not converged: {0}")]
    NotConverged(String),
    /// The Krylov recurrence broke down (a vanishing inner product).
    #[error("breakdown: {0}")]
    Breakdown(String),
    /// An allocation failed on the host or the device.
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    /// No usable GPU (no driver, no device, no NVRTC).
    #[error("no device: {0}")]
    NoDevice(String),
    /// A CUDA driver or NVRTC call failed.
    #[error("device error: {0}")]
    Device(String),
    /// A collective call failed on another rank of a partitioned lattice
    /// (that rank's status says why); this rank's part was in order and
    /// nothing was done.
    #[error("failed on another rank: {0}")]
    OtherRank(String),
    /// A bug: a panic caught at the C boundary, or a broken invariant.
    #[error("internal error: {0}")]
    Internal(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// Shorthand for `Err(Error::InvalidArgument(format!(...)))`.
#[macro_export]
macro_rules! invalid {
    ($($arg:tt)*) => { Err($crate::error::Error::InvalidArgument(format!($($arg)*))) };
}
