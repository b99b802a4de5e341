//! The programs of `examples-c/quda-api/`, written the way legacy packages'
//! interface code calls QUDA, built against `quda.h` and latsol's library
//! (the QUDA interface is in it) and run on the CPU with the golden data:
//! each checks its true residuals and the golden operators itself and
//! exits non-zero on a failure.

mod c_build;

use std::process::Command;

use c_build::root;

#[test]
fn chroma_style_program_matches_the_golden_clover_set() {
    let exe = c_build::build_cxx(
        &root().join("examples-c/quda-api/chroma_style.cpp"),
        "quda_chroma_style",
    );
    let out = Command::new(&exe)
        .arg(root().join("tests/data/golden-clover-6x4x4x8"))
        .env("LATSOL_BACKEND", "cpu")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{}", out.status);
    assert!(stdout.contains("all checks passed"));
}

#[test]
fn milc_style_program_matches_the_golden_sets() {
    let exe = c_build::build(
        &root().join("examples-c/quda-api/milc_style.c"),
        "quda_milc_style",
    );
    let out = Command::new(&exe)
        .arg(root().join("tests/data/golden-staggered-6x4x4x8"))
        .arg(root().join("tests/data/golden-clover-6x4x4x8"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{}", out.status);
    assert!(stdout.contains("all checks passed"));
}
