//! MILC's link arrays (`QudaMILCSiteArg_t` without site structs) to and
//! from `GaugeField`, for the tests of the MILC calls that take links.
#![allow(dead_code)] // each test binary uses what it needs

use latsol::ffi::quda::abi::*;
use latsol::field::GaugeField;
use latsol::lattice::Lattice;
use latsol::su3::Su3;
use std::sync::Arc;

extern "C" {
    /// MILC's gauge fixing by over-relaxation (QUDA's declaration).
    pub fn qudaGaugeFixingOVR(
        precision: i32,
        gauge_dir: u32,
        nsteps: i32,
        verbose_interval: i32,
        relax_boost: f64,
        tolerance: f64,
        reunit_interval: u32,
        stop_w_theta: u32,
        arg: *mut QudaMILCSiteArg_t,
    );
}

/// MILC order: even sites first, 4 links a site; `GaugeField` keeps the
/// same order (even-odd, x fastest), so its links are MILC's array.
pub fn to_milc(f: &GaugeField) -> Vec<f64> {
    let mut out = vec![0.0; f.links().len() * 18];
    for (i, l) in f.links().iter().enumerate() {
        l.to_row_major(&mut out[18 * i..][..18]);
    }
    out
}

pub fn from_milc(lattice: Arc<Lattice>, a: &[f64]) -> GaugeField {
    let mut f = GaugeField::unit(lattice);
    for (i, l) in f.links_mut().iter_mut().enumerate() {
        *l = Su3::from_row_major(&a[18 * i..][..18]);
    }
    f
}

pub fn link_arg(links: &mut [f64]) -> QudaMILCSiteArg_t {
    QudaMILCSiteArg_t {
        site: std::ptr::null_mut(),
        link: links.as_mut_ptr().cast(),
        link_offset: 0,
        mom: std::ptr::null_mut(),
        mom_offset: 0,
        size: 0,
    }
}
