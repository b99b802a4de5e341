//! `examples-c/invert.c`, a plain C99 program, is built with the system C
//! compiler (`$CC`, else `cc`) against the generated header and the
//! staticlib that cargo builds, and run: on random links, and on the golden
//! data set (`tests/data/golden-wilson-6x4x4x8`, a copy of `../shared/data/`), where its answer must
//! match ψ to 1e-10. It exits non-zero if a residual or check is not met.

mod c_build;

use std::path::Path;
use std::process::Command;

use c_build::root;

fn build_example() -> std::path::PathBuf {
    c_build::build(&root().join("examples-c/invert.c"), "invert")
}

fn run(exe: &Path, args: &[&Path]) -> String {
    let output = Command::new(exe)
        .args(["--backend", "cpu"])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    println!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success(),
        "the C example failed: {}",
        output.status
    );
    stdout
}

#[test]
fn c_example_builds_and_solves() {
    let exe = build_example();
    let out = run(&exe, &[]);
    assert!(out.contains("QDP links, even-odd BiCGstab:"), "{out}");
    assert!(out.contains("MILC links, even-odd CG:"), "{out}");
    assert!(out.contains("all checks passed"), "{out}");

    let golden = root().join("tests/data/golden-wilson-6x4x4x8");
    let out = run(&exe, &[&golden]);
    assert!(out.contains("golden M x = M psi"), "{out}");
    assert!(out.contains("all checks passed"), "{out}");
}

/// `examples-c/milc_staggered.c`: MILC's way of calling a staggered solver
/// (site structs, phases folded in, site-major links, a mixed CG) builds
/// with the C compiler against the header and solves.
#[test]
fn milc_staggered_example_builds_and_solves() {
    let exe = c_build::build(
        &root().join("examples-c/milc_staggered.c"),
        "milc_staggered",
    );
    let out = run(&exe, &[]);
    assert!(out.contains("even-odd CG (single/half)"), "{out}");
    assert!(out.contains("all checks passed"), "{out}");
}
