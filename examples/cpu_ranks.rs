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
//! - BiCGstab on the even-odd Wilson-clover operator (the clover term made
//!   on the whole lattice, each rank keeping its sites): iterations within
//!   one of one rank's, solutions equal to 1e-12 relative.
//!
//! ```text
//! mpirun -np 4 target/release/examples/cpu_ranks --grid 1,1,2,2 [--map x|t] [--deterministic]
//! ```

use std::sync::Arc;

use latsol::backend::cpu::{CpuBackend, Ranks};
use latsol::backend::Backend;
use latsol::clover::{CloverField, SiteBlocks};
use latsol::comm::{Comm, Dims, MpiComm, Partition, RankMap, Reduction};
use latsol::dirac::{Direct, Normal, WilsonFields};
use latsol::field::{GaugeField, HostSpinor};
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::solver::{bicgstab, cg, cg_reliable, MixedParams, Silent, SolverParams};
use mpi::raw::AsRaw;

/// Local extents: 2 in x (the smallest a Wilson partition allows), 4 elsewhere.
const LOCAL: Dims = [2, 4, 4, 4];

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .map(|i| args[i + 1].as_str())
}

/// This rank's part of a global field of one parity.
fn local_spinor(
    global: &HostSpinor,
    p: &Partition,
    lat: &Arc<Lattice>,
    parity: Parity,
) -> HostSpinor {
    let g = global.lattice();
    let mut out = HostSpinor::zeros(lat.clone(), Subset::Single(parity));
    for cb in 0..lat.half_volume() {
        let x = lat.coords(parity, cb);
        let gx = p.global_site(x);
        out.site_mut(cb)
            .copy_from_slice(global.site(g.cb_index(gx)));
    }
    out
}

/// This rank's sites of a clover field of the whole lattice.
fn local_clover(global: &CloverField, p: &Partition, lat: &Arc<Lattice>) -> CloverField {
    let g = global.lattice();
    let sites: Vec<SiteBlocks> = (0..lat.volume())
        .map(|i| {
            let parity = Parity::from_index(i / lat.half_volume());
            let x = lat.coords(parity, i % lat.half_volume());
            *global.site(parity, g.cb_index(p.global_site(x)))
        })
        .collect();
    CloverField::from_sites(lat.clone(), sites).unwrap()
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

    // The same global fields on every rank.
    let global_lat = Arc::new(Lattice::new(partition.global()).unwrap());
    let local_lat = Arc::new(Lattice::new(LOCAL).unwrap());
    let global_gauge = latsol::random::hot_gauge(&global_lat, 11);
    let mut local_gauge = GaugeField::unit(local_lat.clone());
    for cb in 0..local_lat.volume() {
        let x = local_lat.coords(
            Parity::from_index(cb / local_lat.half_volume()),
            cb % local_lat.half_volume(),
        );
        for mu in 0..4 {
            *local_gauge.link_at_mut(x, mu) = *global_gauge.link_at(partition.global_site(x), mu);
        }
    }

    let one = CpuBackend::new(1).unwrap();
    let many = CpuBackend::on_ranks(
        1,
        Ranks {
            comm: comm.clone(),
            partition: partition.clone(),
            reduction,
        },
    )
    .unwrap();
    let (prec, recon, tb) = (
        Precision::Double,
        Reconstruct::Full18,
        TBoundary::AntiPeriodic,
    );
    let g1 = one.upload_gauge(&global_gauge, tb, prec, recon).unwrap();
    let gn = many.upload_gauge(&local_gauge, tb, prec, recon).unwrap();

    let mut failures: Vec<String> = Vec::new();

    // The hopping term.
    for parity in [Parity::Even, Parity::Odd] {
        let src = latsol::random::spinor(&global_lat, Subset::Single(parity.other()), 5);
        let src_local = local_spinor(&src, &partition, &local_lat, parity.other());
        for dagger in [false, true] {
            let mut i1 = one
                .alloc_spinor(&global_lat, Subset::Single(parity.other()), prec)
                .unwrap();
            one.upload_spinor(&mut i1, &src).unwrap();
            let mut o1 = one
                .alloc_spinor(&global_lat, Subset::Single(parity), prec)
                .unwrap();
            one.wilson_dslash(&mut o1, parity, &g1, &i1, dagger, 0.7, None)
                .unwrap();
            let mut want = HostSpinor::zeros(global_lat.clone(), Subset::Single(parity));
            one.download_spinor(&o1, &mut want).unwrap();

            let mut i_n = many
                .alloc_spinor(&local_lat, Subset::Single(parity.other()), prec)
                .unwrap();
            many.upload_spinor(&mut i_n, &src_local).unwrap();
            let mut o_n = many
                .alloc_spinor(&local_lat, Subset::Single(parity), prec)
                .unwrap();
            many.wilson_dslash(&mut o_n, parity, &gn, &i_n, dagger, 0.7, None)
                .unwrap();
            let mut got = HostSpinor::zeros(local_lat.clone(), Subset::Single(parity));
            many.download_spinor(&o_n, &mut got).unwrap();

            let want_local = local_spinor(&want, &partition, &local_lat, parity);
            if got.data() != want_local.data() {
                failures.push(format!(
                    "dslash parity {parity:?} dagger {dagger}: not the one-rank numbers"
                ));
            }
        }
    }

    // CG on M̂†M̂ of the even-odd Wilson operator.
    let kappa = 0.11;
    let params = SolverParams {
        tol: 1e-10,
        maxiter: 500,
        progress_every: 0,
        confirm: true,
    };
    let b = latsol::random::spinor(&global_lat, Subset::Single(Parity::Even), 9);
    let solve = |backend: &CpuBackend, gauge, lat: &Arc<Lattice>, b: &HostSpinor| {
        let fields = WilsonFields {
            gauge,
            clover: None,
        };
        let op = fields
            .even_odd(backend, kappa, Parity::Even, true, prec)
            .unwrap();
        let mut normal = Normal::new(backend, op).unwrap();
        let mut bb = backend
            .alloc_spinor(lat, Subset::Single(Parity::Even), prec)
            .unwrap();
        backend.upload_spinor(&mut bb, b).unwrap();
        let mut x = backend
            .alloc_spinor(lat, Subset::Single(Parity::Even), prec)
            .unwrap();
        let stats = cg::solve(backend, &mut normal, &mut x, &bb, &params, &Silent).unwrap();
        let mut out = HostSpinor::zeros(lat.clone(), Subset::Single(Parity::Even));
        backend.download_spinor(&x, &mut out).unwrap();
        (stats, out)
    };
    let (s1, x1) = solve(&one, &g1, &global_lat, &b);
    let b_local = local_spinor(&b, &partition, &local_lat, Parity::Even);
    let (sn, xn) = solve(&many, &gn, &local_lat, &b_local);
    let x1_local = local_spinor(&x1, &partition, &local_lat, Parity::Even);
    let mut diff2 = [
        x1_local
            .data()
            .iter()
            .zip(xn.data())
            .map(|(a, b)| (a - b).norm_sqr())
            .sum::<f64>(),
        x1_local.norm2(),
    ];
    comm.sum(&mut diff2, Reduction::Deterministic).unwrap();
    let rel = (diff2[0] / diff2[1]).sqrt();
    let slack = usize::from(reduction == Reduction::Fast);
    if !s1.converged
        || !sn.converged
        || s1.iterations.abs_diff(sn.iterations) > slack
        || rel > 1e-12
    {
        failures.push(format!(
            "CG: one rank {} iterations (converged {}), {size} ranks {} ({}), solutions differ by {rel:.2e}",
            s1.iterations, s1.converged, sn.iterations, sn.converged
        ));
    }

    // Deterministic sums: a second solve, the same bits.
    if reduction == Reduction::Deterministic {
        let (again, x_again) = solve(&many, &gn, &local_lat, &b_local);
        if again.iterations != sn.iterations || x_again.data() != xn.data() {
            failures.push("deterministic sums: a second solve differs".into());
        }
    }

    // Half precision: the hopping term bit for bit, and a mixed CG.
    let half = Precision::Half;
    let h1 = one.upload_gauge(&global_gauge, tb, half, recon).unwrap();
    let hn = many.upload_gauge(&local_gauge, tb, half, recon).unwrap();
    {
        let src = latsol::random::spinor(&global_lat, Subset::Single(Parity::Odd), 21);
        let src_local = local_spinor(&src, &partition, &local_lat, Parity::Odd);
        let mut i1 = one
            .alloc_spinor(&global_lat, Subset::Single(Parity::Odd), half)
            .unwrap();
        one.upload_spinor(&mut i1, &src).unwrap();
        let mut o1 = one
            .alloc_spinor(&global_lat, Subset::Single(Parity::Even), half)
            .unwrap();
        one.wilson_dslash(&mut o1, Parity::Even, &h1, &i1, false, 1.0, None)
            .unwrap();
        let mut want = HostSpinor::zeros(global_lat.clone(), Subset::Single(Parity::Even));
        one.download_spinor(&o1, &mut want).unwrap();
        let mut i_n = many
            .alloc_spinor(&local_lat, Subset::Single(Parity::Odd), half)
            .unwrap();
        many.upload_spinor(&mut i_n, &src_local).unwrap();
        let mut o_n = many
            .alloc_spinor(&local_lat, Subset::Single(Parity::Even), half)
            .unwrap();
        many.wilson_dslash(&mut o_n, Parity::Even, &hn, &i_n, false, 1.0, None)
            .unwrap();
        let mut got = HostSpinor::zeros(local_lat.clone(), Subset::Single(Parity::Even));
        many.download_spinor(&o_n, &mut got).unwrap();
        if got.data() != local_spinor(&want, &partition, &local_lat, Parity::Even).data() {
            failures.push("half dslash: not the one-rank numbers".into());
        }
    }
    let mixed = MixedParams {
        tol: 1e-10,
        maxiter: 1000,
        progress_every: 0,
        delta: 0.1,
        tol_inner: 0.1,
    };
    let solve_mixed = |backend: &CpuBackend, gauge, sloppy, lat: &Arc<Lattice>, b: &HostSpinor| {
        let precise = WilsonFields {
            gauge,
            clover: None,
        };
        let rough = WilsonFields {
            gauge: sloppy,
            clover: None,
        };
        let op = precise
            .even_odd(backend, kappa, Parity::Even, true, prec)
            .unwrap();
        let op_s = rough
            .even_odd(backend, kappa, Parity::Even, true, half)
            .unwrap();
        let mut a = Normal::new(backend, op).unwrap();
        let mut a_s = Normal::new(backend, op_s).unwrap();
        let mut bb = backend
            .alloc_spinor(lat, Subset::Single(Parity::Even), prec)
            .unwrap();
        backend.upload_spinor(&mut bb, b).unwrap();
        let mut x = backend
            .alloc_spinor(lat, Subset::Single(Parity::Even), prec)
            .unwrap();
        let stats = cg_reliable::solve(
            backend, &mut a, &mut a_s, &mut x, &bb, &mixed, false, &Silent,
        )
        .unwrap();
        let mut out = HostSpinor::zeros(lat.clone(), Subset::Single(Parity::Even));
        backend.download_spinor(&x, &mut out).unwrap();
        (stats, out)
    };
    let (m1, z1) = solve_mixed(&one, &g1, &h1, &global_lat, &b);
    let (mn, zn) = solve_mixed(&many, &gn, &hn, &local_lat, &b_local);
    let z1_local = local_spinor(&z1, &partition, &local_lat, Parity::Even);
    let mut dz = [
        z1_local
            .data()
            .iter()
            .zip(zn.data())
            .map(|(a, b)| (a - b).norm_sqr())
            .sum::<f64>(),
        z1_local.norm2(),
    ];
    comm.sum(&mut dz, Reduction::Deterministic).unwrap();
    let rel_mixed = (dz[0] / dz[1]).sqrt();
    if !m1.converged
        || !mn.converged
        || mn.reliable_updates == 0
        || m1.iterations.abs_diff(mn.iterations) > 1
        || rel_mixed > 1e-8
    {
        failures.push(format!(
            "double-half CG: one rank {} iterations ({}), {size} ranks {} ({}), solutions differ by {rel_mixed:.2e}",
            m1.iterations, m1.converged, mn.iterations, mn.converged
        ));
    }

    // BiCGstab on the even-odd Wilson-clover operator.
    let clover = latsol::clover::compute::compute(&global_gauge, kappa * 1.2).unwrap();
    let inverse = clover.inverse().unwrap();
    let c1 = one.upload_clover(&clover, &inverse, prec).unwrap();
    let (lc, li) = (
        local_clover(&clover, &partition, &local_lat),
        local_clover(&inverse, &partition, &local_lat),
    );
    let cn = many.upload_clover(&lc, &li, prec).unwrap();
    let solve_clover = |backend: &CpuBackend, gauge, clover, lat: &Arc<Lattice>, b: &HostSpinor| {
        let fields = WilsonFields {
            gauge,
            clover: Some(clover),
        };
        let op = fields
            .even_odd(backend, kappa, Parity::Even, true, prec)
            .unwrap();
        let mut direct = Direct(op);
        let mut bb = backend
            .alloc_spinor(lat, Subset::Single(Parity::Even), prec)
            .unwrap();
        backend.upload_spinor(&mut bb, b).unwrap();
        let mut x = backend
            .alloc_spinor(lat, Subset::Single(Parity::Even), prec)
            .unwrap();
        let stats = bicgstab::solve(backend, &mut direct, &mut x, &bb, &params, &Silent).unwrap();
        let mut out = HostSpinor::zeros(lat.clone(), Subset::Single(Parity::Even));
        backend.download_spinor(&x, &mut out).unwrap();
        (stats, out)
    };
    let (t1, y1) = solve_clover(&one, &g1, &c1, &global_lat, &b);
    let (tn, yn) = solve_clover(&many, &gn, &cn, &local_lat, &b_local);
    let y1_local = local_spinor(&y1, &partition, &local_lat, Parity::Even);
    let mut d2 = [
        y1_local
            .data()
            .iter()
            .zip(yn.data())
            .map(|(a, b)| (a - b).norm_sqr())
            .sum::<f64>(),
        y1_local.norm2(),
    ];
    comm.sum(&mut d2, Reduction::Deterministic).unwrap();
    let rel_clover = (d2[0] / d2[1]).sqrt();
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

    let ok = comm.all_ok(failures.is_empty()).unwrap();
    for f in &failures {
        eprintln!("rank {rank}: FAILED {f}");
    }
    if rank == 0 {
        println!(
            "cpu_ranks: {size} rank(s), grid {grid:?}, {reduction:?} sums: dslash bit for bit, CG {} iterations \
             on one rank and {} on {size} (solutions within {rel:.1e}), half dslash bit for bit, \
             double-half CG {} and {} ({} reliable updates; {rel_mixed:.1e}), clover BiCGstab {} and {} ({rel_clover:.1e}): {}",
            s1.iterations,
            sn.iterations,
            m1.iterations,
            mn.iterations,
            mn.reliable_updates,
            t1.iterations,
            tn.iterations,
            if ok { "all checks passed" } else { "FAILED" }
        );
    }
    drop(many);
    drop(comm);
    drop(universe);
    std::process::exit(if ok { 0 } else { 1 });
}
