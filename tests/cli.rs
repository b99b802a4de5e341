//! The main job's command line (clap): a complete `--help` (every option,
//! the mixed-precision ones included), `--version`, a clear error for an
//! unknown flag, `-q` for the summary alone; a tolerance the precision
//! cannot reach is a warning and a reachable default.

use std::process::Command;

fn solve(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_latsol-solve"))
        .args(args)
        .env_remove("LATSOL_VERBOSITY")
        .output()
        .expect("latsol-solve runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
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
