//! The main job: build a gauge field, load it through the library's API as a
//! host program would (MILC order), solve `M x = b` for a point source, and
//! print progress and a summary (iterations, true residual, time, Gflops,
//! backend). On the GPU when there is one, else on the CPU.
//!
//! ```text
//! latsol-solve [--backend auto|cpu|cuda] [--dims X,Y,Z,T] [--field smooth|hot|unit|PATH]
//!              [--kappa K] [--solver bicgstab|cg] [--solve direct|direct-pc|normop|normop-pc]
//!              [--tol T] [--maxiter N] [--precision double|single] [--seed S] [--every N]
//!              [--sloppy double|single|half|quarter|packed20|packed30] [--reconstruct-sloppy 18|12|8]
//!              [--mixed reliable|defect|defect-corrected] [--delta D] [--tol-inner E] [--plain-cg]
//!              [--csw C] [--asymmetric]
//! ```
//!
//! `--csw C` solves the Wilson-clover operator with the clover term computed
//! from the field (`A = 1 − κ c_SW Σ ½[γ_μ, γ_ν] F_μν`); `--asymmetric`
//! picks the asymmetric even-odd form (default: QUDA's symmetric one).
//!
//! `--field PATH` reads a configuration written by `latsol-heatbath` (its
//! dimensions replace `--dims`). The default smooth field (links within 0.2
//! of the identity) has κ_c near 0.135 on these volumes: the default
//! κ = 0.13 is light but safely below it.

use std::process::ExitCode;
use std::sync::Arc;

use latsol::api::*;
use latsol::lattice::{parse_dims, Lattice};
use latsol::layout::{
    self, DiracOrder, GammaBasis, GaugeOrder, HostGauge, HostReals, HostRealsMut,
};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::random;

struct Options {
    backend: BackendChoice,
    dims: Option<[usize; 4]>,
    field: String,
    kappa: f64,
    solver: SolverType,
    solve_type: SolveType,
    tol: f64,
    maxiter: usize,
    precision: Precision,
    seed: u64,
    every: usize,
    sloppy: Option<Precision>,
    reconstruct_sloppy: Reconstruct,
    mixed: MixedScheme,
    delta: f64,
    tol_inner: f64,
    cg_stabilised: bool,
    csw: Option<f64>,
    asymmetric: bool,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        backend: BackendChoice::Auto,
        dims: None,
        field: "smooth".into(),
        kappa: 0.13,
        solver: SolverType::BiCgStab,
        solve_type: SolveType::DirectPc,
        tol: 1e-12,
        maxiter: 20_000,
        precision: Precision::Double,
        seed: 2026,
        every: 25,
        sloppy: None,
        reconstruct_sloppy: Reconstruct::Full18,
        mixed: MixedScheme::ReliableUpdates,
        delta: 0.1,
        tol_inner: 0.1,
        cg_stabilised: true,
        csw: None,
        asymmetric: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(key) = it.next() {
        if key == "--help" || key == "-h" {
            return Err(String::new());
        }
        if key == "--asymmetric" {
            o.asymmetric = true;
            continue;
        }
        if key == "--plain-cg" {
            o.cg_stabilised = false;
            continue;
        }
        let val = it.next().ok_or(format!("{key} needs a value"))?;
        let bad = || format!("{key}: cannot use '{val}'");
        let named = |e: String| format!("{key}: {e}");
        match key.as_str() {
            "--backend" => o.backend = val.parse().map_err(named)?,
            "--dims" => o.dims = Some(parse_dims(val).map_err(named)?),
            "--field" => o.field = val.clone(),
            "--kappa" => o.kappa = val.parse().map_err(|_| bad())?,
            "--solver" => {
                o.solver = match val.as_str() {
                    "bicgstab" => SolverType::BiCgStab,
                    "cg" => SolverType::Cg,
                    _ => return Err(bad()),
                }
            }
            "--solve" => {
                o.solve_type = match val.as_str() {
                    "direct" => SolveType::Direct,
                    "direct-pc" => SolveType::DirectPc,
                    "normop" => SolveType::NormOp,
                    "normop-pc" => SolveType::NormOpPc,
                    _ => return Err(bad()),
                }
            }
            "--tol" => o.tol = val.parse().map_err(|_| bad())?,
            "--maxiter" => o.maxiter = val.parse().map_err(|_| bad())?,
            "--precision" => o.precision = val.parse().map_err(named)?,
            "--sloppy" => o.sloppy = Some(val.parse().map_err(named)?),
            "--reconstruct-sloppy" => o.reconstruct_sloppy = val.parse().map_err(named)?,
            "--mixed" => {
                o.mixed = match val.as_str() {
                    "reliable" => MixedScheme::ReliableUpdates,
                    "defect" => MixedScheme::DefectCorrection,
                    "defect-corrected" => MixedScheme::DefectCorrectionCorrected,
                    _ => return Err(bad()),
                }
            }
            "--delta" => o.delta = val.parse().map_err(|_| bad())?,
            "--tol-inner" => o.tol_inner = val.parse().map_err(|_| bad())?,
            "--seed" => o.seed = val.parse().map_err(|_| bad())?,
            "--csw" => o.csw = Some(val.parse().map_err(|_| bad())?),
            "--every" => o.every = val.parse().map_err(|_| bad())?,
            _ => return Err(format!("unknown option {key}")),
        }
    }
    Ok(o)
}

fn run(mut o: Options) -> Result<bool, latsol::Error> {
    // A tolerance the precise fields cannot reach: warn and take one they can.
    if o.tol < o.precision.epsilon() {
        let reachable = 10.0 * o.precision.epsilon();
        eprintln!(
            "latsol-solve: warning: --tol {:e} is below the roundoff of {:?} fields ({:.1e}); \
             solving to {reachable:.0e} instead",
            o.tol,
            o.precision,
            o.precision.epsilon()
        );
        o.tol = reachable;
    }
    let ctx = Context::new(InitParams {
        backend: o.backend,
        verbosity: Verbosity::Verbose,
        logger: Some(Arc::new(|_, msg: &str| println!("latsol: {msg}"))),
        ..Default::default()
    })?;
    let dims = o.dims.unwrap_or(if ctx.backend_name() == "cuda" {
        [24, 24, 24, 48]
    } else {
        [8, 8, 8, 16]
    });
    let field = match o.field.as_str() {
        "hot" => random::try_hot_gauge(&Arc::new(Lattice::new(dims)?), o.seed)?,
        "unit" => latsol::field::GaugeField::try_unit(Arc::new(Lattice::new(dims)?))?,
        "smooth" => random::try_smooth_gauge(&Arc::new(Lattice::new(dims)?), 0.2, o.seed)?,
        path => latsol::gauge_gen::io::load(std::path::Path::new(path))?.0,
    };
    let lat = field.lattice().clone();
    let dims = lat.dims();
    // Hand the field over as a host program would: MILC order, double.
    let mut milc = latsol::alloc::filled(lat.volume() * 4 * 18, 0.0f64, "the host links")?;
    layout::gauge::export(
        &field,
        GaugeOrder::Milc,
        &mut [HostRealsMut::F64(&mut milc)],
    )?;
    let gauge = ctx.load_gauge(
        &GaugeParams {
            dims,
            order: GaugeOrder::Milc,
            t_boundary: TBoundary::AntiPeriodic,
            precision: o.precision,
            precision_sloppy: o.sloppy.unwrap_or(o.precision),
            reconstruct_sloppy: o.reconstruct_sloppy,
            ..Default::default()
        },
        &HostGauge::Milc(HostReals::F64(&milc)),
    )?;
    let plaq = gauge.plaquette();
    println!(
        "lattice {dims:?}, {} field, plaquette {:.6}, kappa {}, backend {}",
        o.field,
        plaq[0],
        o.kappa,
        ctx.backend_name()
    );

    // A point source at the origin, spin 0, colour 0 (DeGrand–Rossi, DIRAC order).
    let n = lat.volume() * 24;
    let mut source = latsol::alloc::filled(n, 0.0f64, "the source")?;
    source[0] = 1.0;
    let mut solution = latsol::alloc::filled(n, 0.0f64, "the solution")?;
    let params = InvertParams {
        kappa: o.kappa,
        solver: o.solver,
        solve_type: o.solve_type,
        tol: o.tol,
        maxiter: o.maxiter,
        precision: o.precision,
        precision_sloppy: o.sloppy.unwrap_or(o.precision),
        mixed: o.mixed,
        reliable_delta: o.delta,
        tol_inner: o.tol_inner,
        cg_stabilised: o.cg_stabilised,
        dirac_order: DiracOrder::Dirac,
        gamma_basis: GammaBasis::DegrandRossi,
        progress_every: o.every,
        ..Default::default()
    };
    let clover = match o.csw {
        Some(c_sw) => {
            let t = std::time::Instant::now();
            let c = ctx.load_clover(
                &gauge,
                &CloverParams {
                    precision: o.precision,
                    precision_sloppy: params.precision_sloppy,
                },
                CloverSource::Computed {
                    c_sw,
                    kappa: o.kappa,
                    links: HostGauge::Milc(HostReals::F64(&milc)),
                },
            )?;
            println!(
                "clover term c_sw = {c_sw} computed in {:.2} s",
                t.elapsed().as_secs_f64()
            );
            Some(c)
        }
        None => None,
    };
    let params = InvertParams {
        dslash: if clover.is_some() {
            DslashType::CloverWilson
        } else {
            DslashType::Wilson
        },
        matpc: if o.asymmetric {
            MatPc::EvenEvenAsymmetric
        } else {
            MatPc::EvenEven
        },
        ..params
    };
    let fields = match &clover {
        Some(c) => OperatorFields::from((&gauge, c)),
        None => OperatorFields::from(&gauge),
    };
    let wall = std::time::Instant::now();
    let r = ctx.invert(
        fields,
        &params,
        HostReals::F64(&source),
        HostRealsMut::F64(&mut solution),
    )?;
    let wall = wall.elapsed().as_secs_f64();
    println!(
        "summary: backend {} | lattice {}x{}x{}x{} | {:?}/{:?} {:?} {:?} | iterations {} | \
         reliable updates {} | true residual {:.3e} | solver {:.3} s, {:.2} Gflops | \
         invert call {wall:.3} s | {}",
        ctx.backend_name(),
        dims[0],
        dims[1],
        dims[2],
        dims[3],
        o.precision,
        o.sloppy.unwrap_or(o.precision),
        o.solver,
        o.solve_type,
        r.iterations,
        r.reliable_updates,
        r.true_residual,
        r.seconds,
        r.gflops,
        if r.converged {
            "converged"
        } else {
            "NOT converged"
        }
    );
    Ok(r.converged)
}

fn main() -> ExitCode {
    let opts = match parse() {
        Ok(o) => o,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("latsol-solve: {msg}");
            }
            eprintln!(
                "{}",
                include_str!("latsol-solve.rs")
                    .lines()
                    .skip(6)
                    .take(5)
                    .map(|l| l.trim_start_matches("//! "))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            return ExitCode::from(2);
        }
    };
    match run(opts) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("latsol-solve: {e}");
            ExitCode::from(1)
        }
    }
}
