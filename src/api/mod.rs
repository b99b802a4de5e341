//! The safe Rust API: a `Context` (one backend, its threads or device, its
//! logger), `Gauge` fields loaded into it, and `invert`/`apply` on them.
//! The C ABI (`ffi`) is a thin layer over exactly this.

mod clover;
mod context;
mod gauge;
pub mod multi;
pub mod params;
mod staggered;

pub(crate) use crate::dirac::staggered::fold_phases as staggered_fold;
pub use clover::{Clover, CloverParams, CloverSource};
pub use context::{Context, OperatorFields};
pub use gauge::Gauge;
pub use multi::{MultiMassPolicy, MultiResult, SequenceGuess, ShiftResult, MAX_SHIFTS};
pub use params::*;
pub use staggered::{
    PhaseFolding, StaggeredInvertParams, StaggeredLinks, StaggeredOp, StaggeredParams,
    StaggeredSolve,
};
