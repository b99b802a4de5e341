//! The safe Rust API: a `Context` (one backend, its threads or device, its
//! logger), `Gauge` fields loaded into it, and `invert`/`apply` on them.
//! The C ABI (`ffi`) is a thin layer over exactly this.

mod clover;
mod context;
mod context_inner;
mod fat_links;
mod gauge;
mod gauge_fixing;
mod invert;
mod invert_multi;
pub mod multi;
mod operator_fields;
pub mod params;
mod spin_taste;
mod staggered;
mod staggered_params;
mod staggered_sources;

pub(crate) use crate::dirac::staggered::fold_phases as staggered_fold;
pub use clover::{Clover, CloverParams, CloverSource};
pub use context::Context;
pub use fat_links::{FatLinkOutputs, FatLinks};
pub use gauge::Gauge;
pub use gauge_fixing::GaugeFixing;
pub use multi::{MultiMassPolicy, MultiResult, SequenceGuess, ShiftResult, MAX_SHIFTS};
pub use operator_fields::OperatorFields;
pub use params::*;
pub use staggered::StaggeredLinks;
pub use staggered_params::{
    PhaseFolding, StaggeredInvertParams, StaggeredOp, StaggeredParams, StaggeredSolve,
};
