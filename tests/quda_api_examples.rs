//! The programs of `examples-c/quda-api/`, written the way legacy packages'
//! interface code calls QUDA, built against `quda.h` and latsol's library
//! (the QUDA interface is in it) and run on the CPU with the golden data:
//! each checks its true residuals and the golden operators itself and
//! exits non-zero on a failure.

mod c_build;

use std::process::Command;

use c_build::root;

/// Runs `exe` on the golden sets `sets` and checks that it passed.
fn run_on(exe: &std::path::Path, sets: &[&str]) {
    run_with(exe, sets, &[]);
}

/// `run_on` with environment variables `env` set for the program.
fn run_with(exe: &std::path::Path, sets: &[&str], env: &[(&str, &str)]) {
    let data = root().join("tests/data");
    let out = Command::new(exe)
        .args(sets.iter().map(|s| data.join(s)))
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{}", out.status);
    assert!(stdout.contains("all checks passed"));
}

fn example(name: &str) -> std::path::PathBuf {
    root().join("examples-c/quda-api").join(name)
}

#[test]
fn chroma_style_program_matches_the_golden_clover_set() {
    let exe = c_build::build_cxx(&example("chroma_style.cpp"), "quda_chroma_style");
    run_on(&exe, &["golden-clover-6x4x4x8"]);
}

#[test]
fn milc_style_program_matches_the_golden_sets() {
    let exe = c_build::build(&example("milc_style.c"), "quda_milc_style");
    run_on(&exe, &["golden-staggered-6x4x4x8", "golden-clover-6x4x4x8"]);
}

/// The same program with latsol's block solvers for several sources
/// (`LATSOL_SOURCES_PER_BLOCK=0`): `qudaInvertMsrc`'s two sources (the
/// second twice the first: a dependent block) by mixed block CG on the
/// even-odd systems, each answer checked by the program as before.
#[test]
fn milc_style_program_passes_with_block_solvers() {
    let exe = c_build::build(&example("milc_style.c"), "quda_milc_style_blocks");
    let sets = ["golden-staggered-6x4x4x8", "golden-clover-6x4x4x8"];
    run_with(&exe, &sets, &[("LATSOL_SOURCES_PER_BLOCK", "0")]);
}

#[test]
fn tmlqcd_style_program_computes_the_clover_term_and_solves() {
    let exe = c_build::build(&example("tmlqcd_style.c"), "quda_tmlqcd_style");
    run_on(&exe, &["golden-clover-6x4x4x8"]);
}

/// Without `LATSOL_QUDA_ON_ERROR=return`, an error exits with status 1
/// after naming the function, the field and its value (QUDA aborts): the
/// program's deliberate error, with the policy left at its default.
#[test]
fn an_error_exits_with_status_1_naming_the_field() {
    let exe = c_build::build(&example("tmlqcd_style.c"), "quda_tmlqcd_style_exit");
    let out = Command::new(&exe)
        .arg(root().join("tests/data/golden-clover-6x4x4x8"))
        .env_remove("LATSOL_QUDA_ON_ERROR")
        .env("LATSOL_TEST_NO_SETENV", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("invertQuda") && stderr.contains("param->solve_type = 42"),
        "{stderr}"
    );
    // It got as far as the deliberate error: the solve before it passed.
    assert!(String::from_utf8_lossy(&out.stdout).contains("true_res reported"));
}
