//! A lattice that does not fit in host memory is `LATSOL_ERROR_OUT_OF_MEMORY`,
//! naming the size and what it was for, and the context stays usable
//! (issue 16): `tests/c/out_of_memory.c`, a C host program, runs in a child
//! process under `setrlimit(RLIMIT_AS)` and checks it; it would die of
//! SIGABRT if any lattice-sized allocation on its path were infallible.

mod c_build;

use std::process::Command;

#[test]
fn a_host_under_a_memory_limit_gets_out_of_memory_not_an_abort() {
    let exe = c_build::build(
        &c_build::root().join("tests/c/out_of_memory.c"),
        "out_of_memory",
    );
    let output = Command::new(&exe).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success(),
        "the C host program failed ({}): {stdout}",
        output.status
    );
    assert!(stdout.contains("all checks passed"), "{stdout}");
}
