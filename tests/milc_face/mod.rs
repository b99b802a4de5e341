//! What the tests of QUDA's MILC interface share: `qudaInit` once per test
//! binary, in return mode (a refused call returns with a status rather
//! than exiting).

pub mod links;

use latsol::ffi::quda::abi::*;

extern "C" {
    fn qudaInit(input: QudaInitArgs_t);
}

/// `qudaInit` on one rank with the lattice `dims`, once per process.
pub fn milc_init(dims: [usize; 4]) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: set before this binary's first call into the library.
        unsafe { std::env::set_var("LATSOL_QUDA_ON_ERROR", "return") };
        let mut latsize = dims.map(|d| d as i32);
        let mut machsize = [1i32; 4];
        unsafe {
            qudaInit(QudaInitArgs_t {
                verbosity: QUDA_SILENT,
                layout: QudaLayout_t {
                    latsize: latsize.as_mut_ptr(),
                    machsize: machsize.as_mut_ptr(),
                    device: 0,
                },
            })
        };
    });
}
