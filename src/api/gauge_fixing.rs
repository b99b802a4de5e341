//! Gauge fixing of a caller's links (`gauge_fixing`): on the host, on this
//! context's threads and ranks; the quality reported at the caller's
//! interval at `Verbosity::Summarize`.

use super::context::Context;
use super::params::Verbosity;
use crate::error::Result;
use crate::field::GaugeField;
use crate::gauge_fixing::ovr::{check_su3, fix_ovr, Outcome};
use crate::gauge_fixing::OvrParams;

impl Context {
    /// Fixes the gauge of this rank's `links` in place by over-relaxation
    /// (collective; `links` unchanged where it fails).
    pub fn fix_gauge_ovr(&self, links: &mut GaugeField, params: &OvrParams) -> Result<Outcome> {
        let inner = &self.inner;
        // Links a single-precision file rounded are SU(3) to ~1e-6.
        inner.agree(params.check().and_then(|()| check_su3(links, 1e-4)))?;
        let start = std::time::Instant::now();
        let mut work = links.clone();
        let outcome = inner.install(|| {
            let mut report = |step: usize, q: &crate::gauge_fixing::Quality| {
                inner.log(
                    Verbosity::Summarize,
                    &format!(
                        "gauge fixing (over-relaxation) step {step}: functional {:.16e}, theta \
                         {:.16e}",
                        q.functional, q.theta
                    ),
                );
            };
            fix_ovr(inner.ranks(), &mut work, params, &mut report)
        });
        let outcome = inner.agree(outcome)?;
        *links = work;
        inner.log(
            Verbosity::Summarize,
            &format!(
                "gauge fixing (over-relaxation, {} directions): {} steps, functional {:.16e}, \
                 theta {:.3e}{} in {:.3} s",
                params.dirs,
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
