//! The QUDA-compatible headers (include/quda.h, enum_quda.h,
//! quda_constants.h, quda_define.h, quda_milc_interface.h) against QUDA
//! develop 9521952 and against their Rust mirror (`latsol::ffi::quda::abi`):
//! - they are what scripts/gen_quda_abi.py writes from the spec;
//! - they compile as C99, C11 and C++17 with -Wall -Werror;
//! - a C program built on them prints `sizeof`/`offsetof` of every struct
//!   member and the value of every enumerator: equal to QUDA's table (the
//!   spec's LP64 offsets) and to the Rust structs' `offset_of!`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use latsol::ffi::quda::abi;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tool(name: &str) -> Option<String> {
    let t = std::env::var(name.to_uppercase()).unwrap_or_else(|_| name.to_string());
    Command::new(&t).arg("--version").output().ok().map(|_| t)
}

#[test]
fn generated_files_are_up_to_date() {
    let Some(py) = tool("python3") else {
        eprintln!("SKIPPED: no python3");
        return;
    };
    let out = Command::new(py)
        .arg(root().join("scripts/gen_quda_abi.py"))
        .arg("--check")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A C source that includes every header and prints the layout table and
/// the enumerators.
fn probe_source() -> String {
    let mut s = String::from(
        "#include <stddef.h>\n#include <stdio.h>\n#include <quda.h>\n#include <quda_milc_interface.h>\n\
         #include <quda_constants.h>\n#include <quda_define.h>\n#include <malloc_quda.h>\nint main(void) {\n",
    );
    for (st, member, _, _) in abi::REFERENCE_LAYOUT {
        if member.is_empty() {
            s += &format!("  printf(\"{st} - 0 %zu\\n\", sizeof({st}));\n");
        } else {
            s += &format!(
                "  printf(\"{st} {member} %zu %zu\\n\", offsetof({st}, {member}), sizeof((({st} *)0)->{member}));\n"
            );
        }
    }
    for (name, _) in abi::ENUM_VALUES {
        s += &format!("  printf(\"enum {name} %lld\\n\", (long long)({name}));\n");
    }
    s += "  printf(\"QUDA_VERSION %d\\n\", QUDA_VERSION);\n  return 0;\n}\n";
    s
}

fn compile(compiler: &str, std: &str, src: &Path, exe: &Path) {
    let out = Command::new(compiler)
        .args([&format!("-std={std}"), "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(root().join("include"))
        .arg(src)
        .arg("-o")
        .arg(exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{compiler} -std={std}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn headers_compile_and_match_quda_and_the_rust_mirror() {
    let (Some(cc), Some(cxx)) = (tool("cc"), tool("c++")) else {
        eprintln!("SKIPPED: no C or C++ compiler");
        return;
    };
    let dir = std::env::temp_dir().join(format!("latsol-quda-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let c = dir.join("probe.c");
    std::fs::write(&c, probe_source()).unwrap();
    let cpp = dir.join("probe.cpp");
    std::fs::write(&cpp, probe_source()).unwrap();
    let mut outputs = Vec::new();
    for (compiler, std, src) in [(&cc, "c99", &c), (&cc, "c11", &c), (&cxx, "c++17", &cpp)] {
        let exe = dir.join(format!("probe-{std}"));
        compile(compiler, std, src, &exe);
        let out = Command::new(&exe).output().unwrap();
        assert!(out.status.success());
        outputs.push(String::from_utf8(out.stdout).unwrap());
    }
    assert!(
        outputs.windows(2).all(|w| w[0] == w[1]),
        "C and C++ disagree"
    );
    let mut c_layout = BTreeMap::new();
    let mut c_enums = BTreeMap::new();
    for line in outputs[0].lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        match f[0] {
            "enum" => {
                c_enums.insert(f[1].to_string(), f[2].parse::<i64>().unwrap());
            }
            "QUDA_VERSION" => assert_eq!(f[1], "65792", "QUDA_VERSION 1.1.0"),
            st => {
                let m = if f[1] == "-" { "" } else { f[1] };
                c_layout.insert(
                    (st.to_string(), m.to_string()),
                    (
                        f[2].parse::<usize>().unwrap(),
                        f[3].parse::<usize>().unwrap(),
                    ),
                );
            }
        }
    }
    // C against QUDA's table.
    for &(st, m, off, size) in abi::REFERENCE_LAYOUT {
        let key = (st.to_string(), m.to_string());
        assert_eq!(
            c_layout[&key],
            (off, size),
            "{st}.{m}: C header against QUDA 9521952"
        );
    }
    // Rust against C.
    let rust = abi::layout();
    assert_eq!(rust.len(), abi::REFERENCE_LAYOUT.len());
    for (st, m, off, size) in rust {
        let key = (st.to_string(), m.to_string());
        assert_eq!(
            c_layout[&key],
            (off, size),
            "{st}.{m}: Rust mirror against the C header"
        );
    }
    for &(name, v) in abi::ENUM_VALUES {
        assert_eq!(c_enums[name], v, "{name}");
    }
    // The sizes QUDA programs are built with.
    assert_eq!(std::mem::size_of::<abi::QudaInvertParam>(), 6192);
    assert_eq!(std::mem::size_of::<abi::QudaGaugeParam>(), 216);
    assert_eq!(std::mem::size_of::<abi::QudaInvertArgs_t>(), 80);
    let _ = std::fs::remove_dir_all(&dir);
}
