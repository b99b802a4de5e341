//! Helpers shared by the C-ABI tests (`tests/ffi_*.rs`): contexts on the
//! CPU, random SU(3) gauge fields in host orders (made here, independently
//! of the library), spinors, sentinels, and the last error as a `String`.
#![allow(dead_code)]

use std::ffi::{c_void, CStr};
use std::ptr;

use latsol::ffi::*;

/// What output buffers are filled with before a call that must fail.
pub const SENTINEL: f64 = -12345.678;

/// splitmix64: deterministic and dependency-free.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    pub fn real(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 * 2.0 - 1.0
    }
}

type C = (f64, f64);

fn cmul(a: C, b: C) -> C {
    (a.0 * b.0 - a.1 * b.1, a.0 * b.1 + a.1 * b.0)
}
fn conj(a: C) -> C {
    (a.0, -a.1)
}

/// A random SU(3) matrix, 18 reals row-major: Gram–Schmidt on two random
/// rows, the third the conjugated cross product (so det = 1).
pub fn random_su3(rng: &mut Rng) -> [f64; 18] {
    let mut rows = [[(0.0, 0.0); 3]; 3];
    for r in 0..2 {
        let mut v: [C; 3] = [(0.0, 0.0); 3];
        for c in v.iter_mut() {
            *c = (rng.real(), rng.real());
        }
        if r == 1 {
            // v -= (u0† v) u0
            let u = rows[0];
            let mut d = (0.0, 0.0);
            for k in 0..3 {
                let p = cmul(conj(u[k]), v[k]);
                d = (d.0 + p.0, d.1 + p.1);
            }
            for k in 0..3 {
                let p = cmul(d, u[k]);
                v[k] = (v[k].0 - p.0, v[k].1 - p.1);
            }
        }
        let n = v.iter().map(|c| c.0 * c.0 + c.1 * c.1).sum::<f64>().sqrt();
        for (k, c) in v.iter().enumerate() {
            rows[r][k] = (c.0 / n, c.1 / n);
        }
    }
    let (a, b) = (rows[0], rows[1]);
    rows[2] = std::array::from_fn(|k| {
        let (i, j) = ((k + 1) % 3, (k + 2) % 3);
        let x = cmul(a[i], b[j]);
        let y = cmul(a[j], b[i]);
        conj((x.0 - y.0, x.1 - y.1))
    });
    let mut out = [0.0; 18];
    for r in 0..3 {
        for c in 0..3 {
            out[(r * 3 + c) * 2] = rows[r][c].0;
            out[(r * 3 + c) * 2 + 1] = rows[r][c].1;
        }
    }
    out
}

pub fn volume(dims: [i32; 4]) -> usize {
    dims.iter().map(|&d| d as usize).product()
}

/// A random SU(3) field in QDP order: 4 arrays of V·18 reals.
pub fn random_gauge_qdp(dims: [i32; 4], seed: u64) -> [Vec<f64>; 4] {
    let v = volume(dims);
    let mut rng = Rng(seed);
    std::array::from_fn(|_| (0..v).flat_map(|_| random_su3(&mut rng)).collect())
}

/// The same links in MILC order: per site the 4 directions, μ inner.
pub fn qdp_to_milc(qdp: &[Vec<f64>; 4]) -> Vec<f64> {
    let v = qdp[0].len() / 18;
    let mut out = Vec::with_capacity(v * 72);
    for site in 0..v {
        for dir in qdp {
            out.extend_from_slice(&dir[site * 18..site * 18 + 18]);
        }
    }
    out
}

/// The same links in CPS order: MILC with each link transposed.
pub fn qdp_to_cps(qdp: &[Vec<f64>; 4]) -> Vec<f64> {
    let milc = qdp_to_milc(qdp);
    let mut out = milc.clone();
    for (o, m) in out.chunks_exact_mut(18).zip(milc.chunks_exact(18)) {
        for r in 0..3 {
            for c in 0..3 {
                o[(c * 3 + r) * 2] = m[(r * 3 + c) * 2];
                o[(c * 3 + r) * 2 + 1] = m[(r * 3 + c) * 2 + 1];
            }
        }
    }
    out
}

/// A random spinor of V·24 reals in [-1, 1).
pub fn random_spinor(v: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    (0..v * 24).map(|_| rng.real()).collect()
}

/// A point source: 1 at (site 0, spin 0, colour 0).
pub fn point_source(v: usize) -> Vec<f64> {
    let mut b = vec![0.0; v * 24];
    b[0] = 1.0;
    b
}

pub fn norm(a: &[f64]) -> f64 {
    a.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// `|a - b| / |b|`.
pub fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum();
    d.sqrt() / norm(b)
}

/// The message of the last failed call on this thread.
pub fn last_error() -> String {
    unsafe { CStr::from_ptr(latsol_last_error()) }
        .to_str()
        .unwrap()
        .to_owned()
}

/// Asserts a status and that the last error mentions every word of `needles`.
#[track_caller]
pub fn expect_error(status: latsol_status, want: latsol_status, needles: &[&str]) {
    let msg = last_error();
    assert_eq!(
        status,
        want,
        "got {} (want {}); last error: {msg}",
        status_name(status),
        status_name(want)
    );
    for n in needles {
        assert!(
            msg.contains(n),
            "the last error does not mention `{n}`: {msg}"
        );
    }
}

pub fn status_name(s: latsol_status) -> String {
    unsafe { CStr::from_ptr(latsol_status_string(s)) }
        .to_str()
        .unwrap()
        .to_owned()
}

/// Asserts success, printing the last error otherwise.
#[track_caller]
pub fn ok(status: latsol_status) {
    assert_eq!(
        status,
        LATSOL_SUCCESS,
        "{}: {}",
        status_name(status),
        last_error()
    );
}

/// A silent CPU context with 2 threads.
pub fn cpu_context() -> *mut latsol_context {
    let mut p = latsol_init_param_default();
    p.backend = LATSOL_BACKEND_CPU;
    p.num_threads = 2;
    p.verbosity = LATSOL_VERBOSITY_SILENT;
    let mut ctx = ptr::null_mut();
    ok(unsafe { latsol_init(&p, &mut ctx) });
    assert!(!ctx.is_null());
    ctx
}

pub fn gauge_param(dims: [i32; 4]) -> latsol_gauge_param {
    let mut p = latsol_gauge_param_default();
    p.dims = dims;
    p.order = LATSOL_GAUGE_ORDER_QDP;
    p.t_boundary = LATSOL_T_BOUNDARY_ANTIPERIODIC;
    p
}

/// Loads QDP-order double links; the status and the handle.
pub fn try_load_qdp(
    ctx: *mut latsol_context,
    param: &latsol_gauge_param,
    qdp: &[Vec<f64>; 4],
) -> (latsol_status, *mut latsol_gauge) {
    let table: [*const c_void; 4] = std::array::from_fn(|mu| qdp[mu].as_ptr().cast());
    let mut g = ptr::null_mut();
    let s = unsafe { latsol_gauge_load(ctx, param, table.as_ptr().cast(), &mut g) };
    (s, g)
}

pub fn load_qdp(
    ctx: *mut latsol_context,
    dims: [i32; 4],
    qdp: &[Vec<f64>; 4],
) -> *mut latsol_gauge {
    let (s, g) = try_load_qdp(ctx, &gauge_param(dims), qdp);
    ok(s);
    g
}

/// Default invert parameters for the tests: kappa 0.12, tol 1e-10.
pub fn invert_param() -> latsol_invert_param {
    let mut p = latsol_invert_param_default();
    p.kappa = 0.12;
    p.tol = 1e-10;
    p.maxiter = 1000;
    p
}

/// A small lattice with a context, a random gauge field loaded, and a
/// source: the starting point of most tests.
pub struct Setup {
    pub dims: [i32; 4],
    pub v: usize,
    pub ctx: *mut latsol_context,
    pub gauge: *mut latsol_gauge,
    pub links: [Vec<f64>; 4],
    pub source: Vec<f64>,
}

impl Setup {
    pub fn new(seed: u64) -> Setup {
        let dims = [4, 4, 4, 4];
        let links = random_gauge_qdp(dims, seed);
        let ctx = cpu_context();
        let gauge = load_qdp(ctx, dims, &links);
        let v = volume(dims);
        Setup {
            dims,
            v,
            ctx,
            gauge,
            links,
            source: random_spinor(v, seed + 1),
        }
    }

    /// Runs `latsol_invert` into `solution`.
    pub fn invert(
        &self,
        p: &latsol_invert_param,
        solution: &mut [f64],
        result: &mut latsol_invert_result,
    ) -> latsol_status {
        unsafe {
            latsol_invert(
                self.ctx,
                self.gauge,
                p,
                solution.as_mut_ptr().cast(),
                self.source.as_ptr().cast(),
                result,
            )
        }
    }

    /// `op x` through `latsol_apply`.
    pub fn apply(&self, p: &latsol_invert_param, op: latsol_operator, x: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; x.len()];
        ok(unsafe {
            latsol_apply(
                self.ctx,
                self.gauge,
                p,
                op,
                out.as_mut_ptr().cast(),
                x.as_ptr().cast(),
            )
        });
        out
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let (g, c) = unsafe { (latsol_gauge_free(self.gauge), latsol_end(self.ctx)) };
        if !std::thread::panicking() {
            ok(g);
            ok(c);
        }
    }
}

/// `|b - M x| / |b|` through `latsol_apply(M)`.
pub fn residual(s: &Setup, p: &latsol_invert_param, x: &[f64], b: &[f64]) -> f64 {
    let mx = s.apply(p, LATSOL_OP_M, x);
    rel_diff(&mx, b)
}
