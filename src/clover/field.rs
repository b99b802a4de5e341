//! The clover field on the host: the blocks of every site in the canonical
//! even-odd order, their checks and their inverse.

use std::sync::Arc;

use num_complex::Complex64 as C64;

use super::block::{unit_block, SiteBlocks};
use super::ldl;
use crate::error::{Error, Result};
use crate::lattice::{Lattice, Parity};

/// The clover field on the host, canonical order, DeGrand–Rossi blocks.
#[derive(Debug, Clone)]
pub struct CloverField {
    lattice: Arc<Lattice>,
    sites: Vec<SiteBlocks>,
}

impl CloverField {
    /// `A = 1` everywhere (no clover term).
    pub fn unit(lattice: Arc<Lattice>) -> CloverField {
        let n = lattice.volume();
        CloverField {
            lattice,
            sites: vec![[unit_block(), unit_block()]; n],
        }
    }

    /// A field from its sites in canonical order.
    pub fn from_sites(lattice: Arc<Lattice>, sites: Vec<SiteBlocks>) -> Result<CloverField> {
        if sites.len() != lattice.volume() {
            return Err(Error::Internal(format!(
                "clover field of {} sites on a lattice of {}",
                sites.len(),
                lattice.volume()
            )));
        }
        Ok(CloverField { lattice, sites })
    }

    pub fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }

    /// All sites, `[parity][cb]`.
    pub fn sites(&self) -> &[SiteBlocks] {
        &self.sites
    }

    /// The blocks of checkerboard site `cb` of parity `p`.
    pub fn site(&self, p: Parity, cb: usize) -> &SiteBlocks {
        &self.sites[p.index() * self.lattice.half_volume() + cb]
    }

    /// Coordinates of the site at canonical index `i`.
    pub fn coords_of(&self, i: usize) -> [usize; 4] {
        let vh = self.lattice.half_volume();
        self.lattice.coords(Parity::from_index(i / vh), i % vh)
    }

    /// The first entry that is not finite, named by site and block.
    pub fn check_finite(&self, what: &str) -> Result<()> {
        for (i, site) in self.sites.iter().enumerate() {
            for (k, b) in site.iter().enumerate() {
                let bad = b
                    .iter()
                    .flatten()
                    .any(|z| !(z.re.is_finite() && z.im.is_finite()));
                if bad {
                    return Err(Error::InvalidArgument(format!(
                        "{what}: a NaN or Inf entry in chiral block {k} at x = {:?}",
                        self.coords_of(i)
                    )));
                }
            }
        }
        Ok(())
    }

    /// `A ψ` on the 12 DeGrand–Rossi components `[spin][colour]` of a site.
    pub fn apply_site_degrand_rossi(blocks: &SiteBlocks, psi: &[C64]) -> [C64; 12] {
        let mut out = [C64::new(0.0, 0.0); 12];
        for (k, b) in blocks.iter().enumerate() {
            for (i, row) in b.iter().enumerate() {
                out[6 * k + i] = (0..6).map(|j| row[j] * psi[6 * k + j]).sum();
            }
        }
        out
    }

    /// The field of the per-block inverses, `A⁻¹`; a block that is not
    /// safely invertible is an error naming its site and block.
    pub fn inverse(&self) -> Result<CloverField> {
        use rayon::prelude::*;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let invert = |i: usize, k: usize| {
            ldl::invert(&self.sites[i][k]).map_err(|why| {
                Error::InvalidArgument(format!(
                    "the clover block {k} at x = {:?} is not invertible: {why}",
                    self.coords_of(i)
                ))
            })
        };
        // One parallel pass straight into the result; a failing site is
        // noted (the first in site order wins) and its error rebuilt.
        let first_bad = AtomicUsize::new(usize::MAX);
        let inverted =
            (0..self.sites.len())
                .into_par_iter()
                .map(|i| match (invert(i, 0), invert(i, 1)) {
                    (Ok(a), Ok(b)) => [a, b],
                    _ => {
                        first_bad.fetch_min(i, Ordering::Relaxed);
                        self.sites[i]
                    }
                });
        let what = format!("the clover inverse of a {:?} lattice", self.lattice.dims());
        let out = crate::alloc::par_collect(self.sites.len(), inverted, &what)?;
        let bad = first_bad.into_inner();
        if bad != usize::MAX {
            invert(bad, 0)?;
            invert(bad, 1)?;
        }
        Ok(CloverField {
            lattice: self.lattice.clone(),
            sites: out,
        })
    }
}
