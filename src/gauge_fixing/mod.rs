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

pub mod ovr;
pub mod quality;

use crate::comm::Ranks;
use crate::error::Result;
use crate::field::GaugeField;
use crate::lattice::Parity;
use crate::su3::Su3;

pub use ovr::{fix_ovr, OvrParams};
pub use quality::{quality, Quality};

/// The links of a field reachable one step behind (and ahead of) each
/// local site: the field itself on one rank (periodic), its extension by
/// one layer on many.
pub struct Neighbourhood {
    field: GaugeField,
    offset: [usize; 4],
}

impl Neighbourhood {
    /// Link μ of the site one step from local site `x` along μ
    /// (`step` = −1 behind, 0 the site itself, +1 ahead).
    pub fn link(&self, x: [usize; 4], mu: usize, step: isize) -> Su3 {
        let lat = self.field.lattice();
        let y = [0, 1, 2, 3].map(|k| x[k] + self.offset[k]);
        *self.field.link_at(lat.shift(y, mu, step), mu)
    }

    /// Link 0 of the site one step from `x` along μ (the transformation
    /// fields keep g there).
    pub fn first_link(&self, x: [usize; 4], mu: usize, step: isize) -> Su3 {
        let lat = self.field.lattice();
        let y = [0, 1, 2, 3].map(|k| x[k] + self.offset[k]);
        *self.field.link_at(lat.shift(y, mu, step), 0)
    }
}

/// `field` with one layer of its neighbours' links where the lattice is
/// cut (collective on many ranks).
pub fn neighbourhood(ranks: Option<&Ranks>, field: &GaugeField) -> Result<Neighbourhood> {
    match ranks {
        Some(r) if r.partitioned() => {
            let ext = crate::comm::extend::extend(r, field, 1)?;
            Ok(Neighbourhood {
                field: ext.field,
                offset: ext.offset,
            })
        }
        _ => Ok(Neighbourhood {
            field: field.clone(),
            offset: [0; 4],
        }),
    }
}

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
