//! latsol-gpu-check, shared timing: CUDA events around calls (median of
//! five), the host's time to issue them, the same calls replayed from a
//! CUDA graph, and the roofline of a large device-to-device copy. Imports
//! only `common` of the binary's modules.

use std::time::Instant;

use cudarc::driver::sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode};
use latsol::backend::cuda::CudaBackend;

use crate::common::{e, R};

/// Milliseconds between two events around `f`, median of five.
pub fn events_ms(gpu: &CudaBackend, mut f: impl FnMut() -> R<()>) -> R<f64> {
    let ctx = gpu.stream().context();
    let mut trials = Vec::new();
    for _ in 0..5 {
        let ev = || {
            ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(e)
        };
        let (a, b) = (ev()?, ev()?);
        a.record(gpu.stream()).map_err(e)?;
        f()?;
        b.record(gpu.stream()).map_err(e)?;
        trials.push(a.elapsed_ms(&b).map_err(e)? as f64);
    }
    trials.sort_by(|x, y| x.total_cmp(y));
    Ok(trials[2])
}

/// Device µs a call of `burst` calls (`call(i)` issues call i, already
/// tuned) captured into a CUDA graph and replayed: the kernels' own time,
/// with no host in the loop (median of five replays).
pub fn graph_us(gpu: &CudaBackend, burst: usize, mut call: impl FnMut(usize) -> R<()>) -> R<f64> {
    let stream = gpu.stream();
    stream
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(e)?;
    let captured = (0..burst).try_for_each(&mut call);
    let graph = stream.end_capture(CUgraphInstantiate_flags(0)).map_err(e)?;
    captured?;
    let graph = graph.ok_or("an empty graph")?;
    graph.upload().map_err(e)?;
    graph.launch().map_err(e)?;
    let graph_ms = events_ms(gpu, || graph.launch().map_err(e))?;
    Ok(graph_ms * 1e3 / burst as f64)
}

/// Host microseconds per call of the last `time_ms`: the time to issue
/// the calls (the kernels run behind); a value near the device time
/// per call means the host, not the device, set the pace.
static LAST_HOST_US: std::sync::Mutex<f64> = std::sync::Mutex::new(0.0);

pub fn last_host_us() -> f64 {
    LAST_HOST_US.lock().map(|v| *v).unwrap_or(f64::NAN)
}

/// Median of a few timings of `f` (milliseconds per call), with events.
pub fn time_ms(gpu: &CudaBackend, reps: usize, mut f: impl FnMut(usize) -> R<()>) -> R<f64> {
    let ctx = gpu.stream().context();
    let ev = || {
        ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(e)
    };
    let (mut trials, mut host) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let (a, b) = (ev()?, ev()?);
        a.record(gpu.stream()).map_err(e)?;
        let t = Instant::now();
        for i in 0..reps {
            f(i)?;
        }
        host.push(t.elapsed().as_secs_f64() * 1e6 / reps as f64);
        b.record(gpu.stream()).map_err(e)?;
        trials.push(a.elapsed_ms(&b).map_err(e)? as f64 / reps as f64);
    }
    trials.sort_by(|x, y| x.total_cmp(y));
    host.sort_by(|x, y| x.total_cmp(y));
    *LAST_HOST_US.lock().map_err(e)? = host[host.len() / 2];
    Ok(trials[trials.len() / 2])
}

/// Device-to-device copy bandwidth (bytes read + written per second).
pub fn roofline(gpu: &CudaBackend) -> R<f64> {
    let bytes = 1usize << 30;
    let s = gpu.stream();
    let src = s.alloc_zeros::<u8>(bytes).map_err(e)?;
    let mut dst = s.alloc_zeros::<u8>(bytes).map_err(e)?;
    s.memcpy_dtod(&src, &mut dst).map_err(e)?;
    let ms = time_ms(gpu, 10, |_| s.memcpy_dtod(&src, &mut dst).map_err(e))?;
    Ok(2.0 * bytes as f64 / (ms * 1e-3))
}
