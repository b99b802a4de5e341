//! The committed C header `include/latsol.h` is what cbindgen generates
//! from `src/ffi/` with `cbindgen.toml`. A stale header fails here with the
//! first differing line; `LATSOL_BLESS=1 cargo test --test ffi_header`
//! rewrites it.

use std::path::PathBuf;

fn generate() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml"))
        .expect("cbindgen.toml is readable and valid");
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join("src/ffi/mod.rs"))
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut out);
    String::from_utf8(out).expect("the header is UTF-8")
}

#[test]
fn header_is_up_to_date() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("include/latsol.h");
    let fresh = generate();
    if std::env::var_os("LATSOL_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed == fresh {
        return;
    }
    let first = committed
        .lines()
        .zip(fresh.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| committed.lines().count().min(fresh.lines().count()));
    panic!(
        "include/latsol.h is stale: it differs from what cbindgen generates from src/ffi/ \
         starting at line {}:\n  committed: {:?}\n  generated: {:?}\n\
         Regenerate it with: LATSOL_BLESS=1 cargo test --test ffi_header",
        first + 1,
        committed.lines().nth(first).unwrap_or("<end of file>"),
        fresh.lines().nth(first).unwrap_or("<end of file>"),
    );
}

#[test]
fn header_declares_the_issue_names() {
    let header = generate();
    for name in [
        "typedef struct latsol_context latsol_context;",
        "typedef struct latsol_gauge latsol_gauge;",
        "#define LATSOL_SUCCESS 0",
        "latsol_status latsol_init(const struct latsol_init_param *param, struct latsol_context **ctx);",
        "latsol_gauge_plaquette(",
        "latsol_invert(",
        "latsol_apply(",
        "const char *latsol_last_error(void);",
        "const char *latsol_version(void);",
        "LATSOL_OP_MDAG_M",
        "#ifndef LATSOL_H",
    ] {
        assert!(header.contains(name), "the header lacks `{name}`");
    }
    // Nothing from outside src/ffi/ leaks into the ABI.
    assert!(!header.contains("SPINOR_COMPLEX"));
}
