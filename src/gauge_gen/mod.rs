//! Quenched SU(3) gauge fields: a Markov chain for the Wilson gauge action
//! `S = β Σ_p (1 − Re tr U_p / 3)` on a periodic lattice, so that solvers and
//! benchmarks run on realistic, thermalised fields.
//!
//! One sweep ([`Generator::sweep`]) is one Cabibbo–Marinari pseudo-heatbath
//! sweep (Cabibbo and Marinari, Phys. Lett. B 119 (1982) 387; SU(2) heatbath
//! of Kennedy and Pendleton, Phys. Lett. B 156 (1985) 393) followed by
//! `overrelax` microcanonical overrelaxation sweeps (Creutz, Phys. Rev. D 36
//! (1987) 515), then a projection of every link back onto SU(3) so that
//! rounding does not accumulate. Four overrelaxation sweeps per heatbath is
//! the usual choice for quenched SU(3) at β ≈ 6.
//!
//! Update order: direction by direction, parity by parity; the links of one
//! direction on one parity do not enter each other's staples
//! (`wilson_action`), so they are updated in parallel (rayon). Random numbers
//! come from per-link ChaCha8 streams named by (seed, sweep, direction,
//! parity, site), so a run is reproducible whatever the thread count.
//!
//! Conventions: links and sites as in `field::GaugeField` (docs/conventions.md);
//! the plaquette is `Re tr U_p / 3`, 1 for the free field; published values
//! at β = 6.0 are ⟨P⟩ ≈ 0.59368.
//!
//! - `su2`: quaternions, the SU(2) subgroups, the SU(2) heatbath.
//! - `wilson_action`: staples, plaquette, action.
//! - `heatbath`, `overrelax`: the link updates and their sweeps.
//! - `stats`: binned jackknife errors of plaquette histories.
//! - `io`: latsol's first configuration files (MILC order, little-endian f64, JSON
//!   sidecar), still read; `crate::gauge_io` writes NERSC, ILDG and MILC files.

mod generator;
pub mod heatbath;
pub mod io;
pub mod overrelax;
pub mod stats;
pub mod su2;
mod sweep;
pub mod wilson_action;

pub use generator::{reunitarise, Generator, Start, DEFAULT_OVERRELAX};
pub use heatbath::{heatbath_link, heatbath_sweep, Streams};
pub use overrelax::{overrelax_link, overrelax_sweep};
pub use wilson_action::{action, plaquette, staple};
