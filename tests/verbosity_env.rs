//! `LATSOL_VERBOSITY` overrides a host's verbosity (issue 16; QUDA has the
//! same kind of switch): a program built with SILENT logs its solves when
//! the variable says `verbose`. One test in its own binary, as the variable
//! is process-wide.

mod ffi_common;

use std::ffi::{c_char, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use ffi_common::*;
use latsol::ffi::*;

static LINES: AtomicUsize = AtomicUsize::new(0);

extern "C" fn count(_level: latsol_verbosity, msg: *const c_char, _user: *mut c_void) {
    let msg = unsafe { CStr::from_ptr(msg) }.to_string_lossy();
    if msg.contains("iteration") {
        LINES.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn the_environment_raises_a_silent_hosts_verbosity() {
    let run = || {
        let mut ip = latsol_init_param_default();
        ip.backend = LATSOL_BACKEND_CPU;
        ip.num_threads = 1;
        ip.verbosity = LATSOL_VERBOSITY_SILENT;
        ip.log_callback = Some(count);
        let mut ctx = ptr::null_mut();
        ok(unsafe { latsol_init(&ip, &mut ctx) });
        let dims = [4, 4, 4, 4];
        let gauge = load_qdp(ctx, dims, &random_gauge_qdp(dims, 71));
        let source = random_spinor(volume(dims), 72);
        let mut x = vec![0.0; source.len()];
        let mut res = latsol_invert_result_default();
        let p = invert_param();
        ok(unsafe {
            latsol_invert(
                ctx,
                gauge,
                &p,
                x.as_mut_ptr().cast(),
                source.as_ptr().cast(),
                &mut res,
            )
        });
        unsafe {
            ok(latsol_gauge_free(gauge));
            ok(latsol_end(ctx));
        }
        LINES.swap(0, Ordering::SeqCst)
    };
    std::env::remove_var("LATSOL_VERBOSITY");
    assert_eq!(run(), 0, "SILENT logs nothing");
    std::env::set_var("LATSOL_VERBOSITY", "verbose");
    assert!(
        run() > 0,
        "LATSOL_VERBOSITY=verbose logs the progress lines"
    );
    std::env::set_var("LATSOL_VERBOSITY", "nonsense");
    assert_eq!(run(), 0, "an unknown value leaves the host's choice");
    std::env::remove_var("LATSOL_VERBOSITY");
}
