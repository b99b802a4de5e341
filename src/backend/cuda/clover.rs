//! Host side of the clover term on the CUDA backend (`kernels/clover.cuh`
//! and the clover forms of `kernels/wilson_dslash.cuh`): the clover field's
//! device layout, the site-local kernel and the hopping term with the
//! clover epilogue. The stored numbers are the CPU backend's
//! (`clover::storage::CloverData`), so both backends apply the same field.

use cudarc::driver::{CudaSlice, DeviceRepr};

use super::driver::device::Device;
use super::driver::errors::device_err;
use super::driver::memory::DeviceData;
use super::fields::{
    check_lattice, same_lattice, spinor_block_bytes, suffix, CudaGauge, CudaSpinor,
};
use super::halo::DeferredFailure;
use super::hopping_params::{block_of, hopping_params, launch_hopping, launch_rhs, DslashParams};
use super::layout::{padded_stride, SharedOut, SoaShape};
use crate::backend::{CloverForm, CloverStorage, GaugeStorage, SpinorField};
use crate::clover::packed::BLOCK_REALS;
use crate::clover::storage::{quantize_block, CloverFormat};
use crate::clover::{chiral, CloverField, PACKED_REALS};
use crate::error::{Error, Result};
use crate::lattice::{Lattice, Parity};
use crate::precision::{Precision, Reconstruct};
use std::sync::Arc;

/// One stored field (A or A⁻¹) on the device.
#[derive(Debug)]
pub(crate) struct DeviceClover {
    pub(crate) values: DeviceData,
    /// Two f32 norms per site (fixed point only).
    pub(crate) norms: Option<CudaSlice<f32>>,
}

/// A clover field and its inverse in device memory.
#[derive(Debug)]
pub struct CudaClover {
    pub(crate) lattice: Arc<Lattice>,
    pub(crate) precision: Precision,
    pub(crate) stride: usize,
    pub(crate) direct: DeviceClover,
    pub(crate) inverse: DeviceClover,
}

impl CloverStorage for CudaClover {
    fn lattice(&self) -> &Arc<Lattice> {
        &self.lattice
    }
    fn precision(&self) -> Precision {
        self.precision
    }
}

impl CudaClover {
    /// The sites' stride of the stored rows.
    pub fn stride(&self) -> usize {
        self.stride
    }
}

/// Arguments of the site-local kernel (`struct CloverParams`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct CloverParams {
    pub out: u64,
    pub inp: u64,
    pub clover: u64,
    pub norm: u64,
    pub parity: i32,
    pub vh: i32,
    pub stride: i32,
    pub clover_stride: i32,
}
// SAFETY: plain old data with the C layout of `CloverParams`.
unsafe impl DeviceRepr for CloverParams {}

/// Reals per vector load of a stored clover (double2 or four narrower).
pub(crate) fn clover_vec(format: CloverFormat) -> usize {
    if format == CloverFormat::Double {
        2
    } else {
        4
    }
}

/// The clover kernel's name for a format, reconstruction and form.
pub fn kernel_name(
    p: Precision,
    r: Reconstruct,
    dagger: bool,
    form: CloverForm,
    xpay: bool,
) -> String {
    let form = match (form, xpay) {
        (CloverForm::InverseOnHopping, false) => "_inv",
        (CloverForm::InverseOnHopping, true) => "_inv_xpay",
        (CloverForm::DirectOnX, _) => "_dir",
    };
    format!(
        "wilson_clover_{}_r{}{}{form}",
        suffix(p),
        r.reals(),
        if dagger { "_dag" } else { "" }
    )
}

/// Every kernel of `kernels/wilson_clover_<suffix(p)>.cu`.
pub fn kernel_names(p: Precision) -> Vec<String> {
    let mut v = vec![format!("clover_site_{}", suffix(p))];
    for r in [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight] {
        for dagger in [false, true] {
            v.push(kernel_name(
                p,
                r,
                dagger,
                CloverForm::InverseOnHopping,
                false,
            ));
            v.push(kernel_name(
                p,
                r,
                dagger,
                CloverForm::InverseOnHopping,
                true,
            ));
            v.push(kernel_name(p, r, dagger, CloverForm::DirectOnX, true));
        }
    }
    v
}

/// A stored site in double: the numbers as they are.
fn as_f64(s: &[f64; PACKED_REALS], t: &mut [f64; PACKED_REALS], _: &mut [f32; 2]) {
    *t = *s;
}

/// A stored site in single: each number rounded once (`as`, as `CloverData`).
fn as_f32(s: &[f64; PACKED_REALS], t: &mut [f32; PACKED_REALS], _: &mut [f32; 2]) {
    for (o, x) in t.iter_mut().zip(s) {
        *o = *x as f32;
    }
}

/// A stored site in fixed point: each chiral block relative to its norm
/// (`storage::quantize_block`).
fn fixed<T: crate::format::Fixed>(
    s: &[f64; PACKED_REALS],
    t: &mut [T; PACKED_REALS],
    norm: &mut [f32; 2],
) {
    for (k, n) in norm.iter_mut().enumerate() {
        let r = k * BLOCK_REALS..(k + 1) * BLOCK_REALS;
        *n = quantize_block(&s[r.clone()], &mut t[r]);
    }
}

/// Every site's stored numbers (`chiral::storage_site`, then `store`)
/// placed straight into the device layout `shape` (zeros in the padding),
/// with two norms a site: one parallel pass over the sites, no site-major
/// copy in between.
fn soa_of<T: Copy + Default + Send + Sync>(
    field: &CloverField,
    shape: SoaShape,
    store: impl Fn(&[f64; PACKED_REALS], &mut [T; PACKED_REALS], &mut [f32; 2]) + Sync,
) -> Result<(Vec<T>, Vec<f32>)> {
    use rayon::prelude::*;
    let what = "staging the clover field for the device";
    let n = field.sites().len();
    assert_eq!(n, shape.sites, "the layout is the field's");
    let mut v = crate::alloc::filled(shape.block_len(), T::default(), what)?;
    let mut norms = crate::alloc::filled(2 * n, 0.0f32, what)?;
    let out = SharedOut(v.as_mut_ptr());
    let out = &out;
    let len = shape.block_len();
    norms
        .par_chunks_mut(2)
        .zip(field.sites().par_iter())
        .enumerate()
        .for_each(|(i, (norm, site))| {
            let s = chiral::storage_site(site);
            let (mut t, mut nn) = ([T::default(); PACKED_REALS], [0.0f32; 2]);
            store(&s, &mut t, &mut nn);
            norm.copy_from_slice(&nn);
            for (j, &x) in t.iter().enumerate() {
                let k = shape.index(i, j);
                // Kept in release: the write below is unchecked.
                assert!(k < len, "clover element {j} of site {i} outside its block");
                // SAFETY: within `v` (checked above), and (site, real) ↦ k
                // is one-to-one (`SoaShape::index`), so no two threads
                // write one element.
                unsafe { *out.at(k) = x };
            }
        });
    Ok((v, norms))
}

/// The clover term's kernels on one device (alone and in the hopping term), and the storage of the field.
pub(crate) struct CloverKernels<'d> {
    pub(crate) dev: &'d Device,
    /// Where a rank keeps a failure on a cut lattice (`halo`).
    pub(crate) failure: &'d DeferredFailure,
}

impl std::ops::Deref for CloverKernels<'_> {
    type Target = Device;
    fn deref(&self) -> &Device {
        self.dev
    }
}

impl CloverKernels<'_> {
    /// One stored field (A or A⁻¹) in `format` on the device: its stored
    /// numbers (`CloverData`'s, bit for bit) placed straight into the
    /// device layout on the host in one parallel pass, then through the
    /// pinned buffers.
    fn upload_clover_field(
        &self,
        field: &CloverField,
        format: CloverFormat,
        stride: usize,
    ) -> Result<DeviceClover> {
        let shape = SoaShape {
            reals: PACKED_REALS,
            vec: clover_vec(format),
            sites: field.sites().len(),
            stride,
        };
        let what = "host-to-device copy of the clover field";
        let norms = |n: Vec<f32>| -> Result<Option<CudaSlice<f32>>> {
            Ok(Some(self.upload_pod(
                &n,
                "host-to-device copy of the clover norms",
            )?))
        };
        Ok(match format {
            CloverFormat::Double => DeviceClover {
                values: DeviceData::F64(self.upload_pod(&soa_of(field, shape, as_f64)?.0, what)?),
                norms: None,
            },
            CloverFormat::Single => DeviceClover {
                values: DeviceData::F32(self.upload_pod(&soa_of(field, shape, as_f32)?.0, what)?),
                norms: None,
            },
            CloverFormat::Half => {
                let (v, n) = soa_of::<i16>(field, shape, fixed)?;
                DeviceClover {
                    values: DeviceData::I16(self.upload_pod(&v, what)?),
                    norms: norms(n)?,
                }
            }
            CloverFormat::Quarter => {
                let (v, n) = soa_of::<i8>(field, shape, fixed)?;
                DeviceClover {
                    values: DeviceData::I8(self.upload_pod(&v, what)?),
                    norms: norms(n)?,
                }
            }
        })
    }

    /// `v` in a new device buffer, through the pinned staging buffers (the
    /// driver's pageable path is several times slower for a lattice field).
    fn upload_pod<T>(&self, v: &[T], what: &'static str) -> Result<CudaSlice<T>>
    where
        T: bytemuck::Pod + DeviceRepr + cudarc::driver::ValidAsZeroBits,
    {
        let mut d = self
            .stream
            .alloc_zeros::<T>(v.len())
            .map_err(device_err(what))?;
        let at = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut d, &self.stream).0;
        self.upload_bytes(at, bytemuck::cast_slice(v))?;
        Ok(d)
    }

    pub(crate) fn upload_clover_impl(
        &self,
        clover: &CloverField,
        inverse: &CloverField,
        precision: Precision,
    ) -> Result<CudaClover> {
        let lat = clover.lattice().clone();
        check_lattice(&lat)?;
        let format = CloverFormat::for_spinors(precision);
        let sites = lat.volume();
        let stride = padded_stride(sites);
        let direct = self.upload_clover_field(clover, format, stride)?;
        let inverse = self.upload_clover_field(inverse, format, stride)?;
        Ok(CudaClover {
            lattice: lat,
            precision,
            stride,
            direct,
            inverse,
        })
    }

    fn clover_of<'c>(&self, c: &'c CudaClover, inverse: bool) -> (&'c DeviceClover, u64, u64) {
        let d = if inverse { &c.inverse } else { &c.direct };
        let norm = d.norms.as_ref().map_or(0, |n| {
            use cudarc::driver::DevicePtr;
            n.device_ptr(&self.stream).0
        });
        (d, d.values.ptr(&self.stream), norm)
    }

    fn check_clover(&self, c: &CudaClover, lat: &Arc<Lattice>, prec: Precision) -> Result<()> {
        if !same_lattice(&c.lattice, lat) {
            return Err(Error::Internal("clover: a field of another lattice".into()));
        }
        if CloverFormat::for_spinors(c.precision) != CloverFormat::for_spinors(prec) {
            return Err(Error::Unsupported(format!(
                "a clover field stored for {:?} spinors used with {prec:?} spinors",
                c.precision
            )));
        }
        Ok(())
    }

    pub(crate) fn clover_impl(
        &self,
        out: &mut CudaSpinor,
        parity: Parity,
        clover: &CudaClover,
        inp: &CudaSpinor,
        inverse: bool,
    ) -> Result<()> {
        let prec = out.precision();
        if inp.precision() != prec
            || !same_lattice(&inp.lattice, &out.lattice)
            || inp.stride != out.stride
        {
            return Err(Error::Internal(
                "clover: fields of different precisions, lattices or strides".into(),
            ));
        }
        self.check_clover(clover, &out.lattice, prec)?;
        let s = &self.stream;
        let block_bytes = spinor_block_bytes(prec, out.stride) as u64;
        let at = |f: &CudaSpinor, what: &str| -> Result<u64> {
            Ok(f.data.ptr(s) + block_of(f.subset, parity, what)? as u64 * block_bytes)
        };
        let (_, c, norm) = self.clover_of(clover, inverse);
        let vh = out.lattice.half_volume();
        let params = CloverParams {
            out: at(out, "the output")?,
            inp: at(inp, "the input")?,
            clover: c,
            norm,
            parity: parity.index() as i32,
            vh: vh as i32,
            stride: out.stride as i32,
            clover_stride: clover.stride as i32,
        };
        self.launch_tuned(
            &format!("clover_site_{}", suffix(prec)),
            vh,
            128,
            &params,
            None,
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn clover_dslash_impl(
        &self,
        out: &mut CudaSpinor,
        parity: Parity,
        gauge: &CudaGauge,
        clover: &CudaClover,
        inp: &CudaSpinor,
        dagger: bool,
        a: f64,
        form: CloverForm,
        x: Option<&CudaSpinor>,
    ) -> Result<()> {
        if form == CloverForm::DirectOnX && x.is_none() {
            return Err(Error::Internal(
                "clover dslash: the form A x + a D in needs x".into(),
            ));
        }
        self.check_clover(clover, gauge.lattice(), out.precision())?;
        let mut params: DslashParams = hopping_params(&self.stream, out, parity, gauge, inp, a, x)?;
        let (_, c, norm) = self.clover_of(clover, form == CloverForm::InverseOnHopping);
        params.clover = c;
        params.clover_norm = norm;
        params.clover_stride = clover.stride as i32;
        let name = kernel_name(
            out.precision(),
            gauge.reconstruct(),
            dagger,
            form,
            x.is_some(),
        );
        let launch_all = |params: &DslashParams| {
            self.launch_tuned(&name, gauge.lattice().half_volume(), 128, params, None)
        };
        let (dev, failure) = (self.dev, self.failure);
        launch_hopping(dev, failure, gauge, parity, inp, &params, &name, launch_all)
    }

    /// `clover_dslash_impl` for several fields on the same links and
    /// clover term, in launches of up to `MAX_RHS`
    /// (kernels/wilson_rhs_<format>.cu); on a cut lattice one at a time.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn clover_dslash_rhs_impl(
        &self,
        out: &mut [CudaSpinor],
        parity: Parity,
        gauge: &CudaGauge,
        clover: &CudaClover,
        inp: &[&CudaSpinor],
        dagger: bool,
        a: f64,
        form: CloverForm,
        x: Option<&[&CudaSpinor]>,
    ) -> Result<()> {
        let xk = |k: usize| x.map(|x| x[k]);
        if gauge.halo.is_some() {
            for (k, (o, i)) in out.iter_mut().zip(inp).enumerate() {
                self.clover_dslash_impl(o, parity, gauge, clover, i, dagger, a, form, xk(k))?;
            }
            return Ok(());
        }
        if form == CloverForm::DirectOnX && x.is_none() {
            return Err(Error::Internal(
                "clover dslash: the form A x + a D in needs x".into(),
            ));
        }
        let Some(first) = out.first() else {
            return Ok(());
        };
        self.check_clover(clover, gauge.lattice(), first.precision())?;
        let (_, c, norm) = self.clover_of(clover, form == CloverForm::InverseOnHopping);
        let mut params = Vec::with_capacity(out.len());
        for (k, (o, i)) in out.iter().zip(inp).enumerate() {
            let mut p = hopping_params(&self.stream, o, parity, gauge, i, a, xk(k))?;
            (p.clover, p.clover_norm, p.clover_stride) = (c, norm, clover.stride as i32);
            params.push(p);
        }
        let name = kernel_name(
            first.precision(),
            gauge.reconstruct(),
            dagger,
            form,
            x.is_some(),
        );
        launch_rhs(self.dev, &format!("{name}_rhs"), &params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stored numbers placed straight into the device layout are those
    /// of `CloverData` (what the CPU backend applies) put through `to_soa`,
    /// bit for bit, in every format, with the same norms.
    #[test]
    fn the_device_layout_holds_the_cpu_backends_numbers() {
        use crate::backend::cuda::layout::to_soa;
        use crate::clover::storage::CloverData;
        let lat = std::sync::Arc::new(Lattice::new([4, 2, 2, 2]).unwrap());
        let gauge = crate::random::hot_gauge(&lat, 3);
        let field = crate::clover::compute::compute(&gauge, 0.2).unwrap();
        for format in [
            CloverFormat::Double,
            CloverFormat::Single,
            CloverFormat::Half,
            CloverFormat::Quarter,
        ] {
            let shape = SoaShape {
                reals: PACKED_REALS,
                vec: clover_vec(format),
                sites: lat.volume(),
                stride: padded_stride(lat.volume()),
            };
            fn old<T: Copy + Default + Send + Sync>(shape: SoaShape, v: &[T]) -> Vec<T> {
                let mut soa = vec![T::default(); shape.block_len()];
                to_soa(shape, v, &mut soa, |x| x);
                soa
            }
            let bits = |v: Vec<u64>| v;
            let (new, want, norms, want_norms) = match CloverData::new(&field, format).unwrap() {
                CloverData::F64(v) => {
                    let (n, _) = soa_of::<f64>(&field, shape, as_f64).unwrap();
                    let b = |v: Vec<f64>| v.iter().map(|x| x.to_bits()).collect();
                    (bits(b(n)), bits(b(old(shape, &v))), vec![], vec![])
                }
                CloverData::F32(v) => {
                    let (n, _) = soa_of::<f32>(&field, shape, as_f32).unwrap();
                    let b = |v: Vec<f32>| v.iter().map(|x| x.to_bits() as u64).collect();
                    (b(n), b(old(shape, &v)), vec![], vec![])
                }
                CloverData::Half { v, norm } => {
                    let (n, ns) = soa_of::<i16>(&field, shape, fixed).unwrap();
                    let b = |v: Vec<i16>| v.iter().map(|&x| x as u64).collect();
                    (b(n), b(old(shape, &v)), ns, norm)
                }
                CloverData::Quarter { v, norm } => {
                    let (n, ns) = soa_of::<i8>(&field, shape, fixed).unwrap();
                    let b = |v: Vec<i8>| v.iter().map(|&x| x as u64).collect();
                    (b(n), b(old(shape, &v)), ns, norm)
                }
            };
            assert_eq!(new, want, "{format:?}");
            assert_eq!(norms, want_norms, "{format:?}");
        }
    }

    #[test]
    fn parameter_struct_matches_the_kernel() {
        // clover.cuh static_asserts the same size.
        assert_eq!(std::mem::size_of::<CloverParams>(), 48);
        assert_eq!(std::mem::offset_of!(CloverParams, parity), 32);
    }
}
