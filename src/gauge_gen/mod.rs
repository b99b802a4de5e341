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

pub mod heatbath;
pub mod io;
pub mod overrelax;
pub mod stats;
pub mod su2;
pub mod wilson_action;

use std::sync::Arc;

use rayon::prelude::*;

use crate::error::Result;
use crate::field::GaugeField;
use crate::invalid;
use crate::lattice::{Lattice, Parity};
use crate::random;
use crate::su3::Su3;

pub use heatbath::{heatbath_link, heatbath_sweep, Streams};
pub use overrelax::{overrelax_link, overrelax_sweep};
pub use wilson_action::{action, plaquette, staple};

/// Overrelaxation sweeps per heatbath sweep unless told otherwise.
pub const DEFAULT_OVERRELAX: usize = 4;

/// Smallest number of links one rayon task updates: below this, the task
/// overhead shows against a link update (~2 µs).
const MIN_LINKS_PER_TASK: usize = 16;

/// Replaces every link `U_μ(x)` of parity `p` by `update(cb, U, A)`, `A` its
/// staple sum, all of them in parallel. Correct because none of these links
/// enters another one's staple; `scratch` holds the new links until all
/// staples have been read.
pub(crate) fn update_links<F>(
    field: &mut GaugeField,
    p: Parity,
    mu: usize,
    scratch: &mut Vec<Su3>,
    update: F,
) where
    F: Fn(usize, &Su3, &Su3) -> Su3 + Sync,
{
    let vh = field.lattice().half_volume();
    scratch.resize(vh, Su3::identity());
    let old = &*field;
    scratch
        .par_iter_mut()
        .with_min_len(MIN_LINKS_PER_TASK)
        .enumerate()
        .for_each(|(cb, new)| {
            let a = staple(old, p, cb, mu);
            *new = update(cb, old.link(p, cb, mu), &a);
        });
    for (cb, u) in scratch.iter().enumerate() {
        *field.link_mut(p, cb, mu) = *u;
    }
}

/// Projects every link onto SU(3) (`Su3::project_su3`).
pub fn reunitarise(field: &mut GaugeField) {
    field
        .links_mut()
        .par_iter_mut()
        .with_min_len(4 * MIN_LINKS_PER_TASK)
        .for_each(|u| *u = u.project_su3());
}

/// How a run starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Start {
    /// Unit links (ordered).
    Cold,
    /// Independent random SU(3) links (`random::hot_gauge` with the run's seed).
    Hot,
}

/// A Markov chain of quenched SU(3) fields at fixed β.
#[derive(Debug, Clone)]
pub struct Generator {
    field: GaugeField,
    beta: f64,
    seed: u64,
    overrelax: usize,
    streams: Streams,
    /// Heatbath sweeps done since the start of the run: names the random
    /// streams of the next one.
    sweeps: u64,
    scratch: Vec<Su3>,
}

impl Generator {
    /// A new run from a hot or cold start.
    pub fn new(lattice: Arc<Lattice>, beta: f64, seed: u64, start: Start) -> Result<Generator> {
        let field = match start {
            Start::Cold => GaugeField::unit(lattice),
            Start::Hot => random::hot_gauge(&lattice, seed),
        };
        Generator::resume(field, beta, seed, 0)
    }

    /// Continues a run from `field` after `sweeps` sweeps: with the same seed
    /// and count, the chain goes on exactly as if it had never stopped.
    pub fn resume(field: GaugeField, beta: f64, seed: u64, sweeps: u64) -> Result<Generator> {
        if !(beta.is_finite() && beta >= 0.0) {
            return invalid!("beta = {beta}: must be finite and non-negative");
        }
        Ok(Generator {
            field,
            beta,
            seed,
            overrelax: DEFAULT_OVERRELAX,
            streams: Streams::new(seed),
            sweeps,
            scratch: Vec::new(),
        })
    }

    /// Sets the number of overrelaxation sweeps per heatbath sweep.
    pub fn with_overrelax(mut self, n: usize) -> Generator {
        self.overrelax = n;
        self
    }

    pub fn field(&self) -> &GaugeField {
        &self.field
    }
    pub fn into_field(self) -> GaugeField {
        self.field
    }
    pub fn beta(&self) -> f64 {
        self.beta
    }
    pub fn seed(&self) -> u64 {
        self.seed
    }
    pub fn overrelax(&self) -> usize {
        self.overrelax
    }
    /// Sweeps done (heatbath sweeps, each with its overrelaxation sweeps).
    pub fn sweeps(&self) -> u64 {
        self.sweeps
    }

    /// One heatbath sweep alone.
    pub fn heatbath(&mut self) {
        heatbath_sweep(
            &mut self.field,
            self.beta,
            &self.streams,
            self.sweeps,
            &mut self.scratch,
        );
        self.sweeps += 1;
    }

    /// One overrelaxation sweep alone.
    pub fn overrelax_once(&mut self) {
        overrelax_sweep(&mut self.field, &mut self.scratch);
    }

    /// One full sweep: a heatbath sweep, `overrelax` overrelaxation sweeps,
    /// and the projection of every link onto SU(3).
    pub fn sweep(&mut self) {
        self.heatbath();
        for _ in 0..self.overrelax {
            self.overrelax_once();
        }
        reunitarise(&mut self.field);
    }

    /// [average, spatial, temporal] plaquette of the current field.
    pub fn plaquette(&self) -> [f64; 3] {
        plaquette(&self.field)
    }
}
