//! latsol-gpu-check, one part (`--rhs`): the hopping terms of several
//! right-hand sides in one launch (issue 37; kernels/wilson_rhs_<format>.cu)
//! against the one-field kernels on the GPU, and their throughput.
//!
//! Checks: every format, reconstruct, parity, dagger and xpay form of the
//! Wilson hopping term and the three clover epilogues, for 5 fields (one
//! launch) and 19 (two launches of at most 16): each field's output equal
//! to the one-field kernel's, bit for bit (the same code on the same
//! values), and outputs poisoned first.
//! Benchmark: at `--dims` (default 32³×64), N fields through one block
//! call against N one-field calls, N = 1, 2, 4, 8, 12, 16: the time per
//! field and the gain.

use std::sync::Arc;

use latsol::backend::cuda::CudaBackend;
use latsol::backend::{Backend, CloverForm};
use latsol::field::GaugeField;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::random;

use crate::common::{down, e, nan_field, random_fields, up, R};
use crate::report::Report;
use crate::timing::time_ms;

const RECONSTRUCTS: [Reconstruct; 3] =
    [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight];

type Spinor = <CudaBackend as Backend>::Spinor;
type Gauge = <CudaBackend as Backend>::Gauge;
type Clover = <CudaBackend as Backend>::Clover;

/// The hopping term's form: the Wilson one, or a clover epilogue.
#[derive(Debug, Clone, Copy)]
enum Form {
    Wilson,
    Clover(CloverForm),
}

#[allow(clippy::too_many_arguments)]
fn apply_one(
    gpu: &CudaBackend,
    form: Form,
    out: &mut Spinor,
    parity: Parity,
    (g, c): (&Gauge, &Clover),
    inp: &Spinor,
    dagger: bool,
    x: Option<&Spinor>,
) -> R<()> {
    match form {
        Form::Wilson => gpu.wilson_dslash(out, parity, g, inp, dagger, 0.3, x),
        Form::Clover(f) => gpu.wilson_clover_dslash(out, parity, g, c, inp, dagger, 0.3, f, x),
    }
    .map_err(e)
}

#[allow(clippy::too_many_arguments)]
fn apply_block(
    gpu: &CudaBackend,
    form: Form,
    out: &mut [Spinor],
    parity: Parity,
    (g, c): (&Gauge, &Clover),
    inp: &[&Spinor],
    dagger: bool,
    x: Option<&[&Spinor]>,
) -> R<()> {
    match form {
        Form::Wilson => gpu.wilson_dslash_block(out, parity, g, inp, dagger, 0.3, x),
        Form::Clover(f) => {
            gpu.wilson_clover_dslash_block(out, parity, g, c, inp, dagger, 0.3, f, x)
        }
    }
    .map_err(e)
}

fn fields(
    gpu: &CudaBackend,
    lat: &Arc<Lattice>,
    n: usize,
    seed: u64,
    p: Precision,
) -> R<Vec<Spinor>> {
    random_fields(gpu, lat, Subset::Full, n, seed, p)
}

/// The checks of the module doc, on `gauge`'s lattice.
pub fn check(gpu: &CudaBackend, gauge: &GaugeField, rep: &mut Report) -> R<()> {
    let lat = gauge.lattice();
    let clover = latsol::clover::compute::compute(gauge, 0.2).map_err(e)?;
    let inverse = clover.inverse().map_err(e)?;
    let every: Vec<(Precision, Reconstruct)> = Precision::ALL
        .iter()
        .flat_map(|&p| RECONSTRUCTS.iter().map(move |&r| (p, r)))
        .collect();
    let t = std::time::Instant::now();
    gpu.prepare(latsol::backend::OperatorFamily::Clover, &every)
        .map_err(e)?;
    gpu.prepare_block(&every).map_err(e)?;
    rep.say(format!(
        "several-field modules of every format ready in {:.1} s",
        t.elapsed().as_secs_f64()
    ));
    let forms = [
        (Form::Wilson, false),
        (Form::Wilson, true),
        (Form::Clover(CloverForm::InverseOnHopping), false),
        (Form::Clover(CloverForm::InverseOnHopping), true),
        (Form::Clover(CloverForm::DirectOnX), true),
    ];
    for prec in Precision::ALL {
        let c = gpu.upload_clover(&clover, &inverse, prec).map_err(e)?;
        for rec in RECONSTRUCTS {
            let anti = TBoundary::AntiPeriodic;
            let g = gpu.upload_gauge(gauge, anti, prec, rec).map_err(e)?;
            let mut worst: f64 = 0.0;
            let mut count = 0;
            for n in [5, 19] {
                let inp = fields(gpu, lat, n, 40, prec)?;
                let xs = fields(gpu, lat, n, 90, prec)?;
                let inp_r: Vec<&Spinor> = inp.iter().collect();
                let xs_r: Vec<&Spinor> = xs.iter().collect();
                for (form, xpay) in forms {
                    for dagger in [false, true] {
                        for parity in [Parity::Even, Parity::Odd] {
                            let poisoned = nan_field(lat, Subset::Full);
                            let mut block = (0..n)
                                .map(|_| up(gpu, &poisoned, prec))
                                .collect::<R<Vec<_>>>()?;
                            let x = xpay.then_some(&xs_r[..]);
                            apply_block(
                                gpu,
                                form,
                                &mut block,
                                parity,
                                (&g, &c),
                                &inp_r,
                                dagger,
                                x,
                            )?;
                            for k in 0..n {
                                let mut one = up(gpu, &poisoned, prec)?;
                                let xk = xpay.then(|| xs_r[k]);
                                apply_one(
                                    gpu,
                                    form,
                                    &mut one,
                                    parity,
                                    (&g, &c),
                                    inp_r[k],
                                    dagger,
                                    xk,
                                )?;
                                let (a, b) = (down(gpu, &block[k])?, down(gpu, &one)?);
                                let (a, b) = (a.parity_part(parity), b.parity_part(parity));
                                let diff = a
                                    .data()
                                    .iter()
                                    .zip(b.data())
                                    .map(|(u, v)| {
                                        if u.re.is_nan() || u.im.is_nan() {
                                            f64::INFINITY
                                        } else {
                                            (u - v).norm()
                                        }
                                    })
                                    .fold(0.0, f64::max);
                                worst = worst.max(diff);
                                count += 1;
                            }
                        }
                    }
                }
            }
            rep.check(
                &format!("several-field hopping terms {prec:?} r{} ({count} fields against the one-field kernel, bit for bit)", rec.reals()),
                worst,
                0.0,
            );
            println!("{}", rep.lines.last().expect("a line"));
        }
    }
    for prefix in [
        "wilson_dslash_f32_r18",
        "wilson_clover_f32_r18",
        "wilson_dslash_f16_r12",
    ] {
        for (name, regs, local) in gpu.kernel_resources(prefix) {
            if name.ends_with("_rhs") || !name.contains("_xpay") {
                rep.say(format!(
                    "kernel {name}: {regs} registers, {local} bytes local memory"
                ));
            }
        }
    }
    Ok(())
}

/// The benchmark of the module doc: lines for the report.
pub fn bench(gpu: &CudaBackend, dims: [usize; 4]) -> R<Vec<String>> {
    let lat = Arc::new(Lattice::new(dims).map_err(e)?);
    let gauge = random::smooth_gauge(&lat, 0.3, 7);
    let clover = latsol::clover::compute::compute(&gauge, 0.2).map_err(e)?;
    let inverse = clover.inverse().map_err(e)?;
    let mut lines = Vec::new();
    let half = Subset::Single(Parity::Even);
    let odd = Subset::Single(Parity::Odd);
    for prec in [Precision::Double, Precision::Single, Precision::Half] {
        let c = gpu.upload_clover(&clover, &inverse, prec).map_err(e)?;
        for rec in [Reconstruct::Full18, Reconstruct::Twelve] {
            let g = gpu
                .upload_gauge(&gauge, TBoundary::AntiPeriodic, prec, rec)
                .map_err(e)?;
            let inp: Vec<Spinor> = (0..16)
                .map(|k| {
                    let h = random::spinor(&lat, odd, 200 + k);
                    up(gpu, &h, prec)
                })
                .collect::<R<_>>()?;
            let mut out: Vec<Spinor> = (0..16)
                .map(|_| gpu.alloc_spinor(&lat, half, prec).map_err(e))
                .collect::<R<_>>()?;
            let inp_r: Vec<&Spinor> = inp.iter().collect();
            for form in [Form::Wilson, Form::Clover(CloverForm::InverseOnHopping)] {
                let mut one_ms = 0.0;
                for n in [1, 2, 4, 8, 12, 16] {
                    let parity = Parity::Even;
                    let single = time_ms(gpu, 5, |_| {
                        for k in 0..n {
                            apply_one(
                                gpu,
                                form,
                                &mut out[k],
                                parity,
                                (&g, &c),
                                inp_r[k],
                                false,
                                None,
                            )?;
                        }
                        Ok(())
                    })?;
                    let block = time_ms(gpu, 5, |_| {
                        apply_block(
                            gpu,
                            form,
                            &mut out[..n],
                            parity,
                            (&g, &c),
                            &inp_r[..n],
                            false,
                            None,
                        )
                    })?;
                    if n == 1 {
                        one_ms = single;
                    }
                    lines.push(format!(
                        "rhs bench {dims:?} {prec:?} r{} {form:?}: N = {n:2}: {:.4} ms a field alone, \
                         {:.4} ms a field in the block: {:.2}x the one-field throughput a field",
                        rec.reals(),
                        single / n as f64,
                        block / n as f64,
                        one_ms * n as f64 / block
                    ));
                    if n == 12 && prec == Precision::Single {
                        // The launch order's experiment (`LATSOL_RHS_GROUP`).
                        for group in ["8", "32", "128"] {
                            std::env::set_var("LATSOL_RHS_GROUP", group);
                            let grouped = time_ms(gpu, 5, |_| {
                                apply_block(
                                    gpu,
                                    form,
                                    &mut out[..n],
                                    parity,
                                    (&g, &c),
                                    &inp_r[..n],
                                    false,
                                    None,
                                )
                            });
                            std::env::remove_var("LATSOL_RHS_GROUP");
                            lines.push(format!(
                                "rhs bench {dims:?} {prec:?} r{} {form:?}: N = 12 in groups of {group} \
                                 blocks: {:.2}x",
                                rec.reals(),
                                one_ms * n as f64 / grouped?
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(lines)
}
