//! Gauge fixing of a caller's links (`gauge_fixing`): over-relaxation on
//! the backend's device where it has one and the lattice is not cut
//! (`Backend::ovr_sweeps`), else on the host, on this context's threads
//! and ranks; the quality reported at the caller's interval at
//! `Verbosity::Summarize`.

use super::context::Context;
use super::params::Verbosity;
use crate::error::Result;
use crate::field::GaugeField;
use crate::gauge_fixing::ovr::{check_su3, run_ovr, Outcome};
use crate::gauge_fixing::{fix_fft, fix_ovr, FftParams, OvrParams, Quality};

/// A method and its parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GaugeFixing {
    /// Over-relaxation (any partition).
    Overrelaxation(OvrParams),
    /// Fourier-accelerated steepest descent (one rank).
    Fourier(FftParams),
}

impl GaugeFixing {
    fn name(&self) -> &'static str {
        match self {
            GaugeFixing::Overrelaxation(_) => "over-relaxation",
            GaugeFixing::Fourier(_) => "Fourier-accelerated",
        }
    }
}

impl Context {
    /// Fixes the gauge of this rank's `links` in place (collective;
    /// `links` unchanged where it fails).
    pub fn fix_gauge(&self, links: &mut GaugeField, method: &GaugeFixing) -> Result<Outcome> {
        let inner = &self.inner;
        let checked = match method {
            GaugeFixing::Overrelaxation(p) => p.check(),
            GaugeFixing::Fourier(p) => p.check(),
        };
        // Links a single-precision file rounded are SU(3) to ~1e-6.
        inner.agree(checked.and_then(|()| check_su3(links, 1e-4)))?;
        let start = std::time::Instant::now();
        let name = method.name();
        let mut work = links.clone();
        let outcome = inner.install(|| {
            let mut report = |step: usize, q: &Quality| {
                inner.log(
                    Verbosity::Summarize,
                    &format!(
                        "gauge fixing ({name}) step {step}: functional {:.16e}, theta {:.16e}",
                        q.functional, q.theta
                    ),
                );
            };
            match method {
                GaugeFixing::Overrelaxation(p) => {
                    // The backend's own steps where it has them (one rank:
                    // a cut lattice's faces are the host's).
                    let cut = inner.ranks().is_some_and(|r| r.partitioned());
                    let device = match cut {
                        true => None,
                        false => inner.ovr_sweeps(&work, p.dirs, p.relax_boost)?,
                    };
                    match device {
                        Some(mut sweeps) => {
                            let volume = work.lattice().volume();
                            let o = run_ovr(sweeps.as_mut(), None, volume, p, &mut report)?;
                            work = sweeps.links()?;
                            Ok(o)
                        }
                        None => fix_ovr(inner.ranks(), &mut work, p, &mut report),
                    }
                }
                GaugeFixing::Fourier(p) => fix_fft(inner.ranks(), &mut work, p, &mut report),
            }
        });
        let outcome = inner.agree(outcome)?;
        *links = work;
        inner.log(
            Verbosity::Summarize,
            &format!(
                "gauge fixing ({name}): {} steps, functional {:.16e}, theta {:.3e}{} in {:.3} s",
                outcome.steps,
                outcome.last.functional,
                outcome.last.theta,
                if outcome.converged {
                    ""
                } else {
                    " (not converged)"
                },
                start.elapsed().as_secs_f64()
            ),
        );
        Ok(outcome)
    }
}
