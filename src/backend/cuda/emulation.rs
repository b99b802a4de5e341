//! The packed formats' device accessors (`kernels/core.cuh`,
//! `PackedSpinorSoA`) run on the host without a GPU: `kernels/host/packed.cpp`
//! compiles core.cuh with a host C++ compiler through `kernels/host/shim.h`,
//! stores and loads sites with the device code, and this test compares every
//! word and every value with the shared format (`src/format/packed.rs`), bit
//! for bit. Skipped (with a message) where no C++ compiler is found (`$CXX`,
//! `c++`, `g++`), unless `LATSOL_REQUIRE_TOOLS=1` (as `.ci/run` sets: CI
//! installs g++). `clover_emulation` runs kernels/clover_compute.cu so.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::field::SPINOR_REALS;
use crate::format::packed;

fn compiler() -> Option<String> {
    let candidates = std::env::var("CXX")
        .into_iter()
        .chain(["c++".into(), "g++".into()]);
    candidates.into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// `kernels/host/<name>.cpp` built into a temporary executable; `None`
/// (after saying so) where no C++ compiler is found and none is required.
pub(crate) fn build_emulation(name: &str) -> Option<PathBuf> {
    let Some(cxx) = compiler() else {
        assert!(
            std::env::var_os("LATSOL_REQUIRE_TOOLS").is_none_or(|v| v != "1"),
            "LATSOL_REQUIRE_TOOLS=1 but no C++ compiler is there"
        );
        eprintln!("no C++ compiler: the host emulation of kernels/host/{name}.cpp is skipped");
        return None;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = std::env::temp_dir().join(format!("latsol-{name}-emulation-{}", std::process::id()));
    let out = Command::new(&cxx)
        .args(["-std=c++17", "-O1", "-Wno-unknown-pragmas", "-o"])
        .arg(&exe)
        .arg(root.join(format!("kernels/host/{name}.cpp")))
        .output()
        .expect("run the C++ compiler");
    assert!(
        out.status.success(),
        "{cxx} failed on kernels/host/{name}.cpp:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(exe)
}

/// `exe IN OUT` with `input` in IN (temporary files named by `tag` and the
/// process); OUT's bytes.
pub(crate) fn run_with_files(exe: &Path, tag: &str, input: &[u8]) -> Vec<u8> {
    let dir = std::env::temp_dir();
    let (inp, out) = (
        dir.join(format!("latsol-{tag}-in-{}", std::process::id())),
        dir.join(format!("latsol-{tag}-out-{}", std::process::id())),
    );
    std::fs::write(&inp, input).expect("write the emulation's input");
    let run = Command::new(exe)
        .arg(&inp)
        .arg(&out)
        .output()
        .expect("run the emulation");
    assert!(run.status.success(), "{run:?}");
    let bytes = std::fs::read(&out).expect("read the emulation's output");
    let _ = (std::fs::remove_file(&inp), std::fs::remove_file(&out));
    bytes
}

/// Little-endian f64s.
pub(crate) fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect()
}

fn hex64(s: &str) -> f64 {
    f64::from_bits(u64::from_str_radix(s, 16).expect("hex"))
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

#[test]
fn device_accessors_store_and_load_as_the_cpu() {
    let Some(exe) = build_emulation("packed") else {
        return;
    };
    // (bits, arithmetic of the store: 0 double as blas.cuh, 1 float as the
    // 20-bit hopping term)
    for (bits, arith) in [(20u32, 0), (20, 1), (30, 0), (30, 1)] {
        let run = Command::new(&exe)
            .args([bits.to_string(), arith.to_string(), "1000".into()])
            .output()
            .expect("run the emulation");
        assert!(run.status.success());
        let text = String::from_utf8(run.stdout).unwrap();
        let mut sites = 0;
        for (i, line) in text.lines().enumerate() {
            let parts: Vec<&str> = line.split('|').collect();
            let x: Vec<f64> = parts[0].split_whitespace().map(hex64).collect();
            let words: Vec<u32> = parts[1]
                .split_whitespace()
                .map(|w| u32::from_str_radix(w, 16).unwrap())
                .collect();
            let loaded: Vec<f64> = parts[2].split_whitespace().map(hex64).collect();
            let pairs: Vec<f64> = parts[3].split_whitespace().map(hex64).collect();
            let x: [f64; SPINOR_REALS] = x.try_into().unwrap();
            let mut cpu = vec![0u32; packed::words(bits, SPINOR_REALS)];
            packed::store(bits, &mut cpu, 0, &x);
            assert_eq!(
                cpu, words,
                "{bits}-bit, arithmetic {arith}, site {i}: words"
            );
            let values = packed::load(bits, SPINOR_REALS, &words, 0);
            assert!(
                same_bits(&values, &loaded),
                "{bits}-bit site {i}: loaded {loaded:?}, cpu {values:?}"
            );
            // The spin pairs load in the hopping term's arithmetic (single
            // for 20-bit), exact wherever that does not overflow.
            if values.iter().all(|v| v.abs() <= f32::MAX as f64) {
                assert!(
                    same_bits(&values, &pairs),
                    "{bits}-bit site {i}: spin pairs"
                );
            }
            sites += 1;
        }
        assert_eq!(sites, 1000);
    }
    // The exact fixed-point conversions of the half and quarter formats.
    let run = Command::new(&exe)
        .arg("fixed")
        .output()
        .expect("run the emulation");
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "fixed-point conversions: {text}");
    assert!(text.starts_with("fixed: "), "{text}");
    let _ = std::fs::remove_file(&exe);
}
