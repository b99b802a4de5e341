//! The C ABI: the only code in latsol that touches raw pointers.
//!
//! A thin layer in the style of rustls-ffi and the C APIs of wasmtime and
//! libimagequant (STYLE.md, "The C boundary"). Every `extern "C"` function
//! has one shape, enforced by `boundary::call`: a guard that catches panics,
//! argument checks that fail with a precise status and message, and a call
//! into the safe API (`crate::api`). Nothing unwinds into C and nothing
//! aborts; the message of a failed call is kept per thread for
//! `latsol_last_error()`.
//!
//! - `status`: status codes, the map of `Error` onto them, and the
//!   per-thread store of the last error's message (the bottom layer).
//! - `enums`: the C enumerations (plain `int32_t` typedefs with `#define`d
//!   values, so an unknown value from C is an error, never undefined
//!   behaviour) and their checked conversions.
//! - `boundary`: the call guard (the panic fence), versioned structs
//!   (`struct_size`), checked handles and host arrays.
//! - `ranks`: the host's communicator and rank map (both faces).
//! - `context`, `gauge`, `invert`, `multishift`, `sources`, `strings`,
//!   `clover`, `staggered`: the entry points (`strings`: a status's name,
//!   the last error, the version).
//!
//! `include/latsol.h` is generated from these files by cbindgen
//! (`cbindgen.toml`; `tests/ffi_header.rs` fails if it is stale). The doc
//! comments here are the header's documentation.
//!
//! Names follow C (`latsol_*`, `LATSOL_*`), not Rust: they are the ABI.
#![allow(non_camel_case_types)]

pub mod boundary;
pub mod context;
pub mod enums;
pub mod gauge;
pub mod invert;
pub mod multishift;
pub mod ranks;
pub mod sources;
pub mod status;
pub mod strings;
// After the Wilson entry points, so the header keeps its order.
pub mod clover;
/// cbindgen:ignore
pub mod quda;
pub mod staggered;

pub use clover::*;
pub use context::*;
pub use enums::*;
pub use gauge::*;
pub use invert::*;
pub use multishift::*;
pub use ranks::latsol_rank_map_fn;
pub use sources::*;
pub use staggered::*;
pub use status::*;
pub use strings::*;
