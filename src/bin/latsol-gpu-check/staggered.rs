//! latsol-gpu-check, one part (`--staggered`): the staggered operator on
//! the device against the CPU backend (the hopping term, the vector
//! operations, the conversions, a solve through the API), and its hopping
//! term's bandwidth.

use std::sync::Arc;

use latsol::api::{
    BackendChoice, Context, InitParams, SolverType, StaggeredInvertParams, StaggeredParams,
    StaggeredSolve, Verbosity,
};
use latsol::backend::cpu::CpuBackend;
use latsol::backend::cuda::CudaBackend;
use latsol::backend::{Backend, SpinorField};
use latsol::field::{Fermion, GaugeField, HostSpinor};
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::layout::{GaugeOrder, HostGauge, HostReals, HostRealsMut};
use latsol::long_links::LongReconstruct;
use latsol::precision::Precision;
use latsol::random;
use num_complex::Complex64 as C64;

use crate::common::{e, is_per_site, rel, tolerance, R};
use crate::report::{BenchRow, Report};
use crate::timing::{last_host_us, time_ms};

/// Fat links (random, not unitary) and long links (−1/24 × SU(3)).
pub fn links(lat: &Arc<Lattice>, seed: u64) -> (GaugeField, GaugeField) {
    let mut fat = random::hot_gauge(lat, seed);
    let noise = random::hot_gauge(lat, seed + 1);
    for (f, n) in fat.links_mut().iter_mut().zip(noise.links()) {
        for r in 0..3 {
            for c in 0..3 {
                f.0[r][c] = 1.1 * f.0[r][c] + 0.2 * n.0[r][c];
            }
        }
    }
    let mut long = random::hot_gauge(lat, seed + 2);
    long.links_mut()
        .iter_mut()
        .for_each(|u| *u = u.scale(C64::new(-1.0 / 24.0, 0.0)));
    (fat, long)
}

pub fn vector(lat: &Arc<Lattice>, subset: Subset, seed: u64) -> HostSpinor {
    let mut rng = random::rng(seed);
    let mut h = HostSpinor::try_zeros_of(lat.clone(), subset, Fermion::Staggered).unwrap();
    h.data_mut()
        .iter_mut()
        .for_each(|z| *z = random::gaussian(&mut rng));
    h
}

fn upv<B: Backend>(b: &B, h: &HostSpinor, p: Precision) -> R<B::Spinor> {
    let mut s = b
        .alloc_field(h.lattice(), h.subset(), p, Fermion::Staggered)
        .map_err(e)?;
    b.upload_spinor(&mut s, h).map_err(e)?;
    Ok(s)
}

fn downv<B: Backend>(b: &B, s: &B::Spinor) -> R<HostSpinor> {
    let mut h =
        HostSpinor::try_zeros_of(s.lattice().clone(), s.subset(), Fermion::Staggered).map_err(e)?;
    b.download_spinor(s, &mut h).map_err(e)?;
    Ok(h)
}

/// The hopping term (both parities, improved and naive, with and
/// without xpay), a norm, an axpy and the precision conversions.
pub fn check(cpu: &CpuBackend, gpu: &CudaBackend, rep: &mut Report) -> R<()> {
    let lat = Arc::new(Lattice::new([6, 4, 8, 10]).map_err(e)?);
    let (fat, long) = links(&lat, 21);
    for prec in Precision::ALL {
        let tol = tolerance(prec);
        for (improved, lr) in [
            (true, LongReconstruct::Full18),
            (true, LongReconstruct::Thirteen),
            (true, LongReconstruct::Nine),
            (false, LongReconstruct::Full18),
        ] {
            let l = improved.then_some(&long);
            let lc = cpu.upload_staggered(&fat, l, prec, lr).map_err(e)?;
            let lg = gpu.upload_staggered(&fat, l, prec, lr).map_err(e)?;
            for parity in [Parity::Even, Parity::Odd] {
                let hin = vector(&lat, Subset::Single(parity.other()), 31);
                let hx = vector(&lat, Subset::Single(parity), 32);
                for xpay in [false, true] {
                    let (ic, ig) = (upv(cpu, &hin, prec)?, upv(gpu, &hin, prec)?);
                    let (xc, xg) = (upv(cpu, &hx, prec)?, upv(gpu, &hx, prec)?);
                    let sub = Subset::Single(parity);
                    let mut oc = cpu
                        .alloc_field(&lat, sub, prec, Fermion::Staggered)
                        .map_err(e)?;
                    let mut og = gpu
                        .alloc_field(&lat, sub, prec, Fermion::Staggered)
                        .map_err(e)?;
                    let (xc, xg) = if xpay {
                        (Some((0.37, &xc)), Some((0.37, &xg)))
                    } else {
                        (None, None)
                    };
                    cpu.staggered_dslash(&mut oc, parity, &lc, &ic, -0.8, xc)
                        .map_err(e)?;
                    gpu.staggered_dslash(&mut og, parity, &lg, &ig, -0.8, xg)
                        .map_err(e)?;
                    let (hc, hg) = (downv(cpu, &oc)?, downv(gpu, &og)?);
                    rep.check(
                        &format!(
                            "staggered {prec:?} {} {parity:?}{}",
                            if improved {
                                format!("improved long {}", lr.reals())
                            } else {
                                "naive".to_string()
                            },
                            if xpay { " xpay" } else { "" }
                        ),
                        rel(hg.data(), hc.data()),
                        tol,
                    );
                }
            }
        }
        // Vector algebra on colour-vector fields, full lattice.
        let (ha, hb) = (
            vector(&lat, Subset::Full, 41),
            vector(&lat, Subset::Full, 42),
        );
        let (ac, ag) = (upv(cpu, &ha, prec)?, upv(gpu, &ha, prec)?);
        let (mut bc, mut bg) = (upv(cpu, &hb, prec)?, upv(gpu, &hb, prec)?);
        // MILC's heavy-quark residual, reduced on the device: the
        // same stored numbers, summed in another order.
        for subset in [Subset::Full, Subset::Single(Parity::Odd)] {
            let (hx, hr) = (vector(&lat, subset, 43), vector(&lat, subset, 44));
            let (xc, xg) = (upv(cpu, &hx, prec)?, upv(gpu, &hx, prec)?);
            let (rc, rg) = (upv(cpu, &hr, prec)?, upv(gpu, &hr, prec)?);
            let qc = cpu.heavy_quark_residual2(&xc, &rc).map_err(e)?;
            let qg = gpu.heavy_quark_residual2(&xg, &rg).map_err(e)?;
            // Double and single: the same numbers; half and quarter
            // are widened on each side by its own rule.
            let bound = if is_per_site(prec) { tol } else { 1e-12 };
            rep.check(
                &format!("staggered heavy-quark residual {prec:?} {subset:?}"),
                (qc - qg).abs() / qc,
                bound,
            );
        }
        let (nc, ng) = (cpu.norm2(&ac).map_err(e)?, gpu.norm2(&ag).map_err(e)?);
        rep.check(
            &format!("staggered norm2 {prec:?}"),
            (nc - ng).abs() / nc,
            tol,
        );
        cpu.axpy(0.3, &ac, &mut bc).map_err(e)?;
        gpu.axpy(0.3, &ag, &mut bg).map_err(e)?;
        let (hc, hg) = (downv(cpu, &bc)?, downv(gpu, &bg)?);
        rep.check(
            &format!("staggered axpy {prec:?}"),
            rel(hg.data(), hc.data()),
            tol,
        );
        let (rc, rg) = (
            cpu.axpy_norm2(-0.7, &ac, &mut bc).map_err(e)?,
            gpu.axpy_norm2(-0.7, &ag, &mut bg).map_err(e)?,
        );
        rep.check(
            &format!("staggered axpy_norm2 {prec:?}"),
            (rc - rg).abs() / rc,
            tol,
        );
        // The sums of sloppy fields into double and single (fused on
        // the device, as a copy then an axpy each on the CPU).
        let hs: Vec<HostSpinor> = (0..3).map(|k| vector(&lat, Subset::Full, 44 + k)).collect();
        for hi in [Precision::Double, Precision::Single] {
            let xc: Vec<_> = hs.iter().map(|h| upv(cpu, h, prec)).collect::<R<_>>()?;
            let xg: Vec<_> = hs.iter().map(|h| upv(gpu, h, prec)).collect::<R<_>>()?;
            let (mut yc, mut yg) = (upv(cpu, &ha, hi)?, upv(gpu, &ha, hi)?);
            let a = [0.5, -1.25, 2.0];
            cpu.axpy_many(&a, &xc.iter().collect::<Vec<_>>(), &mut yc)
                .map_err(e)?;
            gpu.axpy_many(&a, &xg.iter().collect::<Vec<_>>(), &mut yg)
                .map_err(e)?;
            rep.check(
                &format!("staggered axpy_many {hi:?} += {prec:?}"),
                rel(downv(gpu, &yg)?.data(), downv(cpu, &yc)?.data()),
                tolerance(hi),
            );
        }
        // Conversions on the device against the CPU's rounding: the
        // same stored values.
        let h = vector(&lat, Subset::Full, 52);
        for from in Precision::ALL {
            if from == prec {
                continue;
            }
            let mut fg = upv(gpu, &h, from)?;
            let mut tg = gpu
                .alloc_field(&lat, Subset::Full, prec, Fermion::Staggered)
                .map_err(e)?;
            gpu.copy(&mut tg, &fg).map_err(e)?;
            let fc = upv(cpu, &h, from)?;
            let mut tc = cpu
                .alloc_field(&lat, Subset::Full, prec, Fermion::Staggered)
                .map_err(e)?;
            cpu.copy(&mut tc, &fc).map_err(e)?;
            rep.check(
                &format!("staggered convert {from:?} -> {prec:?}"),
                rel(downv(gpu, &tg)?.data(), downv(cpu, &tc)?.data()),
                prec.epsilon(),
            );
            // ... and back.
            gpu.copy(&mut fg, &tg).map_err(e)?;
            let mut bc = upv(cpu, &h, from)?;
            cpu.copy(&mut bc, &tc).map_err(e)?;
            rep.check(
                &format!("staggered convert {prec:?} -> {from:?}"),
                rel(downv(gpu, &fg)?.data(), downv(cpu, &bc)?.data()),
                prec.epsilon(),
            );
        }
    }
    // double → single → double on the device against the host rounding.
    let h = vector(&lat, Subset::Full, 51);
    let d = upv(gpu, &h, Precision::Double)?;
    let mut f = gpu
        .alloc_field(&lat, Subset::Full, Precision::Single, Fermion::Staggered)
        .map_err(e)?;
    gpu.copy(&mut f, &d).map_err(e)?;
    let mut d2 = gpu
        .alloc_field(&lat, Subset::Full, Precision::Double, Fermion::Staggered)
        .map_err(e)?;
    gpu.copy(&mut d2, &f).map_err(e)?;
    rep.check(
        "staggered double -> single -> double",
        rel(downv(gpu, &d2)?.data(), h.data()),
        tolerance(Precision::Single),
    );
    Ok(())
}

/// One staggered solve through the API on a CUDA and a CPU context:
/// the same solution (mixed double-single on the GPU).
pub fn check_solve(rep: &mut Report) -> R<()> {
    let dims = [8, 8, 8, 8];
    let lat = Arc::new(Lattice::new(dims).map_err(e)?);
    let (fat, long) = links(&lat, 61);
    let qdp = |g: &GaugeField| -> R<Vec<f64>> {
        let v = lat.volume() * 18;
        let mut out = vec![0.0; 4 * v];
        let (a, rest) = out.split_at_mut(v);
        let (b, rest) = rest.split_at_mut(v);
        let (c, d) = rest.split_at_mut(v);
        latsol::layout::gauge::export(
            g,
            GaugeOrder::Qdp,
            &mut [
                HostRealsMut::F64(a),
                HostRealsMut::F64(b),
                HostRealsMut::F64(c),
                HostRealsMut::F64(d),
            ],
        )
        .map_err(e)?;
        Ok(out)
    };
    let (f, l) = (qdp(&fat)?, qdp(&long)?);
    fn q(v: &[f64]) -> HostGauge<'_> {
        let n = v.len() / 4;
        HostGauge::Qdp(std::array::from_fn(|mu| {
            HostReals::F64(&v[mu * n..(mu + 1) * n])
        }))
    }
    let src: Vec<f64> = {
        let h = vector(&lat, Subset::Full, 71);
        h.data().iter().flat_map(|z| [z.re, z.im]).collect()
    };
    // CG with every sloppy format; BiCGstab (its widened update beside
    // half) and the seed's BiCGstab(4) (clark2022 §6.1) on M̂.
    let cases = [
        (Precision::Single, SolverType::Cg),
        (Precision::Half, SolverType::Cg),
        (Precision::Packed30, SolverType::Cg),
        (Precision::Packed20, SolverType::Cg),
        (Precision::Half, SolverType::BiCgStab),
        (Precision::Packed20, SolverType::BiCgStab),
        (Precision::Single, SolverType::BiCgStabL),
        (Precision::Packed30, SolverType::BiCgStabL),
        (Precision::Packed20, SolverType::BiCgStabL),
        (Precision::Half, SolverType::BiCgStabL),
    ];
    for (sloppy, solver) in cases {
        solve_pair(rep, dims, sloppy, solver, &q(&f), &q(&l), &src)?;
    }
    Ok(())
}

/// The same staggered solve on a CPU and a CUDA context.
fn solve_pair(
    rep: &mut Report,
    dims: [usize; 4],
    sloppy: Precision,
    solver: SolverType,
    f: &HostGauge,
    l: &HostGauge,
    src: &[f64],
) -> R<()> {
    let mut sols = Vec::new();
    for backend in [BackendChoice::Cpu, BackendChoice::Cuda] {
        let ctx = Context::new(InitParams {
            backend,
            verbosity: Verbosity::Silent,
            ..Default::default()
        })
        .map_err(e)?;
        let sp = StaggeredParams {
            dims,
            order: GaugeOrder::Qdp,
            precision_sloppy: sloppy,
            ..Default::default()
        };
        let links = ctx.load_staggered(&sp, f, Some(l)).map_err(e)?;
        let p = StaggeredInvertParams {
            mass: 0.05,
            solve: StaggeredSolve::EvenOdd(Parity::Even),
            tol: 1e-10,
            precision_sloppy: sloppy,
            tol_hq: 1e-9,
            solver,
            ..Default::default()
        };
        let mut x = vec![0.0; src.len()];
        let r = ctx
            .invert_staggered(&links, &p, HostReals::F64(src), HostRealsMut::F64(&mut x))
            .map_err(e)?;
        rep.say(format!(
            "staggered {solver:?} double-{sloppy:?} solve on {:?}: {} iterations, true residual {:.2e}, heavy-quark {:.2e}, {:.3} s",
            backend, r.iterations, r.true_residual, r.true_residual_hq, r.seconds
        ));
        rep.check(
            &format!("staggered {solver:?} double-{sloppy:?} solve {backend:?} true residual"),
            r.true_residual,
            1e-10,
        );
        sols.push(x);
    }
    let d: f64 = sols[0]
        .iter()
        .zip(&sols[1])
        .map(|(a, b)| (a - b).powi(2))
        .sum();
    let n: f64 = sols[0].iter().map(|a| a * a).sum();
    // Two solutions with true residuals ≤ 1e-10 differ by at most κ(M) ·
    // 2e-10; CG's agree far closer (the same iterates up to roundoff),
    // BiCGstab's diverge more between the backends' roundoff (κ ≤ 250 for
    // these links at m = 0.05: 8 fat hops of norm ≤ 2.5, long 1/24).
    let bound = if solver == SolverType::Cg { 1e-8 } else { 5e-8 };
    rep.check(
        &format!("staggered {solver:?} double-{sloppy:?} solve CUDA = CPU"),
        (d / n).sqrt(),
        bound,
    );
    Ok(())
}

/// The improved hopping term's time and bandwidth at `dims`: minimal
/// traffic 16 links, the input vector and the output (and the xpay
/// vector) a site.
pub fn bench(
    gpu: &CudaBackend,
    prec: Precision,
    dims: [usize; 4],
    roof: f64,
    rep: &mut Report,
    rows: &mut Vec<BenchRow>,
) -> R<()> {
    let lat = Arc::new(Lattice::new(dims).map_err(e)?);
    let (fat, long) = links(&lat, 81);
    for lr in [
        LongReconstruct::Full18,
        LongReconstruct::Thirteen,
        LongReconstruct::Nine,
    ] {
        bench_one(gpu, prec, &lat, &fat, &long, lr, roof, rep, rows)?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn bench_one(
    gpu: &CudaBackend,
    prec: Precision,
    lat: &Arc<Lattice>,
    fat: &GaugeField,
    long: &GaugeField,
    lr: LongReconstruct,
    roof: f64,
    rep: &mut Report,
    rows: &mut Vec<BenchRow>,
) -> R<()> {
    let dims = lat.dims();
    let vh = lat.half_volume();
    // Links: 16- and 32-bit fixed point beside the packed formats.
    let (b, vec_bytes) = match prec {
        // Packed: 4 or 6 words a site (clark2022 Listings 2, 3).
        Precision::Packed20 => (2.0, 16.0),
        Precision::Packed30 => (4.0, 24.0),
        // Fixed point: one f32 norm a site beside the 6 reals.
        p => {
            let b = p.bytes_per_real() as f64;
            (b, 6.0 * b + if is_per_site(p) { 4.0 } else { 0.0 })
        }
    };
    // Compressed long links count as stored.
    let minimal = (8.0 * 18.0 + 8.0 * lr.reals() as f64) * b + 2.0 * vec_bytes;
    let sets = ((512e6 / (minimal * vh as f64)).ceil() as usize).clamp(1, 8);
    let (mut ls, mut ins, mut xs, mut outs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for k in 0..sets {
        ls.push(gpu.upload_staggered(fat, Some(long), prec, lr).map_err(e)?);
        ins.push(upv(
            gpu,
            &vector(lat, Subset::Single(Parity::Odd), 90 + k as u64),
            prec,
        )?);
        xs.push(upv(
            gpu,
            &vector(lat, Subset::Single(Parity::Even), 95 + k as u64),
            prec,
        )?);
        outs.push(
            gpu.alloc_field(lat, Subset::Single(Parity::Even), prec, Fermion::Staggered)
                .map_err(e)?,
        );
    }
    for xpay in [false, true] {
        let mut run = |i: usize| {
            let k = i % sets;
            let x = if xpay { Some((0.5, &xs[k])) } else { None };
            gpu.staggered_dslash(&mut outs[k], Parity::Even, &ls[k], &ins[k], -1.0, x)
                .map_err(e)
        };
        for i in 0..sets {
            run(i)?;
        }
        let reps = (((20e-3 * roof) / (minimal * vh as f64)).ceil() as usize).clamp(sets, 20000);
        let ms = time_ms(gpu, reps, &mut run)?;
        let bytes = if xpay { minimal + vec_bytes } else { minimal };
        let gbs = bytes * vh as f64 / (ms * 1e-3);
        rows.push(BenchRow {
            dims,
            prec,
            form: format!(
                "staggered improved{} long r{}",
                if xpay { "+xpay" } else { "" },
                lr.reals()
            ),
            us: ms * 1e3,
            host_us: last_host_us(),
            gflops: 1146.0 * vh as f64 / (ms * 1e-3) / 1e9,
            gbs: gbs / 1e9,
            frac: gbs / roof,
            graph: None,
        });
        rep.say(format!(
            "staggered {prec:?} {dims:?} long {}{}: {:.1} us, {:.0} GB/s, {:.1}% of the roofline",
            lr.reals(),
            if xpay { " xpay" } else { "" },
            ms * 1e3,
            gbs / 1e9,
            100.0 * gbs / roof
        ));
    }
    Ok(())
}
