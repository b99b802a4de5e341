//! The clover term of the O(a)-improved Wilson operator on the host: per
//! site two Hermitian 6×6 blocks, one per chirality (docs/conventions.md,
//! "The clover term").
//!
//! The canonical field keeps the blocks in the DeGrand–Rossi basis of the
//! host, where `A` is block diagonal: block `k` acts on the Dirac spins
//! `2k, 2k+1` (γ5 = −1 for k = 0, +1 for k = 1), row and column index
//! `3 s + c` (s the spin within the block, c the colour). Sites are in the
//! even-odd order of every canonical field (`[parity][cb]`).
//!
//! - `block`: the two chiral blocks of a site; `field`: the field of them;
//! - `packed`: QUDA's packed clover order (72 reals per site) in and out;
//! - `ldl`: the per-block inverse by an LDL† factorisation;
//! - `compute`: the clover term from a gauge field and c_SW;
//! - `chiral`: the blocks in the backends' storage basis (the chiral basis
//!   of the internal UKQCD spinor).

pub mod block;
pub mod chiral;
pub mod compute;
mod field;
pub mod ldl;
pub mod packed;
pub mod storage;

pub use block::{unit_block, Block, SiteBlocks, PACKED_REALS};
pub use field::CloverField;
