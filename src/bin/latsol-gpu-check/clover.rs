//! latsol-gpu-check, one part: the clover kernels against the CPU backend
//! (the site kernel, A and A⁻¹, and the hopping term with each clover
//! epilogue), and the even-odd clover hopping kernels' bandwidth
//! (`--clover`).

use std::sync::Arc;

use latsol::backend::cuda::CudaBackend;
use latsol::backend::{Backend, CloverForm};
use latsol::field::GaugeField;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::{Reconstruct, TBoundary};
use latsol::random;

use crate::common::{compare_parity, down, e, is_per_site, nan_field, rel, tolerance, up, Pair, R};
use crate::report::{BenchRow, Report};
use crate::timing::{last_host_us, time_ms};

/// The clover kernels against the CPU backend: the site kernel (A and
/// A⁻¹) and the hopping term with each clover epilogue (A⁻¹ on the
/// hopping term, with and without xpay; A on the xpay field), both
/// parities, dagger, full and single-parity fields, every reconstruction;
/// outputs poisoned, the other parity of a full output left untouched.
pub fn check_clover<T: Backend>(pair: &Pair<T>, gauge: &GaugeField, rep: &mut Report) -> R<()> {
    let (cpu, gpu, prec) = (pair.cpu, pair.gpu, pair.prec);
    let lat = gauge.lattice();
    let field = latsol::clover::compute::compute(gauge, 0.2).map_err(e)?;
    let inverse = field.inverse().map_err(e)?;
    let cc = cpu.upload_clover(&field, &inverse, prec).map_err(e)?;
    let gc = gpu.upload_clover(&field, &inverse, prec).map_err(e)?;
    for parity in [Parity::Even, Parity::Odd] {
        for inv in [false, true] {
            let (ci, gi) = pair.up(&random::spinor(lat, Subset::Full, 31))?;
            let (mut co, mut go) = pair.up(&nan_field(lat, Subset::Full))?;
            cpu.clover(&mut co, parity, &cc, &ci, inv).map_err(e)?;
            gpu.clover(&mut go, parity, &gc, &gi, inv).map_err(e)?;
            let (hc, hg) = (down(cpu, &co)?, down(gpu, &go)?);
            let what = format!(
                "clover {prec:?} {parity:?}{}",
                if inv { " inverse" } else { "" }
            );
            rep.check(
                &what,
                rel(hg.parity_part(parity).data(), hc.parity_part(parity).data()),
                tolerance(prec),
            );
        }
    }
    let forms = [
        (CloverForm::InverseOnHopping, false),
        (CloverForm::InverseOnHopping, true),
        (CloverForm::DirectOnX, true),
    ];
    for rec in [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight] {
        let anti = TBoundary::AntiPeriodic;
        let cg = cpu.upload_gauge(gauge, anti, prec, rec).map_err(e)?;
        let gg = gpu.upload_gauge(gauge, anti, prec, rec).map_err(e)?;
        for full in [true, false] {
            for parity in [Parity::Even, Parity::Odd] {
                let (out_s, in_s) = if full {
                    (Subset::Full, Subset::Full)
                } else {
                    (Subset::Single(parity), Subset::Single(parity.other()))
                };
                let (ci, gi) = pair.up(&random::spinor(lat, in_s, 41))?;
                let (cx, gx) = pair.up(&random::spinor(lat, out_s, 42))?;
                for dagger in [false, true] {
                    for (form, xpay) in forms {
                        let (mut co, mut go) = pair.up(&nan_field(lat, out_s))?;
                        let before = down(gpu, &go)?;
                        let (xc, xg) = if xpay {
                            (Some(&cx), Some(&gx))
                        } else {
                            (None, None)
                        };
                        cpu.wilson_clover_dslash(
                            &mut co, parity, &cg, &cc, &ci, dagger, -0.3, form, xc,
                        )
                        .map_err(e)?;
                        gpu.wilson_clover_dslash(
                            &mut go, parity, &gg, &gc, &gi, dagger, -0.3, form, xg,
                        )
                        .map_err(e)?;
                        let (hc, hg) = (down(cpu, &co)?, down(gpu, &go)?);
                        let what = format!(
                            "clover dslash {prec:?} r{} {parity:?}{} {form:?}{}{}",
                            rec.reals(),
                            if dagger { " dag" } else { "" },
                            if xpay { " xpay" } else { "" },
                            if full { " full" } else { " single" },
                        );
                        compare_parity(rep, &what, prec, parity, full, &before, &hc, &hg);
                    }
                }
            }
        }
    }
    Ok(())
}

/// The even-odd clover operator's hopping kernels at one size: the
/// intermediate `A⁻¹ D in` (8 links, spinor in and out, the 72 reals of
/// the clover inverse per site: the minimal traffic) and the
/// symmetric operator's closing `x + a A⁻¹ D in` (one more spinor).
pub fn bench_clover(
    pair: &Pair<CudaBackend>,
    dims: [usize; 4],
    roof: f64,
    rep: &mut Report,
    rows: &mut Vec<BenchRow>,
) -> R<()> {
    let (gpu, prec) = (pair.gpu, pair.prec);
    let lat = Arc::new(Lattice::new(dims).map_err(e)?);
    let vh = lat.half_volume();
    let gauge = random::smooth_gauge(&lat, 0.2, 7);
    let field = latsol::clover::compute::compute(&gauge, 0.2).map_err(e)?;
    let inverse = field.inverse().map_err(e)?;
    let format = latsol::clover::storage::CloverFormat::for_spinors(prec);
    let spinor = 24.0 * prec.bytes_per_real() as f64 + if is_per_site(prec) { 4.0 } else { 0.0 };
    for rec in [Reconstruct::Full18, Reconstruct::Twelve] {
        let minimal = 8.0 * rec.reals() as f64 * prec.bytes_per_real() as f64
            + 2.0 * spinor
            + format.bytes_per_site() as f64;
        // Enough independent sets (links, clover, fields) that the data
        // of one pass is never in L2, as for the Wilson hopping term.
        let sets = ((512e6 / (minimal * vh as f64)).ceil() as usize).clamp(1, 16);
        let (mut gs, mut cs, mut ins, mut xs, mut outs) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for k in 0..sets {
            let anti = TBoundary::AntiPeriodic;
            gs.push(gpu.upload_gauge(&gauge, anti, prec, rec).map_err(e)?);
            cs.push(gpu.upload_clover(&field, &inverse, prec).map_err(e)?);
            let odd = random::spinor(&lat, Subset::Single(Parity::Odd), 300 + k as u64);
            ins.push(up(gpu, &odd, prec)?);
            let even = random::spinor(&lat, Subset::Single(Parity::Even), 400 + k as u64);
            xs.push(up(gpu, &even, prec)?);
            outs.push(
                gpu.alloc_spinor(&lat, Subset::Single(Parity::Even), prec)
                    .map_err(e)?,
            );
        }
        for xpay in [false, true] {
            let form = CloverForm::InverseOnHopping;
            let mut run = |i: usize| {
                let k = i % sets;
                let xo = if xpay { Some(&xs[k]) } else { None };
                gpu.wilson_clover_dslash(
                    &mut outs[k],
                    Parity::Even,
                    &gs[k],
                    &cs[k],
                    &ins[k],
                    false,
                    1.0,
                    form,
                    xo,
                )
                .map_err(e)
            };
            for i in 0..sets {
                run(i)?; // warm-up (and tuning on first use)
            }
            let reps =
                (((20e-3 * roof) / (minimal * vh as f64)).ceil() as usize).clamp(sets, 20000);
            let ms = time_ms(gpu, reps, &mut run)?;
            let bytes = if xpay { minimal + spinor } else { minimal };
            let gbs = bytes * vh as f64 / (ms * 1e-3);
            rows.push(BenchRow {
                dims,
                prec,
                form: format!(
                    "clover A⁻¹D{} r{}",
                    if xpay { "+xpay" } else { "" },
                    rec.reals()
                ),
                us: ms * 1e3,
                host_us: last_host_us(),
                gflops: (1320.0 + 504.0) * vh as f64 / (ms * 1e-3) / 1e9,
                gbs: gbs / 1e9,
                frac: gbs / roof,
                graph: None,
            });
        }
    }
    rep.flag(&format!("clover bench {prec:?} {dims:?} ran"), true);
    Ok(())
}
