//! What the multi-rank example programs share: the command line's grid,
//! the host's site order (docs/conventions.md), a difference over all
//! ranks, and the checks every rank keeps and reports together.
#![allow(dead_code)]

use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::Communicator;

/// `--grid X,Y,Z,T`.
pub fn parse_grid(args: &[String]) -> [usize; 4] {
    let at = args
        .iter()
        .position(|a| a == "--grid")
        .expect("--grid X,Y,Z,T");
    let v: Vec<usize> = args[at + 1]
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    v.try_into().expect("four extents")
}

pub fn volume(d: [usize; 4]) -> usize {
    d.iter().product()
}

/// The even-odd index of site `x` on a lattice of `d` (docs/conventions.md).
pub fn eo(d: [usize; 4], x: [usize; 4]) -> usize {
    let lex = x[0] + d[0] * (x[1] + d[1] * (x[2] + d[2] * x[3]));
    (x.iter().sum::<usize>() % 2) * volume(d) / 2 + lex / 2
}

/// Every site of a lattice of `d`, x fastest.
pub fn sites(d: [usize; 4]) -> impl Iterator<Item = [usize; 4]> {
    (0..volume(d)).map(move |mut i| {
        let mut x = [0; 4];
        for mu in 0..4 {
            x[mu] = i % d[mu];
            i /= d[mu];
        }
        x
    })
}

/// `|a - b| / |b|` over every rank.
pub fn rel_diff(world: &impl Communicator, a: &[f64], b: &[f64]) -> f64 {
    let mine = [
        a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>(),
        b.iter().map(|y| y * y).sum::<f64>(),
    ];
    let mut all = [0.0f64; 2];
    world.all_reduce_into(&mine[..], &mut all[..], SystemOperation::sum());
    (all[0] / all[1]).sqrt()
}

/// The failed checks of this rank.
#[derive(Default)]
pub struct Checks {
    failures: Vec<String>,
}

impl Checks {
    pub fn check(&mut self, good: bool, what: String) {
        if !good {
            self.failures.push(what);
        }
    }

    /// Reports every rank's failures; rank 0 says whether all passed;
    /// exits with status 1 on every rank if any failed.
    pub fn finish(&self, world: &impl Communicator, summary: &str) {
        let mut bad = 0i32;
        world.all_reduce_into(
            &i32::from(!self.failures.is_empty()),
            &mut bad,
            SystemOperation::sum(),
        );
        for f in &self.failures {
            eprintln!("rank {}: FAILED {f}", world.rank());
        }
        if world.rank() == 0 {
            let verdict = if bad == 0 {
                "all checks passed"
            } else {
                "FAILED"
            };
            println!("{summary}: {} rank(s): {verdict}", world.size());
        }
        if bad != 0 {
            std::process::exit(1);
        }
    }
}
