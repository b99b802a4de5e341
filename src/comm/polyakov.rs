//! The Polyakov loop in the time direction of a lattice that may be cut
//! over ranks: `(1/V₃) Σ_x⃗ tr Π_t U_t(x⃗, t)`, the product in t order.
//!
//! Each rank multiplies the T links of its own time range at each of its
//! spatial sites. Where time is cut, the partial products of the ranks
//! along t travel round their ring (every rank passing on what it last
//! received, `G_t − 1` steps), so each rank holds every partial of its
//! lines and multiplies them in t order; the ranks of the first time
//! block add the traces, and one global sum gives every rank the result.

use num_complex::Complex64;
use rayon::prelude::*;

use super::{Message, Ranks};
use crate::error::Result;
use crate::field::GaugeField;
use crate::su3::Su3;

/// The products of this rank's T links along t at each of its spatial
/// sites (x fastest).
fn partial_lines(field: &GaugeField) -> Vec<Su3> {
    let d = field.lattice().dims();
    (0..d[0] * d[1] * d[2])
        .into_par_iter()
        .map(|s| {
            let x = [s % d[0], (s / d[0]) % d[1], s / (d[0] * d[1])];
            (1..d[3]).fold(*field.link_at([x[0], x[1], x[2], 0], 3), |p, t| {
                p.mul(field.link_at([x[0], x[1], x[2], t], 3))
            })
        })
        .collect()
}

fn to_bytes(lines: &[Su3]) -> Vec<u8> {
    let mut out = Vec::with_capacity(lines.len() * 18 * 8);
    for z in lines.iter().flat_map(|u| u.0.iter().flatten()) {
        out.extend_from_slice(&z.re.to_le_bytes());
        out.extend_from_slice(&z.im.to_le_bytes());
    }
    out
}

fn from_bytes(bytes: &[u8]) -> Vec<Su3> {
    let reals: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect();
    reals
        .chunks_exact(18)
        .map(|r| {
            let mut u = Su3::zero();
            for (k, z) in u.0.iter_mut().flatten().enumerate() {
                *z = Complex64::new(r[2 * k], r[2 * k + 1]);
            }
            u
        })
        .collect()
}

/// The sum of the traces of the lines, in a fixed order.
fn trace_sum(lines: &[Su3]) -> Complex64 {
    lines.iter().map(Su3::trace).sum()
}

/// The Polyakov loop of the whole lattice from this rank's links (`None`:
/// one process). Collective over `ranks`.
pub fn polyakov_loop(ranks: Option<&Ranks>, field: &GaugeField) -> Result<Complex64> {
    let own = partial_lines(field);
    let Some(ranks) = ranks else {
        return Ok(trace_sum(&own) / own.len() as f64);
    };
    let grid = &ranks.grid;
    let gt = grid.grid()[3];
    let at = grid.coords()[3];
    let sum = if gt == 1 {
        trace_sum(&own)
    } else {
        // parts[k]: the partial product of the rank at time block k.
        let mut parts: Vec<Option<Vec<Su3>>> = vec![None; gt];
        let mut passing = to_bytes(&own);
        parts[at] = Some(own);
        let (ahead, behind) = (grid.neighbour(3, true), grid.neighbour(3, false));
        for step in 1..gt {
            let mut received = vec![0u8; passing.len()];
            ranks.comm.exchange(&mut [Message {
                to: ahead,
                send: &passing,
                from: behind,
                recv: &mut received,
                tag: 200,
            }])?;
            parts[(at + gt - step) % gt] = Some(from_bytes(&received));
            passing = received;
        }
        if at == 0 {
            let mut parts = parts.into_iter().map(|p| p.expect("every time block"));
            let first = parts.next().expect("time block 0");
            let lines = parts.fold(first, |acc, p| {
                acc.iter().zip(&p).map(|(a, b)| a.mul(b)).collect()
            });
            trace_sum(&lines)
        } else {
            Complex64::new(0.0, 0.0)
        }
    };
    let mut v = [sum.re, sum.im];
    ranks.sum(&mut v)?;
    let d = field.lattice().dims();
    let g = grid.grid();
    let v3 = (d[0] * g[0] * d[1] * g[1] * d[2] * g[2]) as f64;
    Ok(Complex64::new(v[0], v[1]) / v3)
}
