//! Parameters and results of the solves with many systems and one source:
//! multi-shift `(A + σ_i) x_i = b` and multi-mass `M(m_i) x_i = b`.

use crate::error::{Error, Result};

/// The most shifts (or masses) of one solve; the C result struct holds this
/// many per-shift entries.
pub const MAX_SHIFTS: usize = 32;

/// What one shift (or mass) of a multi-system solve did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ShiftResult {
    /// Iterations spent on this system alone: its refinement after the
    /// multi-shift phase (multi-shift CG), or its own solve (the single-mass
    /// sequence); 0 for BiCGstab-M unless a final correction was needed.
    pub iterations: usize,
    /// Multi-shift iterations in which this system was updated.
    pub multishift_iterations: usize,
    /// `‖b − A_i x_i‖ / ‖b‖`, recomputed in high precision after the solve.
    pub true_residual: f64,
    /// The true residual after the multi-shift phase (NaN when not measured
    /// or not applicable).
    pub residual_after_multishift: f64,
    pub converged: bool,
}

/// What a multi-shift or multi-mass solve did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MultiResult {
    /// Per system, in the order the caller gave them.
    pub shifts: Vec<ShiftResult>,
    /// All iterations (each of one operator application for CG, two for
    /// BiCGstab).
    pub iterations: usize,
    /// Iterations of the shared multi-shift phase.
    pub multishift_iterations: usize,
    pub seconds: f64,
    /// Of `seconds`, the multi-shift phase (multi-shift CG; 0 otherwise).
    pub multishift_seconds: f64,
    /// Operator flops over time (1320 per site per hopping term, 48 per
    /// site per axpy of the operators; the shifts' BLAS not counted), on
    /// the whole lattice (every rank's sites).
    pub gflops: f64,
    /// Every system met its tolerance.
    pub converged: bool,
    pub reliable_updates: usize,
    /// The solver the multi-mass policy chose (multi-mass solves only).
    pub policy_used: Option<MultiMassPolicy>,
}

/// How `invert_multimass` solves `M(m_i) x_i = b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MultiMassPolicy {
    /// BiCGstab-M when its 2n+1 extra vectors fit and its expected cost is
    /// lower, else the sequence.
    Auto,
    /// Multi-shift BiCGstab on the full system (seed alexandru2011 §6.1).
    BiCgStabM,
    /// One even-odd, mixed-precision solve per mass, heaviest first, each
    /// from a guess made of the previous solutions (seed alexandru2011
    /// §6.2).
    Sequence(SequenceGuess),
}

/// The initial guess of each solve of the single-mass sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SequenceGuess {
    /// Start from zero.
    Zero,
    /// Lagrange extrapolation in the mass of all previous solutions
    /// (alexandru2011 §6.2.1, eq. 17).
    Polynomial,
    /// Minimal residual in the span of the previous solutions
    /// (alexandru2011 §6.2.2, eqs. 18–20).
    SolutionSpace,
}

/// Checks per-system numbers: a count in `1..=MAX_SHIFTS`, finite values,
/// no duplicates; `what` names them in messages.
pub(crate) fn validate_systems(values: &[f64], what: &str) -> Result<()> {
    if values.is_empty() || values.len() > MAX_SHIFTS {
        return Err(Error::InvalidArgument(format!(
            "{} {what}: must be between 1 and {MAX_SHIFTS}",
            values.len()
        )));
    }
    for (i, v) in values.iter().enumerate() {
        if !v.is_finite() {
            return Err(Error::InvalidArgument(format!(
                "{what}[{i}] = {v}: not a finite number"
            )));
        }
        if let Some(j) = values[..i].iter().position(|w| w == v) {
            return Err(Error::InvalidArgument(format!(
                "{what}[{i}] = {v} duplicates {what}[{j}]: each system must be given once"
            )));
        }
    }
    Ok(())
}

/// Checks that there is one solution array per system, each of `sites`
/// sites (`what`: the subset, for the message).
pub(crate) fn check_solution_lengths(
    lengths: impl ExactSizeIterator<Item = usize>,
    systems: usize,
    sites: usize,
    reals: usize,
    what: &str,
) -> Result<()> {
    if lengths.len() != systems {
        return Err(Error::InvalidArgument(format!(
            "{} solution arrays for {systems} systems",
            lengths.len()
        )));
    }
    for (i, len) in lengths.enumerate() {
        if len != sites * reals {
            return Err(Error::InvalidArgument(format!(
                "solutions[{i}] holds {len} reals; {what} needs {sites} sites * {reals} = {}",
                sites * reals
            )));
        }
    }
    Ok(())
}

impl MultiResult {
    /// The largest true residual over the systems.
    pub fn worst_true_residual(&self) -> f64 {
        self.shifts
            .iter()
            .map(|s| s.true_residual)
            .fold(0.0, f64::max)
    }

    /// The end of a summary line: worst residual, time, convergence.
    pub(crate) fn summary_tail(&self) -> String {
        format!(
            "worst true residual {:.3e}, {:.3} s{}",
            self.worst_true_residual(),
            self.seconds,
            if self.converged {
                ""
            } else {
                ", NOT converged"
            }
        )
    }
}

/// Checks per-system tolerances (`None`: all `tol`).
pub(crate) fn tolerances(tols: Option<&[f64]>, n: usize, tol: f64, what: &str) -> Result<Vec<f64>> {
    match tols {
        None => Ok(vec![tol; n]),
        Some(t) => {
            if t.len() != n {
                return Err(Error::InvalidArgument(format!(
                    "{} {what} for {n} systems",
                    t.len()
                )));
            }
            for (i, v) in t.iter().enumerate() {
                if !(v.is_finite() && *v > 0.0 && *v < 1.0) {
                    return Err(Error::InvalidArgument(format!(
                        "{what}[{i}] = {v}: must lie in (0, 1)"
                    )));
                }
            }
            Ok(t.to_vec())
        }
    }
}
