//! Generates quenched SU(3) gauge configurations with the Wilson action:
//! Cabibbo–Marinari heatbath plus overrelaxation (`latsol::gauge_gen`),
//! printing the plaquette as it goes and saving configurations as NERSC
//! (default) or ILDG files (`latsol::gauge_io`), named by what they hold:
//! `su3_wilson_b6.0000_16x16x16x32_seed1.001200.nersc` (action, β, lattice,
//! seed, sweeps).
//!
//! A run does `--therm` thermalisation sweeps, then `--configs × --sweeps-between`
//! more, saving the field every `--sweeps-between` sweeps (when `--out` is
//! given) and measuring the plaquette after every sweep past thermalisation;
//! it ends with the mean plaquette and its binned jackknife error.
//! `--resume FILE` continues the run that wrote `FILE` (a NERSC or ILDG file
//! of this program, or its older MILC-order files with a JSON sidecar: same
//! seed and sweep count, hence the same chain). `--history` writes the
//! plaquette after every sweep, thermalisation included. On a terminal a
//! progress bar shows the sweeps; redirected output is plain lines.

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use latsol::gauge_gen::{stats, Generator, Start, DEFAULT_OVERRELAX};
use latsol::gauge_io::{self, Ensemble, FilePrecision, Format, WriteOptions};
use latsol::lattice::{parse_dims, Lattice};

/// Generate quenched SU(3) gauge fields (Wilson action, heatbath and
/// overrelaxation) and save them as NERSC or ILDG files.
#[derive(Parser, Debug)]
#[command(name = "latsol-heatbath", version)]
struct Options {
    /// Lattice extents X,Y,Z,T.
    #[arg(long, value_parser = parse_dims, default_value = "8,8,8,8")]
    dims: [usize; 4],
    /// Inverse coupling β (required unless --resume gives it).
    #[arg(long)]
    beta: Option<f64>,
    /// Thermalisation sweeps before the first measurement.
    #[arg(long, default_value_t = 200)]
    therm: u64,
    /// Sweeps between saved configurations (at least 1).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    sweeps_between: u64,
    /// Configurations to generate after thermalisation.
    #[arg(long, default_value_t = 10)]
    configs: u64,
    /// Seed of the chain's random streams.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Folder to save configurations in (none: nothing saved).
    #[arg(long)]
    out: Option<PathBuf>,
    /// File format of the saved configurations.
    #[arg(long, value_enum, default_value = "nersc")]
    format: FileFormat,
    /// Precision of the saved links.
    #[arg(long, value_enum, default_value = "double")]
    file_precision: Precision,
    /// Overrelaxation sweeps per heatbath sweep.
    #[arg(long, default_value_t = DEFAULT_OVERRELAX)]
    overrelax: usize,
    /// Ordered (cold: unit links) or disordered (hot) start.
    #[arg(long, value_enum, default_value = "hot")]
    start: StartChoice,
    /// Continue the chain that wrote this configuration.
    #[arg(long)]
    resume: Option<PathBuf>,
    /// Print the plaquette every this many sweeps.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    every: u64,
    /// Threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Write the plaquette after every sweep to this file.
    #[arg(long)]
    history: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FileFormat {
    /// NERSC archive: text header with checksum, plaquette and link trace.
    Nersc,
    /// ILDG: SciDAC LIME records with the SciDAC CRC-32 checksums.
    Ildg,
    /// MILC's binary format (version 5: single precision, the sum29/sum31
    /// checksums; it records no chain, so --resume cannot continue it).
    Milc,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Precision {
    Single,
    Double,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum StartChoice {
    Hot,
    Cold,
}

/// The file a configuration of `g` is saved in.
fn config_path(dir: &Path, g: &Generator, format: Format) -> PathBuf {
    let d = g.field().lattice().dims();
    dir.join(format!(
        "su3_wilson_b{:.4}_{}x{}x{}x{}_seed{}.{:06}.{}",
        g.beta(),
        d[0],
        d[1],
        d[2],
        d[3],
        g.seed(),
        g.sweeps(),
        format.extension()
    ))
}

fn save(dir: &Path, g: &Generator, o: &Options) -> Result<PathBuf, String> {
    let format = match o.format {
        FileFormat::Nersc => Format::Nersc,
        FileFormat::Ildg => Format::Ildg,
        FileFormat::Milc => Format::Milc,
    };
    let path = config_path(dir, g, format);
    let options = WriteOptions {
        format,
        precision: match o.file_precision {
            Precision::Single => FilePrecision::Single,
            Precision::Double => FilePrecision::Double,
        },
        ensemble: Some(Ensemble {
            beta: g.beta(),
            seed: g.seed(),
            sweeps: g.sweeps(),
            overrelax: g.overrelax(),
        }),
        creator: format!("latsol-heatbath {}", env!("CARGO_PKG_VERSION")),
        ..Default::default()
    };
    gauge_io::write(g.field(), &path, &options).map_err(|e| e.to_string())?;
    Ok(path)
}

fn start(o: &Options) -> Result<Generator, String> {
    let g = match &o.resume {
        Some(path) => {
            let (field, info) = gauge_io::read(path).map_err(|e| e.to_string())?;
            let Some(chain) = info.ensemble else {
                return Err(format!(
                    "{}: the file does not record the chain that wrote it (β, seed, sweeps); \
                     only this program's files can be resumed",
                    path.display()
                ));
            };
            let beta = o.beta.unwrap_or(chain.beta);
            Generator::resume(field, beta, chain.seed, chain.sweeps)
        }
        None => {
            let beta = o.beta.ok_or("--beta is required (or --resume FILE)")?;
            let lat = Arc::new(Lattice::new(o.dims).map_err(|e| e.to_string())?);
            let start = match o.start {
                StartChoice::Hot => Start::Hot,
                StartChoice::Cold => Start::Cold,
            };
            Generator::new(lat, beta, o.seed, start)
        }
    };
    Ok(g.map_err(|e| e.to_string())?.with_overrelax(o.overrelax))
}

/// A bar over the run's sweeps on a terminal, else a hidden one.
fn sweep_bar(total: u64) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{elapsed:>4} [{bar:40}] sweep {pos}/{len} {msg} (eta {eta})",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    bar
}

fn run(o: Options) -> Result<(), String> {
    if let Some(n) = o.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| e.to_string())?;
    }
    let mut g = start(&o)?;
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

    let total = o.therm + o.configs * o.sweeps_between;
    let bar = sweep_bar(total);
    let line = |s: String| bar.suspend(|| println!("{s}"));
    let mut measured = Vec::new();
    let begin = Instant::now();
    let mut last = (Instant::now(), 0u64);
    for n in 1..=total {
        g.sweep();
        let p = g.plaquette();
        bar.set_position(n);
        bar.set_message(format!("plaquette {:.6}", p[0]));
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
            line(format!(
                "{:>7} {:>10.6} {:>10.6} {:>10.6} {:>9.4}",
                g.sweeps(),
                p[0],
                p[1],
                p[2],
                per
            ));
        }
        if n > o.therm && (n - o.therm).is_multiple_of(o.sweeps_between) {
            if let Some(dir) = &o.out {
                let path = save(dir, &g, &o)?;
                line(format!("saved {}", path.display()));
            }
        }
        if n == o.therm {
            line(format!("-- thermalised after {} sweeps", o.therm));
        }
    }
    bar.finish_and_clear();
    let secs = begin.elapsed().as_secs_f64();
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
    match run(Options::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(m) => {
            eprintln!("latsol-heatbath: {m}");
            ExitCode::FAILURE
        }
    }
}
