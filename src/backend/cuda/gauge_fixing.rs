//! Gauge fixing by over-relaxation on the device (`kernels/gauge_fixing.cu`):
//! the links stay on the device for the whole fixing; each step is two
//! half-sweep launches, and the quality one launch whose per-block sums
//! the host adds in order (`Backend::ovr_sweeps`; the loop is
//! `gauge_fixing::ovr::run_ovr`, the host's). The projection back on SU(3)
//! is `unitarize_u3` of kernels/fat_links.cu, in place; a link it leaves
//! to the SVD (none for links near SU(3)) is projected on the host.

use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr};
use rayon::prelude::*;

use super::driver::device::Device;
use super::driver::errors::device_err;
use super::driver::launch;
use super::fat_links::{neighbour_words, reals_of, UnitarizeKernelParams};
use crate::backend::OvrSweeps;
use crate::error::Result;
use crate::fat_links::paths::Neighbours;
use crate::fat_links::unitarize::{check_unitary, unitarize_link};
use crate::fat_links::UnitarizeParams;
use crate::field::GaugeField;
use crate::lattice::Parity;
use crate::su3::Su3;

/// Threads a block (`GAUGE_FIX_BLOCK`).
const BLOCK: u32 = 128;

/// Mirrors `GaugeFixParams` in kernels/gauge_fixing.cu.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct GaugeFixParams {
    pub links: u64,
    pub neighbours: u64,
    pub partials: u64,
    pub vh: i64,
    pub parity: i32,
    pub dirs: i32,
    pub relax_boost: f64,
}
// SAFETY: plain old data with the kernel's layout.
unsafe impl DeviceRepr for GaugeFixParams {}

/// The kernels of `kernels/gauge_fixing.cu`.
pub fn kernel_names() -> Vec<String> {
    ["gauge_fix_half_sweep", "gauge_fix_quality"]
        .map(String::from)
        .to_vec()
}

/// A fixing's device state.
pub(crate) struct DeviceSweeps<'d> {
    dev: &'d Device,
    template: GaugeField,
    links: CudaSlice<f64>,
    neighbours: CudaSlice<u32>,
    partials: CudaSlice<f64>,
    flags: CudaSlice<i32>,
    dirs: usize,
    relax_boost: f64,
}

/// `links` on the device for fixing; `None` without the memory or the
/// kernels.
pub(crate) fn ovr_sweeps<'d>(
    dev: &'d Device,
    links: &GaugeField,
    dirs: usize,
    relax_boost: f64,
) -> Result<Option<DeviceSweeps<'d>>> {
    let modules: Vec<_> = ["gauge_fixing", "fat_links"]
        .iter()
        .filter_map(|m| dev.module_named(m))
        .collect();
    if modules.len() != 2 || dev.prepare_modules(&modules).is_err() {
        return Ok(None);
    }
    let lat = links.lattice();
    let blocks = lat.volume().div_ceil(BLOCK as usize);
    let nb = Neighbours::of(lat);
    let (Ok(l), Ok(n), Ok(p), Ok(f)) = (
        dev.stream.clone_htod(&reals_of(links.links())),
        dev.stream.clone_htod(&neighbour_words(&nb)),
        dev.stream.alloc_zeros::<f64>(2 * blocks),
        dev.stream.alloc_zeros::<i32>(links.links().len()),
    ) else {
        return Ok(None);
    };
    Ok(Some(DeviceSweeps {
        dev,
        template: GaugeField::try_unit(lat.clone())?,
        links: l,
        neighbours: n,
        partials: p,
        flags: f,
        dirs,
        relax_boost,
    }))
}

impl DeviceSweeps<'_> {
    fn params(&self, parity: usize) -> GaugeFixParams {
        let s = &self.dev.stream;
        GaugeFixParams {
            links: self.links.device_ptr(s).0,
            neighbours: self.neighbours.device_ptr(s).0,
            partials: self.partials.device_ptr(s).0,
            vh: self.template.lattice().half_volume() as i64,
            parity: parity as i32,
            dirs: self.dirs as i32,
            relax_boost: self.relax_boost,
        }
    }

    fn run(&self, name: &str, threads: usize, params: &impl DeviceRepr) -> Result<()> {
        let kernel = self.dev.kernel(name)?;
        launch::launch(
            &self.dev.stream,
            &kernel,
            launch::grid_for(threads, BLOCK)?,
            BLOCK,
            params,
        )
    }
}

impl OvrSweeps for DeviceSweeps<'_> {
    fn half_sweep(&mut self, p: Parity) -> Result<()> {
        let params = self.params(p.index());
        self.run("gauge_fix_half_sweep", params.vh as usize, &params)
    }

    fn reunitarize(&mut self) -> Result<()> {
        let n = self.template.links().len();
        let u = UnitarizeParams::default();
        let at = self.links.device_ptr(&self.dev.stream).0;
        let params = UnitarizeKernelParams {
            input: at,
            out: at,
            flags: self.flags.device_ptr(&self.dev.stream).0,
            links: n as i64,
            eps: u.eps,
            svd_rel_error: u.svd_rel_error,
            svd_abs_error: u.svd_abs_error,
            allow_svd: 1,
            svd_only: 0,
        };
        self.run("unitarize_u3", n, &params)?;
        let flags = self
            .dev
            .stream
            .clone_dtoh(&self.flags)
            .map_err(device_err("U(3) flags to the host"))?;
        if flags.iter().all(|&f| f == 0) {
            return Ok(());
        }
        // Links the SVD must decide: on the host, and back.
        let mut field = self.links()?;
        for (i, _) in flags.iter().enumerate().filter(|(_, &f)| f != 0) {
            field.links_mut()[i] = unitarize_link(&field.links()[i], &u);
        }
        check_unitary(&field, u.max_error)?;
        self.dev
            .stream
            .memcpy_htod(&reals_of(field.links()), &mut self.links)
            .map_err(device_err("U(3) links to the device"))
    }

    fn quality_sums(&mut self) -> Result<[f64; 2]> {
        let params = self.params(0);
        self.run("gauge_fix_quality", 2 * params.vh as usize, &params)?;
        let partials = self
            .dev
            .stream
            .clone_dtoh(&self.partials)
            .map_err(device_err("gauge-fixing sums to the host"))?;
        Ok(partials
            .chunks(2)
            .fold([0.0, 0.0], |s, p| [s[0] + p[0], s[1] + p[1]]))
    }

    fn links(&mut self) -> Result<GaugeField> {
        let v = self
            .dev
            .stream
            .clone_dtoh(&self.links)
            .map_err(device_err("links to the host"))?;
        let mut out = self.template.clone();
        out.links_mut()
            .par_iter_mut()
            .zip(v.par_chunks(18))
            .for_each(|(l, r)| *l = Su3::from_row_major(r));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_struct_matches_the_kernel() {
        // kernels/gauge_fixing.cu: 3 u64, long long, 2 int, double.
        assert_eq!(std::mem::size_of::<GaugeFixParams>(), 48);
        assert_eq!(std::mem::offset_of!(GaugeFixParams, relax_boost), 40);
    }

    #[test]
    fn kernel_names_exist_in_the_source() {
        let text = include_str!("../../../kernels/gauge_fixing.cu");
        for k in kernel_names() {
            assert!(text.contains(&format!(" {k}(")), "{k}");
        }
        assert!(text.contains(&format!("#define GAUGE_FIX_BLOCK {BLOCK}")));
    }
}
