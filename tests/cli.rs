//! The main job's command line (clap): a complete `--help` (every option,
//! the mixed-precision ones included), `--version`, a clear error for an
//! unknown flag, `-q` for the summary alone; a tolerance the precision
//! cannot reach is a warning and a reachable default.

use std::process::Command;

/// Runs a program of the crate: (success, stdout, stderr).
fn run(exe: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(exe)
        .args(args)
        .env_remove("LATSOL_VERBOSITY")
        .output()
        .unwrap_or_else(|e| panic!("{exe} does not run: {e}"));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn solve(args: &[&str]) -> (bool, String, String) {
    run(env!("CARGO_BIN_EXE_latsol-solve"), args)
}

fn heatbath(args: &[&str]) -> (bool, String, String) {
    run(env!("CARGO_BIN_EXE_latsol-heatbath"), args)
}

#[test]
fn help_lists_every_option_and_version_names_the_tool() {
    let (ok, help, _) = solve(&["--help"]);
    assert!(ok);
    for flag in [
        "--backend",
        "--dims",
        "--field",
        "--kappa",
        "--solver",
        "--solve",
        "--tol",
        "--maxiter",
        "--precision",
        "--sloppy",
        "--reconstruct-sloppy",
        "--mixed",
        "--delta",
        "--tol-inner",
        "--plain-cg",
        "--csw",
        "--asymmetric",
        "--verbose",
        "--quiet",
        "--version",
        "--sources",
        "--block",
        "--block-memory-saving",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}:\n{help}");
    }
    let (ok, version, _) = solve(&["--version"]);
    assert!(ok && version.starts_with("latsol-solve "), "{version}");
}

#[test]
fn an_unknown_flag_is_named() {
    let (ok, _, err) = solve(&["--foo"]);
    assert!(!ok);
    assert!(err.contains("unexpected argument '--foo'"), "{err}");
    let (ok, _, err) = solve(&["--sloppy", "octuple"]);
    assert!(!ok);
    assert!(err.contains("octuple"), "{err}");
}

#[test]
fn quiet_prints_the_summary_alone_and_an_unreachable_tol_is_replaced() {
    let (ok, out, err) = solve(&[
        "--backend",
        "cpu",
        "--dims",
        "4,4,4,4",
        "--precision",
        "single",
        "--tol",
        "1e-12",
        "-q",
    ]);
    assert!(ok, "{out}{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(
        out.starts_with("summary:") && out.contains("converged"),
        "{out}"
    );
    assert!(err.contains("warning") && err.contains("1e-12"), "{err}");
}

#[test]
fn the_heatbath_has_a_complete_help_and_names_unknown_flags() {
    let (ok, help, _) = heatbath(&["--help"]);
    assert!(ok);
    for flag in [
        "--dims",
        "--beta",
        "--therm",
        "--sweeps-between",
        "--configs",
        "--seed",
        "--out",
        "--format",
        "--file-precision",
        "--overrelax",
        "--start",
        "--resume",
        "--every",
        "--threads",
        "--history",
        "--version",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}:\n{help}");
    }
    let (ok, version, _) = heatbath(&["--version"]);
    assert!(ok && version.starts_with("latsol-heatbath "), "{version}");
    let (ok, _, err) = heatbath(&["--foo"]);
    assert!(!ok && err.contains("unexpected argument '--foo'"), "{err}");
    let (ok, _, err) = heatbath(&["--format", "tiff"]);
    assert!(!ok && err.contains("tiff"), "{err}");
}

/// The first-use path of issue 16: the heatbath writes a NERSC and an ILDG
/// file, named by what they hold, and the main job solves on each (the
/// format detected, its checks reported), resuming from either continues.
#[test]
fn the_main_job_solves_on_nersc_and_ildg_files_of_the_heatbath() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli_files");
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.to_str().unwrap();
    for format in ["nersc", "ildg"] {
        let (ok, stdout, err) = heatbath(&[
            "--dims",
            "4,4,4,8",
            "--beta",
            "5.8",
            "--therm",
            "3",
            "--configs",
            "1",
            "--sweeps-between",
            "1",
            "--out",
            out,
            "--format",
            format,
        ]);
        assert!(ok, "{stdout}{err}");
        let name = format!("su3_wilson_b5.8000_4x4x4x8_seed1.000004.{format}");
        let path = dir.join(&name);
        assert!(path.exists(), "{name} not written:\n{stdout}");
        let (ok, stdout, err) = solve(&[
            "--backend",
            "cpu",
            "--field",
            path.to_str().unwrap(),
            "--kappa",
            "0.12",
        ]);
        assert!(ok, "{stdout}{err}");
        let checked = if format == "nersc" {
            "NERSC checksum"
        } else {
            "SciDAC checksum"
        };
        assert!(
            stdout.contains(checked) && stdout.contains("converged"),
            "{stdout}"
        );
        let (ok, stdout, err) = heatbath(&[
            "--resume",
            path.to_str().unwrap(),
            "--therm",
            "0",
            "--configs",
            "1",
            "--sweeps-between",
            "1",
            "--out",
            out,
            "--format",
            format,
        ]);
        assert!(ok, "{stdout}{err}");
        assert!(
            stdout.contains("from sweep 4") && stdout.contains("000005"),
            "{stdout}"
        );
    }
}

#[test]
fn the_twelve_components_of_a_point_source_in_one_block() {
    let common = [
        "--backend",
        "cpu",
        "--dims",
        "4,4,4,4",
        "--kappa",
        "0.12",
        "--csw",
        "1.0",
        "--tol",
        "1e-10",
        "-q",
        "--sources",
        "12",
    ];
    let mut counts = Vec::new();
    for block in ["1", "0"] {
        let args: Vec<&str> = common.iter().copied().chain(["--block", block]).collect();
        let (ok, out, err) = solve(&args);
        assert!(ok, "--block {block}: {out}{err}");
        assert!(out.contains("converged") && !out.contains("NOT"), "{out}");
        let applications: usize = out
            .split("operator applications ")
            .nth(1)
            .and_then(|t| t.split_whitespace().next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no count in {out}"));
        counts.push(applications);
    }
    // One block of 12 needs fewer operator applications (seed 002 Table 1).
    assert!(counts[1] < counts[0], "{counts:?}");
    // With SAP (2⁴ boxes): converged, in fewer block iterations.
    let iterations = |out: &str| -> usize {
        out.split("(iterations ")
            .nth(1)
            .and_then(|t| t.split(')').next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no iterations in {out}"))
    };
    let block: Vec<&str> = common.iter().copied().chain(["--block", "0"]).collect();
    let (_, plain, _) = solve(&block);
    let sap: Vec<&str> = block
        .iter()
        .copied()
        .chain(["--sap-cycles", "4", "--sap-extent", "2,2,2,2"])
        .collect();
    let (ok, out, err) = solve(&sap);
    assert!(
        ok && out.contains("converged") && !out.contains("NOT"),
        "{out}{err}"
    );
    assert!(out.contains("SAP 4 cycles, boxes [2, 2, 2, 2]"), "{out}");
    assert!(iterations(&out) < iterations(&plain), "{out}{plain}");
}
