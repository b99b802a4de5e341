//! Gives the shared library a versioned soname on ELF platforms, so programs
//! linked against `liblatsol.so` record `liblatsol.so.<major>` and keep
//! working across compatible updates (scripts/install.sh installs the file
//! as `liblatsol.so.<version>` with the two usual symlinks). For 0.x
//! releases the major number is 0, as the C ABI only grows (`struct_size`
//! first, new fields at the end).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // Linked into libquda (the `quda` crate turns this feature on): its own
    // build script names that library, and cargo hands a dependency's
    // cdylib link arguments to the dependent's link too.
    if std::env::var_os("CARGO_FEATURE_LINKED_AS_QUDA").is_some() {
        return;
    }
    // GNU ld, gold, lld and mold all take -soname on these targets; macOS
    // uses install names and Windows has no soname, so leave them alone.
    if matches!(
        os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly"
    ) {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets the version");
        println!("cargo:rustc-link-arg-cdylib=-Wl,-soname,liblatsol.so.{major}");
    }
}
