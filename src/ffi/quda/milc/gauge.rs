//! `qudaPlaquettePhased`, `qudaPolyakovLoopPhased`: gauge observables of
//! MILC's links (site structs or a link array).

use std::os::raw::c_int;

use super::layout::dims;
use crate::error::{Error, Result};
use crate::ffi::quda::abi::*;
use crate::ffi::quda::errors::quda_collective;
use crate::ffi::quda::host::not_null;
use crate::ffi::quda::state;
use crate::field::GaugeField;
use crate::lattice::Lattice;
use crate::layout::{HostGauge, HostReals};
use crate::precision::TBoundary;

/// `qudaPlaquettePhased(precision, plaq, arg, phase_in)`: average, spatial
/// and temporal plaquette, each 1 for the unit field, of MILC's links (a
/// site struct array or a link array, `QudaMILCSiteArg_t`); with
/// `phase_in` the links carry MILC's staggered phases and anti-periodic
/// sign, taken off first.
///
/// # Safety
/// `plaq` points to 3 doubles; `arg` to a `QudaMILCSiteArg_t` whose arrays
/// hold the lattice's links in `precision` (2 double, else single).
#[no_mangle]
pub unsafe extern "C" fn qudaPlaquettePhased(
    precision: c_int,
    plaq: *mut f64,
    arg: *mut QudaMILCSiteArg_t,
    phase_in: c_int,
) {
    quda_collective("qudaPlaquettePhased", || {
        not_null(plaq, "plaq")?;
        not_null(arg, "arg")?;
        // SAFETY: checked non-null.
        let a = unsafe { &*arg };
        let d = dims()?;
        // Single precision is code 1 here (QUDA's site-argument functions).
        let double = precision != 1;
        // SAFETY: the caller's site structs or links.
        let field = unsafe { milc_field(a, d, double) };
        // The whole lattice's, from every rank's part (the phases taken
        // off with the whole lattice's coordinates).
        let v = state::with(|s| {
            let mut field = s.context.agree(field)?;
            if phase_in != 0 {
                let (origin, global) = s.context.place(d);
                let anti = TBoundary::AntiPeriodic;
                crate::api::staggered_fold(&mut field, origin, global, 1, anti, 1.0);
            }
            s.context.plaquette_of(&field)
        })?;
        // SAFETY: 3 doubles.
        unsafe { std::slice::from_raw_parts_mut(plaq, 3) }.copy_from_slice(&v);
        Ok(())
    })
}

/// This rank's links from `arg` (`site_links`) as a gauge field.
///
/// # Safety
/// As `qudaPlaquettePhased`.
pub(crate) unsafe fn milc_field(
    a: &QudaMILCSiteArg_t,
    d: [usize; 4],
    double: bool,
) -> Result<GaugeField> {
    let lat = std::sync::Arc::new(Lattice::new(d)?);
    // SAFETY: forwarded.
    let links = unsafe { site_links(a, lat.volume(), double)? };
    crate::layout::gauge::import(&lat, &HostGauge::Milc(HostReals::F64(&links)))
}

/// The links of `arg` in MILC order (V·4·18 reals, double): from the site
/// structs (`site` non-NULL: 4 links at `link_offset` bytes into each
/// `size`-byte struct) or the link array.
///
/// # Safety
/// As `qudaPlaquettePhased`.
pub(crate) unsafe fn site_links(
    a: &QudaMILCSiteArg_t,
    volume: usize,
    double: bool,
) -> Result<Vec<f64>> {
    let per_site = 4 * 18;
    let mut out = crate::alloc::filled(volume * per_site, 0.0f64, "MILC's links")?;
    let real = if double { 8 } else { 4 };
    for (i, site) in out.chunks_mut(per_site).enumerate() {
        let base: *const u8 = if !a.site.is_null() {
            // SAFETY: site i's struct, `size` bytes each.
            unsafe { (a.site as *const u8).add(i * a.size + a.link_offset) }
        } else {
            not_null(a.link, "arg->link")?;
            // SAFETY: the link array.
            unsafe { (a.link as *const u8).add(i * per_site * real) }
        };
        for (k, v) in site.iter_mut().enumerate() {
            // SAFETY: within site i's links; unaligned reads (site structs).
            *v = unsafe {
                if double {
                    std::ptr::read_unaligned(base.add(8 * k) as *const f64)
                } else {
                    std::ptr::read_unaligned(base.add(4 * k) as *const f32) as f64
                }
            };
        }
    }
    Ok(out)
}

/// `links` (MILC order, V·4·18 reals) written where `site_links` reads
/// them, in the host precision.
///
/// # Safety
/// As `site_links`, the arrays writable.
pub(crate) unsafe fn write_site_links(
    a: &QudaMILCSiteArg_t,
    links: &[f64],
    double: bool,
) -> Result<()> {
    let per_site = 4 * 18;
    let real = if double { 8 } else { 4 };
    if a.site.is_null() {
        not_null(a.link, "arg->link")?;
    }
    for (i, site) in links.chunks(per_site).enumerate() {
        let base: *mut u8 = if !a.site.is_null() {
            // SAFETY: site i's struct, `size` bytes each.
            unsafe { (a.site as *mut u8).add(i * a.size + a.link_offset) }
        } else {
            // SAFETY: the link array.
            unsafe { (a.link as *mut u8).add(i * per_site * real) }
        };
        for (k, &v) in site.iter().enumerate() {
            // SAFETY: within site i's links; unaligned writes (site structs).
            unsafe {
                if double {
                    std::ptr::write_unaligned(base.add(8 * k) as *mut f64, v)
                } else {
                    std::ptr::write_unaligned(base.add(4 * k) as *mut f32, v as f32)
                }
            }
        }
    }
    Ok(())
}

/// `qudaPolyakovLoopPhased(precision, ploop, dir, arg, phase_in)`: the
/// Polyakov loop in the time direction (`dir` 3 only, as QUDA),
/// `(1/V₃) Σ_x⃗ tr Π_t U_t(x⃗, t)` (not divided by 3), real and imaginary
/// parts, **negated** as QUDA's is: MILC's links carry the anti-periodic
/// sign on the last slice, which the negation cancels (the staggered
/// phases of T links are 1, so `phase_in` changes nothing here).
///
/// # Safety
/// `ploop` points to 2 doubles; `arg` as for `qudaPlaquettePhased`.
#[no_mangle]
pub unsafe extern "C" fn qudaPolyakovLoopPhased(
    precision: c_int,
    ploop: *mut f64,
    dir: c_int,
    arg: *mut QudaMILCSiteArg_t,
    _phase_in: c_int,
) {
    quda_collective("qudaPolyakovLoopPhased", || {
        not_null(ploop, "ploop")?;
        not_null(arg, "arg")?;
        if dir != 3 {
            return Err(Error::InvalidArgument(format!(
                "dir = {dir}: the Polyakov loop is taken in the time direction (3)"
            )));
        }
        // SAFETY: checked non-null.
        let a = unsafe { &*arg };
        let d = dims()?;
        // SAFETY: the caller's site structs or links.
        let field = unsafe { milc_field(a, d, precision != 1) };
        // The whole lattice's lines, across the ranks along t.
        let sum = state::with(|s| s.context.polyakov_loop_of(&s.context.agree(field)?))?;
        // SAFETY: 2 doubles.
        unsafe {
            *ploop = -sum.re;
            *ploop.add(1) = -sum.im;
        }
        Ok(())
    })
}

/// `qudaFreeGaugeField()`: `freeGaugeQuda`, as QUDA's MILC interface does.
#[no_mangle]
pub extern "C" fn qudaFreeGaugeField() {
    crate::ffi::quda::fields::freeGaugeQuda()
}

/// `qudaFreeTwoLink()`: `freeGaugeTwoLinkQuda`, as QUDA's MILC interface
/// does (lib/milc_interface.cpp); called by MILC at every new gauge field.
#[no_mangle]
pub extern "C" fn qudaFreeTwoLink() {
    crate::ffi::quda::fields::freeGaugeTwoLinkQuda()
}
