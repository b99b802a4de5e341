//! latsol-gpu-check, the results: each check's verdict (`Report`), the
//! compared quantities of the device-path checks (`Check`), the benchmark
//! rows (`BenchRow`), and the final table, printed and written under `$OUT`.
//! Imports no other module of the binary.

use std::fmt::Write as _;

use latsol::precision::Precision;

/// Results gathered for the final table.
#[derive(Default)]
pub struct Report {
    pub lines: Vec<String>,
    pub failures: usize,
}

impl Report {
    pub fn check(&mut self, what: &str, err: f64, tol: f64) {
        let ok = err.is_finite() && err <= tol;
        if !ok {
            self.failures += 1;
        }
        let verdict = if ok { "ok" } else { "FAIL" };
        let line = format!("{verdict:4} {what:58} err {err:9.2e} (bound {tol:.1e})");
        if !ok {
            println!("{line}");
        }
        self.lines.push(line);
    }
    pub fn flag(&mut self, what: &str, ok: bool) {
        self.check(what, if ok { 0.0 } else { f64::INFINITY }, 0.0);
    }
    pub fn say(&mut self, line: String) {
        println!("{line}");
        self.lines.push(line);
    }
}

/// One compared quantity: what, the error found, its bound.
pub struct Check {
    pub what: String,
    pub err: f64,
    pub tol: f64,
}

pub struct BenchRow {
    pub dims: [usize; 4],
    pub prec: Precision,
    pub form: String,
    pub us: f64,
    /// Host microseconds to issue one call (`LAST_HOST_US`).
    pub host_us: f64,
    pub gflops: f64,
    pub gbs: f64,
    pub frac: f64,
    /// Device microseconds a call of the same calls replayed from a
    /// CUDA graph, and its fraction of the roofline (the Wilson hopping
    /// term): the kernel's own time, whatever the host and the launch
    /// queue do (at 16^4 the back-to-back figure varies from run to run).
    pub graph: Option<(f64, f64)>,
}

/// The final table: printed, and written under `$OUT` when set.
pub fn write_table(
    args: &[String],
    device: &str,
    rep: &Report,
    rows: &[BenchRow],
    roof: f64,
    solves: &[String],
    print: bool,
) {
    let mut out = String::new();
    let _ = writeln!(out, "\n== latsol-gpu-check on {} ==", device);
    for l in &rep.lines {
        let _ = writeln!(out, "{l}");
    }
    if !rows.is_empty() {
        let _ = writeln!(
            out,
            "\nroofline (device-to-device copy): {:.0} GB/s",
            roof / 1e9
        );
        let _ = writeln!(
            out,
            "{:14} {:7} {:12} {:>9} {:>8} {:>8} {:>6} {:>8} {:>9} {:>6}",
            "lattice",
            "prec",
            "kernel",
            "us",
            "Gflops",
            "GB/s",
            "roof",
            "host us",
            "graph us",
            "roof"
        );
        for r in rows {
            let d = r.dims;
            let _ = writeln!(
                out,
                "{:14} {:7} {:12} {:9.1} {:8.0} {:8.0} {:5.0}% {:8.1} {}",
                format!("{}x{}x{}x{}", d[0], d[1], d[2], d[3]),
                format!("{:?}", r.prec),
                &r.form,
                r.us,
                r.gflops,
                r.gbs,
                100.0 * r.frac,
                r.host_us,
                match r.graph {
                    Some((us, frac)) => format!("{us:9.1} {:5.0}%", 100.0 * frac),
                    None => format!("{:>9} {:>6}", "-", "-"),
                }
            );
        }
        let _ = writeln!(
            out,
            "(GB/s: minimal traffic, 192 reals per site (+24 for xpay); Gflops: 1320 per site; \
             us: calls issued back to back from the host; graph us: the same calls replayed \
             from a CUDA graph, the kernels' own time)"
        );
    }
    for s in solves {
        let _ = writeln!(out, "{s}");
    }
    let _ = writeln!(out, "{} failure(s)", rep.failures);
    if print {
        print!("{out}");
    }
    if let Some(dir) = std::env::var_os("OUT") {
        let tag = args
            .iter()
            .position(|a| a == "--tag")
            .and_then(|i| args.get(i + 1));
        let name = format!(
            "gpu-check{}.txt",
            tag.map(|t| format!("-{t}")).unwrap_or_default()
        );
        let _ = std::fs::write(std::path::Path::new(&dir).join(name), &out);
    }
}
