//! latsol-gpu-check, one part: the Wilson hopping term's benchmark at one
//! size and precision, every reconstruct, with and without xpay: time,
//! Gflops and bandwidth against the copy roofline, back to back from the
//! host and replayed from a CUDA graph; the benchmarked output checked
//! against the CPU.

use std::sync::Arc;

use latsol::backend::cuda::CudaBackend;
use latsol::backend::Backend;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::random;

use crate::common::{down, e, is_per_site, nan_field, up, Pair, R};
use crate::report::{BenchRow, Report};
use crate::timing::{graph_us, last_host_us, time_ms};

/// The hopping term at one size and precision; also checks the
/// benchmarked output against the CPU.
pub fn bench_dslash(
    pair: &Pair<CudaBackend>,
    dims: [usize; 4],
    roof: f64,
    rep: &mut Report,
    rows: &mut Vec<BenchRow>,
) -> R<()> {
    for rec in [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight] {
        bench_dslash_with(pair, dims, rec, roof, rep, rows)?;
    }
    Ok(())
}

fn bench_dslash_with(
    pair: &Pair<CudaBackend>,
    dims: [usize; 4],
    rec: Reconstruct,
    roof: f64,
    rep: &mut Report,
    rows: &mut Vec<BenchRow>,
) -> R<()> {
    let (gpu, prec) = (pair.gpu, pair.prec);
    let lat = Arc::new(Lattice::new(dims).map_err(e)?);
    let vh = lat.half_volume();
    // A spinor's bytes per site, its fixed-point norm included; packed:
    // 16 or 23 words. The packed formats' links are 16- and 32-bit.
    let (spinor, link_elem) = match prec {
        Precision::Packed20 => (64.0, 2.0),
        Precision::Packed30 => (92.0, 4.0),
        p if is_per_site(p) => (
            24.0 * p.bytes_per_real() as f64 + 4.0,
            p.bytes_per_real() as f64,
        ),
        p => (24.0 * p.bytes_per_real() as f64, p.bytes_per_real() as f64),
    };
    // Bytes per output site: 8 links, one input and one output spinor.
    let minimal = 8.0 * rec.reals() as f64 * link_elem + 2.0 * spinor;
    let gauge = random::hot_gauge(&lat, 7);
    // Enough independent sets that the data of one pass is never in L2.
    let sets = ((512e6 / (minimal * vh as f64)).ceil() as usize).clamp(1, 64);
    let mut gs = Vec::new();
    let (mut ins, mut outs, mut xs) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..sets {
        let g = gpu.upload_gauge(&gauge, TBoundary::AntiPeriodic, prec, rec);
        gs.push(g.map_err(e)?);
        ins.push(up(
            gpu,
            &random::spinor(&lat, Subset::Single(Parity::Odd), 100 + k as u64),
            prec,
        )?);
        xs.push(up(
            gpu,
            &random::spinor(&lat, Subset::Single(Parity::Even), 200 + k as u64),
            prec,
        )?);
        outs.push(
            gpu.alloc_spinor(&lat, Subset::Single(Parity::Even), prec)
                .map_err(e)?,
        );
    }
    for xpay in [false, true] {
        let run = |i: usize, outs: &mut Vec<_>| {
            let k = i % sets;
            let x = if xpay { Some(&xs[k]) } else { None };
            gpu.wilson_dslash(&mut outs[k], Parity::Even, &gs[k], &ins[k], false, 1.0, x)
                .map_err(e)
        };
        for i in 0..sets {
            run(i, &mut outs)?; // warm-up (and tuning on first use)
        }
        let reps = (((20e-3 * roof) / (minimal * vh as f64)).ceil() as usize).clamp(sets, 20000);
        let ms = time_ms(gpu, reps, |i| run(i, &mut outs))?;
        let host_us = last_host_us();
        let bytes = if xpay { minimal + spinor } else { minimal };
        let gbs = bytes * vh as f64 / (ms * 1e-3);
        // The same calls from a graph: at least 200, whole rotations.
        let burst = sets * 200usize.div_ceil(sets);
        let graph_us = graph_us(gpu, burst, |i| run(i, &mut outs))?;
        let graph_frac = bytes * vh as f64 / (graph_us * 1e-6) / roof;
        rows.push(BenchRow {
            dims,
            prec,
            form: format!(
                "{} r{}",
                if xpay { "dslash+xpay" } else { "dslash" },
                rec.reals()
            ),
            us: ms * 1e3,
            host_us,
            gflops: 1320.0 * vh as f64 / (ms * 1e-3) / 1e9,
            gbs: gbs / 1e9,
            frac: gbs / roof,
            graph: Some((graph_us, graph_frac)),
        });
    }
    // The benchmarked kernel on this lattice against the CPU.
    let cpu = pair.cpu;
    let cgauge = cpu
        .upload_gauge(&gauge, TBoundary::AntiPeriodic, prec, rec)
        .map_err(e)?;
    let hin = down(gpu, &ins[0])?;
    let cin = up(cpu, &hin, prec)?;
    let mut cout = cpu
        .alloc_spinor(&lat, Subset::Single(Parity::Even), prec)
        .map_err(e)?;
    cpu.wilson_dslash(&mut cout, Parity::Even, &cgauge, &cin, false, 1.0, None)
        .map_err(e)?;
    let mut gout = up(gpu, &nan_field(&lat, Subset::Single(Parity::Even)), prec)?;
    gpu.wilson_dslash(&mut gout, Parity::Even, &gs[0], &ins[0], false, 1.0, None)
        .map_err(e)?;
    pair.compare(
        rep,
        &format!("dslash {prec:?} r{} {dims:?} (benchmarked)", rec.reals()),
        &cout,
        &gout,
    )?;
    Ok(())
}
