//! The invert dispatcher: from validated parameters to the operator, the
//! solver and the reconstruction of the full solution, on any backend
//! (`wilson` for the Wilson and clover operators, `staggered`; the shifted
//! systems of `multishift` and the several masses of `multimass`), on the
//! systems of `system`.

mod block;
pub mod multimass;
pub mod multishift;
pub mod staggered;
pub mod staggered_block;
mod system;
mod wilson;

pub(crate) use block::{invert_block_on_device, sap_boxes};
pub(crate) use system::prepare;
pub use system::{matpc_parity, matpc_symmetric};
pub use wilson::{apply, apply_subset, invert};
pub(crate) use wilson::{invert_on_device, invert_preconditioned_on_device};
