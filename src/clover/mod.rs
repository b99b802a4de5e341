//! The clover term of the O(a)-improved Wilson operator on the host: per
//! site two Hermitian 6×6 blocks, one per chirality (docs/conventions.md and
//! docs/conventions.md, "The clover term").
//!
//! The canonical field keeps the blocks in the DeGrand–Rossi basis of the
//! host, where `A` is block diagonal: block `k` acts on the Dirac spins
//! `2k, 2k+1` (γ5 = −1 for k = 0, +1 for k = 1), row and column index
//! `3 s + c` (s the spin within the block, c the colour). Sites are in the
//! even-odd order of every canonical field (`[parity][cb]`).
//!
//! - `packed`: QUDA's packed clover order (72 reals per site) in and out;
//! - `ldl`: the per-block inverse by an LDL† factorisation;
//! - `compute`: the clover term from a gauge field and c_SW;
//! - `chiral`: the blocks in the backends' storage basis (the chiral basis
//!   of the internal UKQCD spinor).

pub mod chiral;
pub mod compute;
pub mod ldl;
pub mod packed;
pub mod storage;

use std::sync::Arc;

use num_complex::Complex64 as C64;

use crate::error::{Error, Result};
use crate::lattice::{Lattice, Parity};

/// One chiral block, `[row][column]`.
pub type Block = [[C64; 6]; 6];

/// The two chiral blocks of a site.
pub type SiteBlocks = [Block; 2];

/// Reals per site in the packed order (two blocks of 6 + 2·15).
pub const PACKED_REALS: usize = 72;

/// The clover field on the host, canonical order, DeGrand–Rossi blocks.
#[derive(Debug, Clone)]
pub struct CloverField {
    lattice: Arc<Lattice>,
    sites: Vec<SiteBlocks>,
}

/// The unit block.
pub fn unit_block() -> Block {
    let mut b = [[C64::new(0.0, 0.0); 6]; 6];
    for (i, row) in b.iter_mut().enumerate() {
        row[i] = C64::new(1.0, 0.0);
    }
    b
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
