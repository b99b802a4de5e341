//! Builds a C program of the tests against the generated header and the
//! staticlib that cargo builds (`c_example.rs`, `out_of_memory.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn root() -> PathBuf {
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
pub fn staticlib() -> PathBuf {
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

/// Compiles `source` (C99, warnings as errors) into `name` in the test's
/// temporary folder, linked against the staticlib.
#[allow(dead_code)] // not every test crate builds C
pub fn build(source: &Path, name: &str) -> PathBuf {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let flags = [
        "-std=c99",
        "-D_DEFAULT_SOURCE",
        "-O2",
        "-Wall",
        "-Wextra",
        "-pedantic",
        "-Werror",
    ];
    compile(&cc, &flags, source, name)
}

/// Compiles the C++17 program `source` into `name`, warnings as errors,
/// linked against the staticlib (whose QUDA interface `quda.h` declares).
#[allow(dead_code)] // not every test crate builds C++
pub fn build_cxx(source: &Path, name: &str) -> PathBuf {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    compile(
        &cxx,
        &["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror"],
        source,
        name,
    )
}

fn compile(compiler: &str, flags: &[&str], source: &Path, name: &str) -> PathBuf {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("examples-c");
    std::fs::create_dir_all(&out).unwrap();
    let exe = out.join(name);
    let output = Command::new(compiler)
        .args(flags)
        .arg("-I")
        .arg(root().join("include"))
        .arg(source)
        .arg(staticlib())
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the compiler `{compiler}`: {e}"));
    assert!(
        output.status.success(),
        "compiling {} failed:\n{}",
        source.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    exe
}
