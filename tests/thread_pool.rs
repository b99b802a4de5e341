//! A context's work runs on its own threads (issue 16): a CPU context of
//! `num_threads` = 3 runs exactly three worker threads through loading,
//! solving and applying (rayon's global pool is never started, so nothing
//! ignores `num_threads`), and after the last context, gauge and clover are
//! freed no library thread remains. One test in its own binary, so the
//! test harness adds no threads while it counts.

mod ffi_common;

use std::ptr;
use std::time::{Duration, Instant};

use ffi_common::*;
use latsol::ffi::*;

/// The names of this process's threads.
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task (Linux)")
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
        .map(|s| s.trim().to_string())
        .collect()
}

/// Threads that are not the test's own (the harness's main thread and this
/// test's thread were there before).
fn extra_threads(before: &[String]) -> Vec<String> {
    let mut now = thread_names();
    for b in before {
        if let Some(i) = now.iter().position(|n| n == b) {
            now.remove(i);
        }
    }
    now
}

#[test]
fn a_context_keeps_to_its_threads_and_leaves_none_behind() {
    let before = thread_names();
    let mut ip = latsol_init_param_default();
    ip.backend = LATSOL_BACKEND_CPU;
    ip.num_threads = 3;
    ip.verbosity = LATSOL_VERBOSITY_SILENT;
    let mut ctx = ptr::null_mut();
    ok(unsafe { latsol_init(&ip, &mut ctx) });
    let dims = [4, 4, 4, 8];
    let links = random_gauge_qdp(dims, 61);
    let gauge = load_qdp(ctx, dims, &links);
    let mut cp = latsol_clover_param_default();
    cp.kappa = 0.12;
    let table: [*const std::ffi::c_void; 4] = std::array::from_fn(|mu| links[mu].as_ptr().cast());
    let mut clover = ptr::null_mut();
    ok(unsafe { latsol_clover_compute(ctx, gauge, &cp, table.as_ptr().cast(), &mut clover) });
    let source = random_spinor(volume(dims), 62);
    let mut x = vec![0.0; source.len()];
    let mut res = latsol_invert_result_default();
    let mut p = invert_param();
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
    p.dslash = LATSOL_DSLASH_CLOVER_WILSON;
    ok(unsafe {
        latsol_invert_clover(
            ctx,
            gauge,
            clover,
            &p,
            x.as_mut_ptr().cast(),
            source.as_ptr().cast(),
            &mut res,
        )
    });
    // While the context lives: its three workers, nothing else.
    let during = extra_threads(&before);
    assert_eq!(
        during.len(),
        3,
        "threads while the context lives: {during:?}"
    );
    assert!(
        during.iter().all(|n| n.starts_with("latsol-cpu-")),
        "{during:?}"
    );
    unsafe {
        ok(latsol_clover_free(clover));
        ok(latsol_gauge_free(gauge));
        ok(latsol_end(ctx));
    }
    // The pool's threads exit once it is dropped; give them a moment.
    let start = Instant::now();
    loop {
        let left = extra_threads(&before);
        if left.is_empty() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "threads left after latsol_end: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
