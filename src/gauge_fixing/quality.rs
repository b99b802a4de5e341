//! How well a gauge is fixed: the functional and θ (QUDA's
//! `gaugeFixQuality` normalisations: docs/milc-gauge-fixing.md).
//!
//! Over the `dirs` directions fixed (3: Coulomb, the spatial ones; 4:
//! Landau), `F = Σ_x Σ_μ Re tr U_μ(x) / (3 · dirs · V)`, 1 for the unit
//! field and largest at the gauge condition; with
//! `A(x) = Σ_μ [U_μ(x − μ̂) − U_μ(x)]` and `Δ = A − A†` made traceless (no
//! ½), `θ = Σ_x tr(Δ Δ†) / (3 V)`, zero at the condition (`∂_μ A_μ = 0`).

use rayon::prelude::*;

use super::neighbour_links;
use crate::comm::Ranks;
use crate::error::Result;
use crate::field::GaugeField;
use crate::lattice::Parity;
use crate::su3::Su3;

/// The functional and θ of a field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quality {
    pub functional: f64,
    pub theta: f64,
}

/// `U − U†` with its trace taken out.
pub fn traceless_antihermitian(u: &Su3) -> Su3 {
    let mut a = Su3::zero();
    for r in 0..3 {
        for c in 0..3 {
            a.0[r][c] = u.0[r][c] - u.0[c][r].conj();
        }
    }
    let t = a.trace() / 3.0;
    for k in 0..3 {
        a.0[k][k] -= t;
    }
    a
}

/// The divergence `Δ(x)` at every local site (even-odd order), from the
/// links behind each site (`neighbour_links`).
pub fn divergence(ranks: Option<&Ranks>, links: &GaugeField, dirs: usize) -> Result<Vec<Su3>> {
    let behind = neighbour_links(ranks, links)?;
    let lat = links.lattice();
    let vh = lat.half_volume();
    Ok((0..lat.volume())
        .into_par_iter()
        .map(|i| {
            let x = lat.coords(Parity::from_index(i / vh), i % vh);
            let mut d = Su3::zero();
            for mu in 0..dirs {
                let a = traceless_antihermitian(links.link_at(x, mu));
                let b = traceless_antihermitian(&behind.link(x, mu));
                for r in 0..3 {
                    for c in 0..3 {
                        d.0[r][c] += b.0[r][c] - a.0[r][c];
                    }
                }
            }
            d
        })
        .collect())
}

/// This rank's `Σ Re tr U_μ` over the fixed directions and `Σ tr ΔΔ†`
/// (collective: Δ reaches the links behind the faces).
pub fn local_sums(ranks: Option<&Ranks>, links: &GaugeField, dirs: usize) -> Result<[f64; 2]> {
    let delta = divergence(ranks, links, dirs)?;
    let trace: f64 = links
        .links()
        .par_chunks(4)
        .map(|site| site[..dirs].iter().map(|u| u.trace().re).sum::<f64>())
        .sum();
    let theta: f64 = delta
        .par_iter()
        .map(|d| d.mul(&d.adjoint()).trace().re)
        .sum();
    Ok([trace, theta])
}

/// `F` and `θ` from every rank's `local_sums` of `volume` sites each
/// (collective).
pub fn from_sums(
    ranks: Option<&Ranks>,
    local: [f64; 2],
    volume: usize,
    dirs: usize,
) -> Result<Quality> {
    let mut sums = [local[0], local[1], volume as f64];
    if let Some(r) = ranks {
        r.sum(&mut sums)?;
    }
    let v = sums[2];
    Ok(Quality {
        functional: sums[0] / (3.0 * dirs as f64 * v),
        theta: sums[1] / (3.0 * v),
    })
}

/// `F` and `θ` of this rank's links, over the whole lattice (collective).
pub fn quality(ranks: Option<&Ranks>, links: &GaugeField, dirs: usize) -> Result<Quality> {
    let local = local_sums(ranks, links, dirs)?;
    from_sums(ranks, local, links.lattice().volume(), dirs)
}
