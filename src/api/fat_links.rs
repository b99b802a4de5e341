//! Improved staggered links computed from a caller's links: the fat links
//! of a set of path coefficients, the long (Naik) links, and the fat
//! links' projection on U(3) (`fat_links`), on the context's backend where
//! it computes them itself (the CUDA backend), else on the host. On many
//! ranks each computes its own sites from its links extended by its
//! neighbours' (`fat_links::EXTENSION` layers), so the result is one
//! rank's, site for site, whatever the partition.

use std::sync::Arc;

use super::context::Context;
use super::params::Verbosity;
use crate::error::{Error, Result};
use crate::fat_links::paths::interior;
use crate::fat_links::unitarize::{check_unitary, unitarize_link};
use crate::fat_links::EXTENSION;
use crate::fat_links::{fat_links, long_links, unitarize, PathCoefficients, UnitarizeParams};
use crate::field::GaugeField;
use crate::lattice::Lattice;
use crate::layout::{self, HostGauge};

/// What `Context::fatten_links` computes beside the fat links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FatLinkOutputs {
    /// The long links of the Naik coefficient.
    pub long: bool,
    /// The fat links' U(3) projection.
    pub unitarized: bool,
}

/// The links `Context::fatten_links` computed, this rank's sites.
pub struct FatLinks {
    pub fat: GaugeField,
    pub long: Option<GaugeField>,
    pub unitarized: Option<GaugeField>,
}

impl Context {
    /// The fat links of this rank's `links` (its local extents `dims`,
    /// any phases folded in as the caller folds them; the lattice indexed
    /// periodically) with path coefficients `c`, and what `outputs` asks
    /// for; the projection with QUDA's constants (`UnitarizeParams::
    /// default`), refused where a link fails it. Collective on many ranks.
    pub fn fatten_links(
        &self,
        dims: [usize; 4],
        links: &HostGauge,
        c: &PathCoefficients,
        outputs: FatLinkOutputs,
    ) -> Result<FatLinks> {
        let inner = &self.inner;
        let start = std::time::Instant::now();
        let read = (|| {
            if !c.is_finite() {
                return Err(Error::InvalidArgument(format!(
                    "path coefficients {:?}: not all finite",
                    c.to_array()
                )));
            }
            let lat = Arc::new(Lattice::new(dims)?);
            let field = layout::gauge::import(&lat, links)?;
            Ok((lat, field))
        })();
        let (lat, field) = inner.agree(read)?;
        let (ext, offset) = inner.agree(inner.extended(&field, EXTENSION))?;
        let computed = inner.install(|| -> Result<FatLinks> {
            let (fat, long) = match inner.fat_links_on_backend(&ext, c, outputs.long)? {
                Some(done) => done,
                None => (
                    fat_links(&ext, c)?,
                    outputs.long.then(|| long_links(&ext, c.naik)).transpose()?,
                ),
            };
            let cut = |f: GaugeField| {
                if f.lattice().dims() == dims {
                    Ok(f)
                } else {
                    interior(&f, &lat, offset)
                }
            };
            let fat = cut(fat)?;
            let long = long.map(cut).transpose()?;
            let unitarized = outputs
                .unitarized
                .then(|| self.unitarize(&fat))
                .transpose()?;
            Ok(FatLinks {
                fat,
                long,
                unitarized,
            })
        });
        let computed = inner.agree(computed)?;
        inner.log(
            Verbosity::Debug,
            &format!(
                "fat links {dims:?} (long: {}, U(3): {}) on the {} backend in {:.3} s",
                outputs.long,
                outputs.unitarized,
                inner.backend_name(),
                start.elapsed().as_secs_f64()
            ),
        );
        Ok(computed)
    }

    /// `v`'s U(3) projection: the backend's Cayley–Hamilton with the
    /// host's SVD for the links it leaves, or all on the host.
    fn unitarize(&self, v: &GaugeField) -> Result<GaugeField> {
        let p = UnitarizeParams::default();
        match self.inner.unitarize_on_backend(v, &p)? {
            Some((mut w, flagged)) => {
                for i in flagged {
                    w.links_mut()[i] = unitarize_link(&v.links()[i], &p);
                }
                check_unitary(&w, p.max_error)?;
                Ok(w)
            }
            None => unitarize(v, &p),
        }
    }
}
