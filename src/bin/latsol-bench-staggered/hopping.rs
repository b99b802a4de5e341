//! `--tables dslash`: the improved staggered hopping term on the CPU
//! backend (`out[e] = D_eo in[o]`, and with `+ b x[e]` as the even-odd
//! operator applies it), its time per application and the bandwidth that
//! implies, beside a STREAM copy measured in the same run on the same
//! threads, so that the fraction of the machine's memory bandwidth is read
//! off one table (issue 34 asks ≥ 50% at 16⁴ and above).
//!
//! Traffic counted as the GPU benchmarks count it (the minimal one): the
//! 16 links of a site, its input vector once and its output (and the
//! `x` vector), in the stored precision. STREAM's copy counts 16 bytes an
//! element (one read, one write), its arrays four times the last-level
//! cache or more, as STREAM asks.

use std::sync::Arc;
use std::time::Instant;

use latsol::backend::cpu::CpuBackend;
use latsol::backend::Backend;
use latsol::field::{Fermion, GaugeField, HostSpinor};
use latsol::lattice::{Lattice, Parity, Subset};
use latsol::long_links::LongReconstruct;
use latsol::precision::Precision;
use latsol::random;
use rayon::prelude::*;

/// Seconds of work each timing aims at.
const TARGET_SECONDS: f64 = 0.5;

/// A random colour-vector field on one parity, stored in `precision`.
fn vector(
    b: &CpuBackend,
    lat: &Arc<Lattice>,
    p: Parity,
    precision: Precision,
    seed: u64,
) -> latsol::Result<<CpuBackend as Backend>::Spinor> {
    let mut rng = random::rng(seed);
    let mut h = HostSpinor::try_zeros_of(lat.clone(), Subset::Single(p), Fermion::Staggered)?;
    h.data_mut()
        .iter_mut()
        .for_each(|z| *z = random::gaussian(&mut rng));
    let mut s = b.alloc_field(lat, Subset::Single(p), precision, Fermion::Staggered)?;
    b.upload_spinor(&mut s, &h)?;
    Ok(s)
}

/// Seconds per call of `f`, the best of three timings of enough calls to
/// last `TARGET_SECONDS`.
fn seconds_per_call(f: &mut dyn FnMut() -> latsol::Result<()>) -> latsol::Result<f64> {
    let t = Instant::now();
    f()?;
    let once = t.elapsed().as_secs_f64().max(1e-6);
    let calls = ((TARGET_SECONDS / once).ceil() as usize).clamp(1, 100_000);
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        for _ in 0..calls {
            f()?;
        }
        best = best.min(t.elapsed().as_secs_f64() / calls as f64);
    }
    Ok(best)
}

/// STREAM's copy `c = a` on `threads` threads: bytes a second.
fn stream_copy(threads: usize, elements: usize) -> latsol::Result<f64> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| latsol::Error::Internal(format!("a thread pool: {e}")))?;
    let a = latsol::alloc::filled(elements, 1.0f64, "STREAM's array a")?;
    let mut c = latsol::alloc::filled(elements, 0.0f64, "STREAM's array c")?;
    let chunk = elements.div_ceil(64 * threads.max(1));
    let secs = pool.install(|| {
        seconds_per_call(&mut || {
            c.par_chunks_mut(chunk)
                .zip(a.par_chunks(chunk))
                .for_each(|(c, a)| c.copy_from_slice(a));
            Ok(())
        })
    })?;
    std::hint::black_box(&c);
    Ok(16.0 * elements as f64 / secs)
}

/// The table: for each precision, the hopping term with and without `x`.
pub fn table(
    fat: &GaugeField,
    long: &GaugeField,
    precisions: &[Precision],
    threads: usize,
    stream_elements: usize,
) -> latsol::Result<()> {
    let lat = fat.lattice().clone();
    let vh = lat.half_volume() as f64;
    let b = CpuBackend::new(threads)?;
    let threads = b.num_threads();
    let stream = stream_copy(threads, stream_elements)?;
    println!(
        "\nSTREAM copy, {threads} threads, 2 × {:.0} MB arrays: {:.1} GB/s\n",
        stream_elements as f64 * 8e-6,
        stream * 1e-9
    );
    println!("| precision | operator | time per application (ms) | Gflops | GB/s (minimal traffic) | of STREAM copy |");
    println!("|---|---|---|---|---|---|");
    for &prec in precisions {
        let links = b.upload_staggered(fat, Some(long), prec, LongReconstruct::Full18)?;
        let inp = vector(&b, &lat, Parity::Odd, prec, 11)?;
        let x = vector(&b, &lat, Parity::Even, prec, 12)?;
        let mut out =
            b.alloc_field(&lat, Subset::Single(Parity::Even), prec, Fermion::Staggered)?;
        let real = prec.bytes_per_real() as f64;
        for with_x in [false, true] {
            let secs = seconds_per_call(&mut || {
                let xs = with_x.then_some((0.5, &x));
                b.staggered_dslash(&mut out, Parity::Even, &links, &inp, -1.0, xs)
            })?;
            let vectors = if with_x { 3.0 } else { 2.0 };
            let bytes = (16.0 * 18.0 + vectors * 6.0) * real * vh;
            // 16 complex 3×3 times 3-vector products (66 flops) and the
            // 15 sums of their results (6 flops each).
            let flops = (16.0 * 66.0 + 15.0 * 6.0 + if with_x { 12.0 } else { 6.0 }) * vh;
            println!(
                "| {prec:?} | {} | {:.3} | {:.2} | {:.1} | {:.0}% |",
                if with_x { "a·D in + b·x" } else { "D in" },
                secs * 1e3,
                flops / secs * 1e-9,
                bytes / secs * 1e-9,
                100.0 * bytes / secs / stream
            );
        }
    }
    Ok(())
}
