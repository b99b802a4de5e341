//! The README's C program compiles as written (C99, every warning an
//! error) and runs: its includes are complete, its return values checked
//! (issue 16). The first ```c block under "## Using it from C" is the one
//! tested, so the README cannot drift from the header.

mod c_build;

use std::path::PathBuf;
use std::process::Command;

/// The first C code block after the heading `## Using it from C`.
fn readme_c_program() -> String {
    let readme = std::fs::read_to_string(c_build::root().join("README.md")).unwrap();
    let section = readme
        .split_once("## Using it from C")
        .expect("the README has a section `## Using it from C`")
        .1;
    let block = section
        .split_once("```c\n")
        .expect("the section has a ```c block")
        .1;
    block
        .split_once("```")
        .expect("the ```c block is closed")
        .0
        .to_string()
}

#[test]
fn the_readme_c_program_compiles_and_solves() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("readme");
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("readme_snippet.c");
    std::fs::write(&source, readme_c_program()).unwrap();
    let exe = c_build::build(&source, "readme_snippet");
    // AUTO backend: the CPU here and in CI, the GPU where there is one.
    let output = Command::new(&exe).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the README program failed ({}):\n{stdout}{stderr}",
        output.status
    );
    // "N iterations, true residual R": a converged solve.
    let residual: f64 = stdout
        .split("true residual ")
        .nth(1)
        .and_then(|r| r.trim().parse().ok())
        .unwrap_or_else(|| panic!("no true residual in the output: {stdout}"));
    assert!(residual < 1e-12, "true residual {residual}: {stdout}");
}
