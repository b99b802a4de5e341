//! `Generator`: a Markov chain of quenched gauge fields (heatbath and
//! overrelaxation sweeps of the Wilson gauge action), from a cold or hot start.

use std::sync::Arc;

use rayon::prelude::*;

use crate::error::Result;
use crate::field::GaugeField;
use crate::invalid;
use crate::lattice::Lattice;
use crate::random;
use crate::su3::Su3;

use super::heatbath::{heatbath_sweep, Streams};
use super::overrelax::overrelax_sweep;
use super::sweep::MIN_LINKS_PER_TASK;
use super::wilson_action::plaquette;

/// Overrelaxation sweeps per heatbath sweep unless told otherwise.
pub const DEFAULT_OVERRELAX: usize = 4;

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
