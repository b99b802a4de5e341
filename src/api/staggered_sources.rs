//! Several sources of one staggered system in one call
//! (`Context::invert_staggered_sources`, and
//! `invert_staggered_parity_sources` for the even-odd system itself):
//! solved in blocks by block CG (issue 37; `dispatch::staggered_block`), or
//! one after another.

use super::context::Context;
use super::params::{InvertResult, Verbosity};
use super::staggered::{import_colour, named, with_links, StaggeredLinks};
use super::staggered_params::{StaggeredInvertParams, StaggeredSolve};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::field::Fermion;
use crate::lattice::{Parity, Subset};
use crate::layout::{DiracOrder, GammaBasis, HostReals, HostRealsMut};

impl Context {
    /// Solves `M x_k = b_k`, `M = 2m − D`, for every colour-vector source
    /// (full fields, even sites first), `per_block` sources at a time by
    /// block CG on their even-odd (or normal) systems, one pass over the
    /// links a block application (0: all in one block; 1: one after
    /// another, as `invert_staggered` each). Each source's answer meets the
    /// targets of `params` as a single solve's does (a column the block
    /// left short goes on alone). Every solution is written only after the
    /// last solve: on an error every solution array is untouched; with
    /// `use_init_guess` each holds its initial guess. One result a source.
    pub fn invert_staggered_sources(
        &self,
        links: &StaggeredLinks,
        params: &StaggeredInvertParams,
        sources: &[HostReals],
        solutions: Vec<HostRealsMut>,
        per_block: usize,
    ) -> Result<Vec<InvertResult>> {
        self.staggered_sources(links, params, sources, solutions, per_block, None)
    }

    /// `invert_staggered_parity` for several sources (MILC's
    /// `qudaInvertMsrc`): the even-odd systems `(4m² − D_pq D_qp) x_k = b_k`
    /// on the parity p of `params.solve = EvenOdd(p)`, sources and
    /// solutions of that parity's sites, `per_block` at a time by block CG,
    /// as `invert_staggered_sources`.
    pub fn invert_staggered_parity_sources(
        &self,
        links: &StaggeredLinks,
        params: &StaggeredInvertParams,
        sources: &[HostReals],
        solutions: Vec<HostRealsMut>,
        per_block: usize,
    ) -> Result<Vec<InvertResult>> {
        let parity = match params.solve {
            StaggeredSolve::EvenOdd(p) => Ok(p),
            StaggeredSolve::Full => Err(Error::InvalidArgument(
                "solve = Full: invert_staggered_parity_sources solves an even-odd system".into(),
            )),
        };
        let parity = self.inner.agree(parity)?;
        self.staggered_sources(links, params, sources, solutions, per_block, Some(parity))
    }

    /// The sources' solves: of the full system, or of the even-odd system
    /// of `parity`.
    fn staggered_sources(
        &self,
        links: &StaggeredLinks,
        params: &StaggeredInvertParams,
        sources: &[HostReals],
        solutions: Vec<HostRealsMut>,
        per_block: usize,
        parity: Option<Parity>,
    ) -> Result<Vec<InvertResult>> {
        let sub = parity.map_or(Subset::Full, Subset::Single);
        self.inner.install(|| {
            // Agreed over the ranks: a bad argument on one fails all.
            let checked = params.validate().and_then(|()| {
                self.check_links(links)?;
                if per_block != 1 && sources.len() > 1 {
                    params.require_cg("a block of several sources")?;
                }
                if sources.len() != solutions.len() {
                    return Err(Error::InvalidArgument(format!(
                        "{} sources and {} solutions: one solution a source",
                        sources.len(),
                        solutions.len()
                    )));
                }
                Ok(())
            });
            self.inner.agree(checked)?;
            let (hi, lo) = (params.precision, params.precision_sloppy);
            let lat = links.lattice().clone();
            let inner = &self.inner;
            let monitor = |solver: &str, k: usize, res: f64| inner.progress(solver, k, res);
            let block = match per_block {
                0 => sources.len().max(1),
                l => l.min(sources.len().max(1)),
            };
            let (order, basis) = (DiracOrder::Dirac, GammaBasis::Ukqcd);
            let results = with_links!(inner, links, hi, lo, |b, l, ls| {
                // Every rank solves the same blocks (their sums are collective).
                let (most, least) = (b.global_max(block as f64)?, -b.global_max(-(block as f64))?);
                if most != least {
                    return Err(Error::InvalidArgument(format!(
                        "sources per block differs between the ranks ({least} to {most})"
                    )));
                }
                // Each source at a scale of its own (norm near 1; `solve_on`).
                let (mut srcs, mut xs, mut scales) = (Vec::new(), Vec::new(), Vec::new());
                for (k, (src, sol)) in sources.iter().zip(&solutions).enumerate() {
                    let what = format!("sources[{k}]");
                    let (f, scale) = import_colour(b, &lat, sub, hi, *src, &what)?;
                    let mut x = b.alloc_field(&lat, sub, hi, Fermion::Staggered)?;
                    if params.use_init_guess {
                        b.import_spinor(&mut x, HostReals::from(sol), order, basis, Some(scale))
                            .map_err(|e| named(e, &format!("solutions[{k}] (initial guess)")))?;
                    }
                    srcs.push(f);
                    xs.push(x);
                    scales.push(scale);
                }
                let mut results = Vec::with_capacity(srcs.len());
                for (src, x) in srcs.chunks(block).zip(xs.chunks_mut(block)) {
                    use crate::dispatch::{staggered as one, staggered_block as block};
                    let solved = match (src.len(), parity) {
                        (1, None) => one::invert(b, l, ls, params, &src[0], &mut x[0], &monitor)
                            .map(|r| vec![r]),
                        (1, Some(_)) => {
                            one::invert_parity(b, l, ls, params, &src[0], &mut x[0], &monitor)
                                .map(|r| vec![r])
                        }
                        (_, None) => block::invert_block(b, l, ls, params, src, x, &monitor),
                        (_, Some(_)) => block::invert_block_parity(b, l, ls, params, src, x, &monitor),
                    };
                    // Agreed: a failure kept on one rank ends the call on every rank.
                    results.extend(crate::backend::agreed(b, solved)?);
                }
                // Every solution checked before any is written (on every rank).
                let checked = xs.iter().zip(&solutions).zip(&scales).enumerate().try_for_each(
                    |(k, ((x, out), scale))| {
                        b.check_export(x, out, -scale)
                            .map_err(|e| named(e, &format!("solutions[{k}]")))
                    },
                );
                crate::backend::agreed(b, checked)?;
                for (k, ((x, out), scale)) in xs.iter().zip(solutions).zip(&scales).enumerate() {
                    b.export_spinor(x, out, order, basis, -scale)
                        .map_err(|e| named(e, &format!("solutions[{k}]")))?;
                }
                results
            });
            for r in &results {
                inner.log(
                    Verbosity::Summarize,
                    &format!(
                        "staggered {} {:?}: {} iterations, true residual {:.3e} (tol {:.1e}), {:.3} s",
                        if block > 1 { "block CG" } else { "CG" },
                        params.solve,
                        r.iterations,
                        r.true_residual,
                        params.tol,
                        r.seconds
                    ),
                );
            }
            Ok(results)
        })
    }
}
