//! `libquda`: QUDA's C interface (`quda.h`, `quda_milc_interface.h`, QUDA
//! `develop` at 9521952, 2024-10-23) on latsol, so that programs written
//! against QUDA link this library unchanged (docs/quda-compat.md).
//!
//! The functions themselves are latsol's second C face, `latsol::ffi::quda`
//! (the only place with raw pointers stays `src/ffi/`); this crate only
//! links them, with latsol's own C ABI beside them, into `libquda.so` and
//! `libquda.a`. Their `#[no_mangle]` symbols are exported from this
//! library because it links the crate that defines them.

pub use latsol::ffi::quda;
