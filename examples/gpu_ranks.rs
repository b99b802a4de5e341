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
//! - the staggered hopping term (asqtad, long links in 18, 13 or 9 reals,
//!   and the naive term) in double, single, half and quarter: bit for bit;
//!   reliable-update CG on the even-odd asqtad operator, double-half;
//! - the CPU backend on the same ranks agrees with the GPUs' solves.
//!
//! With `--bench X,Y,Z,T` it times instead the clover M̂, the asqtad D and
//! the Wilson D on a local volume of those extents in double, single and
//! half, and an iteration of a double-single clover BiCGstab and of a
//! double-half asqtad CG, on the cut lattice and, on the same GPU, the same
//! local volume not cut (what the GPU would take without neighbours):
//! `bench`. (Under Open MPI give `--bind-to none`: with one or two ranks it
//! binds each to one core, and the host's share crawls.)
//!
//! ```text
//! mpirun -np 2 target/release/examples/gpu_ranks --grid 1,1,1,2
//! mpirun -np 4 target/release/examples/gpu_ranks --grid 1,1,2,2 --bench 32,32,32,32
//! ```

use std::sync::Arc;
use std::time::Instant;

use latsol::backend::cpu::{CpuBackend, Ranks};
use latsol::backend::cuda::CudaBackend;
use latsol::backend::{Backend, CloverForm, SpinorField};
use latsol::clover::CloverField;
use latsol::comm::{Comm, Dims, MpiComm, Partition, RankMap, Reduction};
use latsol::dirac::staggered::StaggeredEvenOdd;
use latsol::dirac::{Direct, Normal, WilsonFields};
use latsol::field::{Fermion, GaugeField, HostSpinor};
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::long_links::LongReconstruct;
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::solver::{bicgstab_reliable, cg, cg_reliable, MixedParams, Silent, SolverParams};
use mpi::raw::AsRaw;

mod ranks_common;
use ranks_common::parts::{arg, local_clover, local_gauge, local_spinor, relative_difference};

const KAPPA: f64 = 0.11;
const EVEN: Subset = Subset::Single(Parity::Even);

fn dims(s: &str) -> Dims {
    s.split(',')
        .map(|s| s.parse().unwrap())
        .collect::<Vec<usize>>()
        .try_into()
        .expect("four extents")
}

/// A field of `subset` holding `host` in `prec`.
fn upload<B: Backend>(b: &B, host: &HostSpinor, subset: Subset, prec: Precision) -> B::Spinor {
    let mut f = b
        .alloc_field(host.lattice(), subset, prec, host.fermion())
        .unwrap();
    b.upload_spinor(&mut f, host).unwrap();
    f
}

fn download<B: Backend>(b: &B, f: &B::Spinor, lat: &Arc<Lattice>, subset: Subset) -> HostSpinor {
    let mut host = HostSpinor::try_zeros_of(lat.clone(), subset, f.fermion()).unwrap();
    b.download_spinor(f, &mut host).unwrap();
    host
}

/// A Gaussian colour-vector field.
fn colour_vectors(lat: &Arc<Lattice>, subset: Subset, seed: u64) -> HostSpinor {
    let mut rng = latsol::random::rng(seed);
    let mut v = HostSpinor::try_zeros_of(lat.clone(), subset, Fermion::Staggered).unwrap();
    v.data_mut()
        .iter_mut()
        .for_each(|z| *z = latsol::random::gaussian(&mut rng));
    v
}

/// The staggered hopping term in every format and long-link storage (and
/// the naive term), both parities, with and without `+ b x`: bit for bit
/// against one GPU. Returns the cases compared.
fn staggered_cases(
    comm: &dyn Comm,
    partition: &Partition,
    one: &CudaBackend,
    many: &CudaBackend,
    local_lat: &Arc<Lattice>,
    failures: &mut Vec<String>,
) -> usize {
    let global_lat = Arc::new(Lattice::new(partition.global()).unwrap());
    let fat = latsol::random::hot_gauge(&global_lat, 21);
    let long = latsol::random::hot_gauge(&global_lat, 22);
    let (fat_here, long_here) = (
        local_gauge(&fat, partition, local_lat),
        local_gauge(&long, partition, local_lat),
    );
    let mut cases = 0;
    let formats = [
        Precision::Double,
        Precision::Single,
        Precision::Half,
        Precision::Quarter,
    ];
    let storages = [
        Some(LongReconstruct::Full18),
        Some(LongReconstruct::Thirteen),
        Some(LongReconstruct::Nine),
        None,
    ];
    for prec in formats {
        for storage in storages {
            let (l1, ln) = match storage {
                Some(r) => (
                    one.upload_staggered(&fat, Some(&long), prec, r).unwrap(),
                    many.upload_staggered(&fat_here, Some(&long_here), prec, r)
                        .unwrap(),
                ),
                None => (
                    one.upload_staggered(&fat, None, prec, LongReconstruct::Full18)
                        .unwrap(),
                    many.upload_staggered(&fat_here, None, prec, LongReconstruct::Full18)
                        .unwrap(),
                ),
            };
            for parity in [Parity::Even, Parity::Odd] {
                for xpay in [false, true] {
                    let q = Subset::Single(parity.other());
                    let src = colour_vectors(&global_lat, q, 31);
                    let x = colour_vectors(&global_lat, Subset::Single(parity), 32);
                    let run = |b: &CudaBackend, links, src: &HostSpinor, x: &HostSpinor| {
                        let lat = src.lattice().clone();
                        let inp = upload(b, src, q, prec);
                        let xf = upload(b, x, Subset::Single(parity), prec);
                        let mut out = b
                            .alloc_field(&lat, Subset::Single(parity), prec, Fermion::Staggered)
                            .unwrap();
                        let x = xpay.then_some((0.3, &xf));
                        b.staggered_dslash(&mut out, parity, links, &inp, 0.7, x)
                            .unwrap();
                        download(b, &out, &lat, Subset::Single(parity))
                    };
                    let want = run(one, &l1, &src, &x);
                    let got = run(
                        many,
                        &ln,
                        &local_spinor(&src, partition, local_lat, parity.other()),
                        &local_spinor(&x, partition, local_lat, parity),
                    );
                    let want = local_spinor(&want, partition, local_lat, parity);
                    let rel = relative_difference(comm, &want, &got);
                    cases += 1;
                    if got.data() != want.data() {
                        failures.push(format!(
                            "staggered {prec:?} long {storage:?}, parity {parity:?}, xpay \
                             {xpay}: not the one-GPU numbers ({rel:.1e})"
                        ));
                    }
                }
            }
        }
    }
    cases
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

/// Reliable-update CG on the even-odd asqtad operator (double, half
/// sloppy with long links in 13 reals) on one GPU, on the ranks' GPUs and
/// on the ranks' CPUs: iterations within three of one another, solutions
/// within 1e-8.
fn staggered_solves(
    ranks: &Ranks,
    partition: &Partition,
    one: &CudaBackend,
    many: &CudaBackend,
    local_lat: &Arc<Lattice>,
    failures: &mut Vec<String>,
) -> String {
    let comm = ranks.comm.as_ref();
    let global_lat = Arc::new(Lattice::new(partition.global()).unwrap());
    let fat = latsol::random::hot_gauge(&global_lat, 23);
    let long = latsol::random::hot_gauge(&global_lat, 24);
    let b = colour_vectors(&global_lat, EVEN, 33);
    let mixed = MixedParams {
        tol: 1e-10,
        maxiter: 4000,
        progress_every: 0,
        delta: 0.1,
        tol_inner: 0.1,
    };
    fn solve<B: Backend>(
        backend: &B,
        fat: &GaugeField,
        long: &GaugeField,
        b: &HostSpinor,
        mixed: &MixedParams,
    ) -> (usize, HostSpinor) {
        let lat = b.lattice().clone();
        let (double, half) = (Precision::Double, Precision::Half);
        let ld = backend
            .upload_staggered(fat, Some(long), double, LongReconstruct::Full18)
            .unwrap();
        let lh = backend
            .upload_staggered(fat, Some(long), half, LongReconstruct::Thirteen)
            .unwrap();
        let mass = 0.2;
        let mut a =
            Direct(StaggeredEvenOdd::new(backend, &ld, mass, Parity::Even, double).unwrap());
        let mut a_s =
            Direct(StaggeredEvenOdd::new(backend, &lh, mass, Parity::Even, half).unwrap());
        let bb = upload(backend, b, EVEN, double);
        let mut x = backend
            .alloc_field(&lat, EVEN, double, Fermion::Staggered)
            .unwrap();
        let stats = cg_reliable::solve(
            backend, &mut a, &mut a_s, &mut x, &bb, mixed, false, &Silent,
        )
        .unwrap();
        assert!(stats.converged, "the staggered solve did not converge");
        (stats.iterations, download(backend, &x, &lat, EVEN))
    }
    let (fat_here, long_here) = (
        local_gauge(&fat, partition, local_lat),
        local_gauge(&long, partition, local_lat),
    );
    let b_here = local_spinor(&b, partition, local_lat, Parity::Even);
    let (i1, x1) = solve(one, &fat, &long, &b, &mixed);
    let (n, xn) = solve(many, &fat_here, &long_here, &b_here, &mixed);
    let cpu = CpuBackend::on_ranks(2, ranks.clone()).unwrap();
    let (c, xc) = solve(&cpu, &fat_here, &long_here, &b_here, &mixed);
    let want = local_spinor(&x1, partition, local_lat, Parity::Even);
    let rel = relative_difference(comm, &want, &xn);
    let rel_cpu = relative_difference(comm, &xc, &xn);
    if i1.abs_diff(n) > 3 || rel > 1e-8 || rel_cpu > 1e-8 {
        failures.push(format!(
            "asqtad CG double-half: one GPU {i1} iterations, ranks {n} (CPU ranks {c}); \
             solutions differ by {rel:.1e} (CPU {rel_cpu:.1e})"
        ));
    }
    format!("asqtad CG double-half {i1}/{n}/{c} it ({rel:.0e}, CPU {rel_cpu:.0e})")
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
                    let rel = relative_difference(&**comm, &want, &got);
                    if got.data() != want.data() {
                        failures.push(format!(
                            "{prec:?} r{} {form:?}, parity {parity:?}, dagger {dagger}: not the \
                             one-GPU numbers ({rel:.1e})",
                            recon.reals()
                        ));
                    }
                }
            }
        }
    }

    let staggered = staggered_cases(&**comm, partition, &one, &many, &local_lat, failures);
    let staggered_cg = staggered_solves(&s.ranks, partition, &one, &many, &local_lat, failures);

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
        "{cases} Wilson and clover and {staggered} staggered hopping-term cases compared with \
         one GPU; {}; {staggered_cg}",
        summary.join("; ")
    )
}

/// Microseconds per application of an operator on a backend.
type Timing<'a> = dyn Fn(&CudaBackend) -> f64 + 'a;

/// Microseconds per application, on the cut lattice and on the same
/// local volume of the same GPU not cut ("alone"), of the issue's
/// operators: the symmetric even-odd clover operator M̂ (reconstruct 12),
/// the asqtad hopping term D (both parities, long links in 13 reals) and
/// the Wilson D (both parities, reconstruct 12), in double, single and
/// half (`GPU_RANKS_PRECISION` picks one). Best of five runs of 100
/// applications, the slowest rank's.
fn bench(s: &Setup, local_dims: Dims) -> String {
    let local_lat = Arc::new(Lattice::new(local_dims).unwrap());
    let gauge = latsol::random::hot_gauge(&local_lat, 11);
    let long = latsol::random::hot_gauge(&local_lat, 12);
    let clover = latsol::clover::compute::compute(&gauge, KAPPA * 1.2).unwrap();
    let inverse = clover.inverse().unwrap();
    let many = CudaBackend::new(s.ordinal)
        .unwrap()
        .with_ranks(s.ranks.clone());
    let alone = CudaBackend::new(s.ordinal).unwrap();
    let tb = TBoundary::AntiPeriodic;
    let only = std::env::var("GPU_RANKS_PRECISION").ok();
    let odd = Subset::Single(Parity::Odd);
    let mut lines = Vec::new();
    for prec in [Precision::Double, Precision::Single, Precision::Half] {
        if only.as_ref().is_some_and(|o| *o != format!("{prec:?}")) {
            continue;
        }
        let recon = Reconstruct::Twelve;
        for b in [&many, &alone] {
            b.prepare(latsol::backend::OperatorFamily::Clover, &[(prec, recon)])
                .unwrap();
            b.prepare(latsol::backend::OperatorFamily::Staggered, &[(prec, recon)])
                .unwrap();
        }
        // Microseconds per call of `run`, the slowest rank's, best of five.
        let timed = |b: &CudaBackend, run: &mut dyn FnMut()| -> f64 {
            for _ in 0..20 {
                run();
            }
            b.synchronize().unwrap();
            let mut best = f64::MAX;
            for _ in 0..5 {
                s.comm.all_ok(true).unwrap();
                let t = Instant::now();
                for _ in 0..100 {
                    run();
                }
                b.synchronize().unwrap();
                let mut us = [t.elapsed().as_secs_f64() * 1e6 / 100.0];
                s.comm.max(&mut us).unwrap();
                best = best.min(us[0]);
            }
            best
        };
        let clover_m = |b: &CudaBackend| -> f64 {
            let g = b.upload_gauge(&gauge, tb, prec, recon).unwrap();
            let c = b.upload_clover(&clover, &inverse, prec).unwrap();
            let mut op = WilsonFields {
                gauge: &g,
                clover: Some(&c),
            }
            .even_odd(b, KAPPA, Parity::Even, true, prec)
            .unwrap();
            let src = latsol::random::spinor(&local_lat, EVEN, 5);
            let inp = upload(b, &src, EVEN, prec);
            let mut out = b.alloc_spinor(&local_lat, EVEN, prec).unwrap();
            timed(b, &mut || op.apply(&mut out, &inp, false).unwrap())
        };
        let wilson_d = |b: &CudaBackend| -> f64 {
            let g = b.upload_gauge(&gauge, tb, prec, recon).unwrap();
            let src = latsol::random::spinor(&local_lat, odd, 5);
            let o = upload(b, &src, odd, prec);
            let mut e = b.alloc_spinor(&local_lat, EVEN, prec).unwrap();
            let mut o2 = b.alloc_spinor(&local_lat, odd, prec).unwrap();
            timed(b, &mut || {
                b.wilson_dslash(&mut e, Parity::Even, &g, &o, false, 1.0, None)
                    .unwrap();
                b.wilson_dslash(&mut o2, Parity::Odd, &g, &e, false, 1.0, None)
                    .unwrap();
            })
        };
        let asqtad_d = |b: &CudaBackend| -> f64 {
            let r = LongReconstruct::Thirteen;
            let l = b.upload_staggered(&gauge, Some(&long), prec, r).unwrap();
            let src = colour_vectors(&local_lat, odd, 5);
            let o = upload(b, &src, odd, prec);
            let st = Fermion::Staggered;
            let mut e = b.alloc_field(&local_lat, EVEN, prec, st).unwrap();
            let mut o2 = b.alloc_field(&local_lat, odd, prec, st).unwrap();
            timed(b, &mut || {
                b.staggered_dslash(&mut e, Parity::Even, &l, &o, 1.0, None)
                    .unwrap();
                b.staggered_dslash(&mut o2, Parity::Odd, &l, &e, 1.0, None)
                    .unwrap();
            })
        };
        let ops: [(&str, &Timing); 3] = [
            ("clover M-hat r12", &clover_m),
            ("asqtad D long r13", &asqtad_d),
            ("Wilson D r12", &wilson_d),
        ];
        for (name, time) in ops {
            let (cut, by_itself) = (time(&many), time(&alone));
            lines.push(format!(
                "{prec:?} {name}: {cut:.1} us on the cut lattice, {by_itself:.1} alone ({:.0}%)",
                100.0 * by_itself / cut
            ));
        }
    }
    if only.as_deref().is_none_or(|o| o == "Mixed") {
        let fields = SolveFields {
            gauge: &gauge,
            long: &long,
            clover: (&clover, &inverse),
        };
        for (name, solve) in [
            ("clover BiCGstab double-single r12", Solver::CloverBicgstab),
            ("asqtad CG double-half r13", Solver::AsqtadCg),
        ] {
            let (cut, by_itself) = (
                time_solve(s, &many, &fields, solve),
                time_solve(s, &alone, &fields, solve),
            );
            lines.push(format!(
                "{name}: {:.1} us an iteration on the cut lattice ({} it), {:.1} alone ({} it) ({:.0}%)",
                cut.0,
                cut.1,
                by_itself.0,
                by_itself.1,
                100.0 * by_itself.0 / cut.0
            ));
        }
    }
    lines.join("\n")
}

/// The fields of the timed solves, on this rank's sites.
struct SolveFields<'a> {
    gauge: &'a GaugeField,
    long: &'a GaugeField,
    clover: (&'a CloverField, &'a CloverField),
}

#[derive(Clone, Copy)]
enum Solver {
    /// BiCGstab on the even-odd clover operator (kappa 0.15), reliable
    /// updates with a single sloppy operator, to 1e-10.
    CloverBicgstab,
    /// CG on the even-odd asqtad operator (mass 0.05), reliable updates
    /// with a half sloppy operator (long links in 13 reals), to 1e-10.
    AsqtadCg,
}

/// Microseconds an iteration (the slowest rank's) and the iterations of
/// one solve (the fields uploaded before the clock starts), after a first
/// solve that tunes the launches.
fn time_solve(s: &Setup, b: &CudaBackend, f: &SolveFields, solver: Solver) -> (f64, usize) {
    let lat = f.gauge.lattice().clone();
    let mixed = MixedParams {
        tol: 1e-10,
        maxiter: 20000,
        progress_every: 0,
        delta: 0.1,
        tol_inner: 0.1,
    };
    let (double, single, half) = (Precision::Double, Precision::Single, Precision::Half);
    // Runs `solve` on the clock: the fields are on the device by then.
    let clock = |solve: &mut dyn FnMut() -> usize| -> (f64, usize) {
        b.synchronize().unwrap();
        s.comm.all_ok(true).unwrap();
        let t = Instant::now();
        let iterations = solve();
        b.synchronize().unwrap();
        let mut us = [t.elapsed().as_secs_f64() * 1e6 / iterations as f64];
        s.comm.max(&mut us).unwrap();
        (us[0], iterations)
    };
    let converged = |stats: latsol::solver::SolverStats| -> usize {
        assert!(stats.converged, "the timed solve did not converge");
        stats.iterations
    };
    let mut timings = Vec::new();
    match solver {
        Solver::CloverBicgstab => {
            let tb = TBoundary::AntiPeriodic;
            let r = Reconstruct::Twelve;
            let gd = b.upload_gauge(f.gauge, tb, double, r).unwrap();
            let gs = b.upload_gauge(f.gauge, tb, single, r).unwrap();
            let cd = b.upload_clover(f.clover.0, f.clover.1, double).unwrap();
            let cs = b.upload_clover(f.clover.0, f.clover.1, single).unwrap();
            let op = |gauge, clover, prec| {
                WilsonFields { gauge, clover }
                    .even_odd(b, 0.15, Parity::Even, true, prec)
                    .unwrap()
            };
            let mut d = Direct(op(&gd, Some(&cd), double));
            let mut d_s = Direct(op(&gs, Some(&cs), single));
            let bb = upload(b, &latsol::random::spinor(&lat, EVEN, 7), EVEN, double);
            for _ in 0..2 {
                let mut x = b.alloc_spinor(&lat, EVEN, double).unwrap();
                timings.push(clock(&mut || {
                    converged(
                        bicgstab_reliable::solve(b, &mut d, &mut d_s, &mut x, &bb, &mixed, &Silent)
                            .unwrap(),
                    )
                }));
            }
        }
        Solver::AsqtadCg => {
            let r = LongReconstruct::Thirteen;
            let ld = b
                .upload_staggered(f.gauge, Some(f.long), double, r)
                .unwrap();
            let lh = b.upload_staggered(f.gauge, Some(f.long), half, r).unwrap();
            let (mass, even) = (0.05, Parity::Even);
            let mut a = Direct(StaggeredEvenOdd::new(b, &ld, mass, even, double).unwrap());
            let mut a_s = Direct(StaggeredEvenOdd::new(b, &lh, mass, even, half).unwrap());
            let bb = upload(b, &colour_vectors(&lat, EVEN, 7), EVEN, double);
            for _ in 0..2 {
                let st = Fermion::Staggered;
                let mut x = b.alloc_field(&lat, EVEN, double, st).unwrap();
                timings.push(clock(&mut || {
                    converged(
                        cg_reliable::solve(
                            b, &mut a, &mut a_s, &mut x, &bb, &mixed, false, &Silent,
                        )
                        .unwrap(),
                    )
                }));
            }
        }
    }
    timings[1]
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
    let local_dims = bench_dims.unwrap_or([4, 4, 4, 8]);
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
