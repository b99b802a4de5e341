//! The multi-shift and multi-mass tables of docs/multishift.md, on any
//! backend, from a thermalised quenched field made here:
//!
//! 1. In the style of seed clark2022 Table 3: multi-shift CG on the even-odd
//!    `M̂†M̂` with RHMC-like shifts and per-shift targets, pure double and
//!    mixed (double-single, double-half, and the packed 30- and 20-bit
//!    formats of clark2022): iterations of the multi-shift
//!    phase and of each shift's refinement, each shift's true residual after
//!    the multi-shift phase, and the time.
//! 2. In the style of seed alexandru2011 Table 3: `M(m_i) x_i = b` for the
//!    wide and the narrow mass sets of its Table 2, moved to this field at
//!    the same distances `m_i − m_c` (with `m_c` measured here), by
//!    BiCGstab-M, by the single-mass sequence and by the `Auto` policy:
//!    total iterations, ms per iteration, time and speed-up over BiCGstab-M.
//!
//! ```text
//! latsol-multishift-bench [--backend auto|cpu|cuda] [--dims X,Y,Z,T] [--beta B]
//!                         [--sweeps N] [--seed S] [--kappa K] [--repeat N]
//!                         [--sloppy double|single|half] [--table clark|alexandru|both] [--mc M]
//! ```
//!
//! Every solve is run `--repeat` times (default 3) and the shortest time is
//! reported: the iterations are the same each time, the time is not on a
//! shared machine.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use latsol::api::*;
use latsol::gauge_gen::{Generator, Start};
use latsol::lattice::{parse_dims, Lattice};
use latsol::layout::{self, GaugeOrder, HostGauge, HostReals, HostRealsMut};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::random;

/// alexandru2011 Table 2, `a m`, and its `a m_c`.
const WIDE: [f64; 8] = [
    -0.7908, -0.7721, -0.7511, -0.7320, -0.7105, -0.6193, -0.5108, -0.2687,
];
const NARROW: [f64; 8] = [
    -0.7908, -0.7887, -0.7866, -0.7846, -0.7825, -0.7804, -0.7784, -0.7763,
];
const PAPER_MC: f64 = -0.8173;

struct Options {
    backend: BackendChoice,
    dims: [usize; 4],
    beta: f64,
    sweeps: usize,
    seed: u64,
    kappa: f64,
    /// m_c given by the caller (skips its measurement).
    mc: Option<f64>,
    repeat: usize,
    /// The single-mass sequence's sloppy precision.
    sloppy: Precision,
    clark: bool,
    alexandru: bool,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        backend: BackendChoice::Auto,
        dims: [8, 8, 8, 16],
        beta: 5.8,
        sweeps: 40,
        seed: 31,
        kappa: 0.155,
        mc: None,
        repeat: 3,
        sloppy: Precision::Single,
        clark: true,
        alexandru: true,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(String::new());
        }
        let val = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = || format!("{flag}: bad value {val}");
        let named = |e: String| format!("{flag}: {e}");
        match flag.as_str() {
            "--backend" => o.backend = val.parse().map_err(named)?,
            "--dims" => o.dims = parse_dims(val).map_err(named)?,
            "--beta" => o.beta = val.parse().map_err(|_| bad())?,
            "--sweeps" => o.sweeps = val.parse().map_err(|_| bad())?,
            "--seed" => o.seed = val.parse().map_err(|_| bad())?,
            "--kappa" => o.kappa = val.parse().map_err(|_| bad())?,
            "--mc" => o.mc = Some(val.parse().map_err(|_| bad())?),
            "--sloppy" => {
                o.sloppy = val.parse().map_err(named)?;
                if o.sloppy.is_sloppy_only() && o.sloppy != Precision::Half {
                    return Err(bad());
                }
            }
            "--repeat" => {
                o.repeat = val.parse().map_err(|_| bad())?;
                if o.repeat == 0 {
                    return Err(bad());
                }
            }
            "--table" => {
                (o.clark, o.alexandru) = match val.as_str() {
                    "clark" => (true, false),
                    "alexandru" => (false, true),
                    "both" => (true, true),
                    _ => return Err(bad()),
                }
            }
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(o)
}

fn main() -> ExitCode {
    let o = match parse() {
        Ok(o) => o,
        Err(e) => {
            let usage = "usage: latsol-multishift-bench [--backend auto|cpu|cuda] \
                         [--dims X,Y,Z,T] [--beta B] [--sweeps N] [--seed S] [--kappa K] \
                         [--repeat N] [--sloppy double|single|half] [--table clark|alexandru|both] [--mc M]";
            if e.is_empty() {
                println!("{usage}");
                return ExitCode::SUCCESS;
            }
            eprintln!("{e}\n{usage}");
            return ExitCode::from(2);
        }
    };
    match run(&o) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("latsol-multishift-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(o: &Options) -> latsol::Result<()> {
    let lat = Arc::new(Lattice::new(o.dims)?);
    let t = Instant::now();
    let mut gen = Generator::new(lat.clone(), o.beta, o.seed, Start::Cold)?.with_overrelax(2);
    for _ in 0..o.sweeps {
        gen.sweep();
    }
    let field = gen.into_field();
    let ctx = Context::new(InitParams {
        backend: o.backend,
        verbosity: Verbosity::Silent,
        ..Default::default()
    })?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "latsol-multishift-bench: backend {} ({} CPU threads available), lattice {:?}, \
         quenched Wilson β = {} field after {} heatbath+2 OR sweeps from cold (seed {}, {:.1} s), \
         plaquette {:.4}",
        ctx.backend_name(),
        threads,
        o.dims,
        o.beta,
        o.sweeps,
        o.seed,
        t.elapsed().as_secs_f64(),
        field.plaquette().iter().sum::<f64>() / 3.0
    );
    let mut milc = vec![0.0f64; lat.volume() * 72];
    layout::gauge::export(
        &field,
        GaugeOrder::Milc,
        &mut [HostRealsMut::F64(&mut milc)],
    )?;
    let load = |sloppy: Precision| {
        ctx.load_gauge(
            &GaugeParams {
                dims: o.dims,
                order: GaugeOrder::Milc,
                t_boundary: TBoundary::AntiPeriodic,
                precision_sloppy: sloppy,
                reconstruct_sloppy: Reconstruct::Full18,
                ..Default::default()
            },
            &HostGauge::Milc(HostReals::F64(&milc)),
        )
    };
    let mut rng = random::rng(o.seed + 1);
    let b: Vec<f64> = (0..lat.volume() * 24)
        .map(|_| random::gaussian(&mut rng).re)
        .collect();
    if o.clark {
        clark_table(&ctx, &load, o, &b)?;
    }
    if o.alexandru {
        alexandru_table(&ctx, &load, &b, o.repeat, o.sloppy, o.mc)?;
    }
    Ok(())
}

/// The result of `solve` run `n` times with the shortest time (the
/// iterations are the same every time).
fn best_of(
    n: usize,
    mut solve: impl FnMut() -> latsol::Result<MultiResult>,
) -> latsol::Result<MultiResult> {
    let mut best = solve()?;
    for _ in 1..n {
        let r = solve()?;
        if r.seconds < best.seconds {
            best = r;
        }
    }
    Ok(best)
}

/// clark2022 Table 3 in form: a light-quark RHMC-like solve.
fn clark_table(
    ctx: &Context,
    load: &dyn Fn(Precision) -> latsol::Result<Gauge>,
    o: &Options,
    b: &[f64],
) -> latsol::Result<()> {
    // Shifts spread geometrically over four decades as a rational
    // approximation's poles are; targets tightening with the shift as
    // clark2022 Table 3's (set for the force contribution).
    let shifts: Vec<f64> = (0..11)
        .map(|i| {
            if i == 0 {
                0.0
            } else {
                1e-4 * 10f64.powf(0.45 * i as f64)
            }
        })
        .collect();
    let tols: Vec<f64> = (0..11)
        .map(|i| {
            if i < 4 {
                1e-8
            } else {
                1e-9 / 10f64.powf(0.5 * (i - 4) as f64)
            }
        })
        .collect();
    let half = &b[..b.len() / 2];
    let formats = vec![
        ("double", Precision::Double),
        ("double-single", Precision::Single),
        ("double-half", Precision::Half),
        ("double-packed30", Precision::Packed30),
        ("double-packed20", Precision::Packed20),
    ];
    let mut runs = Vec::new();
    for (name, sloppy) in formats {
        let g = load(sloppy)?;
        let p = InvertParams {
            kappa: o.kappa,
            solve_type: SolveType::NormOpPc,
            precision_sloppy: sloppy,
            maxiter: 100_000,
            tol: 1e-8,
            ..Default::default()
        };
        let r = best_of(o.repeat, || {
            let mut xs = vec![vec![0.0; half.len()]; shifts.len()];
            let outs = xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect();
            ctx.invert_multishift(
                &g,
                &p,
                &shifts,
                Some(&tols),
                HostReals::F64(half),
                outs,
                sloppy != Precision::Double,
            )
        })?;
        runs.push((name, r));
    }
    println!(
        "\n### Multi-shift CG, even-odd M̂†M̂ at κ = {} (clark2022 Table 3 style)\n",
        o.kappa
    );
    print!("| shift | σ |");
    for (name, _) in &runs {
        print!(" {name} iter | {name} r_σ |");
    }
    println!(" target | final r ({}) |", runs[runs.len() - 1].0);
    print!("|---|---|");
    for _ in &runs {
        print!("---|---|");
    }
    println!("---|---|");
    print!("| (multi-shift) | |");
    for (_, r) in &runs {
        print!(" {} | - |", r.multishift_iterations);
    }
    println!(" | |");
    for i in 0..shifts.len() {
        print!("| {i} | {:.2e} |", shifts[i]);
        for (_, r) in &runs {
            let s = &r.shifts[i];
            let rs = if s.residual_after_multishift.is_nan() {
                "-".to_string()
            } else {
                format!("{:.2e}", s.residual_after_multishift)
            };
            print!(" {} | {rs} |", s.iterations);
        }
        println!(
            " {:.2e} | {:.2e} |",
            tols[i],
            runs[runs.len() - 1].1.shifts[i].true_residual
        );
    }
    print!("| total | |");
    for (_, r) in &runs {
        print!(" {} | |", r.iterations);
    }
    println!(" | |");
    print!("| time (s) | |");
    for (_, r) in &runs {
        print!(" {:.3} | |", r.seconds);
    }
    println!(" | |");
    print!("| of which multi-shift phase (s) | |");
    for (_, r) in &runs {
        print!(" {:.3} | |", r.multishift_seconds);
    }
    println!(" | |");
    print!("| ms per multi-shift iteration | |");
    for (_, r) in &runs {
        print!(
            " {:.3} | |",
            1e3 * r.multishift_seconds / r.multishift_iterations.max(1) as f64
        );
    }
    println!(" | |");
    print!("| ms per refinement iteration | |");
    for (_, r) in &runs {
        match r.iterations - r.multishift_iterations {
            0 => print!(" - | |"),
            refine => print!(
                " {:.3} | |",
                1e3 * (r.seconds - r.multishift_seconds) / refine as f64
            ),
        }
    }
    println!(" | |");
    print!("| speed-up over double | |");
    for (_, r) in &runs {
        print!(" {:.2} | |", runs[0].1.seconds / r.seconds);
    }
    println!(" | |");
    for (name, r) in &runs {
        if !r.converged {
            println!("\n{name}: NOT converged");
        }
    }
    Ok(())
}

/// `m_c` of the field: the eigenvalue of `M(m_0)` of smallest modulus is
/// `m_0 − m_c` (the masses shift the spectrum by the identity), found by
/// inverse iteration with even-odd BiCGstab solves.
fn critical_mass(ctx: &Context, g: &Gauge, b: &[f64], kappa0: f64) -> latsol::Result<(f64, f64)> {
    let p = InvertParams {
        kappa: kappa0,
        mass_normalization: MassNormalization::Mass,
        // Inverse iteration needs only modest solves: the eigenvalue comes
        // from the Rayleigh quotient ⟨v, M v⟩, computed exactly.
        tol: 1e-6,
        maxiter: 20_000,
        ..Default::default()
    };
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb = norm(b);
    let mut v: Vec<f64> = b.iter().map(|x| x / nb).collect();
    let mut lambda = (0.0, 0.0);
    // Inverse iteration converges as (|λ_1| / |λ_2|)^k; from m_0 close to
    // m_c that ratio is small, and 10 steps fix m_c to far better than the
    // mass spacings of the sets (each step is a near-critical solve).
    for _ in 0..10 {
        let mut w = vec![0.0; v.len()];
        let r = ctx.invert(g, &p, HostReals::F64(&v), HostRealsMut::F64(&mut w))?;
        eprintln!(
            "  inverse iteration at κ = {kappa0:.5}: {} iterations, {:.2} s",
            r.iterations, r.seconds
        );
        let n = norm(&w);
        v = w.iter().map(|x| x / n).collect();
        let mut mv = vec![0.0; v.len()];
        ctx.apply(
            g,
            &p,
            OperatorKind::M,
            HostReals::F64(&v),
            HostRealsMut::F64(&mut mv),
        )?;
        // ⟨v, M v⟩ with complex numbers as (re, im) pairs.
        let (mut re, mut im) = (0.0, 0.0);
        for k in (0..v.len()).step_by(2) {
            re += v[k] * mv[k] + v[k + 1] * mv[k + 1];
            im += v[k] * mv[k + 1] - v[k + 1] * mv[k];
        }
        lambda = (re, im);
    }
    let m0 = 0.5 / kappa0 - 4.0;
    Ok((m0 - lambda.0, lambda.1))
}

/// alexandru2011 Table 3 in form.
fn alexandru_table(
    ctx: &Context,
    load: &dyn Fn(Precision) -> latsol::Result<Gauge>,
    b: &[f64],
    repeat: usize,
    sloppy: Precision,
    given_mc: Option<f64>,
) -> latsol::Result<()> {
    let g = load(sloppy)?;
    // m_0 a little above the lightest mass of the sets, found from the
    // unshifted near-critical κ = 0.16 region of β = 5.8 fields first.
    let (mc, im) = match given_mc {
        Some(mc) => (mc, f64::NAN),
        None => {
            let (mc0, _) = critical_mass(ctx, &g, b, 0.15)?;
            // The second round from m_0 = m_c + 0.05: close enough to converge in
            // a few steps, far enough that an m_c estimate off by a little does not
            // put m_0 at or below the critical mass (where the solves stall).
            let (mc, im) = critical_mass(ctx, &g, b, 0.5 / (4.0 + mc0 + 0.05))?;
            eprintln!("m_c = {mc:.4} (imaginary part {im:.1e})");
            (mc, im)
        }
    };
    println!(
        "\n### Multi-mass M(m_i) x_i = b (alexandru2011 Table 3 style)\n\n\
         m_c of this field: {mc:.4} ({}); the masses are alexandru2011 Table 2's at the same m − m_c \
         (its m_c = {PAPER_MC}). tol 1e-10 for every mass. BiCGstab-M: full system, double; \
         sequence: even-odd BiCGstab, sloppy precision {sloppy:?} (reliable updates), heaviest \
         first.\n",
        if given_mc.is_some() {
            "given with --mc".to_string()
        } else {
            format!("smallest eigenvalue of M(m_0) by inverse iteration; its imaginary part {im:.1e}")
        }
    );
    println!(
        "| set | solver | total iters | ms/iter | time (s) | speed-up | true residual (worst) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (set, masses) in [("narrow", NARROW), ("wide", WIDE)] {
        let kappas: Vec<f64> = masses
            .iter()
            .map(|m| 0.5 / (4.0 + mc + (m - PAPER_MC)))
            .collect();
        let p = InvertParams {
            tol: 1e-10,
            maxiter: 200_000,
            mass_normalization: MassNormalization::Mass,
            precision_sloppy: sloppy,
            ..Default::default()
        };
        let mut base = None;
        for (name, policy) in [
            ("multi-shift (BiCGstab-M)", MultiMassPolicy::BiCgStabM),
            (
                "single-mass, polynomial guess",
                MultiMassPolicy::Sequence(SequenceGuess::Polynomial),
            ),
            (
                "single-mass, solution-space guess",
                MultiMassPolicy::Sequence(SequenceGuess::SolutionSpace),
            ),
            (
                "single-mass, zero guess",
                MultiMassPolicy::Sequence(SequenceGuess::Zero),
            ),
            ("AUTO", MultiMassPolicy::Auto),
        ] {
            let r = best_of(repeat, || {
                let mut xs = vec![vec![0.0; b.len()]; kappas.len()];
                let outs = xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect();
                ctx.invert_multimass(&g, &p, &kappas, None, policy, HostReals::F64(b), outs)
            })?;
            let base_s = *base.get_or_insert(r.seconds);
            let worst = r.shifts.iter().map(|s| s.true_residual).fold(0.0, f64::max);
            let label = if policy == MultiMassPolicy::Auto {
                format!("{name} (chose {:?})", r.policy_used.unwrap_or(policy))
            } else {
                name.to_string()
            };
            println!(
                "| {set} | {label} | {} | {:.3} | {:.3} | {:.2} | {worst:.1e}{} |",
                r.iterations,
                1e3 * r.seconds / r.iterations.max(1) as f64,
                r.seconds,
                base_s / r.seconds,
                if r.converged { "" } else { " NOT converged" }
            );
        }
    }
    Ok(())
}
