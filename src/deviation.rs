//! How far each storage format's Wilson hopping term lies from the double
//! CPU one: the evidence of seed clark2010 Fig. 6 and seed clark2022 Fig. 2
//! (the cumulative distribution of the deviation), as quantiles.
//!
//! One random source, one gauge field; the reference is `D_{eo} ψ_o` with
//! double links (18 reals) on the CPU backend. Each format stores the links
//! (precision × reconstruct) and the source in its own format, applies the
//! hopping term and stores the result in the format; the deviation of
//! component k at site x is
//! `|y_k(x) − y_k^ref(x)| / max_k' |y_k'^ref(x)|`,
//! relative to the site's largest component because that is what the
//! fixed-point and shared-exponent formats scale by (a plain relative error
//! per component is unbounded where a component happens to vanish).

use std::sync::Arc;

use crate::backend::cpu::CpuBackend;
use crate::backend::Backend;
use crate::error::Result;
use crate::field::{GaugeField, HostSpinor};
use crate::lattice::{Parity, Subset};
use crate::precision::{Precision, Reconstruct, TBoundary};
use crate::random;

/// The quantiles reported (the CDF at these probabilities).
pub const QUANTILES: [f64; 4] = [0.5, 0.9, 0.99, 1.0];

/// One format's deviation distribution.
#[derive(Debug, Clone, Copy)]
pub struct Deviation {
    pub precision: Precision,
    pub reconstruct: Reconstruct,
    /// The deviation at each of `QUANTILES` (the last is the maximum).
    pub quantiles: [f64; 4],
    /// The larger of the spinor and the link unit roundoff of the format.
    pub epsilon: f64,
}

/// The reference hopping term (double CPU, 18 reals) and the source.
pub struct Reference {
    source: HostSpinor,
    out: HostSpinor,
}

impl Reference {
    /// `D_{eo} ψ_o` for a Gaussian `ψ` (seeded) on `field`.
    pub fn new(field: &GaugeField, seed: u64) -> Result<Reference> {
        let cpu = CpuBackend::new(0)?;
        let source = random::spinor(field.lattice(), Subset::Single(Parity::Odd), seed);
        let out = hop(&cpu, field, &source, Precision::Double, Reconstruct::Full18)?;
        Ok(Reference { source, out })
    }

    /// The deviation quantiles of one format on `backend`.
    pub fn measure<B: Backend>(
        &self,
        backend: &B,
        field: &GaugeField,
        precision: Precision,
        reconstruct: Reconstruct,
    ) -> Result<Deviation> {
        let y = hop(backend, field, &self.source, precision, reconstruct)?;
        let mut dev = Vec::with_capacity(y.data().len() * 2);
        for i in 0..y.sites() {
            let (a, b) = (y.site(i), self.out.site(i));
            let max = b
                .iter()
                .fold(0.0f64, |m, z| m.max(z.re.abs()).max(z.im.abs()));
            for (u, v) in a.iter().zip(b) {
                dev.push((u.re - v.re).abs() / max);
                dev.push((u.im - v.im).abs() / max);
            }
        }
        dev.sort_by(f64::total_cmp);
        let quantiles = QUANTILES.map(|q| {
            let k = ((q * dev.len() as f64).ceil() as usize).clamp(1, dev.len());
            dev[k - 1]
        });
        Ok(Deviation {
            precision,
            reconstruct,
            quantiles,
            epsilon: precision.epsilon().max(precision.link_epsilon()),
        })
    }
}

/// `D_{eo} ψ_o` with links, source and result stored in one format.
fn hop<B: Backend>(
    backend: &B,
    field: &GaugeField,
    source: &HostSpinor,
    precision: Precision,
    reconstruct: Reconstruct,
) -> Result<HostSpinor> {
    let lat: Arc<_> = field.lattice().clone();
    let gauge = backend.upload_gauge(field, TBoundary::AntiPeriodic, precision, reconstruct)?;
    let mut inp = backend.alloc_spinor(&lat, Subset::Single(Parity::Odd), precision)?;
    backend.upload_spinor(&mut inp, source)?;
    let mut out = backend.alloc_spinor(&lat, Subset::Single(Parity::Even), precision)?;
    backend.wilson_dslash(&mut out, Parity::Even, &gauge, &inp, false, 1.0, None)?;
    let mut host = HostSpinor::zeros(lat, Subset::Single(Parity::Even));
    backend.download_spinor(&out, &mut host)?;
    Ok(host)
}
