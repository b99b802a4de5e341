//! Helpers shared by the integration tests: a CPU context and a field loaded
//! into it, apply the Wilson operator of the CPU backend to host fields, and
//! compare fields.
#![allow(dead_code)]

use std::sync::Arc;

use latsol::api::{BackendChoice, Context, Gauge, GaugeParams, InitParams, Verbosity};
use latsol::backend::cpu::CpuBackend;
use latsol::backend::Backend;
use latsol::dirac::wilson::WilsonFull;
use latsol::dirac::DiracOperator;
use latsol::field::{GaugeField, HostSpinor};
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::layout::{self, GaugeOrder, HostGauge, HostReals, HostRealsMut};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use num_complex::Complex64 as C64;

/// A silent CPU context of 2 threads.
pub fn cpu_context() -> Context {
    Context::new(InitParams {
        backend: BackendChoice::Cpu,
        num_threads: 2,
        verbosity: Verbosity::Silent,
        ..Default::default()
    })
    .unwrap()
}

/// `field` loaded into `ctx` through the MILC order (double host links),
/// with `params` for everything but the lattice and the order.
pub fn load_milc(ctx: &Context, field: &GaugeField, params: GaugeParams) -> Gauge {
    let lat = field.lattice();
    let mut milc = vec![0.0f64; lat.volume() * 72];
    layout::gauge::export(field, GaugeOrder::Milc, &mut [HostRealsMut::F64(&mut milc)]).unwrap();
    let params = GaugeParams {
        dims: lat.dims(),
        order: GaugeOrder::Milc,
        ..params
    };
    ctx.load_gauge(&params, &HostGauge::Milc(HostReals::F64(&milc)))
        .unwrap()
}

/// Anti-periodic in time, the sloppy copy in single with 12-real links.
pub fn single_sloppy() -> GaugeParams {
    GaugeParams {
        t_boundary: TBoundary::AntiPeriodic,
        precision_sloppy: Precision::Single,
        reconstruct_sloppy: Reconstruct::Twelve,
        ..Default::default()
    }
}

pub fn backend() -> CpuBackend {
    CpuBackend::new(2).unwrap()
}

/// `M ψ` (or `M† ψ`) with `M = 1 − κ D`, full lattice, double.
pub fn apply_m(
    b: &CpuBackend,
    g: &GaugeField,
    bc: TBoundary,
    kappa: f64,
    psi: &HostSpinor,
    dagger: bool,
) -> HostSpinor {
    let gauge = b
        .upload_gauge(g, bc, Precision::Double, Reconstruct::Full18)
        .unwrap();
    let lat = g.lattice().clone();
    let mut i = b
        .alloc_spinor(&lat, Subset::Full, Precision::Double)
        .unwrap();
    let mut o = b
        .alloc_spinor(&lat, Subset::Full, Precision::Double)
        .unwrap();
    b.upload_spinor(&mut i, psi).unwrap();
    WilsonFull::new(b, &gauge, kappa, Precision::Double)
        .apply(&mut o, &i, dagger)
        .unwrap();
    let mut out = HostSpinor::zeros(lat, Subset::Full);
    b.download_spinor(&o, &mut out).unwrap();
    out
}

/// The hopping term `D ψ` on the full lattice.
pub fn apply_dslash(b: &CpuBackend, g: &GaugeField, bc: TBoundary, psi: &HostSpinor) -> HostSpinor {
    let gauge = b
        .upload_gauge(g, bc, Precision::Double, Reconstruct::Full18)
        .unwrap();
    let lat = g.lattice().clone();
    let mut i = b
        .alloc_spinor(&lat, Subset::Full, Precision::Double)
        .unwrap();
    let mut o = b
        .alloc_spinor(&lat, Subset::Full, Precision::Double)
        .unwrap();
    b.upload_spinor(&mut i, psi).unwrap();
    for p in [Parity::Even, Parity::Odd] {
        b.wilson_dslash(&mut o, p, &gauge, &i, false, 1.0, None)
            .unwrap();
    }
    let mut out = HostSpinor::zeros(lat, Subset::Full);
    b.download_spinor(&o, &mut out).unwrap();
    out
}

/// `⟨a, b⟩ = Σ a* b`.
pub fn dot(a: &HostSpinor, b: &HostSpinor) -> C64 {
    a.data()
        .iter()
        .zip(b.data())
        .map(|(x, y)| x.conj() * y)
        .sum()
}

/// `‖a − b‖ / ‖b‖`.
pub fn rel_diff(a: &HostSpinor, b: &HostSpinor) -> f64 {
    let d: f64 = a
        .data()
        .iter()
        .zip(b.data())
        .map(|(x, y)| (x - y).norm_sqr())
        .sum();
    (d / b.norm2()).sqrt()
}

/// `γ5 ψ` with the dense UKQCD γ5 (independent of the backend's).
pub fn gamma5(psi: &HostSpinor) -> HostSpinor {
    let g5 = latsol::gamma::ukqcd(5);
    let mut out = psi.clone();
    for site in 0..psi.sites() {
        let s = psi.site(site);
        let o = out.site_mut(site);
        for a in 0..4 {
            for c in 0..3 {
                o[3 * a + c] = (0..4).map(|b| g5[a][b] * s[3 * b + c]).sum();
            }
        }
    }
    out
}

pub fn lattice(dims: [usize; 4]) -> Arc<Lattice> {
    Arc::new(Lattice::new(dims).unwrap())
}

/// A raw little-endian f64 file of the golden set `set`
/// (tests/data/golden-…, its meta.json says what each file holds).
pub fn golden_reals(set: &str, name: &str) -> Vec<f64> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(set)
        .join(name);
    std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// QDP host links: the four direction arrays of `v` (`4 V · 18` reals).
pub fn qdp_quarters(v: &[f64]) -> [latsol::layout::HostReals<'_>; 4] {
    let n = v.len() / 4;
    std::array::from_fn(|mu| latsol::layout::HostReals::F64(&v[mu * n..(mu + 1) * n]))
}

/// ‖b − M x‖ / ‖b‖ of full colour-vector fields, measured with the
/// library's `M = 2m − D` (`apply_staggered`).
pub fn staggered_residual(
    ctx: &Context,
    links: &latsol::api::StaggeredLinks,
    mass: f64,
    b: &[f64],
    x: &[f64],
) -> f64 {
    use latsol::layout::{HostReals, HostRealsMut};
    let mut mx = vec![0.0; b.len()];
    ctx.apply_staggered(
        links,
        mass,
        latsol::api::StaggeredOp::M,
        HostReals::F64(x),
        HostRealsMut::F64(&mut mx),
    )
    .unwrap();
    let r: Vec<f64> = b.iter().zip(&mx).map(|(b, m)| b - m).collect();
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    norm(&r) / norm(b)
}

/// ‖a − b‖ / ‖b‖ of two arrays of reals.
pub fn rel_diff_reals(a: &[f64], b: &[f64]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let n: f64 = b.iter().map(|y| y * y).sum();
    (d / n).sqrt()
}

/// A staggered `invertQuda` parameter set (`ip` fresh from
/// `newQudaInvertParam`): CG on `dslash`'s operator with mass `mass`, the
/// caller's `solution` and `solve` types on the even parity, double
/// everywhere, tol 1e-12, silent.
pub fn quda_staggered_param(
    mut ip: latsol::ffi::quda::abi::QudaInvertParam,
    dslash: latsol::ffi::quda::abi::QudaDslashType,
    mass: f64,
    solution: latsol::ffi::quda::abi::QudaSolutionType,
    solve: latsol::ffi::quda::abi::QudaSolveType,
) -> latsol::ffi::quda::abi::QudaInvertParam {
    use latsol::ffi::quda::abi::*;
    ip.dslash_type = dslash;
    ip.inv_type = QUDA_CG_INVERTER;
    ip.mass = mass;
    ip.solution_type = solution;
    ip.solve_type = solve;
    ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
    ip.dagger = QUDA_DAG_NO;
    ip.mass_normalization = QUDA_MASS_NORMALIZATION;
    ip.cpu_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
    ip.dirac_order = QUDA_DIRAC_ORDER;
    ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
    ip.tol = 1e-12;
    ip.maxiter = 5000;
    ip.reliable_delta = 0.1;
    ip.verbosity = QUDA_SILENT;
    ip
}

/// A link field given in QDP order (`volume` sites) in QUDA's `order`: MILC the four
/// links of a site in turn (row-major), CPS_WILSON the same column-major
/// (docs/conventions.md, "Host orders").
pub fn quda_links_in_order(
    qdp: &[f64],
    volume: usize,
    order: latsol::ffi::quda::abi::QudaGaugeFieldOrder,
) -> Vec<f64> {
    use latsol::ffi::quda::abi::*;
    if order == QUDA_QDP_GAUGE_ORDER {
        return qdp.to_vec();
    }
    let n = volume * 18;
    let mut out = vec![0.0; 4 * n];
    for site in 0..volume {
        for mu in 0..4 {
            let link = &qdp[mu * n + site * 18..][..18];
            let to = &mut out[(site * 4 + mu) * 18..][..18];
            for (r, c) in (0..3).flat_map(|r| (0..3).map(move |c| (r, c))) {
                let (from, at) = if order == QUDA_MILC_GAUGE_ORDER {
                    (r * 3 + c, r * 3 + c)
                } else {
                    (r * 3 + c, c * 3 + r)
                };
                to[2 * at] = link[2 * from];
                to[2 * at + 1] = link[2 * from + 1];
            }
        }
    }
    out
}

extern "C" {
    fn newQudaGaugeParam() -> latsol::ffi::quda::abi::QudaGaugeParam;
    fn loadGaugeQuda(
        h_gauge: *mut std::os::raw::c_void,
        param: *mut latsol::ffi::quda::abi::QudaGaugeParam,
    );
}

/// `loadGaugeQuda` of a link field of `kind` given in QDP order in `qdp`
/// (the lattice `dims`), handed to QUDA's interface in `order` and in single
/// host precision (`single`) or double; device precisions double,
/// reconstruct 18.
pub fn quda_load_links(
    qdp: &[f64],
    dims: [i32; 4],
    kind: latsol::ffi::quda::abi::QudaLinkType,
    order: latsol::ffi::quda::abi::QudaGaugeFieldOrder,
    t_boundary: latsol::ffi::quda::abi::QudaTboundary,
    single: bool,
) {
    use latsol::ffi::quda::abi::*;
    use std::os::raw::c_void;
    let volume = dims.iter().map(|&d| d as usize).product::<usize>();
    let mut gp = unsafe { newQudaGaugeParam() };
    gp.X = dims;
    gp.anisotropy = 1.0;
    gp.r#type = kind;
    gp.gauge_order = order;
    gp.t_boundary = t_boundary;
    gp.cpu_prec = if single {
        QUDA_SINGLE_PRECISION
    } else {
        QUDA_DOUBLE_PRECISION
    };
    gp.cuda_prec = QUDA_DOUBLE_PRECISION;
    gp.cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
    gp.reconstruct = QUDA_RECONSTRUCT_NO;
    gp.reconstruct_sloppy = QUDA_RECONSTRUCT_NO;
    gp.gauge_fix = QUDA_GAUGE_FIXED_NO;
    let mut given = quda_links_in_order(qdp, volume, order);
    let mut narrow: Vec<f32> = given.iter().map(|&x| x as f32).collect();
    let n = volume * 18;
    let base: *mut c_void = if single {
        narrow.as_mut_ptr().cast()
    } else {
        given.as_mut_ptr().cast()
    };
    let width = if single { 4 } else { 8 };
    let mut parts: Vec<*mut c_void> = (0..4)
        .map(|mu| unsafe { base.cast::<u8>().add(mu * n * width).cast() })
        .collect();
    let h_gauge = if order == QUDA_QDP_GAUGE_ORDER {
        parts.as_mut_ptr().cast()
    } else {
        base
    };
    unsafe { loadGaugeQuda(h_gauge, &mut gp) };
}
