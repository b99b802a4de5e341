//! What the multi-rank example programs share: random numbers and links
//! that depend on the global site only (so every rank makes its part of
//! the same field), the command line's grid, the host's site order
//! (docs/conventions.md), a difference over all ranks, and the checks
//! every rank keeps and reports together.
#![allow(dead_code)]

pub mod parts;

use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::Communicator;

/// splitmix64 of a seed: the same numbers on every rank for a global site.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub fn uniform(seed: u64, k: u64) -> f64 {
    (mix(seed.wrapping_mul(0x1000_0001).wrapping_add(k)) >> 11) as f64 / (1u64 << 52) as f64 * 2.0
        - 1.0
}

/// A unitary-ish link near 1 (1 + ε H, projected by Gram–Schmidt and a
/// conjugated cross product: exactly SU(3) up to rounding).
pub fn link(seed: u64) -> [f64; 18] {
    let mut m = [[(0.0, 0.0); 3]; 3];
    for (i, row) in m.iter_mut().enumerate() {
        for (j, z) in row.iter_mut().enumerate() {
            let k = (3 * i + j) as u64;
            *z = (
                f64::from(u8::from(i == j)) + 0.4 * uniform(seed, 2 * k),
                0.4 * uniform(seed, 2 * k + 1),
            );
        }
    }
    let mul = |a: (f64, f64), b: (f64, f64)| (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0);
    let norm = |r: &[(f64, f64); 3]| r.iter().map(|z| z.0 * z.0 + z.1 * z.1).sum::<f64>().sqrt();
    let n0 = norm(&m[0]);
    m[0] = m[0].map(|z| (z.0 / n0, z.1 / n0));
    let d = (0..3).fold((0.0, 0.0), |s, k| {
        let p = mul((m[0][k].0, -m[0][k].1), m[1][k]);
        (s.0 + p.0, s.1 + p.1)
    });
    let first = m[0];
    for (v, u) in m[1].iter_mut().zip(first) {
        let p = mul(d, u);
        *v = (v.0 - p.0, v.1 - p.1);
    }
    let n1 = norm(&m[1]);
    m[1] = m[1].map(|z| (z.0 / n1, z.1 / n1));
    for k in 0..3 {
        let (i, j) = ((k + 1) % 3, (k + 2) % 3);
        let (x, y) = (mul(m[0][i], m[1][j]), mul(m[0][j], m[1][i]));
        m[2][k] = (x.0 - y.0, -(x.1 - y.1));
    }
    let mut out = [0.0; 18];
    for (i, row) in m.iter().enumerate() {
        for (j, z) in row.iter().enumerate() {
            out[2 * (3 * i + j)] = z.0;
            out[2 * (3 * i + j) + 1] = z.1;
        }
    }
    out
}

/// Panics with latsol's message unless `status` is success.
pub fn ok(status: latsol::ffi::latsol_status, what: &str) {
    if status != latsol::ffi::LATSOL_SUCCESS {
        // SAFETY: latsol_last_error returns a NUL-terminated string.
        let msg = unsafe { std::ffi::CStr::from_ptr(latsol::ffi::latsol_last_error()) };
        panic!("{what}: {}", msg.to_string_lossy());
    }
}

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
