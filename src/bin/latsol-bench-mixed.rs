//! latsol-bench-mixed: the evidence tables of docs/numerics.md (issue 4).
//!
//! ```text
//! latsol-bench-mixed [--field PATH] [--hot-dims X,Y,Z,T] [--backend cpu|cuda]
//!                    [--threads N] [--tables deviation,iterations,corrected]
//!                    [--kappas K1,K2,..] [--tol T] [--reconstruct-sloppy 18|12|8]
//!                    [--maxiter N] [--quick] [--csw C] [--tables ...,pion]
//! ```
//! - deviation: quantiles of the per-component deviation of each format's
//!   hopping term from the double CPU one (`latsol::deviation`), on a hot
//!   (random) field and on the thermalised field of `--field`;
//! - iterations: seed clark2010 Tables 3–5 on the thermalised field: pure
//!   double, reliable updates at δ = 0.1, 0.01, 0.001 and defect correction
//!   at several ε_in from every sloppy format, BiCGstab and CG, at each κ;
//!   then reliable-update CG with and without the stabilisations of seed
//!   clark2022 §3.1. Entries are iterations and the overhead against pure
//!   double; `--quick` runs a subset (for a smoke test);
//! - corrected: CG defect correction, plain (clark2010 Algorithm 1) and
//!   corrected (cps seed §3.2), against pure double CG;
//! - pion: the pion effective mass at each κ from the 12 point-source
//!   solves (`C(t) = Σ_x |S(x, 0)|²`), to compare operators at one pion mass.
//!
//! `--csw C` runs every table but the deviation one on the Wilson-clover
//! operator, the clover term computed from the field with c_SW = C.
//!
//! Tables are printed as Markdown on stdout, progress on stderr.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use latsol::api::*;
use latsol::backend::cpu::CpuBackend;
use latsol::deviation::{Reference, QUANTILES};
use latsol::field::GaugeField;
use latsol::lattice::{parse_dims, Lattice};
use latsol::layout::{self, GaugeOrder, HostGauge, HostReals, HostRealsMut};
use latsol::precision::{Precision, Reconstruct, TBoundary};
use latsol::random;

const SLOPPY: [Precision; 5] = [
    Precision::Single,
    Precision::Half,
    Precision::Quarter,
    Precision::Packed20,
    Precision::Packed30,
];

struct Options {
    field: Option<PathBuf>,
    hot_dims: [usize; 4],
    backend: BackendChoice,
    threads: usize,
    deviation: bool,
    iterations: bool,
    corrected: bool,
    kappas: Vec<f64>,
    tol: f64,
    maxiter: usize,
    reconstruct_sloppy: Reconstruct,
    quick: bool,
    csw: Option<f64>,
    pion: bool,
}

fn usage() -> ! {
    eprintln!(
        "usage: latsol-bench-mixed [--field PATH] [--hot-dims X,Y,Z,T] [--backend cpu|cuda] \
         [--threads N] [--tables deviation,iterations,corrected] [--kappas K1,K2,..] [--tol T] \
         [--reconstruct-sloppy 18|12|8] [--maxiter N] [--quick] [--csw C] (tables: ...,pion)"
    );
    std::process::exit(2)
}

fn list<T: std::str::FromStr>(v: &str) -> Option<Vec<T>> {
    v.split(',').map(|s| s.trim().parse().ok()).collect()
}

fn parse() -> Options {
    let mut o = Options {
        field: None,
        hot_dims: [8, 8, 8, 8],
        backend: BackendChoice::Cpu,
        threads: 0,
        deviation: true,
        iterations: true,
        corrected: true,
        kappas: vec![0.150, 0.160, 0.165, 0.170],
        tol: 1e-12,
        maxiter: 6_000,
        reconstruct_sloppy: Reconstruct::Full18,
        quick: false,
        csw: None,
        pion: false,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(key) = it.next() {
        if key == "--quick" {
            o.quick = true;
            continue;
        }
        let Some(val) = it.next() else { usage() };
        let ok = match key.as_str() {
            "--field" => {
                o.field = Some(PathBuf::from(val));
                true
            }
            "--hot-dims" => parse_dims(val).map(|d| o.hot_dims = d).is_ok(),
            "--backend" => val.parse().map(|b| o.backend = b).is_ok(),
            "--threads" => val.parse().map(|t| o.threads = t).is_ok(),
            "--tables" => {
                o.deviation = val.contains("deviation");
                o.iterations = val.contains("iterations");
                o.corrected = val.contains("corrected");
                o.pion = val.contains("pion");
                true
            }
            "--kappas" => list(val).map(|k| o.kappas = k).is_some(),
            "--tol" => val.parse().map(|t| o.tol = t).is_ok(),
            "--maxiter" => val.parse().map(|t| o.maxiter = t).is_ok(),
            "--csw" => val.parse().map(|c| o.csw = Some(c)).is_ok(),
            "--reconstruct-sloppy" => val.parse().map(|r| o.reconstruct_sloppy = r).is_ok(),
            _ => false,
        };
        if !ok {
            usage()
        }
    }
    o
}

fn main() {
    let o = parse();
    let thermalised = match &o.field {
        Some(path) => match latsol::gauge_io::read(path) {
            Ok((f, info)) => {
                eprintln!(
                    "field {}: {:?} {:?}, plaquette {:.6}; {}",
                    path.display(),
                    info.format,
                    info.dims,
                    info.plaquette,
                    info.checks.join(", ")
                );
                Some(f)
            }
            Err(e) => {
                eprintln!("cannot read {}: {e}", path.display());
                std::process::exit(1)
            }
        },
        None => None,
    };
    if let Err(e) = run(&o, thermalised.as_ref()) {
        eprintln!("latsol-bench-mixed: {e}");
        std::process::exit(1)
    }
}

fn run(o: &Options, thermalised: Option<&GaugeField>) -> latsol::Result<()> {
    if o.deviation {
        let hot_lat = Arc::new(Lattice::new(o.hot_dims)?);
        let hot = random::hot_gauge(&hot_lat, 7);
        deviation_table(o, "hot (random SU(3)) field", &hot)?;
        if let Some(f) = thermalised {
            deviation_table(o, "thermalised field", f)?;
        }
    }
    if o.iterations {
        let Some(f) = thermalised else {
            eprintln!("the iteration table needs --field (a thermalised configuration)");
            std::process::exit(2)
        };
        iteration_tables(o, f)?;
    }
    if o.corrected {
        let Some(f) = thermalised else {
            eprintln!("the defect-correction table needs --field (a thermalised configuration)");
            std::process::exit(2)
        };
        corrected_table(o, f)?;
    }
    if o.pion {
        let Some(f) = thermalised else {
            eprintln!("the pion table needs --field (a thermalised configuration)");
            std::process::exit(2)
        };
        pion_table(o, f)?;
    }
    Ok(())
}

fn short(p: Precision) -> &'static str {
    match p {
        Precision::Double => "double",
        Precision::Single => "single",
        Precision::Half => "half",
        Precision::Quarter => "quarter",
        Precision::Packed20 => "20-bit",
        Precision::Packed30 => "30-bit",
    }
}

fn rec(r: Reconstruct) -> &'static str {
    match r {
        Reconstruct::Full18 => "18",
        Reconstruct::Twelve => "12",
        Reconstruct::Eight => "8",
    }
}

// ---- deviation ------------------------------------------------------------

fn deviation_table(o: &Options, what: &str, field: &GaugeField) -> latsol::Result<()> {
    let reference = Reference::new(field, 11)?;
    println!(
        "\n### Dslash deviation from double, {what} {:?}\n",
        field.lattice().dims()
    );
    let q: Vec<String> = QUANTILES
        .iter()
        .map(|q| {
            if *q == 1.0 {
                "max".into()
            } else {
                format!("{}%", q * 100.0)
            }
        })
        .collect();
    println!("| format | links | ε | {} | max/ε |", q.join(" | "));
    println!("|---|---|---|{}---|", "---|".repeat(q.len()));
    let formats = [Precision::Double]
        .into_iter()
        .chain(SLOPPY)
        .flat_map(|p| {
            [Reconstruct::Full18, Reconstruct::Twelve, Reconstruct::Eight].map(move |r| (p, r))
        })
        .filter(|&(p, r)| !(p == Precision::Double && r == Reconstruct::Full18));
    for (p, r) in formats {
        let d = match o.backend {
            BackendChoice::Cuda => measure_cuda(&reference, field, p, r),
            _ => reference.measure(&CpuBackend::new(o.threads)?, field, p, r),
        };
        match d {
            Ok(d) => println!(
                "| {} | {} | {:.1e} | {} | {:.2} |",
                short(p),
                rec(r),
                d.epsilon,
                d.quantiles
                    .iter()
                    .map(|v| format!("{v:.2e}"))
                    .collect::<Vec<_>>()
                    .join(" | "),
                d.quantiles[3] / d.epsilon
            ),
            Err(e) => println!("| {} | {} | | {e} |", short(p), rec(r)),
        }
    }
    Ok(())
}

#[cfg(feature = "cuda")]
fn measure_cuda(
    reference: &Reference,
    field: &GaugeField,
    p: Precision,
    r: Reconstruct,
) -> latsol::Result<latsol::deviation::Deviation> {
    let gpu = latsol::backend::cuda::CudaBackend::new(0)?;
    reference.measure(&gpu, field, p, r)
}

#[cfg(not(feature = "cuda"))]
fn measure_cuda(
    _: &Reference,
    _: &GaugeField,
    _: Precision,
    _: Reconstruct,
) -> latsol::Result<latsol::deviation::Deviation> {
    Err(latsol::Error::Unsupported(
        "built without the cuda feature".into(),
    ))
}

// ---- iterations -------------------------------------------------------------

/// One row of the iteration table.
#[derive(Clone)]
struct Row {
    label: String,
    sloppy: Precision,
    mixed: MixedScheme,
    delta: f64,
    tol_inner: f64,
    stabilised: bool,
}

fn rows(o: &Options) -> Vec<Row> {
    let mut rows = vec![Row {
        label: "double".into(),
        sloppy: Precision::Double,
        mixed: MixedScheme::ReliableUpdates,
        delta: 0.1,
        tol_inner: 0.1,
        stabilised: true,
    }];
    let deltas: &[f64] = if o.quick { &[0.1] } else { &[0.1, 0.01, 0.001] };
    for &p in &SLOPPY {
        for &d in deltas {
            rows.push(Row {
                label: format!("double-{} reliable δ={d}", short(p)),
                sloppy: p,
                mixed: MixedScheme::ReliableUpdates,
                delta: d,
                tol_inner: 0.1,
                stabilised: true,
            });
        }
    }
    for &p in &SLOPPY {
        // ε_in from 0.1 down to the tightest the format can meet (a decade
        // above its epsilon).
        let inner: &[f64] = if o.quick { &[0.1] } else { &[0.1, 1e-2, 1e-3] };
        for &e in inner.iter().filter(|&&e| e >= 10.0 * p.epsilon()) {
            rows.push(Row {
                label: format!("double-{} defect corr. ε_in={e}", short(p)),
                sloppy: p,
                mixed: MixedScheme::DefectCorrection,
                delta: 0.1,
                tol_inner: e,
                stabilised: true,
            });
        }
    }
    rows
}

/// The CG rows with and without the stabilisations.
fn cg_rows(o: &Options) -> Vec<Row> {
    let mut rows = vec![];
    let formats: &[Precision] = if o.quick {
        &[Precision::Half]
    } else {
        &[Precision::Single, Precision::Half, Precision::Quarter]
    };
    for &p in formats {
        for d in [0.1, 0.01] {
            for stabilised in [false, true] {
                rows.push(Row {
                    label: format!(
                        "double-{} δ={d} {}",
                        short(p),
                        if stabilised { "stabilised" } else { "plain" }
                    ),
                    sloppy: p,
                    mixed: MixedScheme::ReliableUpdates,
                    delta: d,
                    tol_inner: 0.1,
                    stabilised,
                });
            }
        }
    }
    rows
}

struct Bench<'a> {
    ctx: Context,
    field: &'a GaugeField,
    milc: Vec<f64>,
    source: Vec<f64>,
    gauges: std::collections::HashMap<Precision, Gauge>,
    /// Clover fields by sloppy precision and κ (the term is κ c_SW F).
    clovers: std::collections::HashMap<(Precision, u64), Clover>,
    o: &'a Options,
}

impl Bench<'_> {
    fn gauge(&mut self, sloppy: Precision) -> latsol::Result<&Gauge> {
        if !self.gauges.contains_key(&sloppy) {
            let gp = GaugeParams {
                dims: self.field.lattice().dims(),
                order: GaugeOrder::Milc,
                t_boundary: TBoundary::AntiPeriodic,
                precision: Precision::Double,
                precision_sloppy: sloppy,
                reconstruct_sloppy: if sloppy == Precision::Double {
                    Reconstruct::Full18
                } else {
                    self.o.reconstruct_sloppy
                },
                ..Default::default()
            };
            let g = self
                .ctx
                .load_gauge(&gp, &HostGauge::Milc(HostReals::F64(&self.milc)))?;
            self.gauges.insert(sloppy, g);
        }
        Ok(&self.gauges[&sloppy])
    }

    /// The clover field for `sloppy` and `kappa` (with `--csw`), made once.
    fn clover(&mut self, sloppy: Precision, kappa: f64) -> latsol::Result<Option<&Clover>> {
        let Some(c_sw) = self.o.csw else {
            return Ok(None);
        };
        let key = (sloppy, kappa.to_bits());
        if !self.clovers.contains_key(&key) {
            self.gauge(sloppy)?;
            let c = self.ctx.load_clover(
                &self.gauges[&sloppy],
                &CloverParams {
                    precision: Precision::Double,
                    precision_sloppy: sloppy,
                },
                CloverSource::Computed {
                    c_sw,
                    kappa,
                    links: HostGauge::Milc(HostReals::F64(&self.milc)),
                },
            )?;
            self.clovers.insert(key, c);
        }
        Ok(self.clovers.get(&key))
    }

    /// Solves `M x = b` for `source` with the operator of `--csw` at `kappa`.
    fn invert(
        &mut self,
        p: &InvertParams,
        source: &[f64],
        x: &mut [f64],
    ) -> latsol::Result<InvertResult> {
        self.gauge(p.precision_sloppy)?;
        self.clover(p.precision_sloppy, p.kappa)?;
        let g = &self.gauges[&p.precision_sloppy];
        let key = (p.precision_sloppy, p.kappa.to_bits());
        let (fields, dslash) = match self.clovers.get(&key) {
            Some(c) => (OperatorFields::from((g, c)), DslashType::CloverWilson),
            None => (OperatorFields::from(g), DslashType::Wilson),
        };
        let p = InvertParams { dslash, ..*p };
        self.ctx
            .invert(fields, &p, HostReals::F64(source), HostRealsMut::F64(x))
    }

    fn solve(&mut self, row: &Row, solver: SolverType, kappa: f64) -> String {
        let p = InvertParams {
            kappa,
            solver,
            tol: self.o.tol,
            maxiter: self.o.maxiter,
            precision_sloppy: row.sloppy,
            mixed: row.mixed,
            reliable_delta: row.delta,
            tol_inner: row.tol_inner,
            cg_stabilised: row.stabilised,
            ..Default::default()
        };
        let mut x = vec![0.0; self.source.len()];
        let t = Instant::now();
        let source = std::mem::take(&mut self.source);
        let r = self.invert(&p, &source, &mut x);
        self.source = source;
        let secs = t.elapsed().as_secs_f64();
        match r {
            Ok(r) => {
                eprintln!(
                    "{solver:?} κ={kappa} {}: {} it, {} updates, {} restarts, res {:.1e}, {secs:.1} s",
                    row.label, r.iterations, r.reliable_updates, r.restarts, r.true_residual
                );
                if r.converged {
                    format!("{}", r.iterations)
                } else {
                    format!("stalls ({}; res {:.0e})", r.iterations, r.true_residual)
                }
            }
            Err(e) => {
                eprintln!("{solver:?} κ={kappa} {}: {e}", row.label);
                format!("fails: {e}")
            }
        }
    }
}

fn bench<'a>(o: &'a Options, field: &'a GaugeField) -> latsol::Result<Bench<'a>> {
    let lat = field.lattice();
    let mut milc = vec![0.0f64; lat.volume() * 72];
    layout::gauge::export(field, GaugeOrder::Milc, &mut [HostRealsMut::F64(&mut milc)])?;
    let mut rng = random::rng(2026);
    let source = (0..lat.volume() * 24)
        .map(|_| random::gaussian(&mut rng).re)
        .collect();
    let ctx = Context::new(InitParams {
        backend: o.backend,
        num_threads: o.threads,
        verbosity: Verbosity::Silent,
        ..Default::default()
    })?;
    Ok(Bench {
        ctx,
        field,
        milc,
        source,
        gauges: Default::default(),
        clovers: Default::default(),
        o,
    })
}

/// The operator of the tables, for their titles.
fn operator(o: &Options) -> String {
    match o.csw {
        Some(c) => format!("Wilson-clover c_SW = {c}"),
        None => "Wilson".into(),
    }
}

fn header(o: &Options, lat: &Lattice, title: &str) {
    println!(
        "\n### {title}, {}, {:?}, ε = {:e}, sloppy links {}\n",
        operator(o),
        lat.dims(),
        o.tol,
        rec(o.reconstruct_sloppy)
    );
    println!(
        "| scheme | {} |",
        o.kappas
            .iter()
            .map(|k| format!("κ = {k}"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|{}", "---|".repeat(o.kappas.len()));
}

/// Runs `rows` with CG (or BiCGstab) at every κ; the first row is the
/// reference the overheads are against.
fn table(bench: &mut Bench, rows: &[Row], solver: SolverType) {
    let o = bench.o;
    let mut reference = vec![0usize; o.kappas.len()];
    for (j, row) in rows.iter().enumerate() {
        let mut cells = vec![];
        for (i, &k) in o.kappas.iter().enumerate() {
            let c = bench.solve(row, solver, k);
            let cell = match c.parse::<usize>() {
                Ok(n) if j == 0 => {
                    reference[i] = n;
                    c
                }
                Ok(n) if reference[i] > 0 => {
                    format!(
                        "{n} ({:+.0}%)",
                        100.0 * (n as f64 / reference[i] as f64 - 1.0)
                    )
                }
                _ => c,
            };
            cells.push(cell);
        }
        println!("| {} | {} |", row.label, cells.join(" | "));
    }
}

fn corrected_table(o: &Options, field: &GaugeField) -> latsol::Result<()> {
    let mut bench = bench(o, field)?;
    header(
        o,
        field.lattice(),
        "CG defect correction, plain vs corrected (direction carried), iterations (overhead vs double)",
    );
    let mut rows = vec![Row {
        label: "double".into(),
        sloppy: Precision::Double,
        mixed: MixedScheme::ReliableUpdates,
        delta: 0.1,
        tol_inner: 0.1,
        stabilised: true,
    }];
    for p in [Precision::Single, Precision::Half, Precision::Packed20] {
        for e in [0.1, 0.01] {
            for (mixed, name) in [
                (MixedScheme::DefectCorrection, "plain"),
                (MixedScheme::DefectCorrectionCorrected, "corrected"),
            ] {
                rows.push(Row {
                    label: format!("double-{} ε_in={e} {name}", short(p)),
                    sloppy: p,
                    mixed,
                    delta: 0.1,
                    tol_inner: e,
                    stabilised: true,
                });
            }
        }
    }
    table(&mut bench, &rows, SolverType::Cg);
    Ok(())
}

fn iteration_tables(o: &Options, field: &GaugeField) -> latsol::Result<()> {
    let lat = field.lattice();
    let mut bench = bench(o, field)?;
    for solver in [SolverType::BiCgStab, SolverType::Cg] {
        let what = match solver {
            SolverType::BiCgStab => "BiCGstab on M̂ (even-odd)",
            SolverType::Cg => "CG on M̂†M̂ (even-odd)",
            SolverType::Gcr => "GCR on M̂ (even-odd)",
            SolverType::BiCgStabL => "BiCGstab(l) on M̂ (even-odd)",
        };
        header(o, lat, &format!("Iterations (overhead vs double), {what}"));
        table(&mut bench, &rows(o), solver);
    }
    header(
        o,
        lat,
        "Reliable-update CG with and without the clark2022 §3.1 stabilisations",
    );
    for row in cg_rows(o) {
        let cells: Vec<String> = o
            .kappas
            .iter()
            .map(|&k| bench.solve(&row, SolverType::Cg, k))
            .collect();
        println!("| {} | {} |", row.label, cells.join(" | "));
    }
    Ok(())
}

// ---- pion -------------------------------------------------------------------

/// The pion correlator `C(t) = Σ_x Σ_{a,b} |S(x, 0)_{ab}|²` from the 12
/// point-source solves at the origin (spin-colour b), double precision; the
/// effective mass of `C(t) ∝ cosh(m (t − T/2))` from t = 1 to T/2 − 1 and its value
/// averaged over the last two of those as the table's estimate.
fn pion_table(o: &Options, field: &GaugeField) -> latsol::Result<()> {
    let lat = field.lattice().clone();
    let dims = lat.dims();
    let mut bench = bench(o, field)?;
    println!(
        "\n### Pion effective mass, {}, {:?}, point source at the origin\n",
        operator(o),
        dims
    );
    let t_half = dims[3] / 2;
    println!(
        "| κ | {} | m_π (t = {}, {}) |",
        (1..t_half)
            .map(|t| format!("m_eff({t})"))
            .collect::<Vec<_>>()
            .join(" | "),
        t_half - 2,
        t_half - 1
    );
    println!("|---|{}---|", "---|".repeat(t_half - 1));
    let n = lat.volume() * 24;
    for &kappa in &o.kappas {
        let mut corr = vec![0.0f64; dims[3]];
        for b in 0..12 {
            let mut source = vec![0.0; n];
            // DIRAC order: site 0 (the origin, even), spin-colour b.
            source[2 * b] = 1.0;
            let mut x = vec![0.0; n];
            let p = InvertParams {
                kappa,
                tol: o.tol,
                maxiter: o.maxiter,
                ..Default::default()
            };
            let r = bench.invert(&p, &source, &mut x)?;
            eprintln!("pion κ={kappa} source {b}: {} it", r.iterations);
            for p in [latsol::lattice::Parity::Even, latsol::lattice::Parity::Odd] {
                for cb in 0..lat.half_volume() {
                    let t = lat.coords(p, cb)[3];
                    let i = p.index() * lat.half_volume() + cb;
                    corr[t] += x[24 * i..24 * (i + 1)].iter().map(|v| v * v).sum::<f64>();
                }
            }
        }
        let m: Vec<f64> = (1..t_half)
            .map(|t| cosh_mass(corr[t] / corr[t + 1], t, dims[3]))
            .collect();
        let est = (m[m.len() - 1] + m[m.len().saturating_sub(2)]) / 2.0;
        println!(
            "| {kappa} | {} | {est:.3} |",
            m.iter()
                .map(|v| format!("{v:.3}"))
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
    Ok(())
}

/// The m with `cosh(m (t − T/2)) / cosh(m (t + 1 − T/2)) = ratio` (for
/// t + 1 ≤ T/2 the left side grows with m), by bisection.
fn cosh_mass(ratio: f64, t: usize, extent: usize) -> f64 {
    let (a, b) = (
        t as f64 - extent as f64 / 2.0,
        t as f64 + 1.0 - extent as f64 / 2.0,
    );
    let f = |m: f64| (m * a).cosh() / (m * b).cosh() - ratio;
    let (mut lo, mut hi) = (1e-6, 10.0);
    if !ratio.is_finite() || f(lo) > 0.0 || f(hi) < 0.0 {
        return f64::NAN;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}
