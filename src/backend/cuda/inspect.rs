//! What checks read back from the device: a stored field's numbers as they
//! lie there (links, clover, staggered links), to compare two ways of
//! storing one field (`latsol-gpu-check`).

use super::backend::CudaBackend;
use super::clover::{CudaClover, DeviceClover};
use super::driver::errors::device_err;
use super::driver::memory::DeviceData;
use super::fields::CudaGauge;
use super::staggered::{long_index, long_vec, CudaStaggeredLinks, DeviceLong};
use crate::error::Result;

impl CudaStaggeredLinks {
    /// The stored fat links, then the long ones (if any), as they lie on
    /// the device, each with its fixed-point unit: for checks that compare
    /// two ways of storing one field.
    pub fn stored_bytes(&self, backend: &CudaBackend) -> Result<Vec<(Vec<u8>, f64)>> {
        let long = self.long.as_ref().map(|l| match l {
            DeviceLong::Full(f) | DeviceLong::Compressed { links: f, .. } => f,
        });
        std::iter::once(&self.fat)
            .chain(long)
            .map(|f| {
                let mut out = vec![0u8; f.data().bytes()];
                backend
                    .dev
                    .download_bytes(&mut out, f.data().ptr(&backend.dev.stream))?;
                Ok((out, f.fixed))
            })
            .collect()
    }

    /// The long links rebuilt from their compressed storage
    /// (`long_links::decompress` of the stored numbers), in canonical order
    /// (`[parity][cb]`, four directions a site); `None` for long links of
    /// 18 reals or none: for checks that compare two ways of compressing.
    pub fn decompressed_long(&self, backend: &CudaBackend) -> Result<Option<Vec<crate::su3::Su3>>> {
        let Some(DeviceLong::Compressed {
            links,
            reconstruct,
            scale,
        }) = &self.long
        else {
            return Ok(None);
        };
        let mut bytes = vec![0u8; links.data().bytes()];
        backend
            .dev
            .download_bytes(&mut bytes, links.data().ptr(&backend.dev.stream))?;
        let number = |i: usize| -> f64 {
            match links.data() {
                DeviceData::F64(_) => {
                    f64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap())
                }
                DeviceData::F32(_) => {
                    f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap()) as f64
                }
                DeviceData::I16(_) => {
                    i16::from_le_bytes(bytes[2 * i..2 * i + 2].try_into().unwrap()) as f64
                        * links.fixed
                }
                _ => bytes[i] as i8 as f64 * links.fixed,
            }
        };
        let (r, w, vh) = (
            *reconstruct,
            long_vec(self.precision),
            self.lattice.half_volume(),
        );
        let block = r.reals() * self.stride;
        let mut out = Vec::with_capacity(8 * vh);
        for p in 0..2 {
            for cb in 0..vh {
                for mu in 0..4 {
                    let base = (4 * p + mu) * block;
                    let v: Vec<f64> = (0..r.reals())
                        .map(|k| number(base + long_index(r, w, self.stride, cb, k)))
                        .collect();
                    out.push(crate::long_links::decompress(&v, r, *scale));
                }
            }
        }
        Ok(Some(out))
    }
}

impl CudaClover {
    /// The stored numbers as they lie on the device, A then A⁻¹: the
    /// values' bytes (layout, padding and element type of `clover.cuh`)
    /// and the per-block norms of fixed point (empty otherwise), for checks
    /// that compare two ways of storing one field.
    pub fn stored_bytes(&self, backend: &CudaBackend) -> Result<[(Vec<u8>, Vec<f32>); 2]> {
        let one = |d: &DeviceClover| -> Result<(Vec<u8>, Vec<f32>)> {
            let mut values = vec![0u8; d.values.bytes()];
            backend
                .dev
                .download_bytes(&mut values, d.values.ptr(&backend.dev.stream))?;
            let mut norms = vec![0f32; d.norms.as_ref().map_or(0, |n| n.len())];
            if let Some(n) = &d.norms {
                backend
                    .dev
                    .stream
                    .memcpy_dtoh(n, &mut norms)
                    .map_err(device_err("reading the clover norms"))?;
                backend.dev.synchronize()?;
            }
            Ok((values, norms))
        };
        Ok([one(&self.direct)?, one(&self.inverse)?])
    }
}

impl CudaGauge {
    /// The stored links as they lie on the device (layout, padding and
    /// element type of `kernels/core.cuh`), and the fixed-point scale: for
    /// checks that compare two ways of storing one field.
    pub fn stored_bytes(&self, backend: &CudaBackend) -> Result<(Vec<u8>, f64)> {
        let mut out = vec![0u8; self.links.bytes()];
        backend
            .dev
            .download_bytes(&mut out, self.links.ptr(&backend.dev.stream))?;
        Ok((out, self.scale))
    }

    /// Bytes per stored real (8, 4, 2, 1 or 4 for 32-bit fixed point).
    pub fn element_bytes(&self) -> usize {
        match self.links {
            DeviceData::F64(_) => 8,
            DeviceData::F32(_) | DeviceData::I32(_) | DeviceData::P20(_) | DeviceData::P30(_) => 4,
            DeviceData::I16(_) => 2,
            DeviceData::I8(_) => 1,
        }
    }
}
