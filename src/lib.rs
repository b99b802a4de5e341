//! latsol: GPU and CPU Dirac solvers for lattice QCD, with a C ABI.
//!
//! One way through: `ffi` (the C ABI, the only place with raw pointers) →
//! `api` (safe Rust: `Context`, `Gauge`, params) → `dispatch` (the invert
//! dispatcher) → `dirac` (operators) and `solver` (Krylov methods) →
//! `backend` (CPU, CUDA) → fields (`field`, `layout`) and geometry
//! (`lattice`), colour and spin algebra (`su3`, `gamma`).

pub mod alloc;
pub mod api;
pub mod backend;
pub mod clover;
pub mod comm;
pub mod deviation;
pub mod dirac;
pub mod dispatch;
pub mod domains;
pub mod error;
pub mod fat_links;
pub mod ffi;
pub mod field;
pub mod format;
pub mod gamma;
pub mod gauge_fixing;
pub mod gauge_gen;
pub mod gauge_io;
pub mod lattice;
pub mod layout;
pub mod long_links;
pub mod precision;
pub mod random;
pub mod reconstruct;
pub mod smearing;
pub mod solver;
pub mod spin_taste;
pub mod su3;

pub use api::{Context, Gauge};
pub use error::{Error, Result};
