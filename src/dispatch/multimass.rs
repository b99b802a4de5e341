//! The multi-mass dispatcher: `M(κ_i) x_i = b` for several hopping
//! parameters and one source (seed alexandru2011 §6–7), by BiCGstab-M or by
//! the optimised single-mass sequence, and the `Auto` policy between them.
//!
//! In the mass normalization `M(m) = (4 + m) − D/2`, `m = 1/(2κ) − 4`, the
//! systems differ by multiples of the identity: `M(m_i) = M(m_s) + (m_i −
//! m_s)`, `m_s` the lightest mass (the most singular). Both methods solve
//! `M(m_i) ψ_i = b`; a caller in the kappa normalization, `(1 − κ_i D) x_i =
//! b`, gets `x_i = ψ_i / (2κ_i)` (the relative residual is the same).
//!
//! - BiCGstab-M iterates on `M_κs + 2κ_s (m_i − m_s)` (the kappa-normalized
//!   matrix of the lightest mass, shifted) with the source `2κ_s b`, on the
//!   full lattice in `precision`: the shifted structure excludes even-odd
//!   preconditioning, and mixed precision would break the shifted
//!   residuals' collinearity (clark2022 §3.2).
//! - The sequence (alexandru2011 §6.2) solves the masses one at a time,
//!   heaviest first, each with the caller's solver set-up on the even-odd
//!   system (`DirectPc`, mixed precision as `precision_sloppy` says), from
//!   a guess made of the solutions so far: Lagrange extrapolation in `m`
//!   (eq. 17) or the residual minimised over their span (eqs. 18–20).

use std::time::Instant;

use num_complex::Complex64 as C64;

use super::invert_on_device;
use crate::api::multi::{MultiMassPolicy, MultiResult, SequenceGuess, ShiftResult};
use crate::api::params::{InvertParams, MassNormalization, SolveType, SolverType};
use crate::backend::{Backend, SpinorField};
use crate::dirac::wilson::WilsonFull;
use crate::dirac::WilsonFields;
use crate::dirac::{Direct, LinearOperator, Shifted};
use crate::error::{Error, Result};
use crate::lattice::{Lattice, Parity, Subset};
use crate::precision::Precision;
use crate::solver::{bicgstab_m, Monitor};

/// Full fields BiCGstab-M holds besides its 2n shifted ones: the six of
/// BiCGstab (r, r̂, p, v, s, t), the source, the base solution and the
/// residual check.
const BICGSTAB_M_BASE_FIELDS: usize = 9;

/// Full-field equivalents the sequence holds on the backend (the
/// dispatcher's source, solution and residual fields, the even-odd
/// system's and the mixed solver's half fields).
const SEQUENCE_FIELDS: usize = 12;

/// Iterations of the sequence over those of BiCGstab-M, for the same
/// masses (alexandru2011 Table 3: 1404/790 narrow, 987/793 wide).
const SEQUENCE_ITERATION_RATIO: f64 = 1.5;

/// Iterations of CG on the even-odd normal equations over those of
/// BiCGstab, for one mass (docs/performance.md, H100 tables: 989/326 at
/// 24⁴, 956/293 at 32³×64, κ = 0.155): a sequence run with the caller's CG
/// costs that much more per mass.
const CG_OVER_BICGSTAB_ITERATIONS: f64 = 3.0;

/// The mass of a hopping parameter, `m = 1/(2κ) − 4`.
pub fn mass_of(kappa: f64) -> f64 {
    0.5 / kappa - 4.0
}

/// Solves `M(κ_i) x_i = b` for every `kappas[i]` (the source a full field
/// on the backend in `params.precision`), in `params`' normalization;
/// `params.kappa` is not used. Returns the solutions, in the source's
/// format.
#[allow(clippy::too_many_arguments)]
pub fn invert_multimass<B: Backend>(
    backend: &B,
    gauge: &B::Gauge,
    gauge_sloppy: &B::Gauge,
    params: &InvertParams,
    kappas: &[f64],
    tols: &[f64],
    policy: MultiMassPolicy,
    source: B::Spinor,
    monitor: &dyn Monitor,
) -> Result<(MultiResult, Vec<B::Spinor>)> {
    if (source.subset(), source.precision()) != (Subset::Full, params.precision) {
        return Err(Error::Internal(format!(
            "multi-mass source of {:?} in {:?}: a full field in {:?} expected",
            source.subset(),
            source.precision(),
            params.precision
        )));
    }
    super::prepare(
        backend,
        WilsonFields::wilson(gauge),
        WilsonFields::wilson(gauge_sloppy),
        params,
    )?;
    let start = Instant::now();
    let chosen = match policy {
        MultiMassPolicy::Auto => choose(backend, gauge, gauge_sloppy, params, kappas, &source)?,
        p => p,
    };
    let result = match chosen {
        MultiMassPolicy::BiCgStabM | MultiMassPolicy::Auto => {
            by_bicgstab_m(backend, gauge, params, kappas, tols, source, monitor)?
        }
        MultiMassPolicy::Sequence(guess) => by_sequence(
            backend,
            gauge,
            gauge_sloppy,
            params,
            kappas,
            tols,
            guess,
            source,
            monitor,
        )?,
    };
    let (mut result, mut xs) = result;
    // ψ_i → the caller's normalization.
    if params.mass_normalization == MassNormalization::Kappa {
        for (x, k) in xs.iter_mut().zip(kappas) {
            backend.ax(0.5 / k, x)?;
        }
    }
    result.seconds = start.elapsed().as_secs_f64();
    result.policy_used = Some(chosen);
    result.converged = result.shifts.iter().all(|s| s.converged);
    Ok((result, xs))
}

/// BiCGstab-M on the full system in `precision`.
#[allow(clippy::too_many_arguments)]
fn by_bicgstab_m<B: Backend>(
    backend: &B,
    gauge: &B::Gauge,
    params: &InvertParams,
    kappas: &[f64],
    tols: &[f64],
    mut b: B::Spinor,
    monitor: &dyn Monitor,
) -> Result<(MultiResult, Vec<B::Spinor>)> {
    let lat = b.lattice().clone();
    let prec = params.precision;
    let masses: Vec<f64> = kappas.iter().map(|&k| mass_of(k)).collect();
    let ks = kappas.iter().copied().fold(f64::MIN, f64::max);
    let ms = mass_of(ks);
    let shifts: Vec<f64> = masses.iter().map(|m| 2.0 * ks * (m - ms)).collect();
    // Solver time from here: the source's conversion is not in it.
    let start = Instant::now();
    backend.ax(2.0 * ks, &mut b)?;
    let mut a = Direct(WilsonFull::new(backend, gauge, ks, prec));
    let flops = a.flops();
    let mut x = (0..kappas.len())
        .map(|_| backend.alloc_spinor(&lat, Subset::Full, prec))
        .collect::<Result<Vec<_>>>()?;
    let stats = bicgstab_m::solve(
        backend,
        &mut a,
        &shifts,
        &mut x,
        &b,
        tols,
        params.maxiter,
        params.progress_every,
        monitor,
    )?;
    let b2 = backend.norm2(&b)?;
    let mut r = backend.alloc_spinor(&lat, Subset::Full, prec)?;
    let mut out = Vec::with_capacity(kappas.len());
    // Residuals, then the time (as for multi-shift CG and one solve: the
    // solutions' conversion for the caller is not solver time).
    let mut rrs = Vec::with_capacity(x.len());
    for (i, xi) in x.iter().enumerate() {
        let mut ai = Shifted::new(backend, &mut a, shifts[i]);
        ai.apply(&mut r, xi)?;
        rrs.push(backend.xmy_norm2(&b, &mut r)?);
    }
    let seconds = start.elapsed().as_secs_f64();
    for (i, rr) in rrs.into_iter().enumerate() {
        let res = if b2 > 0.0 { (rr / b2).sqrt() } else { 0.0 };
        let st = stats.shifts[i];
        out.push(ShiftResult {
            iterations: st.refinement_iterations,
            multishift_iterations: st.multishift_iterations,
            true_residual: res,
            residual_after_multishift: f64::NAN,
            converged: res <= tols[i],
        });
    }
    let result = MultiResult {
        shifts: out,
        iterations: stats.iterations(),
        multishift_iterations: stats.multishift_iterations,
        seconds,
        multishift_seconds: seconds,
        gflops: if seconds > 0.0 {
            // The whole lattice's: every rank's part counted (as QUDA's).
            flops * (stats.matvecs + kappas.len()) as f64 * backend.ranks() as f64 / seconds * 1e-9
        } else {
            0.0
        },
        converged: false,
        reliable_updates: 0,
        policy_used: None,
    };
    Ok((result, x))
}

/// The single-mass sequence, heaviest mass first. Everything stays on the
/// backend: each solve starts from a guess made of the earlier solutions
/// there, and the solutions are returned there.
#[allow(clippy::too_many_arguments)]
fn by_sequence<B: Backend>(
    backend: &B,
    gauge: &B::Gauge,
    gauge_sloppy: &B::Gauge,
    params: &InvertParams,
    kappas: &[f64],
    tols: &[f64],
    guess: SequenceGuess,
    b: B::Spinor,
    monitor: &dyn Monitor,
) -> Result<(MultiResult, Vec<B::Spinor>)> {
    let lat = b.lattice().clone();
    let prec = params.precision;
    let masses: Vec<f64> = kappas.iter().map(|&k| mass_of(k)).collect();
    let mut order: Vec<usize> = (0..kappas.len()).collect();
    order.sort_by(|&i, &j| masses[j].total_cmp(&masses[i]));
    let mut out = vec![ShiftResult::default(); kappas.len()];
    let mut x = (0..kappas.len())
        .map(|_| backend.alloc_spinor(&lat, Subset::Full, prec))
        .collect::<Result<Vec<_>>>()?;
    let start = Instant::now();
    let (mut iterations, mut reliable, mut gflop) = (0, 0, 0.0);
    let mut done: Vec<usize> = Vec::with_capacity(kappas.len());
    for &i in &order {
        let (solved, rest) = split_solutions(&mut x, i);
        match guess {
            _ if done.is_empty() => backend.zero(rest)?,
            SequenceGuess::Zero => backend.zero(rest)?,
            SequenceGuess::Polynomial => {
                lagrange(backend, &masses, &done, &solved, masses[i], rest)?
            }
            SequenceGuess::SolutionSpace => {
                minimal_residual(backend, &masses, &done, &solved, &b, masses[i], rest)?
            }
        }
        let p = InvertParams {
            kappa: kappas[i],
            mass_normalization: MassNormalization::Mass,
            solve_type: SolveType::DirectPc,
            tol: tols[i],
            maxiter: params.maxiter.saturating_sub(iterations).max(1),
            use_initial_guess: true,
            ..*params
        };
        let (f, fs) = (
            WilsonFields::wilson(gauge),
            WilsonFields::wilson(gauge_sloppy),
        );
        let r = invert_on_device(backend, f, fs, &p, &b, &mut x[i], monitor)?;
        iterations += r.iterations;
        reliable += r.reliable_updates;
        gflop += r.gflops * r.seconds;
        out[i] = ShiftResult {
            iterations: r.iterations,
            multishift_iterations: 0,
            true_residual: r.true_residual,
            residual_after_multishift: f64::NAN,
            converged: r.converged,
        };
        done.push(i);
    }
    // A reduction waits for the device before the clock stops.
    backend.norm2(&x[order[order.len() - 1]])?;
    let seconds = start.elapsed().as_secs_f64();
    let result = MultiResult {
        shifts: out,
        iterations,
        multishift_iterations: 0,
        seconds,
        multishift_seconds: 0.0,
        gflops: if seconds > 0.0 { gflop / seconds } else { 0.0 },
        converged: false,
        reliable_updates: reliable,
        policy_used: None,
    };
    Ok((result, x))
}

/// The solutions other than `i` (by index, `None` at `i`) and solution `i`
/// itself, borrowed apart.
fn split_solutions<S>(x: &mut [S], i: usize) -> (Vec<Option<&S>>, &mut S) {
    let (head, tail) = x.split_at_mut(i);
    let (xi, tail) = tail.split_first_mut().expect("i < x.len()");
    let others = head
        .iter()
        .map(Some)
        .chain(std::iter::once(None))
        .chain(tail.iter().map(Some))
        .collect();
    (others, xi)
}

/// `out = Σ_j ψ_j Π_{i≠j} (m − m_i)/(m_j − m_i)` over the solved masses
/// (alexandru2011 eq. 17).
fn lagrange<B: Backend>(
    backend: &B,
    masses: &[f64],
    done: &[usize],
    solved: &[Option<&B::Spinor>],
    m: f64,
    out: &mut B::Spinor,
) -> Result<()> {
    backend.zero(out)?;
    for &j in done {
        let w: f64 = done
            .iter()
            .filter(|&&i| i != j)
            .map(|&i| (m - masses[i]) / (masses[j] - masses[i]))
            .product();
        backend.axpy(w, solved[j].ok_or_else(unsolved)?, out)?;
    }
    Ok(())
}

/// The combination `Σ c_j ψ_j` of the solved masses' solutions that
/// minimises `‖b − M(m) v‖`, with `M(m) ψ_j ≈ d_j = b + (m − m_j) ψ_j`
/// (alexandru2011 eqs. 18–20): the normal equations `Σ_j (d_i, d_j) c_j =
/// (d_i, b)`. The inner products of the `d_j` are expanded in those of `b`
/// and the `ψ_j` (the shifts `m − m_j` are real), so no `d_j` is formed.
#[allow(clippy::too_many_arguments)]
fn minimal_residual<B: Backend>(
    backend: &B,
    masses: &[f64],
    done: &[usize],
    solved: &[Option<&B::Spinor>],
    b: &B::Spinor,
    m: f64,
    out: &mut B::Spinor,
) -> Result<()> {
    let k = done.len();
    let psi = |j: usize| solved[done[j]].ok_or_else(unsolved);
    let s: Vec<f64> = done.iter().map(|&j| m - masses[j]).collect();
    let bb = C64::new(backend.norm2(b)?, 0.0);
    let pb = (0..k)
        .map(|j| backend.cdot(psi(j)?, b))
        .collect::<Result<Vec<C64>>>()?;
    // (ψ_i, ψ_j): the upper triangle by reductions, the rest by symmetry.
    let mut pp = vec![vec![C64::new(0.0, 0.0); k]; k];
    for (i, j) in (0..k).flat_map(|i| (i..k).map(move |j| (i, j))) {
        let d = backend.cdot(psi(i)?, psi(j)?)?;
        pp[i][j] = d;
        pp[j][i] = d.conj();
    }
    // (d_i, d_j) = (b,b) + s_j (b,ψ_j) + s_i (ψ_i,b) + s_i s_j (ψ_i,ψ_j)
    let mut g = vec![vec![C64::new(0.0, 0.0); k + 1]; k];
    for i in 0..k {
        for j in 0..k {
            g[i][j] = bb + s[j] * pb[j].conj() + s[i] * pb[i] + s[i] * s[j] * pp[i][j];
        }
        g[i][k] = bb + s[i] * pb[i];
    }
    let c = solve_dense(g);
    backend.zero(out)?;
    for (j, cj) in c.iter().enumerate() {
        backend.caxpy(*cj, psi(j)?, out)?;
    }
    Ok(())
}

fn unsolved() -> Error {
    Error::Internal("single-mass sequence: a guess refers to an unsolved mass".into())
}

/// Gaussian elimination with partial pivoting on the augmented `k × (k+1)`
/// system. A pivot that vanishes against the matrix's scale (solutions
/// nearly parallel) gets coefficient 0: the minimum is then reached in the
/// span of the other solutions.
fn solve_dense(mut g: Vec<Vec<C64>>) -> Vec<C64> {
    let k = g.len();
    let scale = (0..k).map(|i| g[i][i].norm()).fold(0.0, f64::max);
    let mut skip = vec![false; k];
    for col in 0..k {
        let piv = (col..k)
            .max_by(|&a, &b| g[a][col].norm().total_cmp(&g[b][col].norm()))
            .unwrap_or(col);
        g.swap(col, piv);
        if g[col][col].norm() <= f64::EPSILON * scale * k as f64 {
            skip[col] = true;
            continue;
        }
        let (top, rest) = g.split_at_mut(col + 1);
        let pivot_row = &top[col];
        for row in rest.iter_mut() {
            let f = row[col] / pivot_row[col];
            for (x, v) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= f * v;
            }
        }
    }
    let mut c = vec![C64::new(0.0, 0.0); k];
    for row in (0..k).rev() {
        if skip[row] {
            continue;
        }
        let s: C64 = (row + 1..k).map(|j| g[row][j] * c[j]).sum();
        c[row] = (g[row][k] - s) / g[row][row];
    }
    c
}

/// The `Auto` policy: BiCGstab-M only if its fields fit and its expected
/// cost is lower.
///
/// Memory: BiCGstab-M holds 2n + 1 full fields more than BiCGstab (n the
/// shifts, alexandru2011 §6), in `precision`; when the backend reports
/// less free memory than that, the sequence is the only choice.
///
/// Cost: per iteration, measured on this backend: BiCGstab-M's is two
/// full-lattice applications in `precision`, eight BLAS passes of the base
/// system and four per active shift (half the shifts on average: the
/// heavier converge early); the sequence's is two even-odd applications in
/// `precision_sloppy` and eight half-lattice BLAS passes. The iteration
/// counts are taken from alexandru2011 Table 3: the sequence (even-odd,
/// extrapolated guesses) needed 1.24× (wide set) to 1.78× (narrow set) the
/// iterations of BiCGstab-M, 1.5× on average; 3× more when the caller's
/// solver, which the sequence uses, is CG.
fn choose<B: Backend>(
    backend: &B,
    gauge: &B::Gauge,
    gauge_sloppy: &B::Gauge,
    params: &InvertParams,
    kappas: &[f64],
    source: &B::Spinor,
) -> Result<MultiMassPolicy> {
    let sequence = MultiMassPolicy::Sequence(SequenceGuess::Polynomial);
    let n = kappas.len();
    let lat = source.lattice().clone();
    let field_bytes = |p: Precision, sites: usize| sites * 24 * p.bytes_per_real() + sites * 4;
    let full = field_bytes(params.precision, lat.volume());
    // Both counts include the source, already on the backend.
    let need_m = (2 * (n - 1) + BICGSTAB_M_BASE_FIELDS - 1) * full;
    // The sequence keeps every solution on the backend.
    let need_seq = (SEQUENCE_FIELDS + n - 1) * full;
    // On many ranks the choice is every rank's: the least free memory
    // and the slowest times decide, so that all run the same solver.
    let free = backend
        .memory_available()
        .map_or(f64::INFINITY, |f| f as f64);
    let free = -backend.global_max(-free)?;
    if free.is_finite() {
        let free = free as usize;
        if need_m > free {
            if need_seq > free {
                return Err(Error::OutOfMemory(format!(
                    "multi-mass: {need_seq} bytes needed by the single-mass sequence, {free} free"
                )));
            }
            return Ok(sequence);
        }
    }
    if n == 1 {
        return Ok(sequence);
    }
    let ks = kappas.iter().copied().fold(f64::MIN, f64::max);
    let (t_full, t_blas_full) = time_ops(backend, gauge, params.precision, ks, Subset::Full, &lat)?;
    let (t_eo, t_blas_eo) = time_ops(
        backend,
        gauge_sloppy,
        params.precision_sloppy,
        ks,
        Subset::Single(Parity::Even),
        &lat,
    )?;
    let [t_full, t_blas_full, t_eo, t_blas_eo] =
        [t_full, t_blas_full, t_eo, t_blas_eo].map(|t| backend.global_max(t));
    let (t_full, t_blas_full, t_eo, t_blas_eo) = (t_full?, t_blas_full?, t_eo?, t_blas_eo?);
    let cost_m = 2.0 * t_full + (8.0 + 4.0 * (n - 1) as f64 / 2.0) * t_blas_full;
    let solver_ratio = match params.solver {
        SolverType::Cg => CG_OVER_BICGSTAB_ITERATIONS,
        SolverType::BiCgStab => 1.0,
        // One operator application an iteration where BiCGstab makes two,
        // and about twice its iterations.
        SolverType::Gcr => 1.0,
        // Two applications an iteration, as BiCGstab, in a few fewer.
        SolverType::BiCgStabL => 1.0,
    };
    let cost_seq = SEQUENCE_ITERATION_RATIO * solver_ratio * (2.0 * t_eo + 8.0 * t_blas_eo);
    Ok(if cost_m < cost_seq {
        MultiMassPolicy::BiCgStabM
    } else {
        sequence
    })
}

/// Seconds of one application of the Wilson matrix on `subset` (two
/// hopping terms for the even-odd `M̂`, as for the full `M`) and of one
/// complex axpy there, each the best of three.
fn time_ops<B: Backend>(
    backend: &B,
    gauge: &B::Gauge,
    precision: Precision,
    kappa: f64,
    subset: Subset,
    lat: &std::sync::Arc<Lattice>,
) -> Result<(f64, f64)> {
    // Zero fields: a kernel's time does not depend on the numbers it moves,
    // and filling them from the host would cost more than the timing.
    let x = backend.alloc_spinor(lat, subset, precision)?;
    let mut y = backend.alloc_spinor(lat, subset, precision)?;
    let mut op: Box<dyn crate::dirac::DiracOperator<B>> = match subset {
        Subset::Full => Box::new(WilsonFull::new(backend, gauge, kappa, precision)),
        Subset::Single(p) => Box::new(crate::dirac::wilson::WilsonEvenOdd::new(
            backend, gauge, kappa, p, precision,
        )?),
    };
    // Each timing ends with a reduction, which makes an asynchronous
    // backend finish the work; its own time is measured and taken off.
    let (mut t_op, mut t_blas, mut t_norm) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        let t = Instant::now();
        backend.norm2(&y)?;
        t_norm = t_norm.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        op.apply(&mut y, &x, false)?;
        backend.norm2(&y)?;
        t_op = t_op.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        backend.caxpy(C64::new(0.5, 0.1), &x, &mut y)?;
        backend.norm2(&y)?;
        t_blas = t_blas.min(t.elapsed().as_secs_f64());
    }
    Ok(((t_op - t_norm).max(t_norm), (t_blas - t_norm).max(t_norm)))
}
