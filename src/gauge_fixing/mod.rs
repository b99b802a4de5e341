//! Gauge fixing: Landau (`∂_μ A_μ = 0` over all four directions) or
//! Coulomb (over the three spatial ones), by over-relaxation (`ovr`) or
//! Fourier-accelerated steepest descent (`fft`), as QUDA's
//! `computeGaugeFixingOVRQuda` and `computeGaugeFixingFFTQuda` fix them
//! for MILC (learned from QUDA 9521952 lib/gauge_fix_ovr.cu,
//! lib/gauge_fix_fft.cu, lib/milc_interface.cpp; docs/milc-gauge-fixing.md;
//! nothing copied). The links change by a gauge transformation,
//! `U_μ(x) → g(x) U_μ(x) g(x+μ̂)†`, every direction, so every gauge-
//! invariant quantity stays as it was. On many ranks each rank fixes its
//! own sites; the links and transformations a site needs from a
//! neighbour rank come through `comm::extend`.

#[cfg(all(test, feature = "cuda"))]
mod device_emulation;
pub mod fft;
pub mod ovr;
pub mod quality;

use crate::comm::extend::{neighbourhood, Neighbourhood};
use crate::comm::Ranks;
use crate::error::Result;
use crate::field::GaugeField;
use crate::lattice::Parity;
use crate::su3::Su3;

pub use fft::{fix_fft, FftParams};
pub use ovr::{fix_ovr, OvrParams, Trajectory};
pub use quality::{quality, Quality};

/// The links one step behind every site, as `quality` reads them.
pub(crate) struct Behind(Neighbourhood);

impl Behind {
    pub fn link(&self, x: [usize; 4], mu: usize) -> Su3 {
        self.0.link(x, mu, -1)
    }
}

pub(crate) fn neighbour_links(ranks: Option<&Ranks>, links: &GaugeField) -> Result<Behind> {
    Ok(Behind(neighbourhood(ranks, links)?))
}

/// `U_μ(x) → g(x) U_μ(x) g(x+μ̂)†` for every local link; `g` kept in
/// direction 0 of a field (collective on many ranks: g ahead of the last
/// layer comes from the neighbour).
pub fn transform(ranks: Option<&Ranks>, links: &mut GaugeField, g: &GaugeField) -> Result<()> {
    use rayon::prelude::*;
    let ahead = neighbourhood(ranks, g)?;
    let lat = links.lattice().clone();
    let vh = lat.half_volume();
    links
        .links_mut()
        .par_chunks_mut(4)
        .enumerate()
        .for_each(|(i, site)| {
            let x = lat.coords(Parity::from_index(i / vh), i % vh);
            let gx = ahead.first_link(x, 0, 0);
            for (mu, u) in site.iter_mut().enumerate() {
                *u = gx.mul(u).mul(&ahead.first_link(x, mu, 1).adjoint());
            }
        });
    Ok(())
}
