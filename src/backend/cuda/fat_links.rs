//! Improved staggered links from links on the device
//! (`kernels/fat_links.cu`): the fat links' staple sums and the long links
//! (`Backend::fat_links`), and the U(3) projection by Cayley–Hamilton
//! (`Backend::unitarize_links`), the host path's numbers
//! (`fat_links::paths`, `fat_links::unitarize`) up to rounding. The links
//! cross the bus in double as the host field holds them, with the lattice's
//! neighbour table, so any periodic lattice (a rank's extended field
//! included) is computed alike. Without device memory for the fields the
//! host path takes over (`None`).

use cudarc::driver::{CudaSlice, DevicePtr, DeviceRepr};
use rayon::prelude::*;

use super::driver::device::Device;
use super::driver::errors::device_err;
use super::driver::launch;
use crate::error::Result;
use crate::fat_links::paths::Neighbours;
use crate::fat_links::{PathCoefficients, UnitarizeParams};
use crate::field::GaugeField;
use crate::su3::Su3;

/// Threads a block (`FAT_LINKS_BLOCK`, the kernels' launch bound).
const BLOCK: u32 = 128;

/// Mirrors `FatParams` in kernels/fat_links.cu.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct FatParams {
    pub links: u64,
    pub neighbours: u64,
    pub m: u64,
    pub out: u64,
    pub acc: u64,
    pub volume: i64,
    pub mu: i32,
    pub nu: i32,
    pub m_step: i32,
    pub pad: i32,
    pub coef: f64,
}
// SAFETY: plain old data with the kernel's layout.
unsafe impl DeviceRepr for FatParams {}

/// Mirrors `UnitarizeKernelParams` in kernels/fat_links.cu.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct UnitarizeKernelParams {
    pub input: u64,
    pub out: u64,
    pub flags: u64,
    pub links: i64,
    pub eps: f64,
    pub svd_rel_error: f64,
    pub svd_abs_error: f64,
    pub allow_svd: i32,
    pub svd_only: i32,
}
// SAFETY: plain old data with the kernel's layout.
unsafe impl DeviceRepr for UnitarizeKernelParams {}

/// The kernels of `kernels/fat_links.cu`.
pub fn kernel_names() -> Vec<String> {
    ["fat_one_link", "fat_staple", "fat_long", "unitarize_u3"]
        .map(String::from)
        .to_vec()
}

/// Links as the kernels read them: 18 reals each, in order.
pub(crate) fn reals_of(links: &[Su3]) -> Vec<f64> {
    let mut out = vec![0.0; links.len() * 18];
    out.par_chunks_mut(18)
        .zip(links.par_iter())
        .for_each(|(o, l)| l.to_row_major(o));
    out
}

/// The neighbour table as the kernels read it: `[site][fwd, bwd][μ]`.
pub(crate) fn neighbour_words(nb: &Neighbours) -> Vec<u32> {
    nb.table().iter().flatten().flatten().copied().collect()
}

/// The device's buffers of one fattening; `None` without the memory.
struct Buffers {
    links: CudaSlice<f64>,
    neighbours: CudaSlice<u32>,
    acc: CudaSlice<f64>,
    s3: CudaSlice<f64>,
    s5: CudaSlice<f64>,
}

impl Buffers {
    fn new(dev: &Device, links: &GaugeField) -> Option<Buffers> {
        let v = links.lattice().volume();
        let nb = Neighbours::of(links.lattice());
        Some(Buffers {
            links: dev.stream.clone_htod(&reals_of(links.links())).ok()?,
            neighbours: dev.stream.clone_htod(&neighbour_words(&nb)).ok()?,
            acc: dev.stream.alloc_zeros::<f64>(18 * v).ok()?,
            s3: dev.stream.alloc_zeros::<f64>(18 * v).ok()?,
            s5: dev.stream.alloc_zeros::<f64>(18 * v).ok()?,
        })
    }

    fn params(&self, dev: &Device, volume: usize, mu: usize) -> FatParams {
        let links = self.links.device_ptr(&dev.stream).0;
        FatParams {
            links,
            neighbours: self.neighbours.device_ptr(&dev.stream).0,
            m: links + (mu * 18 * 8) as u64,
            out: 0,
            acc: self.acc.device_ptr(&dev.stream).0,
            volume: volume as i64,
            mu: mu as i32,
            nu: 0,
            m_step: 4,
            pad: 0,
            coef: 0.0,
        }
    }
}

fn run(dev: &Device, name: &str, threads: usize, params: &impl DeviceRepr) -> Result<()> {
    let kernel = dev.kernel(name)?;
    launch::launch(
        &dev.stream,
        &kernel,
        launch::grid_for(threads, BLOCK)?,
        BLOCK,
        params,
    )
}

/// One direction of a device field into direction `mu` of `out`.
fn download_direction(
    dev: &Device,
    field: &CudaSlice<f64>,
    out: &mut GaugeField,
    mu: usize,
) -> Result<()> {
    let v = dev
        .stream
        .clone_dtoh(field)
        .map_err(device_err("fat links to the host"))?;
    out.links_mut()
        .par_iter_mut()
        .skip(mu)
        .step_by(4)
        .zip(v.par_chunks(18))
        .for_each(|(l, r)| *l = Su3::from_row_major(r));
    Ok(())
}

/// The fat links of `links` with coefficients `c`, and the long links
/// where `long`; the launch order is the host path's (`fat_direction`).
pub(crate) fn fat_links(
    dev: &Device,
    links: &GaugeField,
    c: &PathCoefficients,
    long: bool,
) -> Result<Option<(GaugeField, Option<GaugeField>)>> {
    let modules: Vec<_> = dev.module_named("fat_links").into_iter().collect();
    if dev.prepare_modules(&modules).is_err() {
        return Ok(None);
    }
    let Some(b) = Buffers::new(dev, links) else {
        return Ok(None);
    };
    let lat = links.lattice().clone();
    let v = lat.volume();
    let ptr = |s: &CudaSlice<f64>| s.device_ptr(&dev.stream).0;
    let mut fat = GaugeField::try_unit(lat.clone())?;
    for mu in 0..4 {
        let base = b.params(dev, v, mu);
        let one = FatParams {
            coef: c.corrected_one_link(),
            ..base
        };
        run(dev, "fat_one_link", v, &one)?;
        if c.has_staples() {
            for nu in (0..4).filter(|&n| n != mu) {
                let nu_params = FatParams {
                    nu: nu as i32,
                    ..base
                };
                let s3 = FatParams {
                    out: ptr(&b.s3),
                    coef: c.three_staple,
                    ..nu_params
                };
                run(dev, "fat_staple", v, &s3)?;
                let from_s3 = FatParams {
                    m: ptr(&b.s3),
                    m_step: 1,
                    ..nu_params
                };
                if c.has_lepage() {
                    run(
                        dev,
                        "fat_staple",
                        v,
                        &FatParams {
                            coef: c.lepage,
                            ..from_s3
                        },
                    )?;
                }
                for rho in (0..4).filter(|&r| r != mu && r != nu) {
                    let s5 = FatParams {
                        nu: rho as i32,
                        out: ptr(&b.s5),
                        coef: c.five_staple,
                        ..from_s3
                    };
                    run(dev, "fat_staple", v, &s5)?;
                    if c.has_seven_staple() {
                        for sigma in (0..4).filter(|&s| s != mu && s != nu && s != rho) {
                            let s7 = FatParams {
                                m: ptr(&b.s5),
                                m_step: 1,
                                nu: sigma as i32,
                                coef: c.seven_staple,
                                ..base
                            };
                            run(dev, "fat_staple", v, &s7)?;
                        }
                    }
                }
            }
        }
        download_direction(dev, &b.acc, &mut fat, mu)?;
    }
    let long = if long {
        let mut out = GaugeField::try_unit(lat.clone())?;
        for mu in 0..4 {
            let p = FatParams {
                out: ptr(&b.s3),
                coef: c.naik,
                ..b.params(dev, v, mu)
            };
            run(dev, "fat_long", v, &p)?;
            download_direction(dev, &b.s3, &mut out, mu)?;
        }
        Some(out)
    } else {
        None
    };
    Ok(Some((fat, long)))
}

/// The U(3) projection of every link of `v` by Cayley–Hamilton, and the
/// links (canonical indices) the SVD must decide, left as they were.
pub(crate) fn unitarize_links(
    dev: &Device,
    v: &GaugeField,
    p: &UnitarizeParams,
) -> Result<Option<(GaugeField, Vec<usize>)>> {
    let modules: Vec<_> = dev.module_named("fat_links").into_iter().collect();
    if dev.prepare_modules(&modules).is_err() {
        return Ok(None);
    }
    let n = v.links().len();
    let (Ok(input), Ok(out), Ok(flags)) = (
        dev.stream.clone_htod(&reals_of(v.links())),
        dev.stream.alloc_zeros::<f64>(18 * n),
        dev.stream.alloc_zeros::<i32>(n),
    ) else {
        return Ok(None);
    };
    let params = UnitarizeKernelParams {
        input: input.device_ptr(&dev.stream).0,
        out: out.device_ptr(&dev.stream).0,
        flags: flags.device_ptr(&dev.stream).0,
        links: n as i64,
        eps: p.eps,
        svd_rel_error: p.svd_rel_error,
        svd_abs_error: p.svd_abs_error,
        allow_svd: i32::from(p.allow_svd),
        svd_only: i32::from(p.svd_only),
    };
    run(dev, "unitarize_u3", n, &params)?;
    let w = dev
        .stream
        .clone_dtoh(&out)
        .map_err(device_err("U(3) links to the host"))?;
    let flags = dev
        .stream
        .clone_dtoh(&flags)
        .map_err(device_err("U(3) flags to the host"))?;
    let mut field = v.clone();
    field
        .links_mut()
        .par_iter_mut()
        .zip(w.par_chunks(18))
        .for_each(|(l, r)| *l = Su3::from_row_major(r));
    let flagged = (0..n).filter(|&i| flags[i] != 0).collect();
    Ok(Some((field, flagged)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_structs_match_the_kernels() {
        // kernels/fat_links.cu: 5 u64, long long, 4 int, double.
        assert_eq!(std::mem::size_of::<FatParams>(), 48 + 16 + 8);
        assert_eq!(std::mem::offset_of!(FatParams, coef), 64);
        // 3 u64, long long, 3 double, 2 int.
        assert_eq!(std::mem::size_of::<UnitarizeKernelParams>(), 32 + 24 + 8);
    }

    #[test]
    fn kernel_names_exist_in_the_source() {
        let text = include_str!("../../../kernels/fat_links.cu");
        for k in kernel_names() {
            assert!(text.contains(&format!(" {k}(")), "{k}");
        }
        assert!(text.contains(&format!("#define FAT_LINKS_BLOCK {BLOCK}")));
    }
}
