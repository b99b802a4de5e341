//! The staggered operators through latsol.h on many ranks (cargo feature
//! `mpi`), run by the test command under `mpirun -np N`
//! (scripts/test_mpi.sh). The program is the host: it hands `latsol_init`
//! its communicator and grid and every call its *local* part of the
//! lattice (4⁴ a rank: the Naik term's three hops need at least 3 in a cut
//! direction), MILC-order fat and long links without phases, which latsol
//! folds in with the whole lattice's coordinates (MILC's phases, the
//! anti-periodic sign of the hops across the last time slice, the long
//! links times −1/24, stored as |s| × U(3)).
//!
//! ```text
//! mpirun -np 4 target/release/examples/staggered_ranks --grid 1,1,2,2 [--deterministic]
//! ```
//! Every rank also loads the whole lattice in a context of its own (one
//! process) and checks, on its own sites: `M = 2m − D`, `M†` and `D`
//! (improved and naive) to 1e-14; CG on the even-odd system, in double and
//! double-half (reliable updates; the half links' scale the whole
//! lattice's), and with MILC's heavy-quark residual as a second criterion
//! (its mean over the whole lattice); the multi-shift CG of two shifts: iterations equal (within one with fast
//! sums), solutions to 1e-12. Then the collective errors: improved links
//! on local extents of 2 in a cut direction are refused on every rank, a
//! NULL source on rank 0 fails the solve on every rank, and the context
//! solves again.

use std::ffi::c_void;
use std::ptr;

use latsol::ffi::*;
use mpi::raw::AsRaw;
use mpi::topology::Communicator;

#[path = "ranks_common/mod.rs"]
mod ranks_common;
use ranks_common::{eo, link, ok, parse_grid, rel_diff, sites, uniform, volume, Checks};

const LOCAL: [usize; 4] = [4, 4, 4, 4];
const MASS: f64 = 0.5;
/// A 6-real colour vector a site.
const COLOUR: usize = 6;

/// The sites `origin + x` of a lattice of `global`: MILC-order fat links
/// (seed 0) and long links (seed 1), and a colour-vector source.
fn fields(d: [usize; 4], origin: [usize; 4], global: [usize; 4]) -> [Vec<f64>; 3] {
    let v = volume(d);
    let (mut fat, mut long, mut source) =
        (vec![0.0; v * 72], vec![0.0; v * 72], vec![0.0; v * COLOUR]);
    for x in sites(d) {
        let g = [0, 1, 2, 3].map(|mu| origin[mu] + x[mu]);
        let lex = (g[0] + global[0] * (g[1] + global[1] * (g[2] + global[2] * g[3]))) as u64;
        let i = eo(d, x);
        for mu in 0..4 {
            let k = 8 * lex + 2 * mu as u64;
            fat[(4 * i + mu) * 18..][..18].copy_from_slice(&link(k));
            long[(4 * i + mu) * 18..][..18].copy_from_slice(&link(k + 1));
        }
        for c in 0..COLOUR {
            source[COLOUR * i + c] = uniform(1 << 41 | lex, c as u64);
        }
    }
    [fat, long, source]
}

/// Loads the links (`long` None: the naive operator on the fat ones).
fn load(
    ctx: *mut latsol_context,
    d: [usize; 4],
    fat: &[f64],
    long: Option<&[f64]>,
    sloppy: latsol_precision,
) -> (latsol_status, *mut latsol_staggered) {
    let mut p = latsol_staggered_param_default();
    p.dims = d.map(|e| e as i32);
    p.order = LATSOL_GAUGE_ORDER_MILC;
    p.precision_sloppy = sloppy;
    p.fold_phases = 1;
    p.t_boundary = LATSOL_T_BOUNDARY_ANTIPERIODIC;
    p.long_coefficient = -1.0 / 24.0;
    p.long_reconstruct = LATSOL_RECONSTRUCT_13;
    p.long_reconstruct_sloppy = LATSOL_RECONSTRUCT_13;
    let mut links = ptr::null_mut();
    let long = long.map_or(ptr::null(), |l| l.as_ptr().cast());
    let s = unsafe { latsol_staggered_load(ctx, &p, fat.as_ptr().cast(), long, &mut links) };
    (s, links)
}

fn invert_param(sloppy: latsol_precision) -> latsol_staggered_invert_param {
    let mut p = latsol_staggered_invert_param_default();
    p.mass = MASS;
    p.solve = LATSOL_STAGGERED_SOLVE_EVEN;
    p.tol = 1e-12;
    p.maxiter = 2000;
    p.precision_sloppy = sloppy;
    p
}

/// One context's links and what it computes with them.
struct Loaded {
    ctx: *mut latsol_context,
    links: *mut latsol_staggered,
}

impl Loaded {
    fn apply(&self, op: latsol_operator, input: &[f64]) -> Vec<f64> {
        let p = invert_param(LATSOL_PRECISION_DOUBLE);
        let mut out = vec![0.0; input.len()];
        ok(
            unsafe {
                latsol_apply_staggered(
                    self.ctx,
                    self.links,
                    &p,
                    op,
                    out.as_mut_ptr().cast(),
                    input.as_ptr().cast(),
                )
            },
            "apply",
        );
        out
    }

    fn invert(
        &self,
        p: &latsol_staggered_invert_param,
        b: &[f64],
    ) -> (latsol_status, Vec<f64>, i32) {
        let (s, x, r) = self.solve(p, b);
        (s, x, r.iterations)
    }

    /// The solve's result struct (a failure panics).
    fn invert_result(&self, p: &latsol_staggered_invert_param, b: &[f64]) -> latsol_invert_result {
        let (s, _, r) = self.solve(p, b);
        ok(s, "staggered solve");
        r
    }

    fn solve(
        &self,
        p: &latsol_staggered_invert_param,
        b: &[f64],
    ) -> (latsol_status, Vec<f64>, latsol_invert_result) {
        let mut x = vec![0.0; b.len()];
        let mut r = latsol_invert_result_default();
        let s = unsafe {
            latsol_invert_staggered(
                self.ctx,
                self.links,
                p,
                x.as_mut_ptr().cast(),
                b.as_ptr().cast(),
                &mut r,
            )
        };
        (s, x, r)
    }

    fn multishift(&self, shifts: &[f64], b: &[f64]) -> (Vec<Vec<f64>>, i32) {
        let p = invert_param(LATSOL_PRECISION_DOUBLE);
        let mut xs = vec![vec![0.0; b.len()]; shifts.len()];
        let mut ptrs: Vec<*mut c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
        let mut r = latsol_multishift_result_default();
        ok(
            unsafe {
                latsol_invert_multishift_staggered(
                    self.ctx,
                    self.links,
                    &p,
                    shifts.len() as i32,
                    shifts.as_ptr(),
                    ptr::null(),
                    ptrs.as_mut_ptr(),
                    b.as_ptr().cast(),
                    &mut r,
                )
            },
            "multi-shift",
        );
        (xs, r.iterations)
    }
}

/// The rank's part (sites `origin + x`) of a global colour field; `half`:
/// of the even sites of an even-parity field.
fn local_part(global: &[f64], gd: [usize; 4], origin: [usize; 4], half: bool) -> Vec<f64> {
    let n = if half {
        volume(LOCAL) / 2
    } else {
        volume(LOCAL)
    };
    let mut out = vec![0.0; n * COLOUR];
    for x in sites(LOCAL) {
        let i = eo(LOCAL, x);
        if i < n {
            let g = [0, 1, 2, 3].map(|mu| origin[mu] + x[mu]);
            out[COLOUR * i..][..COLOUR].copy_from_slice(&global[COLOUR * eo(gd, g)..][..COLOUR]);
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let grid = parse_grid(&args);
    let deterministic = args.iter().any(|a| a == "--deterministic");
    let universe = mpi::initialize().expect("MPI_Init");
    let world = universe.world();
    let rank = world.rank() as usize;

    let mut ip = latsol_init_param_default();
    ip.backend = LATSOL_BACKEND_CPU;
    ip.num_threads = 1;
    ip.verbosity = LATSOL_VERBOSITY_SILENT;
    let mut cut = ip;
    let comm = world.as_raw();
    cut.mpi_comm = (&raw const comm).cast();
    cut.grid = grid.map(|g| g as i32);
    cut.deterministic_sums = i32::from(deterministic);
    let mut ctx = ptr::null_mut();
    ok(unsafe { latsol_init(&cut, &mut ctx) }, "init on ranks");
    let mut whole_ctx = ptr::null_mut();
    ok(unsafe { latsol_init(&ip, &mut whole_ctx) }, "init alone");

    // QUDA's default rank order (t fastest).
    let coords: [usize; 4] = {
        let (mut c, mut r) = ([0; 4], rank);
        for mu in [3, 2, 1, 0] {
            c[mu] = r % grid[mu];
            r /= grid[mu];
        }
        c
    };
    let gd = [0, 1, 2, 3].map(|mu| LOCAL[mu] * grid[mu]);
    let origin = [0, 1, 2, 3].map(|mu| coords[mu] * LOCAL[mu]);
    let [fat, long, source] = fields(LOCAL, origin, gd);
    let [whole_fat, whole_long, whole_source] = fields(gd, [0; 4], gd);
    let mut checks = Checks::default();
    let tolerance = if deterministic { 0 } else { 1 };

    for (improved, name) in [(true, "improved"), (false, "naive")] {
        let sloppy = LATSOL_PRECISION_HALF;
        let (s1, cut_links) = load(ctx, LOCAL, &fat, improved.then_some(&long[..]), sloppy);
        let (s2, whole_links) = load(
            whole_ctx,
            gd,
            &whole_fat,
            improved.then_some(&whole_long[..]),
            sloppy,
        );
        ok(s1, "load on ranks");
        ok(s2, "load alone");
        let (cut, whole) = (
            Loaded {
                ctx,
                links: cut_links,
            },
            Loaded {
                ctx: whole_ctx,
                links: whole_links,
            },
        );
        for (op, what) in [
            (LATSOL_OP_M, "M"),
            (LATSOL_OP_MDAG, "M^dag"),
            (LATSOL_OP_DSLASH, "D"),
        ] {
            let m = rel_diff(
                &world,
                &cut.apply(op, &source),
                &local_part(&whole.apply(op, &whole_source), gd, origin, false),
            );
            checks.check(m <= 1e-14, format!("{name} {what}: {m:e}"));
        }
        let b = local_part(&whole_source, gd, origin, true);
        let whole_b = whole_source[..volume(gd) / 2 * COLOUR].to_vec();
        for (sloppy, what) in [
            (LATSOL_PRECISION_DOUBLE, "double"),
            (LATSOL_PRECISION_HALF, "double-half"),
        ] {
            let p = invert_param(sloppy);
            let (s1, x1, k1) = cut.invert(&p, &source);
            let (s2, x2, k2) = whole.invert(&p, &whole_source);
            checks.check(
                s1 == LATSOL_SUCCESS && s2 == LATSOL_SUCCESS,
                format!("{name} {what} CG: {s1}, {s2}"),
            );
            checks.check(
                (k1 - k2).abs() <= tolerance,
                format!("{name} {what} CG: {k1} vs {k2} iterations"),
            );
            let d = rel_diff(&world, &x1, &local_part(&x2, gd, origin, false));
            checks.check(
                d <= 1e-12,
                format!("{name} {what} CG: solutions differ by {d:e}"),
            );
            if rank == 0 {
                println!("staggered_ranks: {name} {what} CG {k1} iterations on the ranks, {k2} alone, |dx|/|x| {d:.1e}");
            }
        }
        // The heavy-quark residual (MILC's) as the binding stop criterion
        // (the L2 target loose): its mean over the whole lattice's sites.
        // The two solutions agree to ~1e-14, so residuals of ~1e-8 agree to
        // ~1e-6 of themselves; 1e-4 leaves room.
        let mut p = invert_param(LATSOL_PRECISION_DOUBLE);
        p.tol = 1e-6;
        p.tol_hq = 1e-8;
        let (r1, r2) = (
            cut.invert_result(&p, &source),
            whole.invert_result(&p, &whole_source),
        );
        let (h1, h2) = (r1.true_residual_hq, r2.true_residual_hq);
        checks.check(
            (r1.iterations - r2.iterations).abs() <= tolerance
                && h1 <= p.tol_hq
                && (h1 - h2).abs() <= 1e-4 * h2,
            format!(
                "{name} CG to tol_hq: {} vs {} iterations, heavy-quark residual {h1:e} vs {h2:e}",
                r1.iterations, r2.iterations
            ),
        );
        if rank == 0 {
            println!(
                "staggered_ranks: {name} CG to tol_hq {:e}: {} iterations on the ranks, {} alone, \
                 heavy-quark residual {h1:.3e} ({h2:.3e} alone)",
                p.tol_hq, r1.iterations, r2.iterations
            );
        }
        let shifts = [0.0, 0.02];
        let (xs1, k1) = cut.multishift(&shifts, &b);
        let (xs2, k2) = whole.multishift(&shifts, &whole_b);
        checks.check(
            (k1 - k2).abs() <= tolerance,
            format!("{name} multi-shift: {k1} vs {k2} iterations"),
        );
        for (i, (x1, x2)) in xs1.iter().zip(&xs2).enumerate() {
            let d = rel_diff(&world, x1, &local_part(x2, gd, origin, true));
            checks.check(
                d <= 1e-12,
                format!("{name} multi-shift σ{i}: solutions differ by {d:e}"),
            );
        }
        if improved {
            // A NULL source on rank 0: every rank fails, the solution untouched.
            let p = invert_param(LATSOL_PRECISION_DOUBLE);
            let mut x = vec![7.0; source.len()];
            let mut r = latsol_invert_result_default();
            let src = if rank == 0 {
                ptr::null()
            } else {
                source.as_ptr().cast()
            };
            let s = unsafe {
                latsol_invert_staggered(ctx, cut_links, &p, x.as_mut_ptr().cast(), src, &mut r)
            };
            let want = if rank == 0 {
                LATSOL_ERROR_NULL_POINTER
            } else {
                LATSOL_ERROR_OTHER_RANK
            };
            checks.check(
                s == want,
                format!("NULL source on rank 0: status {s}, want {want}"),
            );
            checks.check(
                x.iter().all(|v| *v == 7.0),
                "a failed solve wrote the solution".into(),
            );
            let (s, x3, _) = cut.invert(&p, &source);
            let (_, x4, _) = whole.invert(&p, &whole_source);
            let d = rel_diff(&world, &x3, &local_part(&x4, gd, origin, false));
            checks.check(
                s == LATSOL_SUCCESS && d <= 1e-12,
                format!("a solve after the error: {s}, {d:e}"),
            );
        }
        ok(unsafe { latsol_staggered_free(cut_links) }, "free");
        ok(unsafe { latsol_staggered_free(whole_links) }, "free");
    }

    // Local extents of 2 in a cut direction hold no three-hop term.
    let thin = [2, LOCAL[1], LOCAL[2], LOCAL[3]];
    let [small_fat, small_long, _] = fields(thin, origin, gd);
    let (s, links) = load(
        ctx,
        thin,
        &small_fat,
        Some(&small_long),
        LATSOL_PRECISION_DOUBLE,
    );
    if grid[0] > 1 {
        let other = s == LATSOL_ERROR_OTHER_RANK || s == LATSOL_ERROR_INVALID_ARGUMENT;
        checks.check(
            other && links.is_null(),
            format!("improved links on local extent 2 of a cut x: status {s}"),
        );
    } else {
        checks.check(
            s == LATSOL_SUCCESS,
            format!("improved links on local extent 2 of an uncut x: status {s}"),
        );
        ok(unsafe { latsol_staggered_free(links) }, "free");
    }

    // Host memory running out on the last rank inside a solve (its fifth
    // field allocation: the source's and the solution's come first, then
    // the solver's workspace, `LATSOL_TEST_FAIL_FIELD_ALLOCATION`): every
    // rank fails the call without waiting in a sum, and the context
    // solves again afterwards.
    let last = rank == world.size() as usize - 1;
    if last {
        std::env::set_var("LATSOL_TEST_FAIL_FIELD_ALLOCATION", "5");
    }
    let mut fail_ctx = ptr::null_mut();
    ok(
        unsafe { latsol_init(&cut, &mut fail_ctx) },
        "init with a failing allocation",
    );
    std::env::remove_var("LATSOL_TEST_FAIL_FIELD_ALLOCATION");
    let (s, links) = load(fail_ctx, LOCAL, &fat, Some(&long), LATSOL_PRECISION_DOUBLE);
    ok(s, "load");
    let failing = Loaded {
        ctx: fail_ctx,
        links,
    };
    let p = invert_param(LATSOL_PRECISION_DOUBLE);
    let (s, _, _) = failing.invert(&p, &source);
    let want = if last {
        LATSOL_ERROR_OUT_OF_MEMORY
    } else {
        LATSOL_ERROR_OTHER_RANK
    };
    checks.check(
        s == want,
        format!("an allocation failing on the last rank in a solve: status {s}, want {want}"),
    );
    let (s, x, _) = failing.invert(&p, &source);
    let (s2, whole_links) = load(
        whole_ctx,
        gd,
        &whole_fat,
        Some(&whole_long),
        LATSOL_PRECISION_DOUBLE,
    );
    ok(s2, "load alone");
    let whole = Loaded {
        ctx: whole_ctx,
        links: whole_links,
    };
    let (_, whole_x, _) = whole.invert(&p, &whole_source);
    let d = rel_diff(&world, &x, &local_part(&whole_x, gd, origin, false));
    checks.check(
        s == LATSOL_SUCCESS && d <= 1e-12,
        format!("a solve after the failed allocation: {s}, {d:e}"),
    );
    ok(unsafe { latsol_staggered_free(links) }, "free");
    ok(unsafe { latsol_staggered_free(whole_links) }, "free");
    ok(unsafe { latsol_end(fail_ctx) }, "end");

    ok(unsafe { latsol_end(ctx) }, "end");
    ok(unsafe { latsol_end(whole_ctx) }, "end");
    let sums = if deterministic {
        "deterministic"
    } else {
        "fast"
    };
    checks.finish(
        &world,
        &format!("staggered_ranks: grid {grid:?}, sums {sums}"),
    );
}
