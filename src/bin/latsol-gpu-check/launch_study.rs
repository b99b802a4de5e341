//! latsol-gpu-check, one part (`--launch-study`): where the time of a small
//! hopping term goes. For each lattice and half-precision link format it
//! times the same calls three ways: back to back from the host as a solver
//! issues them (events around many calls; the host's issue time beside),
//! a short burst after an idle device (the host's cost of one call without
//! the launch queue pushing back), and replayed from a CUDA graph captured
//! from those calls (no host in the loop: the device's own time per
//! kernel). An empty kernel gives the floor of each.

use std::sync::Arc;
use std::time::Instant;

use latsol::backend::cuda::CudaBackend;
use latsol::backend::Backend;
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::random;

use crate::common::{e, R};
use crate::timing::{events_ms, graph_us};

/// (device µs a call in a loop, host µs a call in that loop, host µs a
/// call in a burst of `burst` after an idle device, device µs a call
/// replayed from a graph of `burst` calls); `call(i)` issues call i.
fn three_ways(
    gpu: &CudaBackend,
    reps: usize,
    burst: usize,
    mut call: impl FnMut(usize) -> R<()>,
) -> R<[f64; 4]> {
    for i in 0..burst {
        call(i)?; // tuning and module loading, outside every timing
    }
    let mut host_loop = Vec::new();
    let loop_ms = events_ms(gpu, || {
        let t = Instant::now();
        for i in 0..reps {
            call(i)?;
        }
        host_loop.push(t.elapsed().as_secs_f64() * 1e6 / reps as f64);
        Ok(())
    })?;
    host_loop.sort_by(|x, y| x.total_cmp(y));
    let mut host_burst = Vec::new();
    for _ in 0..5 {
        gpu.stream().synchronize().map_err(e)?;
        let t = Instant::now();
        for i in 0..burst {
            call(i)?;
        }
        host_burst.push(t.elapsed().as_secs_f64() * 1e6 / burst as f64);
    }
    gpu.stream().synchronize().map_err(e)?;
    host_burst.sort_by(|x, y| x.total_cmp(y));
    Ok([
        loop_ms * 1e3 / reps as f64,
        host_loop[host_loop.len() / 2],
        host_burst[host_burst.len() / 2],
        graph_us(gpu, burst, call)?,
    ])
}

/// The study's lines, for the report.
pub fn run(gpu: &CudaBackend, roof: f64, sizes: &[[usize; 4]]) -> R<Vec<String>> {
    let mut lines = Vec::new();
    let (burst, reps) = (200, 4000);
    let floor = three_ways(gpu, reps, burst, |_| gpu.launch_empty().map_err(e))?;
    lines.push(format!(
        "launch study, empty kernel: loop {:.2} us device / {:.2} us host a call, burst {:.2} us \
         host a call, graph {:.2} us device a kernel",
        floor[0], floor[1], floor[2], floor[3]
    ));
    for &dims in sizes {
        let lat = Arc::new(Lattice::new(dims).map_err(e)?);
        let vh = lat.half_volume();
        let gauge = random::hot_gauge(&lat, 7);
        for rec in [Reconstruct::Full18, Reconstruct::Twelve] {
            let prec = Precision::Half;
            let spinor = 24.0 * 2.0 + 4.0;
            let minimal = 8.0 * rec.reals() as f64 * 2.0 + 2.0 * spinor;
            // Sets rotated so that a pass never finds its data in L2.
            let sets = ((512e6 / (minimal * vh as f64)).ceil() as usize).clamp(1, 64);
            let mut gs = Vec::new();
            let (mut ins, mut outs) = (Vec::new(), Vec::new());
            for k in 0..sets {
                gs.push(
                    gpu.upload_gauge(&gauge, TBoundary::AntiPeriodic, prec, rec)
                        .map_err(e)?,
                );
                let h = random::spinor(&lat, Subset::Single(Parity::Odd), 100 + k as u64);
                let mut f = gpu
                    .alloc_spinor(&lat, Subset::Single(Parity::Odd), prec)
                    .map_err(e)?;
                gpu.upload_spinor(&mut f, &h).map_err(e)?;
                ins.push(f);
                outs.push(
                    gpu.alloc_spinor(&lat, Subset::Single(Parity::Even), prec)
                        .map_err(e)?,
                );
            }
            let t = three_ways(gpu, reps, burst, |i| {
                let k = i % sets;
                gpu.wilson_dslash(
                    &mut outs[k],
                    Parity::Even,
                    &gs[k],
                    &ins[k],
                    false,
                    1.0,
                    None,
                )
                .map_err(e)
            })?;
            let frac = |us: f64| minimal * vh as f64 / (us * 1e-6) / roof * 100.0;
            // A device-to-device copy moving the same bytes (read + write):
            // the roofline at this size, ramp and drain included.
            let half_bytes = (minimal * vh as f64 / 2.0) as usize;
            let s = gpu.stream();
            let mut copies = Vec::new();
            for _ in 0..sets {
                let src = s.alloc_zeros::<u8>(half_bytes).map_err(e)?;
                let dst = s.alloc_zeros::<u8>(half_bytes).map_err(e)?;
                copies.push((src, dst));
            }
            let c = three_ways(gpu, reps, burst, |i| {
                let (src, dst) = &mut copies[i % sets];
                s.memcpy_dtod(&*src, dst).map_err(e)
            })?;
            lines.push(format!(
                "launch study, {dims:?} half r{}: a copy of the same bytes: loop {:.2} us ({:.0}%), \
                 graph {:.2} us ({:.0}%)",
                rec.reals(),
                c[0],
                frac(c[0]),
                c[3],
                frac(c[3])
            ));
            lines.push(format!(
                "launch study, {dims:?} half r{}: loop {:.2} us device ({:.0}%) / {:.2} us host a \
                 call, burst {:.2} us host a call, graph {:.2} us device a kernel ({:.0}%)",
                rec.reals(),
                t[0],
                frac(t[0]),
                t[1],
                t[2],
                t[3],
                frac(t[3])
            ));
        }
    }
    Ok(lines)
}
