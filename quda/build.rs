//! The shared library's soname: `libquda.so`, unversioned, as QUDA's own
//! CMake build names it, so that programs linked against QUDA's library
//! load this one unchanged (and the reverse).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(
        os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly"
    ) {
        println!("cargo:rustc-link-arg-cdylib=-Wl,-soname,libquda.so");
    }
}
