//! `examples-c/invert.c`, a plain C99 program, is built with the system C
//! compiler (`$CC`, else `cc`) against the generated header and the
//! staticlib that cargo builds, and run: on random links, and on the golden
//! data set (`tests/data/golden-wilson-6x4x4x8`, a copy of `../shared/data/`), where its answer must
//! match ψ to 1e-10. It exits non-zero if a residual or check is not met.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The cargo profile directory this test runs from: the test executable
/// lives in `<target>/<profile>/deps/`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .and_then(Path::parent)
        .expect("the test executable lies in <target>/<profile>/deps")
        .to_path_buf()
}

/// `liblatsol.a` of this build. `cargo test` builds the library with all
/// its crate types for the integration tests, the staticlib included, into
/// `<profile>/deps/` (`cargo build` puts it in `<profile>/`); if neither is
/// there (another build layout), build it.
fn staticlib() -> PathBuf {
    let dir = profile_dir();
    let candidates = [dir.join("deps/liblatsol.a"), dir.join("liblatsol.a")];
    if let Some(lib) = candidates.iter().find(|p| p.exists()) {
        return lib.clone();
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--lib", "--target-dir"])
        .arg(dir.parent().unwrap())
        .current_dir(root());
    if dir.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    let status = cmd.status().expect("cargo runs");
    assert!(status.success(), "cargo build --lib failed");
    let lib = dir.join("liblatsol.a");
    assert!(
        lib.exists(),
        "{} not found after cargo build --lib",
        lib.display()
    );
    lib
}

fn build_example() -> PathBuf {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("examples-c");
    std::fs::create_dir_all(&out).unwrap();
    let exe = out.join("invert");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let output = Command::new(&cc)
        .args([
            "-std=c99",
            "-O2",
            "-Wall",
            "-Wextra",
            "-pedantic",
            "-Werror",
            "-I",
        ])
        .arg(root().join("include"))
        .arg(root().join("examples-c/invert.c"))
        .arg(staticlib())
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
    assert!(
        output.status.success(),
        "compiling examples-c/invert.c failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    exe
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
