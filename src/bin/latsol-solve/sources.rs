//! `--sources N [--block L]`: many sources in one `invert_sources` call,
//! one after another or in blocks of a block solver (issue 37; seed 002's
//! Table 1 solves the 12 spin-colour components of a point source), with
//! a summary of the whole call.

use std::sync::Arc;

use latsol::api::*;
use latsol::lattice::Lattice;
use latsol::layout::{HostReals, HostRealsMut};
use latsol::random;

/// What the call solves.
pub struct Job {
    pub count: usize,
    /// `InvertParams::sources_per_block` (0: all in one block).
    pub per_block: usize,
    pub memory_saving: bool,
    /// This rank holds the lattice's origin (the point source's site).
    pub origin_here: bool,
    pub repeat: usize,
}

/// Spin-colour components of a Wilson spinor: the point sources.
const COMPONENTS: usize = 12;

/// Solves the job's sources and prints the summary; whether every source
/// converged.
pub fn solve(
    ctx: &Context,
    fields: OperatorFields<'_>,
    params: &InvertParams,
    lat: &Arc<Lattice>,
    job: &Job,
) -> Result<bool, latsol::Error> {
    let n = lat.volume() * 24;
    let mut sources = Vec::with_capacity(job.count);
    for k in 0..job.count {
        let mut b = latsol::alloc::filled(n, 0.0f64, "a source")?;
        if k < COMPONENTS {
            // Component k at the origin, real part (DIRAC order: 24 reals
            // a site, the origin first).
            if job.origin_here {
                b[2 * k] = 1.0;
            }
        } else {
            // Z2 noise on the real parts, the rank's part of the lattice.
            let mut rng = random::rng(5000 + k as u64);
            for v in b.iter_mut().step_by(2) {
                *v = if random::gaussian(&mut rng).re < 0.0 {
                    -1.0
                } else {
                    1.0
                };
            }
        }
        sources.push(b);
    }
    let params = InvertParams {
        sources_per_block: job.per_block,
        block_memory_saving: job.memory_saving,
        ..*params
    };
    let hosts: Vec<HostReals> = sources.iter().map(|b| HostReals::F64(b)).collect();
    let mut converged = true;
    for pass in 0..job.repeat {
        let mut solutions = Vec::with_capacity(job.count);
        for _ in 0..job.count {
            solutions.push(latsol::alloc::filled(n, 0.0f64, "a solution")?);
        }
        let outs: Vec<HostRealsMut> = solutions.iter_mut().map(|x| HostRealsMut::F64(x)).collect();
        let wall = std::time::Instant::now();
        let results = ctx.invert_sources(fields, &params, &hosts, outs, &SystemForm::default())?;
        let wall = wall.elapsed().as_secs_f64();
        converged &= results.iter().all(|r| r.converged);
        if pass + 1 < job.repeat {
            continue;
        }
        let worst = results.iter().map(|r| r.true_residual).fold(0.0, f64::max);
        let iterations: usize = results.iter().map(|r| r.iterations).sum();
        let solver_s: f64 = results.iter().map(|r| r.seconds).sum();
        let block = match job.per_block {
            0 => job.count,
            l => l.min(job.count),
        };
        // Each iteration of BiCGstab (of CG on M†M) applies the iterated
        // operator twice per source, block or not: a block's iteration is
        // counted once for each of its sources. With SAP each also applies
        // M_SAP twice, each worth `SapParams::matvecs` sloppy applications.
        let per_iteration = 2.0 * (1.0 + params.sap.map_or(0.0, |s| s.matvecs()));
        let applications = (per_iteration * iterations as f64).round() as usize;
        let sap = match params.sap {
            Some(s) => format!(
                " | SAP {} cycles, boxes {:?}, SSOR {} x ω {}",
                s.cycles, s.extent, s.ssor_iterations, s.omega
            ),
            None => String::new(),
        };
        println!(
            "sources: backend {} | {} sources as {} x {} | {:?}/{:?} {:?} | operator applications \
             {applications} (iterations {iterations}) | largest true residual {:.3e} | solver \
             {:.3} s | invert call {wall:.3} s | {}{sap}",
            ctx.backend_name(),
            job.count,
            block,
            job.count.div_ceil(block),
            params.precision,
            params.precision_sloppy,
            params.solver,
            worst,
            solver_s,
            if converged {
                "converged"
            } else {
                "NOT converged"
            }
        );
    }
    Ok(converged)
}
