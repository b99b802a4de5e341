//! The CUDA backend on a partitioned lattice, one GPU a rank (cargo
//! features `mpi` and `cuda`; run on the GPU machines under `mpirun -np N`,
//! scripts/bench_gpu.sh). Every rank makes the same global gauge field and
//! sources (fixed seeds), keeps its sub-lattice of them, and compares, on
//! its own sites, the backend on many GPUs with one GPU holding the whole
//! lattice:
//! - the Wilson hopping term in every storage format and reconstruct, both
//!   parities, dagger and xpay, antiperiodic time: the same numbers bit for
//!   bit (every edge site sums the same hops in the same order, the faces
//!   travel as stored);
//! - the Wilson-clover forms (A⁻¹ D, A⁻¹ D + x, A x + D): bit for bit;
//! - CG on M̂†M̂ of the even-odd Wilson operator in double, reliable-update
//!   CG with a half sloppy operator, and BiCGstab on the even-odd clover
//!   operator with a single sloppy operator: the same iteration counts as
//!   one GPU within one (the global sums are added in another order) and
//!   solutions within the solver tolerance;
//! - the CPU backend on the same ranks agrees with the GPUs' CG.
//!
//! With `--bench X,Y,Z,T` it times instead the hopping term on a local
//! volume of those extents: microseconds per application of D (both
//! parities) in double, single and half, reconstruct 12, on the cut
//! lattice and, on the same GPU, the interior alone (the faces neither
//! packed nor carried: what the GPU would take without neighbours).
//!
//! ```text
//! mpirun -np 2 target/release/examples/gpu_ranks --grid 1,1,1,2
//! mpirun -np 4 target/release/examples/gpu_ranks --grid 1,1,2,2 --bench 32,32,32,32
//! ```

use std::sync::Arc;
use std::time::Instant;

use latsol::backend::cpu::{CpuBackend, Ranks};
use latsol::backend::cuda::CudaBackend;
use latsol::backend::{Backend, CloverForm};
use latsol::clover::CloverField;
use latsol::comm::{Comm, Dims, MpiComm, Partition, RankMap, Reduction};
use latsol::dirac::{Direct, Normal, WilsonFields};
use latsol::field::{GaugeField, HostSpinor};
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::solver::{bicgstab_reliable, cg, cg_reliable, MixedParams, Silent, SolverParams};
use mpi::raw::AsRaw;

mod ranks_common;
use ranks_common::parts::{local_clover, local_gauge, local_spinor, relative_difference};

const KAPPA: f64 = 0.11;
const EVEN: Subset = Subset::Single(Parity::Even);

fn arg<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .map(|i| args[i + 1].as_str())
}

fn dims(s: &str) -> Dims {
    s.split(',')
        .map(|s| s.parse().unwrap())
        .collect::<Vec<usize>>()
        .try_into()
        .expect("four extents")
}

/// A field of `subset` holding `host` in `prec`.
fn upload<B: Backend>(b: &B, host: &HostSpinor, subset: Subset, prec: Precision) -> B::Spinor {
    let mut f = b.alloc_spinor(host.lattice(), subset, prec).unwrap();
    b.upload_spinor(&mut f, host).unwrap();
    f
}

fn download<B: Backend>(b: &B, f: &B::Spinor, lat: &Arc<Lattice>, subset: Subset) -> HostSpinor {
    let mut host = HostSpinor::zeros(lat.clone(), subset);
    b.download_spinor(f, &mut host).unwrap();
    host
}

/// What one hopping-term case applies.
#[derive(Clone, Copy, Debug)]
enum Form {
    Wilson { xpay: bool },
    Clover(CloverForm, bool),
}

/// One application of `form` on `backend`, the output back on the host.
#[allow(clippy::too_many_arguments)]
fn apply<B: Backend>(
    backend: &B,
    gauge: &B::Gauge,
    clover: &B::Clover,
    src: &HostSpinor,
    x: &HostSpinor,
    parity: Parity,
    dagger: bool,
    form: Form,
    prec: Precision,
) -> HostSpinor {
    let lat = src.lattice().clone();
    let inp = upload(backend, src, Subset::Single(parity.other()), prec);
    let xf = upload(backend, x, Subset::Single(parity), prec);
    let mut out = backend
        .alloc_spinor(&lat, Subset::Single(parity), prec)
        .unwrap();
    match form {
        Form::Wilson { xpay } => backend
            .wilson_dslash(
                &mut out,
                parity,
                gauge,
                &inp,
                dagger,
                0.7,
                xpay.then_some(&xf),
            )
            .unwrap(),
        Form::Clover(f, xpay) => backend
            .wilson_clover_dslash(
                &mut out,
                parity,
                gauge,
                clover,
                &inp,
                dagger,
                0.7,
                f,
                xpay.then_some(&xf),
            )
            .unwrap(),
    }
    download(backend, &out, &lat, Subset::Single(parity))
}

struct Setup {
    comm: Arc<dyn Comm>,
    partition: Partition,
    ranks: Ranks,
    ordinal: usize,
}

fn check(s: &Setup, local_dims: Dims, failures: &mut Vec<String>) -> String {
    let (comm, partition) = (&s.comm, &s.partition);
    let global_lat = Arc::new(Lattice::new(partition.global()).unwrap());
    let local_lat = Arc::new(Lattice::new(local_dims).unwrap());
    let global_gauge = latsol::random::hot_gauge(&global_lat, 11);
    let gauge_here = local_gauge(&global_gauge, partition, &local_lat);
    let one = CudaBackend::new(s.ordinal).unwrap();
    let many = CudaBackend::new(s.ordinal)
        .unwrap()
        .with_ranks(s.ranks.clone());
    let tb = TBoundary::AntiPeriodic;
    let clover = latsol::clover::compute::compute(&global_gauge, KAPPA * 1.2).unwrap();
    let inverse = clover.inverse().unwrap();
    let (lc, li) = (
        local_clover(&clover, partition, &local_lat),
        local_clover(&inverse, partition, &local_lat),
    );
    use Precision::*;
    use Reconstruct::*;
    let formats: Vec<(Precision, Reconstruct)> = [
        (Double, Full18),
        (Double, Twelve),
        (Single, Full18),
        (Single, Twelve),
        (Single, Eight),
        (Half, Full18),
        (Half, Twelve),
        (Half, Eight),
        (Quarter, Twelve),
        (Packed20, Twelve),
        (Packed30, Full18),
    ]
    .into();
    let family = latsol::backend::OperatorFamily::Clover;
    one.prepare(family, &formats).unwrap();
    many.prepare(family, &formats).unwrap();
    let mut cases = 0;
    for &(prec, recon) in &formats {
        let g1 = one.upload_gauge(&global_gauge, tb, prec, recon).unwrap();
        let gn = many.upload_gauge(&gauge_here, tb, prec, recon).unwrap();
        let c1 = one.upload_clover(&clover, &inverse, prec).unwrap();
        let cn = many.upload_clover(&lc, &li, prec).unwrap();
        let forms = [
            Form::Wilson { xpay: false },
            Form::Wilson { xpay: true },
            Form::Clover(CloverForm::InverseOnHopping, false),
            Form::Clover(CloverForm::InverseOnHopping, true),
            Form::Clover(CloverForm::DirectOnX, true),
        ];
        for parity in [Parity::Even, Parity::Odd] {
            for dagger in [false, true] {
                for form in forms {
                    let src =
                        latsol::random::spinor(&global_lat, Subset::Single(parity.other()), 5);
                    let x = latsol::random::spinor(&global_lat, Subset::Single(parity), 6);
                    let src_here = local_spinor(&src, partition, &local_lat, parity.other());
                    let x_here = local_spinor(&x, partition, &local_lat, parity);
                    let want = apply(&one, &g1, &c1, &src, &x, parity, dagger, form, prec);
                    let got = apply(
                        &many, &gn, &cn, &src_here, &x_here, parity, dagger, form, prec,
                    );
                    cases += 1;
                    let want = local_spinor(&want, partition, &local_lat, parity);
                    if got.data() != want.data() {
                        let rel = relative_difference(&**comm, &want, &got);
                        failures.push(format!(
                            "{prec:?} r{} {form:?}, parity {parity:?}, dagger {dagger}: not the \
                             one-GPU numbers ({rel:.1e})",
                            recon.reals()
                        ));
                    } else {
                        // Keep the ranks' collective counts equal.
                        relative_difference(&**comm, &want, &got);
                    }
                }
            }
        }
    }

    // Solves: CG (double), reliable CG (double-half), mixed BiCGstab on clover.
    let b = latsol::random::spinor(&global_lat, EVEN, 9);
    let b_here = local_spinor(&b, partition, &local_lat, Parity::Even);
    let params = SolverParams {
        tol: 1e-10,
        maxiter: 2000,
        progress_every: 0,
        confirm: true,
    };
    let mixed = MixedParams {
        tol: 1e-10,
        maxiter: 4000,
        progress_every: 0,
        delta: 0.1,
        tol_inner: 0.1,
    };
    struct Solved {
        iterations: [usize; 3],
        x: [HostSpinor; 3],
    }
    fn solves<B: Backend>(
        backend: &B,
        gauge: &GaugeField,
        clover: (&CloverField, &CloverField),
        b: &HostSpinor,
        params: &SolverParams,
        mixed: &MixedParams,
    ) -> Solved {
        let lat = b.lattice().clone();
        let tb = TBoundary::AntiPeriodic;
        let (double, single, half) = (Precision::Double, Precision::Single, Precision::Half);
        let gd = backend
            .upload_gauge(gauge, tb, double, Reconstruct::Full18)
            .unwrap();
        let gs = backend
            .upload_gauge(gauge, tb, single, Reconstruct::Twelve)
            .unwrap();
        let gh = backend
            .upload_gauge(gauge, tb, half, Reconstruct::Twelve)
            .unwrap();
        let cd = backend.upload_clover(clover.0, clover.1, double).unwrap();
        let cs = backend.upload_clover(clover.0, clover.1, single).unwrap();
        let bb = upload(backend, b, EVEN, double);
        let op = |gauge, clover, prec| {
            WilsonFields { gauge, clover }
                .even_odd(backend, KAPPA, Parity::Even, true, prec)
                .unwrap()
        };
        let mut x0 = backend.alloc_spinor(&lat, EVEN, double).unwrap();
        let mut normal = Normal::new(backend, op(&gd, None, double)).unwrap();
        let s0 = cg::solve(backend, &mut normal, &mut x0, &bb, params, &Silent).unwrap();
        let mut x1 = backend.alloc_spinor(&lat, EVEN, double).unwrap();
        let mut a = Normal::new(backend, op(&gd, None, double)).unwrap();
        let mut a_s = Normal::new(backend, op(&gh, None, half)).unwrap();
        let s1 = cg_reliable::solve(
            backend, &mut a, &mut a_s, &mut x1, &bb, mixed, false, &Silent,
        )
        .unwrap();
        let mut x2 = backend.alloc_spinor(&lat, EVEN, double).unwrap();
        let mut d = Direct(op(&gd, Some(&cd), double));
        let mut d_s = Direct(op(&gs, Some(&cs), single));
        let s2 = bicgstab_reliable::solve(backend, &mut d, &mut d_s, &mut x2, &bb, mixed, &Silent)
            .unwrap();
        assert!(
            s0.converged && s1.converged && s2.converged,
            "a solve did not converge"
        );
        Solved {
            iterations: [s0.iterations, s1.iterations, s2.iterations],
            x: [x0, x1, x2].map(|x| download(backend, &x, &lat, EVEN)),
        }
    }
    let s1 = solves(
        &one,
        &global_gauge,
        (&clover, &inverse),
        &b,
        &params,
        &mixed,
    );
    let sn = solves(&many, &gauge_here, (&lc, &li), &b_here, &params, &mixed);
    let cpu = CpuBackend::on_ranks(2, s.ranks.clone()).unwrap();
    let sc = solves(&cpu, &gauge_here, (&lc, &li), &b_here, &params, &mixed);
    let names = [
        "CG double",
        "CG double-half",
        "clover BiCGstab double-single",
    ];
    let mut summary = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let want = local_spinor(&s1.x[k], partition, &local_lat, Parity::Even);
        let rel = relative_difference(&**comm, &want, &sn.x[k]);
        let rel_cpu = relative_difference(&**comm, &sc.x[k], &sn.x[k]);
        // Solutions of a 1e-10 residual on operators of condition number
        // below 100: within 1e-8 of each other.
        let slack = if k == 0 { 1 } else { 3 };
        if s1.iterations[k].abs_diff(sn.iterations[k]) > slack || rel > 1e-8 || rel_cpu > 1e-8 {
            failures.push(format!(
                "{}: one GPU {} iterations, ranks {} (CPU ranks {}); solutions differ by \
                 {rel:.1e} (CPU {rel_cpu:.1e})",
                name, s1.iterations[k], sn.iterations[k], sc.iterations[k]
            ));
        }
        summary.push(format!(
            "{} {}/{}/{} it ({rel:.0e}, CPU {rel_cpu:.0e})",
            name, s1.iterations[k], sn.iterations[k], sc.iterations[k]
        ));
    }
    format!(
        "{cases} hopping-term cases bit for bit against one GPU; {}",
        summary.join("; ")
    )
}

/// Microseconds per application of D (both parities) on the cut lattice
/// and on the interior alone (a lattice of the same local volume not cut).
fn bench(s: &Setup, local_dims: Dims) -> String {
    let local_lat = Arc::new(Lattice::new(local_dims).unwrap());
    let gauge = latsol::random::hot_gauge(&local_lat, 11);
    let many = CudaBackend::new(s.ordinal)
        .unwrap()
        .with_ranks(s.ranks.clone());
    let alone = CudaBackend::new(s.ordinal).unwrap();
    let tb = TBoundary::AntiPeriodic;
    let mut lines = Vec::new();
    let only = std::env::var("GPU_RANKS_PRECISION").ok();
    for prec in [Precision::Double, Precision::Single, Precision::Half] {
        if only.as_ref().is_some_and(|o| *o != format!("{prec:?}")) {
            continue;
        }
        let recon = Reconstruct::Twelve;
        let fmt = [(prec, recon)];
        many.prepare(latsol::backend::OperatorFamily::Wilson, &fmt)
            .unwrap();
        let time = |b: &CudaBackend, label: &str| -> f64 {
            let g = b.upload_gauge(&gauge, tb, prec, recon).unwrap();
            let src = latsol::random::spinor(&local_lat, Subset::Full, 5);
            let mut f = b.alloc_spinor(&local_lat, Subset::Full, prec).unwrap();
            b.upload_spinor(&mut f, &src).unwrap();
            let mut e = b.alloc_spinor(&local_lat, EVEN, prec).unwrap();
            let mut o = b
                .alloc_spinor(&local_lat, Subset::Single(Parity::Odd), prec)
                .unwrap();
            b.extract_parity(&mut o, &f, Parity::Odd).unwrap();
            let mut run = |n: usize| {
                for _ in 0..n {
                    b.wilson_dslash(&mut e, Parity::Even, &g, &o, false, 1.0, None)
                        .unwrap();
                    b.wilson_dslash(&mut o, Parity::Odd, &g, &e, false, 1.0, None)
                        .unwrap();
                }
                b.synchronize().unwrap();
            };
            run(20);
            let mut best = f64::MAX;
            for _ in 0..5 {
                s.comm.all_ok(true).unwrap();
                let t = Instant::now();
                run(100);
                let mut us = [t.elapsed().as_secs_f64() * 1e6 / 100.0];
                s.comm.max(&mut us).unwrap();
                best = best.min(us[0]);
            }
            let _ = label;
            best
        };
        let cut = time(&many, "cut");
        let interior = time(&alone, "alone");
        lines.push(format!(
            "{prec:?} r12: {cut:.1} us per D on the cut lattice, {interior:.1} alone ({:.0}%)",
            100.0 * interior / cut
        ));
    }
    lines.join("\n")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let grid = dims(arg(&args, "--grid").expect("--grid X,Y,Z,T"));
    let universe = mpi::initialize().expect("MPI_Init");
    let world = universe.world();
    // SAFETY: the world communicator lives for the whole program.
    let comm: Arc<dyn Comm> =
        Arc::new(unsafe { MpiComm::duplicate_raw(world.as_raw()) }.expect("latsol's communicator"));
    let (rank, size) = (comm.rank(), comm.size());
    let bench_dims = arg(&args, "--bench").map(dims);
    let local_dims = bench_dims.unwrap_or([4, 4, 4, 6]);
    let partition =
        Partition::new(grid, local_dims, size, rank, &RankMap::TFastest).expect("the partition");
    let count = CudaBackend::device_count().unwrap();
    let ordinal = comm.node_rank() % count.max(1);
    let ranks = Ranks {
        comm: comm.clone(),
        grid: partition.rank_grid().clone(),
        reduction: Reduction::Fast,
    };
    let setup = Setup {
        comm: comm.clone(),
        partition,
        ranks,
        ordinal,
    };
    let mut failures = Vec::new();
    let t = Instant::now();
    let report = match bench_dims {
        Some(d) => bench(&setup, d),
        None => check(&setup, local_dims, &mut failures),
    };
    let ok = comm.all_ok(failures.is_empty()).unwrap();
    for f in &failures {
        eprintln!("rank {rank}: FAILED {f}");
    }
    if rank == 0 {
        let halo = std::env::var("LATSOL_HALO").unwrap_or_else(|_| "auto".into());
        println!(
            "gpu_ranks: {size} rank(s), grid {grid:?}, local {local_dims:?}, {count} GPU(s) here, \
             faces {halo}, {:.1} s:\n{report}\n{}",
            t.elapsed().as_secs_f64(),
            if ok { "all checks passed" } else { "FAILED" }
        );
    }
    drop(setup);
    drop(comm);
    drop(universe);
    std::process::exit(if ok { 0 } else { 1 });
}
