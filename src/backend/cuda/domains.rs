//! The CUDA backend's side of the Schwarz preconditioner's boxes
//! (`crate::domains`): fields cut down to the boxes of one colour
//! (`kernels/blas.cuh`, `domain_project`), and the stored links read back
//! to the host, where a box operator's links are cut from them.

use cudarc::driver::DeviceRepr;
use rayon::prelude::*;

use super::backend::CudaBackend;
use super::driver::memory::DeviceData;
use super::fields::{suffix, CudaGauge, CudaSpinor};
use super::layout::{self, SoaShape};
use crate::backend::SpinorField;
use crate::domains::Domains;
use crate::error::{Error, Result};
use crate::field::{Fermion, GaugeField};
use crate::lattice::{Parity, Subset};

/// Kernel arguments of `domain_project` (`struct DomainParams`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct DomainParams {
    pub field: u64,
    pub stride: i32,
    pub blocks: i32,
    pub first_parity: i32,
    pub colour: i32,
    pub dims: [i32; 4],
    pub extent: [i32; 4],
    pub origin: [i32; 4],
}
// SAFETY: plain old data with the C layout of `DomainParams` in blas.cuh.
unsafe impl DeviceRepr for DomainParams {}

/// The kernel of one storage format (in `kernels/blas_<format>.cu`).
pub fn kernel_name(p: crate::precision::Precision) -> String {
    format!("domain_project_{}", suffix(p))
}

impl CudaBackend {
    /// `Backend::domain_project`: one thread a site, in place.
    pub(super) fn project_on_domains(
        &self,
        field: &mut CudaSpinor,
        domains: &Domains,
        colour: usize,
    ) -> Result<()> {
        if field.fermion() != Fermion::Wilson || field.lattice().dims() != domains.local() {
            return Err(Error::Internal(
                "domain_project: a Wilson field of the boxes' lattice is needed".into(),
            ));
        }
        let first = match field.subset() {
            Subset::Full => Parity::Even,
            Subset::Single(p) => p,
        };
        let as_i32 = |v: [usize; 4]| v.map(|x| x as i32);
        let params = DomainParams {
            field: field.data.ptr(&self.dev.stream),
            stride: field.stride as i32,
            blocks: field.blocks() as i32,
            first_parity: first.index() as i32,
            colour: colour as i32,
            dims: as_i32(domains.local()),
            extent: as_i32(domains.extent()),
            origin: as_i32(domains.origin()),
        };
        let sites = field.stride * field.blocks();
        // In place and idempotent: re-running it while tuning is harmless.
        let name = kernel_name(field.precision());
        self.dev.launch_tuned(&name, sites, 256, &params, None)
    }

    /// `Backend::download_gauge`: the stored numbers read back and undone
    /// (layout, fixed point, compression) on the host.
    pub(super) fn gauge_to_host(&self, gauge: &CudaGauge) -> Result<GaugeField> {
        let lat = gauge.lattice.clone();
        let vh = lat.half_volume();
        let reals = gauge.reconstruct.reals();
        let vec = SoaShape::link_vec(gauge.precision, reals);
        let shape = SoaShape::link(reals, vec, vh, gauge.stride);
        let mut bytes = vec![0u8; gauge.links.bytes()];
        let at = gauge.links.ptr(&self.dev.stream);
        self.dev.download_bytes(&mut bytes, at)?;
        let scale = gauge.scale;
        let values: Vec<f64> = match &gauge.links {
            DeviceData::F64(_) => bytes
                .par_chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
                .collect(),
            DeviceData::F32(_) => bytes
                .par_chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")) as f64)
                .collect(),
            DeviceData::I32(_) => bytes
                .par_chunks_exact(4)
                .map(|b| i32::from_le_bytes(b.try_into().expect("4 bytes")) as f64 * scale)
                .collect(),
            DeviceData::I16(_) => bytes
                .par_chunks_exact(2)
                .map(|b| i16::from_le_bytes(b.try_into().expect("2 bytes")) as f64 * scale)
                .collect(),
            DeviceData::I8(_) => bytes.par_iter().map(|&b| b as i8 as f64 * scale).collect(),
            DeviceData::P20(_) | DeviceData::P30(_) => {
                return Err(Error::Internal("links are never stored packed".into()))
            }
        };
        let mut canonical = vec![0.0f64; 8 * shape.canonical_len()];
        layout::from_soa(shape, &values, &mut canonical, |x| x);
        let mut field = GaugeField::try_unit(lat)?;
        let r = gauge.reconstruct;
        field
            .links_mut()
            .par_chunks_mut(4)
            .enumerate()
            .for_each(|(site, out)| {
                let (p, cb) = (site / vh, site % vh);
                for (mu, l) in out.iter_mut().enumerate() {
                    let at = ((p * 4 + mu) * vh + cb) * reals;
                    *l = crate::reconstruct::decompress(&canonical[at..at + reals], r);
                }
            });
        Ok(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_struct_matches_the_kernel() {
        assert_eq!(std::mem::size_of::<DomainParams>(), 72);
        let text = include_str!("../../../kernels/blas.cuh");
        assert!(text.contains("sizeof(DomainParams) == 72"));
        for f in ["f64", "f32", "f16", "f8", "p20", "p30"] {
            let src = std::fs::read_to_string(format!(
                "{}/kernels/blas_{f}.cu",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap();
            assert!(src.contains(&format!("LATSOL_DOMAIN_PROJECT({f},")), "{f}");
        }
    }
}
