//! BiCGstab-M: multi-shift BiCGstab (Jegerlehner, hep-lat/9612014; seed
//! alexandru2011 §6.1) for `(A + σ_i) x_i = b` with a general `A`, here
//! the Wilson matrix of the most singular mass and `σ_i = m_i − m_s`
//! (masses differ by a multiple of the identity in the mass
//! normalization).
//!
//! BiCGstab's residual is `r_n = Q_n(A) R_n(A) b`: `R_n` the BiCG residual
//! polynomial, `Q_n(t) = Π_j (1 − ω_j t)`. For a shifted system both factors
//! have shifted counterparts with the same Krylov vectors:
//! ```text
//! z_{n+1} = (1 + α_n β_{n−1}/α_{n−1} + α_n σ) z_n − (α_n β_{n−1}/α_{n−1}) z_{n−1}   (z = R_n(−σ))
//! α^σ_n = α_n z_n / z_{n+1},   β^σ_n = β_n (z_n / z_{n+1})²
//! ω^σ_n = ω_n / (1 + ω_n σ),   Λ_{n+1} = Λ_n (1 + ω_n σ)
//! r^σ_n = r_n / (Λ_n z_n),     s^σ_n = s_n / (Λ_n z_{n+1})
//! x^σ += α^σ_n p^σ_n + ω^σ_n s^σ_n
//! p^σ_{n+1} = r^σ_{n+1} + β^σ_n (p^σ_n − ω^σ_n A^σ p^σ_n),  A^σ p^σ_n = (r^σ_n − s^σ_n)/α^σ_n
//! ```
//! and `r_n = s_n + α_n v_n` makes the last line a combination of `p^σ`,
//! `v`, `s` and `r_{n+1}`. Each shift keeps `x^σ` and its direction,
//! stored as `P^σ = p^σ / g` with `g = 1/(Λ z)` so that the update has the
//! backend's `z = x + a y + b z` form: 2n extra vectors, four BLAS passes
//! per shift and iteration, no operator application. A shift whose
//! residual `|g| ‖r‖` meets its tolerance is no longer updated; the solve
//! stops when the unshifted (most singular) system converges. A system
//! whose true residual then misses its tolerance (rounding) is finished by
//! single-mass BiCGstab from its solution.

use num_complex::Complex64 as C64;

use super::multishift_cg::{begin, MultiShiftStats};
use super::{bicgstab, report, Monitor, SolverParams};
use crate::backend::Backend;
use crate::dirac::{LinearOperator, Shifted};
use crate::error::{Error, Result};

/// Below this relative size an inner product counts as zero.
const BREAKDOWN: f64 = 1e-14;

/// The recurrence coefficients of one shifted system.
#[derive(Clone, Copy)]
struct ShiftState {
    sigma: f64,
    z: C64,
    z_prev: C64,
    lambda: C64,
    /// The factor of a restart: after one from the residual `r`, this
    /// system's residual is `scale · r` and its corrections scale with it.
    scale: C64,
    active: bool,
}

/// Solves `(A + shifts[i]) xs[i] = b` for every `i`, each to `tols[i]`;
/// the `xs` are overwritten.
#[allow(clippy::too_many_arguments)]
pub fn solve<B: Backend, A: LinearOperator<B>>(
    backend: &B,
    a: &mut A,
    shifts: &[f64],
    xs: &mut [B::Spinor],
    b: &B::Spinor,
    tols: &[f64],
    maxiter: usize,
    progress_every: usize,
    monitor: &dyn Monitor,
) -> Result<MultiShiftStats> {
    let n = shifts.len();
    let (mut stats, b2) = begin(backend, "BiCGstab-M", shifts, xs, b, tols.len())?;
    if b2 == 0.0 {
        return Ok(stats);
    }
    let base = stats.base;
    let sigma0 = shifts[base];
    let (lat, subset, prec) = (a.lattice().clone(), a.subset(), a.precision());
    let fermion = a.fermion();
    let alloc = || backend.alloc_field(&lat, subset, prec, fermion);
    let stop: Vec<f64> = tols.iter().map(|t| t * t * b2).collect();

    let (mut r, mut r_hat, mut p, mut v, mut s, mut t) =
        (alloc()?, alloc()?, alloc()?, alloc()?, alloc()?, alloc()?);
    backend.copy(&mut r, b)?;
    backend.copy(&mut r_hat, b)?;
    backend.copy(&mut p, b)?;
    let one = C64::new(1.0, 0.0);
    let mut state: Vec<ShiftState> = shifts
        .iter()
        .enumerate()
        .map(|(i, &sh)| ShiftState {
            sigma: sh - sigma0,
            z: one,
            z_prev: one,
            lambda: one,
            scale: one,
            active: i != base,
        })
        .collect();
    let mut dirs: Vec<Option<B::Spinor>> = Vec::with_capacity(n);
    for st in &state {
        dirs.push(if st.active {
            let mut d = alloc()?;
            backend.copy(&mut d, b)?;
            Some(d)
        } else {
            None
        });
    }

    let mut a0 = Shifted::new(backend, &mut *a, sigma0);
    let mut rho = C64::new(b2, 0.0);
    let (mut alpha_prev, mut beta_prev) = (one, C64::new(0.0, 0.0));
    let mut rr = b2;
    let progress = SolverParams {
        tol: tols[base],
        maxiter,
        progress_every,
        confirm: true,
    };
    let mut k = 0;
    let mut fresh = true;
    let mut r_hat2 = b2;
    while k < maxiter && rr > stop[base] {
        a0.apply(&mut v, &p)?;
        stats.matvecs += 1;
        let r_hat_v = backend.cdot(&r_hat, &v)?;
        let v2 = backend.norm2(&v)?;
        if r_hat_v.norm() <= BREAKDOWN * (r_hat2 * v2).sqrt() {
            if fresh {
                return Err(breakdown("(r̂, A p)", r_hat_v, k));
            }
            restart(backend, &r, &mut r_hat, &mut p, &mut dirs, &mut state)?;
            (rho, alpha_prev, beta_prev, r_hat2, fresh) =
                (C64::new(rr, 0.0), one, C64::new(0.0, 0.0), rr, true);
            stats.restarts += 1;
            continue;
        }
        let alpha = rho / r_hat_v;
        // s = r − α v
        backend.copy(&mut s, &r)?;
        let ss = backend.caxpy_norm2(-alpha, &v, &mut s)?;
        // The shifted BiCG coefficients, z_{n+1} and α^σ.
        let c = alpha * beta_prev / alpha_prev;
        let mut alpha_s = vec![C64::new(0.0, 0.0); n];
        let mut z_new = vec![one; n];
        for (i, st) in state.iter().enumerate() {
            if st.active {
                z_new[i] = (one + c + alpha * st.sigma) * st.z - c * st.z_prev;
                alpha_s[i] = alpha * st.z / z_new[i];
            }
        }
        k += 1;
        if ss <= stop[base] {
            // s already solves the base system: x += α p, and the shifts
            // their α^σ p^σ, then stop (the true residuals are checked
            // below).
            backend.caxpy(alpha, &p, &mut xs[base])?;
            for (i, st) in state.iter().enumerate() {
                if st.active {
                    let g = st.scale / (st.lambda * st.z);
                    let d = dirs[i].as_ref().ok_or_else(missing)?;
                    backend.caxpy(alpha_s[i] * g, d, &mut xs[i])?;
                }
            }
            rr = ss;
            report(monitor, &progress, "BiCGstab-M", k, (rr / b2).sqrt());
            break;
        }
        a0.apply(&mut t, &s)?;
        stats.matvecs += 1;
        let (ts, tt) = backend.cdot_norm2(&t, &s)?;
        if tt.is_nan() || tt <= 0.0 || ts.norm() == 0.0 {
            return Err(breakdown("ω = (t, s)/(t, t)", ts, k));
        }
        let omega = ts / tt;
        backend.caxpy(alpha, &p, &mut xs[base])?;
        backend.caxpy(omega, &s, &mut xs[base])?;
        // r = s − ω t
        backend.cxpaypbz(&s, -omega, &t, C64::new(0.0, 0.0), &mut r)?;
        rr = backend.norm2(&r)?;
        let rho_new = backend.cdot(&r_hat, &r)?;
        let beta = (alpha / omega) * (rho_new / rho);
        for (i, st) in state.iter_mut().enumerate() {
            if !st.active {
                continue;
            }
            let zn = z_new[i];
            let g = one / (st.lambda * st.z);
            let cs = one / (st.lambda * zn);
            let omega_s = omega / (one + omega * st.sigma);
            let lambda_new = st.lambda * (one + omega * st.sigma);
            let g_new = one / (lambda_new * zn);
            let d = dirs[i].as_mut().ok_or_else(missing)?;
            // x^σ += α^σ p^σ + ω^σ s^σ
            backend.caxpy(st.scale * alpha_s[i] * g, d, &mut xs[i])?;
            backend.caxpy(st.scale * omega_s * cs, &s, &mut xs[i])?;
            // P ← r + B (P − w α v − w (1 − z/z_new) s), B = β^σ g/g_new,
            // w = ω^σ/α^σ.
            let beta_s = beta * (st.z / zn) * (st.z / zn);
            let bb = beta_s * g / g_new;
            let w = omega_s / alpha_s[i];
            backend.caxpy(-w * alpha, &v, d)?;
            backend.cxpaypbz(&r, -bb * w * (one - st.z / zn), &s, bb, d)?;
            (st.z_prev, st.z, st.lambda) = (st.z, zn, lambda_new);
            stats.shifts[i].multishift_iterations += 1;
            if (st.scale * g_new).norm_sqr() * rr <= stop[i] {
                st.active = false;
            }
        }
        stats.shifts[base].multishift_iterations += 1;
        report(monitor, &progress, "BiCGstab-M", k, (rr / b2).sqrt());
        if rho_new.norm() <= BREAKDOWN * (r_hat2 * rr).sqrt() && rr > stop[base] {
            if fresh {
                return Err(breakdown("(r̂, r)", rho_new, k));
            }
            // The shadow residual became orthogonal: start a new Krylov
            // space from the current residuals, which are still collinear.
            restart(backend, &r, &mut r_hat, &mut p, &mut dirs, &mut state)?;
            (rho, alpha_prev, beta_prev, r_hat2, fresh) =
                (C64::new(rr, 0.0), one, C64::new(0.0, 0.0), rr, true);
            stats.restarts += 1;
            continue;
        }
        fresh = false;
        // p = r + β (p − ω v)
        backend.cxpaypbz(&r, -beta * omega, &v, beta, &mut p)?;
        (alpha_prev, beta_prev, rho) = (alpha, beta, rho_new);
    }
    // The shifted directions are not needed by the corrections.
    drop(dirs);
    stats.multishift_iterations = k;

    // Rounding: a system whose true residual misses its tolerance goes on
    // alone from its solution.
    let mut used = k;
    for i in 0..n {
        let mut ai = Shifted::new(backend, &mut *a, shifts[i]);
        let sp = SolverParams {
            tol: tols[i],
            maxiter: maxiter.saturating_sub(used).max(1),
            progress_every,
            confirm: true,
        };
        let st = bicgstab::solve(backend, &mut ai, &mut xs[i], b, &sp, monitor)?;
        used += st.iterations;
        stats.matvecs += st.matvecs;
        stats.shifts[i].refinement_iterations = st.iterations;
        stats.shifts[i].converged = st.converged;
    }
    Ok(stats)
}

/// A new start from the current residual `r`: `r̂ = p = r`; each active
/// shift's residual is `g r` (`g = 1/(Λ z)`), so its recurrences restart
/// from `r` with `g` folded into its scale, and its direction is `r` again.
fn restart<B: Backend>(
    backend: &B,
    r: &B::Spinor,
    r_hat: &mut B::Spinor,
    p: &mut B::Spinor,
    dirs: &mut [Option<B::Spinor>],
    state: &mut [ShiftState],
) -> Result<()> {
    let one = C64::new(1.0, 0.0);
    backend.copy(r_hat, r)?;
    backend.copy(p, r)?;
    for (st, d) in state.iter_mut().zip(dirs.iter_mut()) {
        if let (true, Some(d)) = (st.active, d) {
            st.scale /= st.lambda * st.z;
            (st.z, st.z_prev, st.lambda) = (one, one, one);
            backend.copy(d, r)?;
        }
    }
    Ok(())
}

fn breakdown(what: &str, value: C64, k: usize) -> Error {
    Error::Breakdown(format!(
        "BiCGstab-M: {what} = {value} vanished at iteration {k}"
    ))
}

fn missing() -> Error {
    Error::Internal("BiCGstab-M: a shifted direction is missing".into())
}
