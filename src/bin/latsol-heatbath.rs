//! Generates quenched SU(3) gauge configurations with the Wilson action:
//! Cabibbo–Marinari heatbath plus overrelaxation (`latsol::gauge_gen`),
//! printing the plaquette as it goes and saving configurations in the MILC
//! order with a JSON sidecar (`gauge_gen::io`).
//!
//! ```text
//! latsol-heatbath --dims X,Y,Z,T --beta B [--therm N] [--sweeps-between M] [--configs K]
//!                 [--seed S] [--out DIR] [--overrelax N] [--start hot|cold] [--resume FILE]
//!                 [--every N] [--threads N] [--history FILE]
//! ```
//!
//! A run does `N` thermalisation sweeps, then `K·M` more, saving the field
//! every `M` sweeps (when `--out` is given) and measuring the plaquette after
//! every sweep past thermalisation; it ends with the mean plaquette and its
//! binned jackknife error. `--resume FILE` continues the run that wrote
//! `FILE` (same seed and sweep count, hence the same chain). `--history`
//! writes the plaquette after every sweep, thermalisation included.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use latsol::gauge_gen::{io, stats, Generator, Start, DEFAULT_OVERRELAX};
use latsol::lattice::{parse_dims, Lattice};

struct Options {
    dims: [usize; 4],
    beta: Option<f64>,
    therm: u64,
    between: u64,
    configs: u64,
    seed: u64,
    out: Option<PathBuf>,
    overrelax: usize,
    start: Start,
    resume: Option<PathBuf>,
    every: u64,
    threads: Option<usize>,
    history: Option<PathBuf>,
}

const USAGE: &str = "usage: latsol-heatbath --dims X,Y,Z,T --beta B [--therm N] \
[--sweeps-between M] [--configs K] [--seed S] [--out DIR] [--overrelax N] \
[--start hot|cold] [--resume FILE] [--every N] [--threads N] [--history FILE]";

fn parse() -> Result<Options, String> {
    let mut o = Options {
        dims: [8, 8, 8, 8],
        beta: None,
        therm: 200,
        between: 10,
        configs: 10,
        seed: 1,
        out: None,
        overrelax: DEFAULT_OVERRELAX,
        start: Start::Hot,
        resume: None,
        every: 10,
        threads: None,
        history: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(key) = it.next() {
        if key == "--help" || key == "-h" {
            return Err(String::new());
        }
        let val = it.next().ok_or(format!("{key} needs a value"))?;
        let bad = || format!("{key}: cannot use '{val}'");
        let named = |e: String| format!("{key}: {e}");
        match key.as_str() {
            "--dims" => o.dims = parse_dims(val).map_err(named)?,
            "--beta" => o.beta = Some(val.parse().map_err(|_| bad())?),
            "--therm" => o.therm = val.parse().map_err(|_| bad())?,
            "--sweeps-between" => o.between = val.parse().map_err(|_| bad())?,
            "--configs" => o.configs = val.parse().map_err(|_| bad())?,
            "--seed" => o.seed = val.parse().map_err(|_| bad())?,
            "--out" => o.out = Some(val.into()),
            "--overrelax" => o.overrelax = val.parse().map_err(|_| bad())?,
            "--start" => {
                o.start = match val.as_str() {
                    "hot" => Start::Hot,
                    "cold" => Start::Cold,
                    _ => return Err(bad()),
                }
            }
            "--resume" => o.resume = Some(val.into()),
            "--every" => o.every = val.parse::<u64>().map_err(|_| bad())?.max(1),
            "--threads" => o.threads = Some(val.parse().map_err(|_| bad())?),
            "--history" => o.history = Some(val.into()),
            _ => return Err(format!("unknown option {key}")),
        }
    }
    if o.between == 0 {
        return Err("--sweeps-between must be at least 1".into());
    }
    Ok(o)
}

fn config_path(dir: &Path, g: &Generator) -> PathBuf {
    let d = g.field().lattice().dims();
    dir.join(format!(
        "su3_{}x{}x{}x{}_b{:.4}_s{}_n{:06}.milc",
        d[0],
        d[1],
        d[2],
        d[3],
        g.beta(),
        g.seed(),
        g.sweeps()
    ))
}

fn save(dir: &Path, g: &Generator) -> Result<PathBuf, String> {
    let path = config_path(dir, g);
    let info = io::ConfigInfo {
        dims: g.field().lattice().dims(),
        beta: g.beta(),
        sweeps: g.sweeps(),
        seed: g.seed(),
        overrelax: g.overrelax(),
        plaquette: [0.0; 3], // recomputed by save
    };
    io::save(g.field(), &info, &path).map_err(|e| e.to_string())?;
    Ok(path)
}

fn run(o: Options) -> Result<(), String> {
    if let Some(n) = o.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| e.to_string())?;
    }
    let mut g = match &o.resume {
        Some(path) => {
            let (field, info) = io::load(path).map_err(|e| e.to_string())?;
            let beta = o.beta.unwrap_or(info.beta);
            Generator::resume(field, beta, info.seed, info.sweeps)
                .map_err(|e| e.to_string())?
                .with_overrelax(o.overrelax)
        }
        None => {
            let beta = o.beta.ok_or("--beta is required (or --resume FILE)")?;
            let lat = Arc::new(Lattice::new(o.dims).map_err(|e| e.to_string())?);
            Generator::new(lat, beta, o.seed, o.start)
                .map_err(|e| e.to_string())?
                .with_overrelax(o.overrelax)
        }
    };
    if let Some(dir) = &o.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut history = match &o.history {
        Some(p) => Some(std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display()))?),
        None => None,
    };

    let d = g.field().lattice().dims();
    println!(
        "latsol-heatbath: {}x{}x{}x{} beta {} seed {} | 1 heatbath + {} overrelaxation per sweep \
         | {} threads | from sweep {}",
        d[0],
        d[1],
        d[2],
        d[3],
        g.beta(),
        g.seed(),
        g.overrelax(),
        rayon::current_num_threads(),
        g.sweeps()
    );
    println!("plaquette after sweep 0: {:.6}", g.plaquette()[0]);
    println!(
        "{:>7} {:>10} {:>10} {:>10} {:>9}",
        "sweep", "plaq", "spatial", "temporal", "s/sweep"
    );

    let total = o.therm + o.configs * o.between;
    let mut measured = Vec::new();
    let start = Instant::now();
    let mut last = (Instant::now(), 0u64);
    for n in 1..=total {
        g.sweep();
        let p = g.plaquette();
        if let Some(h) = history.as_mut() {
            writeln!(h, "{} {:.15} {:.15} {:.15}", g.sweeps(), p[0], p[1], p[2])
                .map_err(|e| e.to_string())?;
        }
        if n > o.therm {
            measured.push(p[0]);
        }
        if n.is_multiple_of(o.every) || n == total {
            let per = last.0.elapsed().as_secs_f64() / (n - last.1) as f64;
            last = (Instant::now(), n);
            println!(
                "{:>7} {:>10.6} {:>10.6} {:>10.6} {:>9.4}",
                g.sweeps(),
                p[0],
                p[1],
                p[2],
                per
            );
        }
        if n > o.therm && (n - o.therm).is_multiple_of(o.between) {
            if let Some(dir) = &o.out {
                let path = save(dir, &g)?;
                println!("saved {}", path.display());
            }
        }
        if n == o.therm {
            println!("-- thermalised after {} sweeps", o.therm);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{total} sweeps in {secs:.2} s: {:.4} s/sweep ({:.3} us per link update)",
        secs / total.max(1) as f64,
        1e6 * secs
            / (total.max(1) as f64
                * (1 + g.overrelax()) as f64
                * 4.0
                * g.field().lattice().volume() as f64)
    );
    if measured.len() >= 2 {
        let (mean, err, bin) = stats::binned_error(&measured);
        println!(
            "<P> = {mean:.6} +- {err:.6} over {} sweeps (binned jackknife, bin {bin}; tau_int ~ {:.2} sweeps)",
            measured.len(),
            stats::tau_int(&measured)
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    match parse().and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            if !m.is_empty() {
                eprintln!("latsol-heatbath: {m}");
            }
            eprintln!("{USAGE}");
            if m.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
