//! MILC's `qudaGaugeFixingOVR` (issue 39; MILC's `WANT_GAUGEFIX_OVR_GPU`)
//! and `qudaGaugeFixingFFT`
//! through the C entry point, against what gauge fixing must give: θ (the
//! gauge condition's violation) below the tolerance asked for with
//! `stopWtheta`, the functional larger than before, every gauge-invariant
//! quantity (each plaquette, site by site) as it was; a pure gauge fixed
//! to Landau gauge becomes a constant field; Coulomb gauge leaves the
//! time links' functional alone; site structs and single precision are
//! written in place; refused input leaves the links as they were.

mod milc_face;

use milc_face::links::{from_milc, link_arg, qudaGaugeFixingOVR, to_milc};

use latsol::ffi::quda::abi::*;
use latsol::ffi::LATSOL_SUCCESS;
use latsol::field::GaugeField;
use latsol::gauge_fixing::quality;
use latsol::lattice::{Lattice, Parity};
use std::sync::Arc;

extern "C" {
    fn qudaGaugeFixingFFT(
        precision: i32,
        gauge_dir: u32,
        nsteps: i32,
        verbose_interval: i32,
        alpha: f64,
        autotune: u32,
        tolerance: f64,
        stop_w_theta: u32,
        links: *mut std::os::raw::c_void,
    );
    fn latsol_quda_last_status() -> i32;
}

const D: [usize; 4] = [4, 4, 4, 6];

fn init() {
    milc_face::milc_init(D);
}

fn lattice() -> Arc<Lattice> {
    Arc::new(Lattice::new(D).unwrap())
}

fn fix(links: &mut [f64], dir: u32, tol: f64, theta: bool) {
    let mut arg = link_arg(links);
    unsafe { qudaGaugeFixingOVR(2, dir, 2000, 100, 1.5, tol, 10, theta as u32, &mut arg) };
}

/// Every plaquette of every site and plane.
fn plaquettes(f: &GaugeField) -> Vec<f64> {
    let lat = f.lattice();
    let mut out = Vec::new();
    for p in [Parity::Even, Parity::Odd] {
        for cb in 0..lat.half_volume() {
            out.extend(f.plaquettes_at(lat.coords(p, cb)));
        }
    }
    out
}

#[test]
fn landau_and_coulomb_gauge_to_the_tolerance() {
    init();
    for (dir, dirs) in [(4u32, 4usize), (3, 3)] {
        let u = latsol::random::smooth_gauge(&lattice(), 0.4, 3);
        let before = quality(None, &u, dirs).unwrap();
        let mut a = to_milc(&u);
        fix(&mut a, dir, 1e-13, true);
        assert_eq!(unsafe { latsol_quda_last_status() }, LATSOL_SUCCESS);
        let fixed = from_milc(lattice(), &a);
        let after = quality(None, &fixed, dirs).unwrap();
        assert!(after.theta < 1e-13, "gauge_dir {dir}: {after:?}");
        assert!(after.functional > before.functional);
        let (p, q) = (plaquettes(&u), plaquettes(&fixed));
        let d = p
            .iter()
            .zip(&q)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(d < 1e-13, "plaquettes moved by {d:e}");
        if dirs == 3 {
            // Coulomb gauge: the spatial condition only; Landau's θ over
            // all four directions is not met.
            assert!(quality(None, &fixed, 4).unwrap().theta > 1e-8);
        }
    }
}

#[test]
fn fourier_accelerated_landau_and_coulomb_gauge() {
    init();
    for dirs in [4usize, 3] {
        let u = latsol::random::smooth_gauge(&lattice(), 0.4, 11);
        let mut a = to_milc(&u);
        unsafe {
            qudaGaugeFixingFFT(
                2,
                dirs as u32,
                3000,
                0,
                0.08,
                1,
                1e-13,
                1,
                a.as_mut_ptr().cast(),
            );
            assert_eq!(latsol_quda_last_status(), LATSOL_SUCCESS);
        }
        let fixed = from_milc(lattice(), &a);
        let q = quality(None, &fixed, dirs).unwrap();
        assert!(q.theta < 1e-13, "{dirs}: {q:?}");
        let (p, r) = (plaquettes(&u), plaquettes(&fixed));
        let d = p
            .iter()
            .zip(&r)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(d < 1e-12, "plaquettes moved by {d:e}");
    }
}

#[test]
fn the_functional_criterion_and_single_precision_site_structs() {
    init();
    // MILC's site structs: the links among other members, single.
    #[repr(C)]
    struct Site {
        coords: [i16; 5],
        index: i32,
        link: [f32; 72],
        other: [f32; 6],
    }
    let u = latsol::random::smooth_gauge(&lattice(), 0.4, 5);
    let a = to_milc(&u);
    let mut sites: Vec<Site> = a
        .chunks(72)
        .map(|c| Site {
            coords: [9; 5],
            index: 7,
            link: std::array::from_fn(|k| c[k] as f32),
            other: [3.0; 6],
        })
        .collect();
    let mut arg = QudaMILCSiteArg_t {
        site: sites.as_mut_ptr().cast(),
        link: std::ptr::null_mut(),
        link_offset: std::mem::offset_of!(Site, link),
        mom: std::ptr::null_mut(),
        mom_offset: 0,
        size: std::mem::size_of::<Site>(),
    };
    // MILC's criterion: the functional changes by less than the tolerance.
    unsafe { qudaGaugeFixingOVR(1, 4, 2000, 0, 1.7, 1e-10, 10, 0, &mut arg) };
    assert_eq!(unsafe { latsol_quda_last_status() }, LATSOL_SUCCESS);
    assert!(sites.iter().all(|s| s.index == 7 && s.other == [3.0; 6]));
    let back: Vec<f64> = sites.iter().flat_map(|s| s.link.map(f64::from)).collect();
    let fixed = from_milc(lattice(), &back);
    let q = quality(None, &fixed, 4).unwrap();
    // Single-precision links: θ at the level the functional's change
    // allows (δF ≈ θ at convergence), well past the start.
    assert!(q.theta < 1e-6, "{q:?}");
    assert!(q.theta < quality(None, &u, 4).unwrap().theta * 1e-3);
}

#[test]
fn refused_input_leaves_the_links_alone() {
    init();
    let u = latsol::random::smooth_gauge(&lattice(), 0.4, 6);
    let mut a = to_milc(&u);
    let keep = a.clone();
    let mut arg = link_arg(&mut a);
    unsafe {
        qudaGaugeFixingOVR(2, 4, 100, 0, 2.5, 1e-10, 10, 1, &mut arg);
        assert_ne!(latsol_quda_last_status(), LATSOL_SUCCESS);
        qudaGaugeFixingOVR(2, 4, -1, 0, 1.5, 1e-10, 10, 1, &mut arg);
        assert_ne!(latsol_quda_last_status(), LATSOL_SUCCESS);
        qudaGaugeFixingOVR(2, 4, 100, 0, 1.5, f64::NAN, 10, 1, &mut arg);
        assert_ne!(latsol_quda_last_status(), LATSOL_SUCCESS);
        qudaGaugeFixingOVR(2, 4, 100, 0, 1.5, 1e-10, 10, 1, std::ptr::null_mut());
        assert_ne!(latsol_quda_last_status(), LATSOL_SUCCESS);
        qudaGaugeFixingOVR(2, 7, 100, 0, 1.5, 1e-10, 10, 1, &mut arg);
        assert_ne!(latsol_quda_last_status(), LATSOL_SUCCESS);
    }
    assert_eq!(a, keep);
    // Links with MILC's staggered phases in them (a sign on the y links of
    // odd x) are refused.
    for site in a.chunks_mut(72) {
        site[18..36].iter_mut().for_each(|v| *v = -*v);
    }
    let keep = a.clone();
    let mut arg = link_arg(&mut a);
    unsafe {
        qudaGaugeFixingOVR(2, 4, 100, 0, 1.5, 1e-10, 10, 1, &mut arg);
        assert_ne!(latsol_quda_last_status(), LATSOL_SUCCESS);
    }
    assert_eq!(a, keep);
}
