//! latsol.h on many ranks (cargo feature `mpi`), run by the test command
//! under `mpirun -np N` (scripts/test_mpi.sh). The program is the host: it
//! initialises MPI, hands `latsol_init` a pointer to its communicator, the
//! grid of ranks and (with `--map x`) a rank map of its own, and passes
//! every call its *local* part of the lattice in MILC's gauge order and the
//! Dirac spinor order, as a MILC- or Chroma-style code does.
//!
//! ```text
//! mpirun -np 4 target/release/examples/abi_ranks --grid 1,1,2,2 [--map x] [--deterministic]
//! ```
//! Every rank also solves the whole lattice in a context of its own (one
//! process, no communicator) and checks, on its own sites: the plaquette;
//! the Wilson-clover operator (clover computed from the cut links); BiCGstab
//! on the even-odd system and CG on its normal equations, iterations equal
//! (within one with fast sums) and solutions to 1e-12; then the collective
//! errors (and sources solved in blocks, with and without SAP): a NULL
//! source on the last rank, a NaN on rank 0, a block size
//! of `latsol_invert_sources` differing on rank 0, and another
//! lattice size on rank 0 fail the call on every rank (no rank hangs: the
//! test runs under `timeout`), after which the context still solves.

use std::ffi::c_void;
use std::ptr;

use latsol::ffi::*;
use mpi::raw::AsRaw;
use mpi::topology::Communicator;

#[path = "ranks_common/mod.rs"]
mod ranks_common;
use ranks_common::{eo, link, ok, parse_grid, rel_diff, sites, uniform, volume, Checks};

/// Local extents: 2 in x (the smallest a Wilson partition allows).
const LOCAL: [usize; 4] = [2, 4, 4, 4];
const KAPPA: f64 = 0.11;
const C_SW: f64 = 1.2;

/// A lattice of `d` whose site `x` is the global site `origin + x`:
/// MILC-order links and a Dirac-order source.
fn fields(d: [usize; 4], origin: [usize; 4], global: [usize; 4]) -> (Vec<f64>, Vec<f64>) {
    let mut links = vec![0.0; volume(d) * 72];
    let mut source = vec![0.0; volume(d) * 24];
    for x in sites(d) {
        let g = [0, 1, 2, 3].map(|mu| origin[mu] + x[mu]);
        let lex = (g[0] + global[0] * (g[1] + global[1] * (g[2] + global[2] * g[3]))) as u64;
        let i = eo(d, x);
        for mu in 0..4 {
            links[(4 * i + mu) * 18..][..18].copy_from_slice(&link(4 * lex + mu as u64));
        }
        for k in 0..24 {
            source[24 * i + k] = uniform(1 << 40 | lex, k as u64);
        }
    }
    (links, source)
}

/// A context's gauge and clover fields.
struct Loaded {
    ctx: *mut latsol_context,
    gauge: *mut latsol_gauge,
    clover: *mut latsol_clover,
}

fn gauge_param(d: [usize; 4]) -> latsol_gauge_param {
    let mut gp = latsol_gauge_param_default();
    gp.dims = d.map(|e| e as i32);
    gp.order = LATSOL_GAUGE_ORDER_MILC;
    gp
}

fn load(ctx: *mut latsol_context, d: [usize; 4], links: &[f64]) -> Loaded {
    let gp = gauge_param(d);
    let mut gauge = ptr::null_mut();
    ok(
        unsafe { latsol_gauge_load(ctx, &gp, links.as_ptr().cast(), &mut gauge) },
        "gauge",
    );
    let mut cp = latsol_clover_param_default();
    cp.c_sw = C_SW;
    cp.kappa = KAPPA;
    let mut clover = ptr::null_mut();
    ok(
        unsafe { latsol_clover_compute(ctx, gauge, &cp, links.as_ptr().cast(), &mut clover) },
        "clover",
    );
    Loaded { ctx, gauge, clover }
}

fn invert_param(solver: latsol_solver, solve_type: latsol_solve_type) -> latsol_invert_param {
    let mut ip = latsol_invert_param_default();
    ip.dslash = LATSOL_DSLASH_CLOVER_WILSON;
    ip.kappa = KAPPA;
    ip.solver = solver;
    ip.solve_type = solve_type;
    ip.tol = 1e-10;
    ip.maxiter = 2000;
    ip
}

impl Loaded {
    fn invert(&self, ip: &latsol_invert_param, b: &[f64]) -> (latsol_status, Vec<f64>, i32) {
        let mut x = vec![0.0; b.len()];
        let mut r = latsol_invert_result_default();
        let s = unsafe {
            latsol_invert_clover(
                self.ctx,
                self.gauge,
                self.clover,
                ip,
                x.as_mut_ptr().cast(),
                b.as_ptr().cast(),
                &mut r,
            )
        };
        (s, x, r.iterations)
    }

    fn apply(&self, b: &[f64]) -> Vec<f64> {
        let ip = invert_param(LATSOL_SOLVER_CG, LATSOL_SOLVE_DIRECT);
        let mut out = vec![0.0; b.len()];
        ok(
            unsafe {
                latsol_apply_clover(
                    self.ctx,
                    self.gauge,
                    self.clover,
                    &ip,
                    LATSOL_OP_M,
                    out.as_mut_ptr().cast(),
                    b.as_ptr().cast(),
                )
            },
            "apply",
        );
        out
    }
}

/// `latsol_invert_multimass` of the Wilson operator on `gauge` (tol 1e-12):
/// the solutions and the iterations.
fn multimass(
    ctx: *mut latsol_context,
    gauge: *mut latsol_gauge,
    policy: latsol_multimass_policy,
    kappas: &[f64],
    b: &[f64],
) -> (Vec<Vec<f64>>, i32) {
    let mut p = invert_param(LATSOL_SOLVER_BICGSTAB, LATSOL_SOLVE_DIRECT_PC);
    p.dslash = LATSOL_DSLASH_WILSON;
    p.tol = 1e-12;
    let mut xs = vec![vec![0.0; b.len()]; kappas.len()];
    let mut ptrs: Vec<*mut c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
    let mut r = latsol_multishift_result_default();
    let s = unsafe {
        latsol_invert_multimass(
            ctx,
            gauge,
            &p,
            kappas.len() as i32,
            kappas.as_ptr(),
            ptr::null(),
            policy,
            ptrs.as_mut_ptr(),
            b.as_ptr().cast(),
            &mut r,
        )
    };
    ok(s, "multi-mass");
    (xs, r.iterations)
}

/// The rank's part (sites `origin + x`) of a Dirac-order global field.
fn local_part(global: &[f64], gd: [usize; 4], origin: [usize; 4]) -> Vec<f64> {
    let mut out = vec![0.0; volume(LOCAL) * 24];
    for x in sites(LOCAL) {
        let g = [0, 1, 2, 3].map(|mu| origin[mu] + x[mu]);
        out[24 * eo(LOCAL, x)..][..24].copy_from_slice(&global[24 * eo(gd, g)..][..24]);
    }
    out
}

/// MILC's layout (x fastest), handed in as the host's own map function.
unsafe extern "C" fn x_fastest(coords: *const i32, data: *mut c_void) -> i32 {
    let grid = unsafe { &*data.cast::<[i32; 4]>() };
    let c = unsafe { std::slice::from_raw_parts(coords, 4) };
    c[0] + grid[0] * (c[1] + grid[1] * (c[2] + grid[2] * c[3]))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let grid = parse_grid(&args);
    let x_map = args.iter().any(|a| a == "--map") && args.contains(&"x".to_string());
    let deterministic = args.iter().any(|a| a == "--deterministic");
    let universe = mpi::initialize().expect("MPI_Init");
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let mut grid_c = grid.map(|g| g as i32);

    let mut ip = latsol_init_param_default();
    ip.backend = LATSOL_BACKEND_CPU;
    ip.num_threads = 1;
    ip.verbosity = LATSOL_VERBOSITY_SILENT;
    let mut cut = ip;
    let comm = world.as_raw();
    cut.mpi_comm = (&raw const comm).cast();
    cut.grid = grid_c;
    cut.deterministic_sums = i32::from(deterministic);
    if x_map {
        cut.rank_map = Some(x_fastest);
        cut.rank_map_data = (&raw mut grid_c).cast();
    }
    let mut ctx = ptr::null_mut();
    ok(unsafe { latsol_init(&cut, &mut ctx) }, "init on ranks");
    let mut whole_ctx = ptr::null_mut();
    ok(unsafe { latsol_init(&ip, &mut whole_ctx) }, "init alone");

    // Where this rank sits (the map latsol was given).
    let coords: [usize; 4] = {
        let mut c = [0; 4];
        let mut r = rank;
        let order: [usize; 4] = if x_map { [0, 1, 2, 3] } else { [3, 2, 1, 0] };
        for mu in order {
            c[mu] = r % grid[mu];
            r /= grid[mu];
        }
        c
    };
    let gd = [0, 1, 2, 3].map(|mu| LOCAL[mu] * grid[mu]);
    let origin = [0, 1, 2, 3].map(|mu| coords[mu] * LOCAL[mu]);
    let (links, source) = fields(LOCAL, origin, gd);
    let (whole_links, whole_source) = fields(gd, [0; 4], gd);
    let cut_fields = load(ctx, LOCAL, &links);
    let whole = load(whole_ctx, gd, &whole_links);

    let mut checks = Checks::default();
    let mut check = |good: bool, what: String| checks.check(good, what);
    let (mut p_cut, mut p_whole) = ([0.0; 3], [0.0; 3]);
    ok(
        unsafe { latsol_gauge_plaquette(cut_fields.gauge, p_cut.as_mut_ptr()) },
        "plaq",
    );
    ok(
        unsafe { latsol_gauge_plaquette(whole.gauge, p_whole.as_mut_ptr()) },
        "plaq",
    );
    check(
        p_cut
            .iter()
            .zip(&p_whole)
            .all(|(a, b)| (a - b).abs() <= 1e-14),
        format!("plaquette {p_cut:?} vs {p_whole:?}"),
    );
    let m = rel_diff(
        &world,
        &cut_fields.apply(&source),
        &local_part(&whole.apply(&whole_source), gd, origin),
    );
    check(m <= 1e-14, format!("the clover operator: {m:e}"));

    let tolerance = if deterministic { 0 } else { 1 };
    for (solver, solve_type, name) in [
        (LATSOL_SOLVER_BICGSTAB, LATSOL_SOLVE_DIRECT_PC, "BiCGstab"),
        (LATSOL_SOLVER_CG, LATSOL_SOLVE_NORMOP_PC, "CG"),
    ] {
        let p = invert_param(solver, solve_type);
        let (s1, x1, k1) = cut_fields.invert(&p, &source);
        let (s2, x2, k2) = whole.invert(&p, &whole_source);
        check(
            s1 == LATSOL_SUCCESS && s2 == LATSOL_SUCCESS,
            format!("{name}: {s1}, {s2}"),
        );
        check(
            (k1 - k2).abs() <= tolerance,
            format!("{name}: {k1} vs {k2} iterations"),
        );
        let d = rel_diff(&world, &x1, &local_part(&x2, gd, origin));
        check(d <= 1e-12, format!("{name}: solutions differ by {d:e}"));
        if rank == 0 {
            println!(
                "abi_ranks: {name} {k1} iterations on the ranks, {k2} alone, |dx|/|x| {d:.1e}"
            );
        }
        if deterministic {
            let (_, again, _) = cut_fields.invert(&p, &source);
            check(
                again == x1,
                format!("{name}: a second solve is not the same bits"),
            );
        }
    }

    // Multi-mass (Wilson): BiCGstab-M and the even-odd sequence.
    for (policy, name) in [
        (LATSOL_MULTIMASS_BICGSTAB_M, "BiCGstab-M"),
        (LATSOL_MULTIMASS_SEQUENCE, "multi-mass sequence"),
    ] {
        let kappas = [0.10, 0.11];
        let (xs1, k1) = multimass(ctx, cut_fields.gauge, policy, &kappas, &source);
        let (xs2, k2) = multimass(whole_ctx, whole.gauge, policy, &kappas, &whole_source);
        check(
            (k1 - k2).abs() <= tolerance * kappas.len() as i32,
            format!("{name}: {k1} vs {k2} iterations"),
        );
        for (i, (x1, x2)) in xs1.iter().zip(&xs2).enumerate() {
            let d = rel_diff(&world, x1, &local_part(x2, gd, origin));
            check(
                d <= 1e-12,
                format!("{name} κ{i}: solutions differ by {d:e}"),
            );
        }
        if rank == 0 {
            println!("abi_ranks: {name} {k1} iterations on the ranks, {k2} alone");
        }
    }

    // Collective errors: each call fails on every rank, and none hangs.
    let p = invert_param(LATSOL_SOLVER_BICGSTAB, LATSOL_SOLVE_DIRECT_PC);
    let mut x = vec![7.0; source.len()];
    let mut r = latsol_invert_result_default();
    let null_source = if rank == size - 1 {
        ptr::null()
    } else {
        source.as_ptr().cast()
    };
    let s = unsafe {
        latsol_invert_clover(
            ctx,
            cut_fields.gauge,
            cut_fields.clover,
            &p,
            x.as_mut_ptr().cast(),
            null_source,
            &mut r,
        )
    };
    let want = if rank == size - 1 {
        LATSOL_ERROR_NULL_POINTER
    } else {
        LATSOL_ERROR_OTHER_RANK
    };
    let want = if size == 1 {
        LATSOL_ERROR_NULL_POINTER
    } else {
        want
    };
    check(
        s == want,
        format!("NULL source on the last rank: status {s}, want {want}"),
    );
    check(
        x.iter().all(|v| *v == 7.0),
        "a failed call wrote the solution".into(),
    );
    let mut nan = source.clone();
    if rank == 0 {
        nan[5] = f64::NAN;
    }
    let (s, _, _) = cut_fields.invert(&p, &nan);
    let want = if rank == 0 {
        LATSOL_ERROR_INVALID_ARGUMENT
    } else {
        LATSOL_ERROR_OTHER_RANK
    };
    check(s == want, format!("NaN on rank 0: status {s}, want {want}"));
    // Sources in blocks (issue 37): the block solve on the ranks meets the
    // tolerance; a block size that differs between the ranks fails on all.
    let second: Vec<f64> = source.iter().rev().copied().collect();
    let sources_in_blocks = |per_block: i64, sap_cycles: i32| {
        let mut p = invert_param(LATSOL_SOLVER_BICGSTAB, LATSOL_SOLVE_DIRECT_PC);
        p.sources_per_block = per_block;
        p.sap_cycles = sap_cycles;
        p.sap_extent = [2, 2, 2, 2];
        let mut xs = [vec![7.0; source.len()], vec![7.0; source.len()]];
        let mut rs = [latsol_invert_result_default(); 2];
        let xp: Vec<*mut std::ffi::c_void> = xs.iter_mut().map(|x| x.as_mut_ptr().cast()).collect();
        let bp: Vec<*const std::ffi::c_void> = [&source, &second]
            .iter()
            .map(|b| b.as_ptr().cast())
            .collect();
        let s = unsafe {
            latsol_invert_sources_clover(
                ctx,
                cut_fields.gauge,
                cut_fields.clover,
                &p,
                2,
                xp.as_ptr(),
                bp.as_ptr(),
                rs.as_mut_ptr(),
            )
        };
        (s, xs, rs)
    };
    let (s, _, rs) = sources_in_blocks(0, 0);
    check(
        s == LATSOL_SUCCESS && rs.iter().all(|r| r.converged == 1),
        format!("two sources in one block: status {s}"),
    );
    // With SAP on boxes of 2⁴ (never crossing a rank): converged.
    for per_block in [1, 0] {
        let (s, _, rs) = sources_in_blocks(per_block, 3);
        check(
            s == LATSOL_SUCCESS && rs.iter().all(|r| r.converged == 1),
            format!("two sources with SAP, {per_block} a block: status {s}"),
        );
    }
    // A choice differing between the ranks fails on all (alone: fine).
    let differing_status = if size == 1 {
        LATSOL_SUCCESS
    } else {
        LATSOL_ERROR_INVALID_ARGUMENT
    };
    let (s, xs, _) = sources_in_blocks(if rank == 0 { 1 } else { 0 }, 0);
    let want = differing_status;
    check(
        s == want && (size == 1 || xs.iter().all(|x| x.iter().all(|v| *v == 7.0))),
        format!("a block size differing on rank 0: status {s}, want {want}"),
    );
    // SAP on rank 0 only, or with other cycles there: refused on every
    // rank before any collective step of the solve, arrays untouched.
    for (mine, others) in [(3, 0), (3, 2)] {
        let cycles = if rank == 0 { mine } else { others };
        let (s, xs, _) = sources_in_blocks(0, cycles);
        let want = differing_status;
        check(
            s == want && (size == 1 || xs.iter().all(|x| x.iter().all(|v| *v == 7.0))),
            format!("SAP cycles {mine} on rank 0, {others} elsewhere: status {s}, want {want}"),
        );
    }
    // One source (`latsol_invert`) with SAP boxes differing on rank 0.
    let mut sp = invert_param(LATSOL_SOLVER_BICGSTAB, LATSOL_SOLVE_DIRECT_PC);
    sp.sap_cycles = 3;
    sp.sap_extent = if rank == 0 { [2, 2, 2, 2] } else { [0; 4] };
    let (s, x, _) = cut_fields.invert(&sp, &source);
    let want = differing_status;
    check(
        s == want && (size == 1 || x.iter().all(|v| *v == 0.0)),
        format!("SAP boxes differing on rank 0 (one source): status {s}, want {want}"),
    );
    // Another local size on rank 0: every rank refuses the field.
    let mut d = LOCAL;
    if rank == 0 && size > 1 {
        d[3] *= 2;
    }
    let (other, _) = fields(d, origin, gd);
    let mut g = ptr::null_mut();
    let s = unsafe { latsol_gauge_load(ctx, &gauge_param(d), other.as_ptr().cast(), &mut g) };
    check(
        (size == 1) == (s == LATSOL_SUCCESS),
        format!("another lattice on rank 0: status {s}"),
    );
    if s == LATSOL_SUCCESS {
        ok(unsafe { latsol_gauge_free(g) }, "free");
    }
    // Still usable.
    let (s, x3, _) = cut_fields.invert(&p, &source);
    check(
        s == LATSOL_SUCCESS,
        format!("a solve after the errors: status {s}"),
    );
    let (_, x1, _) = whole.invert(&p, &whole_source);
    let d = rel_diff(&world, &x3, &local_part(&x1, gd, origin));
    check(d <= 1e-12, format!("a solve after the errors: {d:e}"));

    for l in [&cut_fields, &whole] {
        ok(unsafe { latsol_clover_free(l.clover) }, "free");
        ok(unsafe { latsol_gauge_free(l.gauge) }, "free");
    }
    ok(unsafe { latsol_end(ctx) }, "end");
    ok(unsafe { latsol_end(whole_ctx) }, "end");

    let summary = format!(
        "abi_ranks: grid {grid:?}, map {}, sums {}",
        if x_map {
            "x fastest (the host's function)"
        } else {
            "t fastest (default)"
        },
        if deterministic {
            "deterministic"
        } else {
            "fast"
        },
    );
    checks.finish(&world, &summary);
}
