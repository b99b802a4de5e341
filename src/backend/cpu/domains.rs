//! The CPU backend's side of the Schwarz preconditioner's boxes
//! (`crate::domains`): box operators' links, the stored links read back,
//! and fields cut down to the boxes of one colour.

use rayon::prelude::*;

use super::storage::SITE;
use super::{CpuBackend, CpuGauge, CpuSpinor};
use crate::domains::Domains;
use crate::error::{Error, Result};
use crate::field::GaugeField;
use crate::lattice::{Parity, Subset};
use crate::precision::{Precision, Reconstruct};
use crate::su3::Su3;

impl CpuBackend {
    /// `Backend::upload_domain_gauge`: stored without faces and marked
    /// local, so the hopping term never asks the other ranks.
    pub(super) fn domain_gauge(
        &self,
        gauge: &GaugeField,
        precision: Precision,
    ) -> Result<CpuGauge> {
        gauge.lattice().build_neighbour_tables()?;
        let links = self.store_links(gauge, precision, Reconstruct::Full18, false)?;
        Ok(CpuGauge {
            lattice: gauge.lattice().clone(),
            faces: None,
            links,
            t_sign: 1.0,
            local: true,
        })
    }

    /// `Backend::download_gauge`: every stored link rebuilt (unit matrices
    /// where temporal gauge left them out).
    pub(super) fn gauge_to_host(&self, gauge: &CpuGauge) -> Result<GaugeField> {
        let lat = gauge.lattice.clone();
        let vh = lat.half_volume();
        let mut field = GaugeField::try_unit(lat)?;
        self.pool.install(|| {
            field
                .links_mut()
                .par_chunks_mut(4)
                .enumerate()
                .for_each(|(site, out)| {
                    let (p, cb) = (Parity::from_index(site / vh), site % vh);
                    for (mu, l) in out.iter_mut().enumerate() {
                        *l = gauge.links.link(p, cb, mu).unwrap_or_else(Su3::identity);
                    }
                })
        });
        Ok(field)
    }

    /// `Backend::domain_project`: the sites outside the boxes of `colour`
    /// set to zero.
    pub(super) fn project_on_domains(
        &self,
        field: &mut CpuSpinor,
        domains: &Domains,
        colour: usize,
    ) -> Result<()> {
        let lat = field.lattice.clone();
        if lat.dims() != domains.local() {
            return Err(Error::Internal(
                "domain_project: a field of another lattice".into(),
            ));
        }
        let vh = lat.half_volume();
        let (sites, first) = match field.subset {
            Subset::Full => (2 * vh, Parity::Even),
            Subset::Single(p) => (vh, p),
        };
        const CHUNK: usize = 512;
        let zero = [0.0; SITE];
        self.pool.install(|| {
            field
                .data
                .view_mut(0, sites)
                .par_chunks(CHUNK, |chunk, mut view| {
                    for k in 0..view.sites() {
                        let i = chunk * CHUNK + k;
                        let p = Parity::from_index((first.index() + i / vh) % 2);
                        if domains.colour(lat.coords(p, i % vh)) != colour {
                            view.store(k, &zero);
                        }
                    }
                })
        });
        Ok(())
    }
}
