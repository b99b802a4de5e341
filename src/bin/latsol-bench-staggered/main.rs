//! Improved staggered solves on a real gauge field: asqtad fat and long
//! links computed from it (`latsol::smearing`), then
//! - `cg`: even-odd CG on `4m² − D_eo D_oe` in double, and mixed with the
//!   sloppy formats of `--schemes` (reliable updates, clark2022 §3.1):
//!   iterations, their overhead against double, time; `--solver bicgstabl`
//!   (and `--full`) for the seed's Table 2, BiCGstab(4) (on `M` itself);
//! - `multishift`: the RHMC systems `(M̂ + σ_i) x_i = b` for `--shifts` shifts
//!   (geometric between `--shift-min` and `--shift-max`, as the poles of an
//!   optimal rational approximation are spread) by multi-shift CG, double
//!   against double-single and double-half with per-shift refinement
//!   (clark2022 §3.2, its Table 3);
//! - `dslash`: the hopping term alone on the CPU backend beside a STREAM
//!   copy (`hopping`).
//!
//! Markdown rows on stdout, for docs/numerics.md and docs/performance.md.

use std::path::PathBuf;
use std::sync::Arc;

mod hopping;

use clap::Parser;
use latsol::api::*;
use latsol::lattice::{parse_dims, Lattice, Parity};
use latsol::layout::{GaugeOrder, HostGauge, HostReals, HostRealsMut};
use latsol::long_links::LongReconstruct;
use latsol::precision::{Precision, TBoundary};

/// Staggered CG and multi-shift CG benchmarks (asqtad links of a field).
#[derive(Parser, Debug)]
#[command(name = "latsol-bench-staggered", version)]
struct Options {
    /// A gauge configuration (NERSC, ILDG, MILC); else a smooth random field.
    #[arg(long)]
    field: Option<PathBuf>,
    /// Extents of the smooth random field.
    #[arg(long, value_parser = parse_dims, default_value = "8,8,8,16")]
    dims: [usize; 4],
    /// Backend: auto, cpu or cuda.
    #[arg(long, default_value = "auto", value_parser = parse_str::<BackendChoice>)]
    backend: BackendChoice,
    /// Quark masses of the CG table (comma-separated).
    #[arg(long, default_value = "0.02", value_delimiter = ',')]
    masses: Vec<f64>,
    /// Tadpole factor u0 (default: the fourth root of the plaquette).
    #[arg(long)]
    u0: Option<f64>,
    /// Target relative residual.
    #[arg(long, default_value_t = 1e-10)]
    tol: f64,
    /// Tables: cg, multishift, dslash.
    #[arg(long, default_value = "cg,multishift", value_delimiter = ',')]
    tables: Vec<String>,
    /// Precisions of the dslash table (double, single, half, quarter).
    #[arg(long, default_value = "double,single,half", value_delimiter = ',', value_parser = parse_str::<Precision>)]
    dslash_precisions: Vec<Precision>,
    /// CPU threads of the dslash table (0: one a core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Size of each of STREAM's two arrays in the dslash table, MB (at
    /// least four times the last-level cache).
    #[arg(long, default_value_t = 1600)]
    stream_mb: usize,
    /// Number of shifts of the multi-shift table.
    #[arg(long, default_value_t = 11)]
    shifts: usize,
    #[arg(long, default_value_t = 1e-4)]
    shift_min: f64,
    #[arg(long, default_value_t = 5.0)]
    shift_max: f64,
    /// Long-link compression of the sloppy copies: 18, 13 or 9.
    #[arg(long, default_value = "18", value_parser = parse_str::<LongReconstruct>)]
    long_reconstruct_sloppy: LongReconstruct,
    /// Reliable-update threshold δ of the mixed solves.
    #[arg(long, default_value_t = 0.1)]
    delta: f64,
    /// Mixed CG without the stabilisations of clark2022 §3.1.
    #[arg(long)]
    plain_cg: bool,
    /// Repetitions of each solve (the fastest is reported).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Sloppy formats of the solves, each beside double (double, single,
    /// packed30, packed20, half, quarter).
    #[arg(long, default_value = "double,single,half", value_delimiter = ',', value_parser = parse_str::<Precision>)]
    schemes: Vec<Precision>,
    /// Krylov solver of the `cg` table (seed clark2022 Table 2 runs
    /// BiCGstab(4)); the multi-shift table is CG whatever this says.
    #[arg(long, value_enum, default_value = "cg")]
    solver: Solver,
    /// l of BiCGstab(l).
    #[arg(long, default_value_t = 4)]
    bicgstab_l: usize,
    /// The `cg` table on the full system (BiCGstab on M itself, CG on M†M)
    /// rather than on the even sites.
    #[arg(long)]
    full: bool,
    /// Multi-shift: a per-shift table of each scheme (iterations, the true
    /// residual after the multi-shift phase, refinement iterations), as
    /// clark2022 Table 3; the phase's residuals cost one more operator
    /// application a shift, outside the timed solves.
    #[arg(long)]
    per_shift: bool,
    /// Multi-shift: how the mixed schemes refine the shifts after the
    /// phase, each a row: together (one block application an iteration)
    /// or one-by-one (clark2022 §3.2).
    #[arg(long, default_value = "together", value_delimiter = ',', value_enum)]
    refinement: Vec<Refinement>,
    /// Multi-shift: the mixed schemes refine in this format (a third copy
    /// of the links, its long links as the sloppy ones; clark2022 §3:
    /// packed30 schemes refining in packed20) rather than in their own.
    #[arg(long, value_parser = parse_str::<Precision>)]
    refine_in: Option<Precision>,
}

#[derive(Clone, Copy, Debug, PartialEq, clap::ValueEnum)]
enum Refinement {
    Together,
    OneByOne,
}

impl Refinement {
    fn api(self) -> ShiftRefinement {
        match self {
            Refinement::Together => ShiftRefinement::Together,
            Refinement::OneByOne => ShiftRefinement::OneByOne,
        }
    }
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Solver {
    Cg,
    Bicgstab,
    Bicgstabl,
}

fn parse_str<T: std::str::FromStr<Err = String>>(s: &str) -> Result<T, String> {
    s.parse()
}

/// QDP arrays of a field (double).
fn qdp(field: &latsol::field::GaugeField) -> latsol::Result<Vec<f64>> {
    let v = field.lattice().volume();
    let mut out = latsol::alloc::filled(4 * v * 18, 0.0, "the QDP links")?;
    {
        let (a, rest) = out.split_at_mut(v * 18);
        let (b, rest) = rest.split_at_mut(v * 18);
        let (c, d) = rest.split_at_mut(v * 18);
        latsol::layout::gauge::export(
            field,
            GaugeOrder::Qdp,
            &mut [
                HostRealsMut::F64(a),
                HostRealsMut::F64(b),
                HostRealsMut::F64(c),
                HostRealsMut::F64(d),
            ],
        )?;
    }
    Ok(out)
}

/// The solve of the `cg` table (even-odd on the even sites unless
/// `--full`), double with a `sloppy` copy.
fn solve_params(mass: f64, sloppy: Precision, o: &Options) -> StaggeredInvertParams {
    StaggeredInvertParams {
        mass,
        solve: if o.full {
            StaggeredSolve::Full
        } else {
            StaggeredSolve::EvenOdd(Parity::Even)
        },
        solver: match o.solver {
            Solver::Cg => SolverType::Cg,
            Solver::Bicgstab => SolverType::BiCgStab,
            Solver::Bicgstabl => SolverType::BiCgStabL,
        },
        bicgstab_l: o.bicgstab_l,
        tol: o.tol,
        maxiter: 50_000,
        precision: Precision::Double,
        precision_sloppy: sloppy,
        reliable_delta: o.delta,
        cg_stabilised: !o.plain_cg,
        ..Default::default()
    }
}

/// The multi-shift table's solve: CG on the even sites.
fn multishift_params(
    mass: f64,
    sloppy: Precision,
    refinement: Refinement,
    o: &Options,
) -> StaggeredInvertParams {
    StaggeredInvertParams {
        solve: StaggeredSolve::EvenOdd(Parity::Even),
        solver: SolverType::Cg,
        multishift_refinement: refinement.api(),
        precision_refinement: refine_format(sloppy, o),
        ..solve_params(mass, sloppy, o)
    }
}

/// The refinement format of a multi-shift scheme with sloppy format
/// `sloppy` (`--refine-in`; none for a pure solve or the same format).
fn refine_format(sloppy: Precision, o: &Options) -> Option<Precision> {
    o.refine_in
        .filter(|&r| sloppy != Precision::Double && r != sloppy)
}

fn quarters(v: &[f64]) -> [HostReals<'_>; 4] {
    let n = v.len() / 4;
    std::array::from_fn(|mu| HostReals::F64(&v[mu * n..(mu + 1) * n]))
}

fn main() -> latsol::Result<()> {
    let o = Options::parse();
    let thin = match &o.field {
        Some(path) => {
            let (f, info) = latsol::gauge_io::read(path)?;
            eprintln!(
                "field {}: {:?} {:?}",
                path.display(),
                info.format,
                info.dims
            );
            f
        }
        None => latsol::random::try_smooth_gauge(&Arc::new(Lattice::new(o.dims)?), 0.3, 7)?,
    };
    let lat = thin.lattice().clone();
    let plaq = thin.plaquette()[0];
    let u0 = o.u0.unwrap_or(plaq.powf(0.25));
    let t = std::time::Instant::now();
    let links = latsol::smearing::asqtad(&thin, u0, TBoundary::AntiPeriodic)?;
    eprintln!(
        "asqtad links (u0 = {u0:.5}, plaquette {plaq:.6}) in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    if o.tables.iter().any(|t| t == "dslash") {
        let d = lat.dims();
        println!(
            "lattice {}x{}x{}x{}, improved staggered hopping term, CPU backend",
            d[0], d[1], d[2], d[3]
        );
        let elements = o.stream_mb * 1_000_000 / 8;
        hopping::table(
            &links.fat,
            &links.long,
            &o.dslash_precisions,
            o.threads,
            elements,
        )?;
        if !o.tables.iter().any(|t| t == "cg" || t == "multishift") {
            return Ok(());
        }
    }
    let (fat, long) = (qdp(&links.fat)?, qdp(&links.long)?);
    let ctx = Context::new(InitParams {
        backend: o.backend,
        verbosity: Verbosity::Silent,
        ..Default::default()
    })?;
    let d = lat.dims();
    println!(
        "lattice {}x{}x{}x{}, backend {}, tol {:.0e}, u0 {u0:.4}, sloppy long links {:?}",
        d[0],
        d[1],
        d[2],
        d[3],
        ctx.backend_name(),
        o.tol,
        o.long_reconstruct_sloppy
    );
    let load = |sloppy: Precision| {
        ctx.load_staggered(
            &StaggeredParams {
                dims: d,
                order: GaugeOrder::Qdp,
                precision: Precision::Double,
                precision_sloppy: sloppy,
                precision_refinement: refine_format(sloppy, &o),
                long_reconstruct_refinement: o.long_reconstruct_sloppy,
                long_reconstruct_sloppy: if sloppy == Precision::Double {
                    LongReconstruct::Full18
                } else {
                    o.long_reconstruct_sloppy
                },
                ..Default::default()
            },
            &HostGauge::Qdp(quarters(&fat)),
            Some(&HostGauge::Qdp(quarters(&long))),
        )
    };
    let schemes = o.schemes.clone();
    let all_links: Vec<_> = schemes
        .iter()
        .map(|&p| {
            let t = std::time::Instant::now();
            let links = load(p);
            eprintln!(
                "staggered links loaded (double, sloppy {p:?}) in {:.3} s",
                t.elapsed().as_secs_f64()
            );
            links
        })
        .collect();
    // The same links given without their phases (`fold_phases` with
    // coefficient 1 is its own inverse) and folded back by the library as
    // it loads them: the load's cost with `PhaseFolding::Fold`.
    {
        let (mut fat_bare, mut long_bare) = (links.fat.clone(), links.long.clone());
        latsol::dirac::staggered::fold_phases_whole(&mut fat_bare, 1, TBoundary::AntiPeriodic, 1.0);
        latsol::dirac::staggered::fold_phases_whole(
            &mut long_bare,
            3,
            TBoundary::AntiPeriodic,
            1.0,
        );
        let (fat_bare, long_bare) = (qdp(&fat_bare)?, qdp(&long_bare)?);
        let t = std::time::Instant::now();
        ctx.load_staggered(
            &StaggeredParams {
                dims: d,
                order: GaugeOrder::Qdp,
                precision: Precision::Double,
                precision_sloppy: Precision::Half,
                phases: PhaseFolding::Fold {
                    t_boundary: TBoundary::AntiPeriodic,
                    long_coefficient: 1.0,
                },
                ..Default::default()
            },
            &HostGauge::Qdp(quarters(&fat_bare)),
            Some(&HostGauge::Qdp(quarters(&long_bare))),
        )?;
        eprintln!(
            "staggered links loaded with the phases folded in (double, sloppy Half) in {:.3} s",
            t.elapsed().as_secs_f64()
        );
    }
    let source: Vec<f64> = {
        let mut s = vec![0.0; lat.volume() * 6];
        s[0] = 1.0;
        s
    };
    // The fastest of `repeat` runs of a solve.
    let best =
        |f: &mut dyn FnMut() -> latsol::Result<InvertResult>| -> latsol::Result<InvertResult> {
            let mut out: Option<InvertResult> = None;
            for _ in 0..o.repeat.max(1) {
                let r = f()?;
                if out.as_ref().is_none_or(|b| r.seconds < b.seconds) {
                    out = Some(r);
                }
            }
            Ok(out.expect("at least one run"))
        };
    let name = |p: Precision| format!("double-{}", format!("{p:?}").to_lowercase());

    if o.tables.iter().any(|t| t == "cg") {
        // Restarts count the shadow-space restarts of BiCGstab(l) and a
        // sloppy recurrence handed over to the precise one.
        println!("\n| m | scheme | iterations | overhead | reliable updates | restarts | true residual | time (s) | speed-up |");
        println!("|---|---|---|---|---|---|---|---|---|");
        for &m in &o.masses {
            let mut base: Option<(usize, f64)> = None;
            for (links, &sloppy) in all_links.iter().zip(&schemes) {
                let links = match links {
                    Ok(l) => l,
                    Err(err) => {
                        println!("| {m} | {} | n/a: {err} | | | | | | |", name(sloppy));
                        continue;
                    }
                };
                let r = best(&mut || {
                    let mut x = vec![0.0; source.len()];
                    ctx.invert_staggered(
                        links,
                        &solve_params(m, sloppy, &o),
                        HostReals::F64(&source),
                        HostRealsMut::F64(&mut x),
                    )
                })?;
                let (bi, bt) = *base.get_or_insert((r.iterations, r.seconds));
                println!(
                    "| {m} | {} | {} | {:+.1}% | {} | {} | {:.2e} | {:.4} | {:.2}× |",
                    name(sloppy),
                    r.iterations,
                    100.0 * (r.iterations as f64 / bi as f64 - 1.0),
                    r.reliable_updates,
                    r.restarts,
                    r.true_residual,
                    r.seconds,
                    bt / r.seconds
                );
            }
        }
    }

    if o.tables.iter().any(|t| t == "multishift") {
        let n = o.shifts.max(1);
        let shifts: Vec<f64> = (0..n)
            .map(|i| {
                let f = if n == 1 {
                    0.0
                } else {
                    i as f64 / (n - 1) as f64
                };
                o.shift_min * (o.shift_max / o.shift_min).powf(f)
            })
            .collect();
        let m = o.masses[0];
        let b = &source[..lat.half_volume() * 6];
        println!(
            "\n{} shifts {:.1e} .. {:.1e}, m = {m}\n\n| scheme | iterations (multi-shift + refinement) | reliable updates | worst true residual | time (s) | speed-up |",
            n, o.shift_min, o.shift_max
        );
        println!("|---|---|---|---|---|---|");
        let mut base_t: Option<f64> = None;
        let mut per_shift = Vec::new();
        for (links, &sloppy) in all_links.iter().zip(&schemes) {
            let links = match links {
                Ok(l) => l,
                Err(err) => {
                    println!("| {} | n/a: {err} | | | | |", name(sloppy));
                    continue;
                }
            };
            // A pure solve has no refinement: one row.
            let choices = if sloppy == Precision::Double {
                &o.refinement[..1]
            } else {
                &o.refinement[..]
            };
            for &refinement in choices {
                let p = multishift_params(m, sloppy, refinement, &o);
                let label = match (sloppy, refine_format(sloppy, &o)) {
                    (Precision::Double, _) => name(sloppy).to_string(),
                    (_, None) => format!("{} ({refinement:?})", name(sloppy)),
                    (_, Some(r)) => format!(
                        "{} ({refinement:?}, refined in {})",
                        name(sloppy),
                        format!("{r:?}").to_lowercase()
                    ),
                };
                let mut best_r: Option<latsol::api::MultiResult> = None;
                for _ in 0..o.repeat.max(1) {
                    let mut xs = vec![vec![0.0; b.len()]; n];
                    let r = ctx.invert_multishift_staggered(
                        links,
                        &p,
                        &shifts,
                        None,
                        HostReals::F64(b),
                        xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect(),
                    )?;
                    if best_r.as_ref().is_none_or(|b| r.seconds < b.seconds) {
                        best_r = Some(r);
                    }
                }
                let r = best_r.expect("at least one run");
                if o.per_shift {
                    let phase = phase_residuals(&ctx, links, &p, &shifts, b)?;
                    per_shift.push((label.clone(), phase, r.clone()));
                }
                let worst = r.shifts.iter().map(|s| s.true_residual).fold(0.0, f64::max);
                let bt = *base_t.get_or_insert(r.seconds);
                println!(
                    "| {label} | {} ({} + {}) | {} | {:.2e} | {:.4} ({:.4} phase) | {:.2}× |",
                    r.iterations,
                    r.multishift_iterations,
                    r.iterations - r.multishift_iterations,
                    r.reliable_updates,
                    worst,
                    r.seconds,
                    r.multishift_seconds,
                    bt / r.seconds
                );
            }
        }
        for (scheme, phase, r) in &per_shift {
            println!(
                "\n{scheme}: {} multi-shift iterations\n\n| shift σ | multi-shift iterations | true residual after the phase | refinement iterations | final true residual |\n|---|---|---|---|---|",
                r.multishift_iterations
            );
            for (k, (s, p)) in r.shifts.iter().zip(phase).enumerate() {
                println!(
                    "| {:.3e} | {} | {:.2e} | {} | {:.2e} |",
                    shifts[k], s.multishift_iterations, p, s.iterations, s.true_residual
                );
            }
        }
    }
    Ok(())
}

/// Each shift's true residual after the multi-shift phase of the scheme of
/// `p`, from one more (untimed) solve that measures it.
fn phase_residuals(
    ctx: &Context,
    links: &StaggeredLinks,
    p: &StaggeredInvertParams,
    shifts: &[f64],
    b: &[f64],
) -> latsol::Result<Vec<f64>> {
    let mut xs = vec![vec![0.0; b.len()]; shifts.len()];
    let p = StaggeredInvertParams {
        measure_multishift_phase: true,
        ..*p
    };
    let r = ctx.invert_multishift_staggered(
        links,
        &p,
        shifts,
        None,
        HostReals::F64(b),
        xs.iter_mut().map(|x| HostRealsMut::F64(x)).collect(),
    )?;
    Ok(r.shifts
        .iter()
        .map(|s| s.residual_after_multishift)
        .collect())
}
