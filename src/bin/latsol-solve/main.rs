//! The main job: build a gauge field, load it through the library's API as a
//! host program would (MILC order), solve `M x = b` for a point source, and
//! print progress and a summary (iterations, true residual, time, Gflops,
//! backend). On the GPU when there is one, else on the CPU.
//!
//! `latsol-solve --help` lists every option (clap); `-v` prints the
//! solver's progress every `--every` iterations, `-q` only the summary.
//! On a terminal, without `-v` or `-q`, a progress bar shows the solve
//! (iteration and residual, the bar filling as the residual falls towards
//! the tolerance); redirected output stays plain lines.
//!
//! `--csw C` solves the Wilson-clover operator with the clover term computed
//! from the field (`A = 1 − κ c_SW Σ ½[γ_μ, γ_ν] F_μν`); `--asymmetric`
//! picks the asymmetric even-odd form (default: QUDA's symmetric one).
//!
//! `--field PATH` reads a gauge configuration file: NERSC, ILDG (SciDAC
//! LIME) or MILC, the format detected from the file and its checksum and
//! plaquette checked (`latsol::gauge_io`); its dimensions replace `--dims`.
//! The default smooth field (links within 0.2 of the identity) has κ_c near
//! 0.135 on these volumes: the default κ = 0.13 is light but safely below it.
//!
//! `--grid X,Y,Z,T` (a build with the `mpi` feature, under `mpirun` with
//! that many ranks) cuts the lattice over the ranks, QUDA's default rank
//! order: the program is then the host that initialises MPI, and each rank
//! hands latsol its part: NERSC and MILC files are read by every rank in
//! parts, the checksum, plaquette and link trace checked over all ranks
//! (`comm::gauge_file`); other files, and the made fields, whole on every
//! rank, then cut. Rank 0 prints.

use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use latsol::api::*;
use latsol::lattice::{parse_dims, Lattice};
use latsol::layout::{
    self, DiracOrder, GammaBasis, GaugeOrder, HostGauge, HostReals, HostRealsMut,
};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::random;

mod sources;

/// Solve M x = b for a point source with latsol, on the GPU when there is
/// one, else on the CPU, and print a summary.
#[derive(Parser, Debug)]
#[command(name = "latsol-solve", version)]
struct Options {
    /// Where to run: auto (CUDA if usable), cpu or cuda.
    #[arg(long, default_value = "auto", value_parser = parse_str::<BackendChoice>)]
    backend: BackendChoice,
    /// Lattice extents X,Y,Z,T (default 24,24,24,48 on the GPU, 8,8,8,16 on the CPU).
    #[arg(long, value_parser = parse_dims)]
    dims: Option<[usize; 4]>,
    /// The gauge field: smooth, hot, unit, or the path of a configuration
    /// file (NERSC, ILDG or MILC, detected; its dimensions replace --dims).
    #[arg(long, default_value = "smooth")]
    field: String,
    /// Hopping parameter κ.
    #[arg(long, default_value_t = 0.13)]
    kappa: f64,
    /// Krylov solver.
    #[arg(long, value_enum, default_value = "bicgstab")]
    solver: Solver,
    /// The system iterated on.
    #[arg(long = "solve", value_enum, default_value = "direct-pc")]
    solve_type: Solve,
    /// Target relative residual |b − M x|/|b|.
    #[arg(long, default_value_t = 1e-12)]
    tol: f64,
    /// Iteration limit.
    #[arg(long, default_value_t = 20_000)]
    maxiter: usize,
    /// Precision of the precise fields: double or single.
    #[arg(long, default_value = "double", value_parser = parse_str::<Precision>)]
    precision: Precision,
    /// Seed of the smooth or hot field.
    #[arg(long, default_value_t = 2026)]
    seed: u64,
    /// With -v, a progress line every this many iterations (0: none).
    #[arg(long, default_value_t = 25)]
    every: usize,
    /// Sloppy precision of a mixed solve: double, single, half, quarter,
    /// packed20 or packed30 (default: the precision itself).
    #[arg(long, value_parser = parse_str::<Precision>)]
    sloppy: Option<Precision>,
    /// Link compression of the sloppy copy: 18, 12 or 8.
    #[arg(long, default_value = "18", value_parser = parse_str::<Reconstruct>)]
    reconstruct_sloppy: Reconstruct,
    /// Mixed-precision scheme.
    #[arg(long, value_enum, default_value = "reliable")]
    mixed: Mixed,
    /// Reliable-update threshold δ.
    #[arg(long, default_value_t = 0.1)]
    delta: f64,
    /// Inner tolerance of defect correction.
    #[arg(long, default_value_t = 0.1)]
    tol_inner: f64,
    /// Mixed CG without the stabilisations of clark2022 §3.1.
    #[arg(long)]
    plain_cg: bool,
    /// Solve the Wilson-clover operator, the clover term computed from the
    /// field with this c_SW (A = 1 − κ c_SW Σ ½[γ_μ, γ_ν] F_μν).
    #[arg(long)]
    csw: Option<f64>,
    /// The asymmetric even-odd form of the clover operator (default: QUDA's
    /// symmetric one).
    #[arg(long)]
    asymmetric: bool,
    /// More output: the solver's progress (-v), the library's debug lines (-vv).
    #[arg(short, long, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    verbose: u8,
    /// Only the summary line.
    #[arg(short, long)]
    quiet: bool,
    /// Solve this many times on the same context (the same source, from
    /// zero), a summary each: the later solves show the whole call once
    /// the kernels are ready and the device buffers kept.
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// MPI ranks along X,Y,Z,T (their product the number of ranks under
    /// mpirun; a build with the `mpi` feature): each holds its part of the
    /// lattice (the extents divided by the grid).
    #[arg(long, default_value = "1,1,1,1", value_parser = parse_dims)]
    grid: [usize; 4],
    /// Global sums in a fixed order (the same bits on every run).
    #[arg(long)]
    deterministic_sums: bool,
    /// Solve this many sources in one call: up to 12 the spin-colour
    /// components of the point source at the origin, beyond that random
    /// Z2 noise sources (seed 002's Table 1 solves the 12).
    #[arg(long)]
    sources: Option<usize>,
    /// With --sources: solve them together in blocks of this many by a
    /// block solver (block BiCGstab with QR, block CG for --solver cg);
    /// 0 all in one block; 1 (the default) one after another.
    #[arg(long, default_value_t = 1)]
    block: usize,
    /// With --block: block BiCGstab's memory-saving form (seed 002
    /// Algorithm 2.2).
    #[arg(long)]
    block_memory_saving: bool,
    /// Precondition block BiCGstab (also a single source) or GCR by the
    /// Schwarz alternating procedure with this many cycles (seed 002 §2.2;
    /// its N_SAP = 5 is 6 cycles here); 0 (the default): no SAP.
    #[arg(long, default_value_t = 0)]
    sap_cycles: usize,
    /// SAP's box solves: SSOR (a fixed map) or MR (GCR only).
    #[arg(long, value_enum, default_value = "ssor")]
    sap_box: SapBox,
    /// Additive Schwarz (all boxes on one residual) instead of the
    /// multiplicative one.
    #[arg(long)]
    sap_additive: bool,
    /// GCR's Krylov space between restarts (default 16), or BiCGstab(l)'s
    /// l (default 4, clark2022 §6.1's choice).
    #[arg(long)]
    gcr_nkrylov: Option<usize>,
    /// SAP's boxes X,Y,Z,T (even, dividing the local lattice); default 4
    /// where 4 divides the local extent, else 2.
    #[arg(long, value_parser = parse_dims)]
    sap_extent: Option<[usize; 4]>,
    /// SSOR (or MR) steps of each SAP box solve (seed 002: 1).
    #[arg(long, default_value_t = 1)]
    sap_ssor: usize,
    /// SAP's SSOR (or MR) relaxation ω, in (0, 2) (seed 002: 1.26).
    #[arg(long, default_value_t = 1.0)]
    sap_omega: f64,
}

/// The ranks of `--grid`: MPI started by this program (the host), the
/// world cut by the grid; None for a grid of one rank.
#[cfg(feature = "mpi")]
struct Ranks {
    params: Option<RanksParams>,
    rank: usize,
    /// Dropped last (fields drop in order): MPI_Finalize after the
    /// communicator's duplicate is freed.
    _universe: Option<mpi::environment::Universe>,
}

#[cfg(feature = "mpi")]
fn start_ranks(grid: [usize; 4], deterministic: bool) -> Result<Ranks, latsol::Error> {
    if grid == [1; 4] {
        return Ok(Ranks {
            params: None,
            rank: 0,
            _universe: None,
        });
    }
    let universe = mpi::initialize()
        .ok_or_else(|| latsol::Error::Internal("MPI was initialised already".into()))?;
    let comm = latsol::comm::MpiComm::duplicate_world()?;
    let rank = latsol::comm::Comm::rank(&comm);
    Ok(Ranks {
        params: Some(RanksParams {
            comm: Arc::new(comm),
            grid,
            map: latsol::comm::RankMap::TFastest,
            reduction: if deterministic {
                latsol::comm::Reduction::Deterministic
            } else {
                latsol::comm::Reduction::Fast
            },
        }),
        rank,
        _universe: Some(universe),
    })
}

#[cfg(not(feature = "mpi"))]
struct Ranks {
    params: Option<RanksParams>,
    rank: usize,
}

#[cfg(not(feature = "mpi"))]
fn start_ranks(grid: [usize; 4], _deterministic: bool) -> Result<Ranks, latsol::Error> {
    if grid != [1; 4] {
        return Err(latsol::Error::Unsupported(format!(
            "--grid {grid:?}: this latsol-solve was built without MPI (cargo build --release \
             --features mpi)"
        )));
    }
    Ok(Ranks {
        params: None,
        rank: 0,
    })
}

/// The gauge field of `--field`: made whole (and cut by the caller), or,
/// on many ranks, this rank's part of a NERSC, ILDG or MILC file read by
/// every rank in parts and checked over all (`comm::gauge_file`); latsol's
/// first format is read whole.
enum HostLinks {
    Whole(latsol::field::GaugeField),
    Part {
        /// MILC order, this rank's sites.
        links: Vec<f64>,
        lattice: Arc<Lattice>,
        global: [usize; 4],
        origin: [usize; 4],
    },
}

fn host_links(
    o: &Options,
    ranks: &Ranks,
    dims: [usize; 4],
    verbosity: Verbosity,
) -> Result<HostLinks, latsol::Error> {
    let field = match o.field.as_str() {
        "hot" => random::try_hot_gauge(&Arc::new(Lattice::new(dims)?), o.seed)?,
        "unit" => latsol::field::GaugeField::try_unit(Arc::new(Lattice::new(dims)?))?,
        "smooth" => random::try_smooth_gauge(&Arc::new(Lattice::new(dims)?), 0.2, o.seed)?,
        path => {
            let path = std::path::Path::new(path);
            let say = |info: &latsol::gauge_io::FileInfo| {
                if verbosity >= Verbosity::Summarize {
                    println!(
                        "{}: {:?} file, {:?} precision, {}",
                        path.display(),
                        info.format,
                        info.precision,
                        info.checks.join(", ")
                    );
                }
            };
            if let Some(r) = &ranks.params {
                let grid = rank_grid(r)?;
                let coords = grid.coords();
                let cut = latsol::comm::Ranks {
                    comm: r.comm.clone(),
                    grid,
                    reduction: r.reduction,
                };
                if let Some((part, info)) = latsol::comm::gauge_file::read_gauge_part(&cut, path)? {
                    say(&info);
                    let lattice = part.lattice().clone();
                    let local = lattice.dims();
                    let mut links =
                        latsol::alloc::filled(lattice.volume() * 4 * 18, 0.0f64, "the host links")?;
                    layout::gauge::export(
                        &part,
                        GaugeOrder::Milc,
                        &mut [HostRealsMut::F64(&mut links)],
                    )?;
                    return Ok(HostLinks::Part {
                        links,
                        lattice,
                        global: info.dims,
                        origin: [0, 1, 2, 3].map(|mu| coords[mu] * local[mu]),
                    });
                }
            }
            let (field, info) = latsol::gauge_io::read(path)?;
            say(&info);
            field
        }
    };
    Ok(HostLinks::Whole(field))
}

/// The grid of ranks of `r`, this rank's place in it.
fn rank_grid(r: &RanksParams) -> Result<latsol::comm::RankGrid, latsol::Error> {
    latsol::comm::RankGrid::new(r.grid, r.comm.size(), r.comm.rank(), &r.map)
}

/// This rank's part (sites `origin + x`, extents `local`) of a field of
/// `per` reals a site in even-odd order on the lattice `global`.
fn local_part(
    global_field: &[f64],
    global: &Lattice,
    local: &Lattice,
    origin: [usize; 4],
    per: usize,
) -> Result<Vec<f64>, latsol::Error> {
    let index = |lat: &Lattice, x: [usize; 4]| {
        lat.parity_of(x).index() * lat.half_volume() + lat.cb_index(x)
    };
    let mut out = latsol::alloc::filled(local.volume() * per, 0.0f64, "this rank's links")?;
    for p in [latsol::lattice::Parity::Even, latsol::lattice::Parity::Odd] {
        for cb in 0..local.half_volume() {
            let x = local.coords(p, cb);
            let g = [0, 1, 2, 3].map(|mu| origin[mu] + x[mu]);
            let (i, j) = (index(local, x), index(global, g));
            out[i * per..(i + 1) * per].copy_from_slice(&global_field[j * per..(j + 1) * per]);
        }
    }
    Ok(out)
}

/// A value parsed by its `FromStr` (the library's names and messages).
fn parse_str<T: std::str::FromStr<Err = String>>(s: &str) -> Result<T, String> {
    s.parse()
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Solver {
    Bicgstab,
    Cg,
    /// Flexible GCR(--gcr-nkrylov), preconditioned by SAP with --sap-cycles.
    Gcr,
    /// BiCGstab(l) with l = --gcr-nkrylov (QUDA's BICGSTABL takes l there too).
    Bicgstabl,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SapBox {
    Ssor,
    Mr,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Solve {
    Direct,
    DirectPc,
    Normop,
    NormopPc,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Mixed {
    Reliable,
    Defect,
    DefectCorrected,
}

fn run(mut o: Options) -> Result<bool, latsol::Error> {
    let verbosity = match (o.quiet, o.verbose) {
        (true, _) => Verbosity::Silent,
        (false, 0) => Verbosity::Summarize,
        (false, 1) => Verbosity::Verbose,
        (false, _) => Verbosity::Debug,
    };
    let solver = match o.solver {
        Solver::Bicgstab => SolverType::BiCgStab,
        Solver::Cg => SolverType::Cg,
        Solver::Gcr => SolverType::Gcr,
        Solver::Bicgstabl => SolverType::BiCgStabL,
    };
    let solve_type = match o.solve_type {
        Solve::Direct => SolveType::Direct,
        Solve::DirectPc => SolveType::DirectPc,
        Solve::Normop => SolveType::NormOp,
        Solve::NormopPc => SolveType::NormOpPc,
    };
    let mixed = match o.mixed {
        Mixed::Reliable => MixedScheme::ReliableUpdates,
        Mixed::Defect => MixedScheme::DefectCorrection,
        Mixed::DefectCorrected => MixedScheme::DefectCorrectionCorrected,
    };
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
    let ranks = start_ranks(o.grid, o.deterministic_sums)?;
    let first = ranks.rank == 0;
    // Rank 0 speaks for all.
    let verbosity = if first { verbosity } else { Verbosity::Silent };
    let bar = solve_bar(verbosity == Verbosity::Summarize);
    let log_bar = bar.clone();
    let progress_bar = bar.clone();
    let started = std::time::Instant::now();
    let ctx = Context::new(InitParams {
        backend: o.backend,
        verbosity,
        ranks: ranks.params.clone(),
        logger: Some(Arc::new(move |_, msg: &str| {
            log_bar.suspend(|| println!("latsol: {msg}"))
        })),
        progress: Some(Arc::new(move |solver: &str, k: usize, res: f64| {
            progress_bar.set_message(format!("{solver} iteration {k}, residual {res:.2e}"));
            progress_bar.set_position(residual_progress(res, o.tol));
        })),
        ..Default::default()
    })?;
    let context_s = started.elapsed().as_secs_f64();
    let dims = o.dims.unwrap_or(if ctx.backend_name() == "cuda" {
        [24, 24, 24, 48]
    } else {
        [8, 8, 8, 16]
    });
    let (milc, lat, global_dims, origin) = match host_links(&o, &ranks, dims, verbosity)? {
        HostLinks::Part {
            links,
            lattice,
            global,
            origin,
        } => (links, lattice, global, origin),
        HostLinks::Whole(field) => {
            let global = field.lattice().clone();
            // Hand the field over as a host program would: MILC order,
            // double; on many ranks each its part.
            let mut milc =
                latsol::alloc::filled(global.volume() * 4 * 18, 0.0f64, "the host links")?;
            layout::gauge::export(
                &field,
                GaugeOrder::Milc,
                &mut [HostRealsMut::F64(&mut milc)],
            )?;
            drop(field);
            match &ranks.params {
                None => (milc, global.clone(), global.dims(), [0; 4]),
                Some(r) => {
                    let local = latsol::comm::local_of_global(global.dims(), r.grid)?;
                    let c = rank_grid(r)?.coords();
                    let lat = Arc::new(Lattice::new(local)?);
                    let origin = [0, 1, 2, 3].map(|mu| c[mu] * local[mu]);
                    let part = local_part(&milc, &global, &lat, origin, 4 * 18)?;
                    (part, lat, global.dims(), origin)
                }
            }
        }
    };
    let dims = lat.dims();
    let load = std::time::Instant::now();
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
    let load_s = load.elapsed().as_secs_f64();
    let plaq = gauge.plaquette();
    let say = |line: String| {
        if verbosity >= Verbosity::Summarize {
            println!("{line}")
        }
    };
    say(format!(
        "lattice {:?}{}, {} field, plaquette {:.6}, kappa {}, backend {}",
        global_dims,
        if o.grid == [1; 4] {
            String::new()
        } else {
            format!(" on a grid of {:?} ranks ({dims:?} each)", o.grid)
        },
        o.field,
        plaq[0],
        o.kappa,
        ctx.backend_name()
    ));

    // A point source at the origin, spin 0, colour 0 (DeGrand–Rossi, DIRAC
    // order): on the rank that holds the origin.
    let n = lat.volume() * 24;
    let mut source = latsol::alloc::filled(n, 0.0f64, "the source")?;
    if origin == [0; 4] {
        source[0] = 1.0;
    }
    let mut solution = latsol::alloc::filled(n, 0.0f64, "the solution")?;
    let params = InvertParams {
        kappa: o.kappa,
        solver,
        solve_type,
        tol: o.tol,
        maxiter: o.maxiter,
        precision: o.precision,
        precision_sloppy: o.sloppy.unwrap_or(o.precision),
        mixed,
        reliable_delta: o.delta,
        tol_inner: o.tol_inner,
        cg_stabilised: !o.plain_cg,
        sap: (o.sap_cycles > 0).then(|| SapParams {
            extent: o.sap_extent.unwrap_or([0; 4]),
            cycles: o.sap_cycles,
            ssor_iterations: o.sap_ssor,
            omega: o.sap_omega,
            schwarz: if o.sap_additive {
                Schwarz::Additive
            } else {
                Schwarz::Multiplicative
            },
            box_solver: match o.sap_box {
                SapBox::Ssor => BoxSolver::Ssor,
                SapBox::Mr => BoxSolver::Mr,
            },
        }),
        gcr_nkrylov: o.gcr_nkrylov.unwrap_or(match o.solver {
            Solver::Bicgstabl => 4,
            _ => 16,
        }),
        dirac_order: DiracOrder::Dirac,
        gamma_basis: GammaBasis::DegrandRossi,
        progress_every: if verbosity >= Verbosity::Verbose {
            o.every
        } else if !bar.is_hidden() {
            1
        } else {
            0
        },
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
            say(format!(
                "clover term c_sw = {c_sw} computed in {:.2} s",
                t.elapsed().as_secs_f64()
            ));
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
    if let Some(n) = o.sources {
        let job = sources::Job {
            count: n,
            per_block: o.block,
            memory_saving: o.block_memory_saving,
            origin_here: origin == [0; 4],
            repeat: o.repeat.max(1),
        };
        return sources::solve(&ctx, fields, &params, &lat, &job);
    }
    let mut converged = true;
    for _ in 0..o.repeat.max(1) {
        solution.iter_mut().for_each(|x| *x = 0.0);
        let allocations = ctx.device_field_allocations().0;
        let wall = std::time::Instant::now();
        let r = ctx.invert(
            fields,
            &params,
            HostReals::F64(&source),
            HostRealsMut::F64(&mut solution),
        )?;
        let wall = wall.elapsed().as_secs_f64();
        bar.finish_and_clear();
        converged &= r.converged;
        if !first {
            continue;
        }
        let dims = global_dims;
        println!(
            "summary: backend {} | lattice {}x{}x{}x{} | {:?}/{:?} {:?} {:?} | iterations {} | \
             reliable updates {} | true residual {:.3e} | solver {:.3} s, {:.2} Gflops | \
             invert call {wall:.3} s | context start {context_s:.3} s | gauge load {load_s:.3} s | \
             device field allocations {} | {}",
            ctx.backend_name(),
            dims[0],
            dims[1],
            dims[2],
            dims[3],
            o.precision,
            o.sloppy.unwrap_or(o.precision),
            solver,
            solve_type,
            r.iterations,
            r.reliable_updates,
            r.true_residual,
            r.seconds,
            r.gflops,
            ctx.device_field_allocations().0 - allocations,
            if r.converged {
                "converged"
            } else {
                "NOT converged"
            }
        );
    }
    Ok(converged)
}

/// Steps of the solve's progress bar.
const BAR_STEPS: u64 = 1000;

/// A progress bar on stderr when it is a terminal and `shown`, else a hidden
/// one (every call on it does nothing).
fn solve_bar(shown: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !shown || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(BAR_STEPS);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{elapsed:>4} [{bar:40}] {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar
}

/// How far a relative residual is from 1 towards `tol`, on a log scale,
/// in bar steps.
fn residual_progress(res: f64, tol: f64) -> u64 {
    if res.is_nan() || res <= 0.0 || tol.is_nan() || tol <= 0.0 || tol >= 1.0 {
        return 0;
    }
    let done = (res.log10() / tol.log10()).clamp(0.0, 1.0);
    (done * BAR_STEPS as f64) as u64
}

fn main() -> ExitCode {
    match run(Options::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("latsol-solve: {e}");
            ExitCode::from(1)
        }
    }
}
