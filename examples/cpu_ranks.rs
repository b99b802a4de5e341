//! The CPU backend on a partitioned lattice against one rank (cargo feature
//! `mpi`; run by scripts/test_mpi.sh under `mpirun -np N`). Every rank
//! makes the same global gauge field and source (fixed seeds), keeps its
//! sub-lattice of them, and compares, on its own sites, the partitioned
//! backend with a single-rank backend holding the whole lattice:
//! - the Wilson hopping term, both parities, with and without dagger, and
//!   antiperiodic time: the same numbers bit for bit (every hop reads the
//!   same numbers in the same order);
//! - CG on the normal equations of the even-odd Wilson operator: the same
//!   iteration count (the global sums are added in another order than one
//!   rank's, so the count may differ by one with fast sums) and solutions
//!   equal to 1e-12 relative; with deterministic sums a second solve gives
//!   the same bits;
//! - the hopping term in half precision (fixed-point links scaled by the
//!   whole lattice's largest link, as one rank scales them): bit for bit;
//! - reliable-update CG in double with a half sloppy operator: iterations
//!   within one of one rank's, both converged, solutions within 1e-8
//!   (each meets 1e-10 on an operator of condition number below 100);
//! - multi-shift CG on M̂†M̂ + σ for three shifts: the multi-shift
//!   iterations within one of one rank's, each shift's solution within
//!   1e-12 relative;
//! - BiCGstab on the even-odd Wilson-clover operator (the clover term made
//!   on the whole lattice, each rank keeping its sites): iterations within
//!   one of one rank's, solutions equal to 1e-12 relative;
//! - the block solvers of seed 002 on three sources at once: block BiCGstab
//!   with QR on the even-odd Wilson-clover operator and block CG on its
//!   normal equations, mixed double-single: block iterations within one of
//!   one rank's, every solution within `2 κ(A) tol` of one rank's (each
//!   meets tol = 1e-10; κ(A) below 100 for M̂, its square for M̂†M̂);
//! - SAP's `M_SAP` (seed 002 §2.2) of a full source, boxes of 2⁴: bit for
//!   bit (the same box solves, residual updates through the faces, no sums)
//!   in its multiplicative and additive forms with SSOR box solves; with MR
//!   box solves (step lengths summed over every box and rank) within 1e-12
//!   relative;
//! - flexible GCR(8) on the full clover operator, right-preconditioned by
//!   multiplicative SAP with MR box solves (QUDA's GCR + MR-DD), single
//!   sloppy preconditioner: iterations within one of one rank's, solutions
//!   within `2 κ(M) tol` (tol 1e-10; κ(M) below 100).
//!
//! ```text
//! mpirun -np 4 target/release/examples/cpu_ranks --grid 1,1,2,2 [--map x|t] [--deterministic]
//! ```

use std::sync::Arc;

use latsol::backend::cpu::{CpuBackend, CpuClover, CpuGauge, CpuSpinor, Ranks};
use latsol::backend::Backend;
use latsol::comm::{Comm, Dims, MpiComm, Partition, RankMap, Reduction};
use latsol::dirac::{Direct, Normal, WilsonFields};
use latsol::field::{GaugeField, HostSpinor};
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::solver::block::Converted;
use latsol::solver::multishift_cg::{self, MultiShiftParams};
use latsol::solver::sap::{box_links, BoxSolver, Sap, SapParams, Schwarz};
use latsol::solver::{
    bicgstab, block_bicgstab, block_cg, cg, cg_reliable, gcr, MixedParams, Silent, SolverParams,
    SolverStats,
};
use mpi::raw::AsRaw;

mod ranks_common;
use ranks_common::parts::{arg, local_clover, local_spinor, relative_difference};

/// Local extents: 2 in x (the smallest a Wilson partition allows), 4 elsewhere.
const LOCAL: Dims = [2, 4, 4, 4];
const KAPPA: f64 = 0.11;
const EVEN: Subset = Subset::Single(Parity::Even);

/// `a · D_{p,p̄} src` in `prec` on `backend`, back on the host.
#[allow(clippy::too_many_arguments)]
fn hop(
    backend: &CpuBackend,
    lat: &Arc<Lattice>,
    gauge: &<CpuBackend as Backend>::Gauge,
    src: &HostSpinor,
    parity: Parity,
    dagger: bool,
    a: f64,
    prec: Precision,
) -> HostSpinor {
    let mut inp = backend
        .alloc_spinor(lat, Subset::Single(parity.other()), prec)
        .unwrap();
    backend.upload_spinor(&mut inp, src).unwrap();
    let mut out = backend
        .alloc_spinor(lat, Subset::Single(parity), prec)
        .unwrap();
    backend
        .wilson_dslash(&mut out, parity, gauge, &inp, dagger, a, None)
        .unwrap();
    let mut host = HostSpinor::zeros(lat.clone(), Subset::Single(parity));
    backend.download_spinor(&out, &mut host).unwrap();
    host
}

/// A solve on the even sites: `b` uploaded in double, `run` solving into a
/// zero guess, the solution downloaded.
fn solve_even(
    backend: &CpuBackend,
    lat: &Arc<Lattice>,
    b: &HostSpinor,
    run: impl FnOnce(&mut CpuSpinor, &CpuSpinor) -> SolverStats,
) -> (SolverStats, HostSpinor) {
    let mut bb = backend.alloc_spinor(lat, EVEN, Precision::Double).unwrap();
    backend.upload_spinor(&mut bb, b).unwrap();
    let mut x = backend.alloc_spinor(lat, EVEN, Precision::Double).unwrap();
    let stats = run(&mut x, &bb);
    let mut out = HostSpinor::zeros(lat.clone(), EVEN);
    backend.download_spinor(&x, &mut out).unwrap();
    (stats, out)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let grid: Dims = arg(&args, "--grid")
        .expect("--grid X,Y,Z,T")
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect::<Vec<usize>>()
        .try_into()
        .expect("four extents");
    let map = match arg(&args, "--map") {
        Some("x") => RankMap::XFastest,
        _ => RankMap::TFastest,
    };
    let reduction = if args.iter().any(|a| a == "--deterministic") {
        Reduction::Deterministic
    } else {
        Reduction::Fast
    };
    let universe = mpi::initialize().expect("MPI_Init");
    let world = universe.world();
    // SAFETY: the world communicator lives for the whole program.
    let comm: Arc<dyn Comm> =
        Arc::new(unsafe { MpiComm::duplicate_raw(world.as_raw()) }.expect("latsol's communicator"));
    let (rank, size) = (comm.rank(), comm.size());
    let partition = Partition::new(grid, LOCAL, size, rank, &map).expect("the partition");

    // The same global fields on every rank; this rank's part of them.
    let global_lat = Arc::new(Lattice::new(partition.global()).unwrap());
    let local_lat = Arc::new(Lattice::new(LOCAL).unwrap());
    let global_gauge = latsol::random::hot_gauge(&global_lat, 11);
    let mut local_gauge = GaugeField::unit(local_lat.clone());
    for parity in [Parity::Even, Parity::Odd] {
        for cb in 0..local_lat.half_volume() {
            let x = local_lat.coords(parity, cb);
            for mu in 0..4 {
                *local_gauge.link_at_mut(x, mu) =
                    *global_gauge.link_at(partition.global_site(x), mu);
            }
        }
    }
    let b = latsol::random::spinor(&global_lat, EVEN, 9);
    let b_local = local_spinor(&b, &partition, &local_lat, Parity::Even);

    let one = CpuBackend::new(1).unwrap();
    let ranks = Ranks {
        comm: comm.clone(),
        grid: partition.rank_grid().clone(),
        reduction,
    };
    let many = CpuBackend::on_ranks(1, ranks).unwrap();
    let (double, half, recon, tb) = (
        Precision::Double,
        Precision::Half,
        Reconstruct::Full18,
        TBoundary::AntiPeriodic,
    );
    let g1 = one.upload_gauge(&global_gauge, tb, double, recon).unwrap();
    let gn = many.upload_gauge(&local_gauge, tb, double, recon).unwrap();
    let h1 = one.upload_gauge(&global_gauge, tb, half, recon).unwrap();
    let hn = many.upload_gauge(&local_gauge, tb, half, recon).unwrap();
    let mut failures: Vec<String> = Vec::new();

    // The hopping term, double (both parities, dagger) and half: bit for bit.
    let cases = [(Parity::Even, false, double), (Parity::Odd, false, double)]
        .into_iter()
        .chain([
            (Parity::Even, true, double),
            (Parity::Odd, true, double),
            (Parity::Even, false, half),
        ]);
    for (parity, dagger, prec) in cases {
        let src = latsol::random::spinor(&global_lat, Subset::Single(parity.other()), 5);
        let src_local = local_spinor(&src, &partition, &local_lat, parity.other());
        let (gauge1, gauge_n) = if prec == half { (&h1, &hn) } else { (&g1, &gn) };
        let want = hop(&one, &global_lat, gauge1, &src, parity, dagger, 0.7, prec);
        let got = hop(
            &many, &local_lat, gauge_n, &src_local, parity, dagger, 0.7, prec,
        );
        if got.data() != local_spinor(&want, &partition, &local_lat, parity).data() {
            failures.push(format!(
                "{prec:?} dslash, parity {parity:?}, dagger {dagger}: not the one-rank numbers"
            ));
        }
    }

    // CG on M̂†M̂ of the even-odd Wilson operator.
    let params = SolverParams {
        tol: 1e-10,
        maxiter: 500,
        progress_every: 0,
        confirm: true,
    };
    let cg_on = |backend: &CpuBackend, gauge, lat: &Arc<Lattice>, b: &HostSpinor| {
        solve_even(backend, lat, b, |x, bb| {
            let op = WilsonFields {
                gauge,
                clover: None,
            }
            .even_odd(backend, KAPPA, Parity::Even, true, double)
            .unwrap();
            let mut normal = Normal::new(backend, op).unwrap();
            cg::solve(backend, &mut normal, x, bb, &params, &Silent).unwrap()
        })
    };
    let (s1, x1) = cg_on(&one, &g1, &global_lat, &b);
    let (sn, xn) = cg_on(&many, &gn, &local_lat, &b_local);
    let rel = relative_difference(
        &*comm,
        &local_spinor(&x1, &partition, &local_lat, Parity::Even),
        &xn,
    );
    let slack = usize::from(reduction == Reduction::Fast);
    if !s1.converged
        || !sn.converged
        || s1.iterations.abs_diff(sn.iterations) > slack
        || rel > 1e-12
    {
        failures.push(format!(
            "CG: one rank {} iterations ({}), {size} ranks {} ({}), solutions differ by {rel:.2e}",
            s1.iterations, s1.converged, sn.iterations, sn.converged
        ));
    }
    // Deterministic sums: a second solve, the same bits.
    if reduction == Reduction::Deterministic {
        let (again, x_again) = cg_on(&many, &gn, &local_lat, &b_local);
        if again.iterations != sn.iterations || x_again.data() != xn.data() {
            failures.push("deterministic sums: a second solve differs".into());
        }
    }

    // Reliable-update CG with a half sloppy operator.
    let mixed = MixedParams {
        tol: 1e-10,
        maxiter: 1000,
        progress_every: 0,
        delta: 0.1,
        tol_inner: 0.1,
    };
    let mixed_on = |backend: &CpuBackend, gauge, sloppy, lat: &Arc<Lattice>, b: &HostSpinor| {
        solve_even(backend, lat, b, |x, bb| {
            let op = WilsonFields {
                gauge,
                clover: None,
            }
            .even_odd(backend, KAPPA, Parity::Even, true, double)
            .unwrap();
            let op_s = WilsonFields {
                gauge: sloppy,
                clover: None,
            }
            .even_odd(backend, KAPPA, Parity::Even, true, half)
            .unwrap();
            let (mut a, mut a_s) = (
                Normal::new(backend, op).unwrap(),
                Normal::new(backend, op_s).unwrap(),
            );
            cg_reliable::solve(backend, &mut a, &mut a_s, x, bb, &mixed, false, &Silent).unwrap()
        })
    };
    let (m1, z1) = mixed_on(&one, &g1, &h1, &global_lat, &b);
    let (mn, zn) = mixed_on(&many, &gn, &hn, &local_lat, &b_local);
    let rel_mixed = relative_difference(
        &*comm,
        &local_spinor(&z1, &partition, &local_lat, Parity::Even),
        &zn,
    );
    let mixed_ok = m1.converged && mn.converged && mn.reliable_updates > 0;
    if !mixed_ok || m1.iterations.abs_diff(mn.iterations) > 1 || rel_mixed > 1e-8 {
        failures.push(format!(
            "double-half CG: one rank {} iterations ({}), {size} ranks {} ({}), solutions differ by {rel_mixed:.2e}",
            m1.iterations, m1.converged, mn.iterations, mn.converged
        ));
    }

    // Multi-shift CG on M̂†M̂ + σ.
    let shifts = [0.0, 0.05, 0.3];
    let tols = [1e-10; 3];
    let shifted = MultiShiftParams {
        tols: &tols,
        maxiter: 1000,
        progress_every: 0,
        delta: 0.1,
        stabilised: false,
        measure_phase1: false,
        refinement: Default::default(),
    };
    let multishift_on = |backend: &CpuBackend, gauge, lat: &Arc<Lattice>, b: &HostSpinor| {
        let mut bb = backend.alloc_spinor(lat, EVEN, double).unwrap();
        backend.upload_spinor(&mut bb, b).unwrap();
        let mut xs: Vec<CpuSpinor> = (0..shifts.len())
            .map(|_| backend.alloc_spinor(lat, EVEN, double).unwrap())
            .collect();
        let normal = |backend| {
            let op = WilsonFields {
                gauge,
                clover: None,
            }
            .even_odd(backend, KAPPA, Parity::Even, true, double)
            .unwrap();
            Normal::new(backend, op).unwrap()
        };
        let (mut a, mut a_s) = (normal(backend), normal(backend));
        let stats = multishift_cg::solve(
            backend, &mut a, &mut a_s, None, &shifts, &mut xs, &bb, &shifted, &Silent,
        )
        .unwrap();
        let solutions: Vec<HostSpinor> = xs
            .iter()
            .map(|x| {
                let mut out = HostSpinor::zeros(lat.clone(), EVEN);
                backend.download_spinor(x, &mut out).unwrap();
                out
            })
            .collect();
        (stats, solutions)
    };
    let (ms1, w1) = multishift_on(&one, &g1, &global_lat, &b);
    let (msn, wn) = multishift_on(&many, &gn, &local_lat, &b_local);
    let rel_shifts: Vec<f64> = w1
        .iter()
        .zip(&wn)
        .map(|(w1, wn)| {
            relative_difference(
                &*comm,
                &local_spinor(w1, &partition, &local_lat, Parity::Even),
                wn,
            )
        })
        .collect();
    let worst_shift = rel_shifts.iter().fold(0.0f64, |m, &r| m.max(r));
    let phase = (ms1.multishift_iterations, msn.multishift_iterations);
    let all_converged = ms1.shifts.iter().chain(&msn.shifts).all(|s| s.converged);
    if !all_converged || phase.0.abs_diff(phase.1) > 1 || worst_shift > 1e-12 {
        failures.push(format!(
            "multi-shift CG: one rank {} iterations, {size} ranks {}, solutions differ by up to {worst_shift:.2e}",
            phase.0, phase.1
        ));
    }

    // BiCGstab on the even-odd Wilson-clover operator.
    let clover = latsol::clover::compute::compute(&global_gauge, KAPPA * 1.2).unwrap();
    let inverse = clover.inverse().unwrap();
    let c1 = one.upload_clover(&clover, &inverse, double).unwrap();
    let (lc, li) = (
        local_clover(&clover, &partition, &local_lat),
        local_clover(&inverse, &partition, &local_lat),
    );
    let cn = many.upload_clover(&lc, &li, double).unwrap();
    let bicgstab_on = |backend: &CpuBackend, gauge, clover, lat: &Arc<Lattice>, b: &HostSpinor| {
        solve_even(backend, lat, b, |x, bb| {
            let op = WilsonFields {
                gauge,
                clover: Some(clover),
            }
            .even_odd(backend, KAPPA, Parity::Even, true, double)
            .unwrap();
            bicgstab::solve(backend, &mut Direct(op), x, bb, &params, &Silent).unwrap()
        })
    };
    let (t1, y1) = bicgstab_on(&one, &g1, &c1, &global_lat, &b);
    let (tn, yn) = bicgstab_on(&many, &gn, &cn, &local_lat, &b_local);
    let rel_clover = relative_difference(
        &*comm,
        &local_spinor(&y1, &partition, &local_lat, Parity::Even),
        &yn,
    );
    if !t1.converged
        || !tn.converged
        || t1.iterations.abs_diff(tn.iterations) > 1
        || rel_clover > 1e-12
    {
        failures.push(format!(
            "clover BiCGstab: one rank {} iterations, {size} ranks {}, solutions differ by {rel_clover:.2e}",
            t1.iterations, tn.iterations
        ));
    }

    // The block solvers on three sources (this one and two more).
    let sources: Vec<HostSpinor> = (0..3)
        .map(|k| latsol::random::spinor(&global_lat, EVEN, 9 + 4 * k))
        .collect();
    let single = Precision::Single;
    let s1c = one.upload_clover(&clover, &inverse, single).unwrap();
    let snc = many.upload_clover(&lc, &li, single).unwrap();
    let g1s = one.upload_gauge(&global_gauge, tb, single, recon).unwrap();
    let gns = many.upload_gauge(&local_gauge, tb, single, recon).unwrap();
    let mixed = MixedParams {
        tol: 1e-10,
        maxiter: 500,
        progress_every: 0,
        delta: 0.1,
        tol_inner: 0.1,
    };
    let block_on = |backend: &CpuBackend,
                    (gauge, clover): (&_, &_),
                    (gauge_s, clover_s): (&_, &_),
                    lat: &Arc<Lattice>,
                    bs: &[HostSpinor],
                    cg_normal: bool| {
        let upload = |h: &HostSpinor| {
            let mut f = backend.alloc_spinor(lat, EVEN, double).unwrap();
            backend.upload_spinor(&mut f, h).unwrap();
            f
        };
        let rhs: Vec<CpuSpinor> = bs.iter().map(upload).collect();
        let mut xs: Vec<CpuSpinor> = bs
            .iter()
            .map(|_| backend.alloc_spinor(lat, EVEN, double).unwrap())
            .collect();
        let op = |g, c, p| {
            WilsonFields {
                gauge: g,
                clover: Some(c),
            }
            .even_odd(backend, KAPPA, Parity::Even, true, p)
            .unwrap()
        };
        let (m, m_lo) = (op(gauge, clover, double), op(gauge_s, clover_s, single));
        let refs: Vec<&CpuSpinor> = rhs.iter().collect();
        let stats = if cg_normal {
            let (mut a, mut a_lo) = (
                Normal::new(backend, m).unwrap(),
                Normal::new(backend, m_lo).unwrap(),
            );
            block_cg::solve(backend, &mut a, &mut a_lo, &mut xs, &refs, &mixed, &Silent)
        } else {
            let (mut a, mut a_lo) = (Direct(m), Direct(m_lo));
            let standard = block_bicgstab::Variant::Standard;
            block_bicgstab::solve(
                backend, &mut a, &mut a_lo, &mut xs, &refs, &mixed, standard, None, &Silent,
            )
        }
        .unwrap();
        let out: Vec<HostSpinor> = xs
            .iter()
            .map(|x| {
                let mut h = HostSpinor::zeros(lat.clone(), EVEN);
                backend.download_spinor(x, &mut h).unwrap();
                h
            })
            .collect();
        (stats, out)
    };
    let sources_local: Vec<HostSpinor> = sources
        .iter()
        .map(|b| local_spinor(b, &partition, &local_lat, Parity::Even))
        .collect();
    let mut block_iterations = Vec::new();
    for (cg_normal, what, bound) in [(false, "block BiCGstab", 2e-8), (true, "block CG", 2e-6)] {
        let (st1, z1) = block_on(
            &one,
            (&g1, &c1),
            (&g1s, &s1c),
            &global_lat,
            &sources,
            cg_normal,
        );
        let (stn, zn) = block_on(
            &many,
            (&gn, &cn),
            (&gns, &snc),
            &local_lat,
            &sources_local,
            cg_normal,
        );
        let worst = z1
            .iter()
            .zip(&zn)
            .map(|(a, b)| {
                relative_difference(
                    &*comm,
                    &local_spinor(a, &partition, &local_lat, Parity::Even),
                    b,
                )
            })
            .fold(0.0f64, f64::max);
        let (i1, i_n) = (st1.total.iterations, stn.total.iterations);
        if !st1.total.converged || !stn.total.converged || i1.abs_diff(i_n) > 1 || worst > bound {
            failures.push(format!(
                "{what}: one rank {i1} iterations, {size} ranks {i_n}, solutions differ by {worst:.2e}"
            ));
        }
        block_iterations.push(format!("{what} {i1} and {i_n} ({worst:.1e})"));
    }

    // SAP (seed 002 §2.2): M_SAP of one full source on one rank and on the
    // ranks, boxes of 2⁴ (the local x extent is 2), so every rank face is a
    // box face. The same boxes and colours (global box coordinates), box
    // solves on links without faces, residual updates through the faces,
    // and no sums: the same numbers bit for bit.
    let local_full = |h: &HostSpinor| {
        let mut out = HostSpinor::zeros(local_lat.clone(), Subset::Full);
        for p in [Parity::Even, Parity::Odd] {
            let part = local_spinor(&h.parity_part(p), &partition, &local_lat, p);
            out.set_parity_part(p, &part);
        }
        out
    };
    let sap_forms = [
        (Schwarz::Multiplicative, BoxSolver::Ssor, 0.0),
        (Schwarz::Additive, BoxSolver::Ssor, 0.0),
        (Schwarz::Multiplicative, BoxSolver::Mr, 1e-12),
        (Schwarz::Additive, BoxSolver::Mr, 1e-12),
    ];
    let full = latsol::random::spinor(&global_lat, Subset::Full, 31);
    for (schwarz, box_solver, bound) in sap_forms {
        let sap = SapParams {
            extent: [2, 2, 2, 2],
            cycles: 3,
            ssor_iterations: 2,
            omega: 1.1,
            schwarz,
            box_solver,
        };
        let sap_on = |backend: &CpuBackend, gauge, clover, lat: &Arc<Lattice>, h: &HostSpinor| {
            let domains = sap.domains(lat.dims(), backend.rank_coords()).unwrap();
            let boxes = box_links(backend, gauge, &domains, double).unwrap();
            let f = WilsonFields {
                gauge,
                clover: Some(clover),
            };
            let mut m = Sap::new(backend, f, &boxes, lat, KAPPA, false, sap, double).unwrap();
            let mut x = backend.alloc_spinor(lat, Subset::Full, double).unwrap();
            backend.upload_spinor(&mut x, h).unwrap();
            let mut y = backend.alloc_spinor(lat, Subset::Full, double).unwrap();
            m.apply(&mut y, &x).unwrap();
            let mut out = HostSpinor::zeros(lat.clone(), Subset::Full);
            backend.download_spinor(&y, &mut out).unwrap();
            out
        };
        let y1 = sap_on(&one, &g1, &c1, &global_lat, &full);
        let yn = sap_on(&many, &gn, &cn, &local_lat, &local_full(&full));
        let rel_sap = relative_difference(&*comm, &local_full(&y1), &yn);
        if rel_sap > bound {
            failures.push(format!(
                "M_SAP {schwarz:?} {box_solver:?}: {size} ranks differ from one by {rel_sap:.2e} \
                 (bound {bound:.0e})"
            ));
        }
    }

    // GCR(8) on the full clover operator with MR-SAP in single.
    let single = Precision::Single;
    let gcr_on = |backend: &CpuBackend,
                  (gauge, clover): (&CpuGauge, &CpuClover),
                  (gauge_s, clover_s): (&CpuGauge, &CpuClover),
                  lat: &Arc<Lattice>,
                  h: &HostSpinor| {
        let sap = SapParams {
            extent: [2, 2, 2, 2],
            cycles: 2,
            ssor_iterations: 4,
            omega: 1.0,
            schwarz: Schwarz::Multiplicative,
            box_solver: BoxSolver::Mr,
        };
        let domains = sap.domains(lat.dims(), backend.rank_coords()).unwrap();
        let boxes = box_links(backend, gauge, &domains, single).unwrap();
        let fs = WilsonFields {
            gauge: gauge_s,
            clover: Some(clover_s),
        };
        let mut m = Sap::new(backend, fs, &boxes, lat, KAPPA, false, sap, single).unwrap();
        let mut converted = Converted::new(backend, &mut m, double);
        let f = WilsonFields {
            gauge,
            clover: Some(clover),
        };
        let mut a = Direct(f.full(backend, KAPPA, double));
        let mut b = backend.alloc_spinor(lat, Subset::Full, double).unwrap();
        backend.upload_spinor(&mut b, h).unwrap();
        let mut x = backend.alloc_spinor(lat, Subset::Full, double).unwrap();
        let sp = SolverParams {
            tol: 1e-10,
            maxiter: 500,
            progress_every: 0,
            confirm: true,
        };
        let stats = gcr::solve(
            backend,
            &mut a,
            &mut x,
            &b,
            &sp,
            8,
            Some(&mut converted),
            &Silent,
        )
        .unwrap();
        let mut out = HostSpinor::zeros(lat.clone(), Subset::Full);
        backend.download_spinor(&x, &mut out).unwrap();
        (stats, out)
    };
    let (gcr1, x1) = gcr_on(&one, (&g1, &c1), (&g1s, &s1c), &global_lat, &full);
    let (gcrn, xn) = gcr_on(
        &many,
        (&gn, &cn),
        (&gns, &snc),
        &local_lat,
        &local_full(&full),
    );
    let rel_gcr = relative_difference(&*comm, &local_full(&x1), &xn);
    let (i1, i_n) = (gcr1.iterations, gcrn.iterations);
    if !gcr1.converged || !gcrn.converged || i1.abs_diff(i_n) > 1 || rel_gcr > 2e-8 {
        failures.push(format!(
            "GCR + MR-SAP: one rank {i1} iterations, {size} ranks {i_n}, solutions differ by \
             {rel_gcr:.2e}"
        ));
    }

    let ok = comm.all_ok(failures.is_empty()).unwrap();
    for f in &failures {
        eprintln!("rank {rank}: FAILED {f}");
    }
    if rank == 0 {
        println!(
            "cpu_ranks: {size} rank(s), grid {grid:?}, {reduction:?} sums: double and half dslash bit for bit; \
             CG {} iterations on one rank, {} on {size} ({rel:.1e}); double-half CG {} and {} ({} reliable \
             updates; {rel_mixed:.1e}); multi-shift CG {} and {} ({worst_shift:.1e}); clover BiCGstab {} and {} \
             ({rel_clover:.1e}); {}; M_SAP in four forms; GCR + MR-SAP {i1} and {i_n} ({rel_gcr:.1e}): {}",
            s1.iterations,
            sn.iterations,
            m1.iterations,
            mn.iterations,
            mn.reliable_updates,
            phase.0,
            phase.1,
            t1.iterations,
            tn.iterations,
            block_iterations.join("; "),
            if ok { "all checks passed" } else { "FAILED" }
        );
    }
    drop(many);
    drop(comm);
    drop(universe);
    std::process::exit(if ok { 0 } else { 1 });
}
