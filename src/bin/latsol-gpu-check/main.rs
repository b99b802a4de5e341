//! latsol-gpu-check: validates and benchmarks the CUDA backend on the GPU.
//!
//! 1. Compares every vector operation, `gamma5`, the conversions between
//!    all formats and the Wilson hopping term (both parities, dagger, xpay,
//!    full and single-parity fields, reconstruct 18/12/8) of the CUDA
//!    backend with the CPU backend on random fields, in every format
//!    (double, single, half, quarter, packed 20- and 30-bit): relative error
//!    against a bound near the format's unit roundoff, and for the packed
//!    formats uploads and conversions from/to double and single bit for bit;
//!    outputs are poisoned (NaN) first, so an element left unwritten fails.
//! 2. Benchmarks the hopping term (1320 flops per site; minimal traffic per
//!    output site = 8 links + 1 input spinor + 1 output spinor = 192 reals,
//!    1536 bytes in double, 768 in single) at 8⁴, 16⁴, 24⁴ and 32³×64 beside
//!    the roofline of a large device-to-device copy measured in the same run.
//! 3. Solves with BiCGstab and CG (even-odd Wilson) on the GPU and the CPU:
//!    iteration counts, true residuals, and solver Gflops against the dslash;
//!    mixed-precision and multi-shift solves from every sloppy format
//!    (single, half, quarter, packed 20- and 30-bit) with the iteration
//!    counts of both backends compared.
//! 4. The device's conversions of the caller's arrays: spinors in every
//!    host order (`check_host_orders`) and gauge fields in every order,
//!    host precision and stored format (`gauge_import.rs`),
//!    against the host path.
//!
//! ```text
//! latsol-gpu-check [--startup-only] [--bench-only] [--no-bench] [--no-solve] [--quick]
//!                  [--dims X,Y,Z,T] [--prec P] [--check-prec P,P,...] [--tag T] [--blas]
//! latsol-gpu-check --rhs [--no-bench] [--dims X,Y,Z,T]   (the several-field hopping terms, rhs.rs,
//!                  and the block algebra, block_blas.rs)
//! latsol-gpu-check --staggered --staggered-solves-only --no-bench --no-solve   (the staggered
//!     solve pairs alone)
//! latsol-gpu-check --staggered-rhs [--no-bench] [--dims X,Y,Z,T]   (the staggered part of --rhs,
//!                  staggered_rhs.rs)
//! latsol-gpu-check --sap   (the Schwarz preconditioner's pieces against the CPU, sap.rs)
//! ```
//! `--prec` picks the benchmarked format; `--check-prec` limits the checks
//! of 1 and the sloppy formats of the mixed solves of 3 to the formats
//! named (the plain double/single solves run only if one of those is
//! named): `--no-bench --check-prec packed20,packed30` checks the packed
//! formats alone. `--quick` leaves out the vector-operation table (double,
//! single, half on one parity of 32³×64) unless `--blas` asks for it.
//! Prints a table at the end, also written to `$OUT/gpu-check[-T].txt` when
//! `OUT` is set. Exits non-zero if a check fails. The command that produced
//! the figures of docs/performance.md is given there.

#[cfg(not(feature = "cuda"))]
fn main() {
    eprintln!("latsol-gpu-check: this build has no CUDA backend (feature `cuda`)");
    std::process::exit(2);
}

#[cfg(feature = "cuda")]
mod bench;
#[cfg(feature = "cuda")]
mod blas;
#[cfg(feature = "cuda")]
mod block_blas;
#[cfg(feature = "cuda")]
mod clover;
#[cfg(feature = "cuda")]
mod clover_compute;
#[cfg(feature = "cuda")]
mod common;
#[cfg(feature = "cuda")]
mod fat_links;
#[cfg(feature = "cuda")]
mod gauge_fixing;
#[cfg(feature = "cuda")]
mod gauge_import;
#[cfg(feature = "cuda")]
mod host_links;
#[cfg(feature = "cuda")]
mod host_orders;
#[cfg(feature = "cuda")]
mod launch_study;
#[cfg(feature = "cuda")]
mod report;
#[cfg(feature = "cuda")]
mod rhs;
#[cfg(feature = "cuda")]
mod sap;
#[cfg(feature = "cuda")]
mod solves;
#[cfg(feature = "cuda")]
mod staggered;
#[cfg(feature = "cuda")]
mod staggered_rhs;
#[cfg(feature = "cuda")]
mod timing;
#[cfg(feature = "cuda")]
mod wilson;

#[cfg(feature = "cuda")]
use std::process::ExitCode;
#[cfg(feature = "cuda")]
use std::sync::Arc;
#[cfg(feature = "cuda")]
use std::time::Instant;

#[cfg(feature = "cuda")]
use latsol::backend::cpu::CpuBackend;
#[cfg(feature = "cuda")]
use latsol::backend::cuda::CudaBackend;
#[cfg(feature = "cuda")]
use latsol::backend::{Backend, OperatorFamily};
#[cfg(feature = "cuda")]
use latsol::lattice::{parse_dims, Lattice, Parity, Subset};
#[cfg(feature = "cuda")]
use latsol::precision::{Precision, Reconstruct};
#[cfg(feature = "cuda")]
use latsol::random;

#[cfg(feature = "cuda")]
use crate::bench::bench_dslash;
#[cfg(feature = "cuda")]
use crate::blas::{bench_blas, check_blas, check_solution_updates};
#[cfg(feature = "cuda")]
use crate::clover::{bench_clover, check_clover};
#[cfg(feature = "cuda")]
use crate::common::{e, Pair, ALL_PRECISIONS, ALL_RECONSTRUCTS, R};
#[cfg(feature = "cuda")]
use crate::host_orders::check_host_orders;
#[cfg(feature = "cuda")]
use crate::report::{write_table, Report};
#[cfg(feature = "cuda")]
use crate::solves::{run_mixed_solves, run_solves};
#[cfg(feature = "cuda")]
use crate::timing::roofline;
#[cfg(feature = "cuda")]
use crate::wilson::check_forms;

#[cfg(feature = "cuda")]
fn main() -> ExitCode {
    match run() {
        Ok(0) => ExitCode::SUCCESS,
        Ok(n) => {
            eprintln!("latsol-gpu-check: {n} check(s) failed");
            ExitCode::FAILURE
        }
        Err(msg) => {
            eprintln!("latsol-gpu-check: {msg}");
            ExitCode::from(2)
        }
    }
}

#[cfg(feature = "cuda")]
fn run() -> R<usize> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |f: &str| args.iter().any(|a| a == f);
    let mut rep = Report::default();

    let t = Instant::now();
    let gpu = CudaBackend::new(0).map_err(e)?;
    let start_s = t.elapsed().as_secs_f64();
    let info = gpu.info().clone();
    rep.say(format!(
        "device {} (sm_{}, {} SMs); NVRTC {}.{} ({}), target {}; cache {:?}",
        info.name,
        info.compute_capability,
        info.multiprocessors,
        info.nvrtc_version.0,
        info.nvrtc_version.1,
        info.nvrtc_library,
        info.target,
        info.cache_dir
    ));
    // The Wilson modules of every format and reconstruct at once, as a
    // context prepares those of its solves.
    let t = Instant::now();
    let wilson_formats: Vec<(Precision, Reconstruct)> = ALL_PRECISIONS
        .iter()
        .flat_map(|&p| ALL_RECONSTRUCTS.iter().map(move |&r| (p, r)))
        .collect();
    gpu.prepare(OperatorFamily::Wilson, &wilson_formats)
        .map_err(e)?;
    gpu.prepare_small_volume_forms(&wilson_formats).map_err(e)?;
    let prepare_s = t.elapsed().as_secs_f64();
    let modules = gpu.modules();
    let compiled: Vec<_> = modules.iter().filter(|m| !m.from_cache).collect();
    rep.say(format!(
        "start: {start_s:.2} s, then the Wilson modules of every format: {prepare_s:.2} s; \
         modules compiled {} ({}), from cache {}; tuned entries {}",
        compiled.len(),
        compiled
            .iter()
            .map(|m| format!("{} {:.2} s", m.name, m.compile_s))
            .collect::<Vec<_>>()
            .join(", "),
        modules.len() - compiled.len(),
        info.tuned_entries_at_start
    ));
    let at_start = modules.len();
    let resources = ["wilson_dslash", "blas_"]
        .iter()
        .flat_map(|prefix| gpu.kernel_resources(prefix));
    for (name, regs, local) in resources {
        rep.say(format!(
            "kernel {name}: {regs} registers, {local} bytes local memory"
        ));
    }
    let (raw, tuned) = gpu.launch_overhead_us(2000).map_err(e)?;
    rep.say(format!(
        "launch overhead (host, empty kernel): {raw:.2} us through the driver, {tuned:.2} us \
         through the backend's launch path"
    ));
    if has("--startup-only") {
        return Ok(0);
    }
    if has("--launch-study") {
        let roof = roofline(&gpu)?;
        let sizes = match args.iter().position(|a| a == "--dims") {
            Some(i) => {
                let d = args.get(i + 1).ok_or("--dims: no value")?;
                vec![parse_dims(d).map_err(|e| format!("--dims: {e}"))?]
            }
            None => vec![[16; 4], [24; 4]],
        };
        for line in crate::launch_study::run(&gpu, roof, &sizes)? {
            rep.say(line);
        }
        return Ok(0);
    }
    if has("--fat-links") {
        // The fat links alone, and their time at the sizes of --dims (or
        // 16^4 and 32^4).
        let sizes = match args.iter().position(|a| a == "--dims") {
            Some(i) => {
                let d = args.get(i + 1).ok_or("--dims: no value")?;
                vec![parse_dims(d).map_err(|e| format!("--dims: {e}"))?]
            }
            None => vec![[6, 4, 8, 10], [16; 4], [32; 4]],
        };
        for dims in sizes {
            let lat = Arc::new(Lattice::new(dims).map_err(e)?);
            let (checks, lines) = crate::fat_links::run(&gpu, &random::hot_gauge(&lat, 3))?;
            for c in &checks {
                rep.check(&c.what, c.err, c.tol);
                println!("{}", rep.lines.last().expect("a line"));
            }
            lines.into_iter().for_each(|l| rep.say(l));
        }
        return Ok(rep.failures);
    }
    if has("--gauge-fixing") {
        // Against the host at 8^4 and 16^4, or the device alone at --dims.
        let sizes = match args.iter().position(|a| a == "--dims") {
            Some(i) => {
                let d = args.get(i + 1).ok_or("--dims: no value")?;
                vec![(parse_dims(d).map_err(|e| format!("--dims: {e}"))?, false)]
            }
            None => vec![([8; 4], true), ([16; 4], true)],
        };
        for (dims, host) in sizes {
            let lat = Arc::new(Lattice::new(dims).map_err(e)?);
            let links = random::smooth_gauge(&lat, 0.5, 3);
            let (checks, lines) = crate::gauge_fixing::run(&gpu, &links, host)?;
            for c in &checks {
                rep.check(&c.what, c.err, c.tol);
                println!("{}", rep.lines.last().expect("a line"));
            }
            lines.into_iter().for_each(|l| rep.say(l));
        }
        return Ok(rep.failures);
    }
    let staggered_only = has("--staggered-rhs");
    if has("--rhs") || staggered_only {
        // The several-field hopping terms against the one-field ones, and
        // their throughput at --dims (default 32^3x64) unless --no-bench.
        let lat = Arc::new(Lattice::new([6, 4, 8, 10]).map_err(e)?);
        if !staggered_only {
            crate::rhs::check(&gpu, &random::hot_gauge(&lat, 3), &mut rep)?;
            crate::block_blas::check(&gpu, &lat, &mut rep)?;
        }
        crate::staggered_rhs::check(&gpu, &mut rep)?;
        if !has("--no-bench") {
            let dims = match args.iter().position(|a| a == "--dims") {
                Some(i) => {
                    let d = args.get(i + 1).ok_or("--dims: no value")?;
                    parse_dims(d).map_err(|e| format!("--dims: {e}"))?
                }
                None => [32, 32, 32, 64],
            };
            if !staggered_only {
                for line in crate::block_blas::bench(&gpu, dims)? {
                    rep.say(line);
                }
                for line in crate::rhs::bench(&gpu, dims)? {
                    rep.say(line);
                }
            }
            for line in crate::staggered_rhs::bench(&gpu, dims)? {
                rep.say(line);
            }
        }
        return Ok(rep.failures);
    }
    let bench_only = has("--bench-only");
    let cpu = CpuBackend::new(0).map_err(e)?;
    if has("--sap") {
        crate::sap::check(&gpu, &cpu, &mut rep)?;
        return Ok(rep.failures);
    }
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
    };
    // The formats checked (--check-prec p,q,...; all by default).
    let checked: Vec<Precision> = match value("--check-prec") {
        Some(list) => list
            .split(',')
            .map(|p| p.parse::<Precision>())
            .collect::<Result<_, _>>()
            .map_err(|err| format!("--check-prec: {err}"))?,
        None => ALL_PRECISIONS.to_vec(),
    };

    // 1. Correctness against the CPU backend (`--staggered-solves-only`:
    // none but the staggered solve pairs below).
    let checks = !bench_only && !has("--staggered-solves-only");
    let lat = Arc::new(Lattice::new([6, 4, 8, 10]).map_err(e)?);
    let gauge = random::hot_gauge(&lat, 3);
    if checks {
        let r = check_host_orders(&cpu, &gpu, &lat, &mut rep);
        rep.flag(
            &format!(
                "host-order conversions ran {}",
                r.as_ref().err().cloned().unwrap_or_default()
            ),
            r.is_ok(),
        );
    }
    if checks {
        match crate::gauge_import::colour_vectors(&cpu, &gpu, &lat) {
            Ok(checks) => checks.iter().for_each(|c| rep.check(&c.what, c.err, c.tol)),
            Err(err) => rep.flag(&format!("colour vectors ran {err}"), false),
        }
        match crate::gauge_import::run(&gpu, &lat, &gauge) {
            Ok(checks) => checks.iter().for_each(|c| rep.check(&c.what, c.err, c.tol)),
            Err(err) => rep.flag(&format!("gauge import ran {err}"), false),
        }
        match crate::fat_links::run(&gpu, &gauge) {
            Ok((checks, lines)) => {
                checks.iter().for_each(|c| rep.check(&c.what, c.err, c.tol));
                lines.into_iter().for_each(|l| rep.say(l));
            }
            Err(err) => rep.flag(&format!("fat links ran {err}"), false),
        }
        // And on a lattice whose volume is no multiple of a block (1296).
        let tail = Arc::new(Lattice::new([6, 6, 6, 6]).map_err(e)?);
        for (l, g) in [(&lat, gauge.clone()), (&tail, random::hot_gauge(&tail, 5))] {
            match crate::clover_compute::run(&gpu, l, &g) {
                Ok(checks) => checks.iter().for_each(|c| rep.check(&c.what, c.err, c.tol)),
                Err(err) => rep.flag(&format!("clover compute ran {err}"), false),
            }
        }
    }
    for prec in ALL_PRECISIONS.into_iter().filter(|p| checked.contains(p)) {
        if !checks {
            break;
        }
        let pair = Pair {
            cpu: &cpu,
            gpu: &gpu,
            prec,
        };
        for subset in [Subset::Full, Subset::Single(Parity::Odd)] {
            let r = check_blas(&pair, &lat, subset, &mut rep);
            rep.flag(
                &format!(
                    "blas {prec:?} {subset:?} ran {}",
                    r.as_ref().err().cloned().unwrap_or_default()
                ),
                r.is_ok(),
            );
        }
        let r = check_solution_updates(&pair, &lat, Subset::Single(Parity::Even), &mut rep);
        rep.flag(
            &format!(
                "solution updates {prec:?} ran {}",
                r.as_ref().err().cloned().unwrap_or_default()
            ),
            r.is_ok(),
        );
        check_forms(&pair, &gauge, &mut rep)?;
        let r = check_clover(&pair, &gauge, &mut rep);
        rep.flag(
            &format!(
                "clover {prec:?} ran {}",
                r.as_ref().err().cloned().unwrap_or_default()
            ),
            r.is_ok(),
        );
    }

    if has("--staggered") && !bench_only {
        // `--staggered-solves-only`: the CPU/CUDA solve pairs alone.
        if !has("--staggered-solves-only") {
            let r = staggered::check(&cpu, &gpu, &mut rep);
            rep.flag(
                &format!(
                    "staggered checks ran {}",
                    r.as_ref().err().cloned().unwrap_or_default()
                ),
                r.is_ok(),
            );
        }
        let r = staggered::check_solve(&mut rep);
        rep.flag(
            &format!(
                "staggered solve ran {}",
                r.as_ref().err().cloned().unwrap_or_default()
            ),
            r.is_ok(),
        );
    }

    // 2. Benchmarks.
    let mut rows = Vec::new();
    let mut roof = f64::NAN;
    if !has("--no-bench") {
        roof = roofline(&gpu)?;
        rep.say(format!(
            "roofline: device-to-device copy {:.0} GB/s (read + write)",
            roof / 1e9
        ));
        let mut sizes: Vec<[usize; 4]> = if has("--quick") {
            vec![[8, 8, 8, 8], [16, 16, 16, 16]]
        } else {
            vec![
                [8, 8, 8, 8],
                [16, 16, 16, 16],
                [24, 24, 24, 24],
                [32, 32, 32, 64],
            ]
        };
        if let Some(d) = value("--dims") {
            sizes = vec![parse_dims(d).map_err(|e| format!("--dims: {e}"))?];
        }
        let precs: Vec<Precision> = match value("--prec") {
            Some(p) => vec![p
                .parse::<Precision>()
                .map_err(|err| format!("--prec: {err}"))?],
            None => ALL_PRECISIONS.to_vec(),
        };
        for &prec in &precs {
            let pair = Pair {
                cpu: &cpu,
                gpu: &gpu,
                prec,
            };
            for &dims in &sizes {
                if has("--staggered") {
                    let r = staggered::bench(&gpu, prec, dims, roof, &mut rep, &mut rows);
                    rep.flag(
                        &format!(
                            "staggered bench {prec:?} {dims:?} ran {}",
                            r.as_ref().err().cloned().unwrap_or_default()
                        ),
                        r.is_ok(),
                    );
                    continue;
                }
                if has("--clover") {
                    let r = bench_clover(&pair, dims, roof, &mut rep, &mut rows);
                    rep.flag(
                        &format!(
                            "clover bench {prec:?} {dims:?} ran {}",
                            r.as_ref().err().cloned().unwrap_or_default()
                        ),
                        r.is_ok(),
                    );
                    continue;
                }
                let r = bench_dslash(&pair, dims, roof, &mut rep, &mut rows);
                rep.flag(
                    &format!(
                        "bench {prec:?} {dims:?} ran {}",
                        r.as_ref().err().cloned().unwrap_or_default()
                    ),
                    r.is_ok(),
                );
            }
        }
    }

    let mut solves = Vec::new();
    if !has("--no-bench") && (!has("--quick") || has("--blas")) {
        for prec in [Precision::Double, Precision::Single, Precision::Half] {
            let r = bench_blas(&gpu, roof, prec, &mut solves);
            rep.flag(
                &format!(
                    "blas bench {prec:?} ran {}",
                    r.as_ref().err().cloned().unwrap_or_default()
                ),
                r.is_ok(),
            );
        }
    }
    write_table(&args, &info.name, &rep, &rows, roof, &solves, false);

    // 3. Solves: GPU against CPU on one problem, then a large GPU solve.
    let plain = checked.contains(&Precision::Double) || checked.contains(&Precision::Single);
    if !has("--no-solve") && !bench_only && plain {
        let r = run_solves(&cpu, &gpu, has("--quick"), &rows, &mut rep, &mut solves);
        rep.flag(
            &format!(
                "solves ran {}",
                r.as_ref().err().cloned().unwrap_or_default()
            ),
            r.is_ok(),
        );
    }

    if !has("--no-solve") && !bench_only {
        let r = run_mixed_solves(&mut rep, &mut solves, &checked);
        rep.flag(
            &format!(
                "mixed solves ran {}",
                r.as_ref().err().cloned().unwrap_or_default()
            ),
            r.is_ok(),
        );
    }

    let later = gpu.modules().split_off(at_start);
    if !later.is_empty() {
        rep.say(format!(
            "modules compiled on first use: {}",
            later
                .iter()
                .map(|m| format!("{} {:.2} s", m.name, m.compile_s))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let memory_only = gpu.tuned_for_this_process_only();
    if memory_only > 0 {
        rep.say(format!(
            "tuned choices kept for this process only (the hopping term's forms timed on the \
             caller's fields: the copies out of L2 could not be made): {memory_only}"
        ));
    }
    write_table(&args, &info.name, &rep, &rows, roof, &solves, true);
    Ok(rep.failures)
}
