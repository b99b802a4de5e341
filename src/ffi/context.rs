//! Contexts through the C ABI: `latsol_init_param`, `latsol_init`,
//! `latsol_end`, and the bridge from a C log callback to the safe API's
//! `Logger`.

use std::ffi::{c_char, c_void, CString};
use std::mem::size_of;
use std::sync::Arc;

use super::boundary::{self, call, guard_value, Handle, Versioned};
use super::enums::{
    count, flag, latsol_backend, latsol_verbosity, BACKEND, LATSOL_BACKEND_CPU,
    LATSOL_BACKEND_CUDA, VERBOSITY,
};
use super::ranks::{self, latsol_rank_map_fn};
use super::status::latsol_status;
use crate::api::{Context, InitParams, Logger, Verbosity};
use crate::error::{Error, Result};

/// A latsol context: one backend (the CPU's threads or one GPU), its
/// logger, and the gauge fields loaded into it. Opaque; made by
/// `latsol_init`, freed by `latsol_end`.
///
/// Several contexts may live at once, in different threads. Calls on one
/// context (and its gauge fields) should not overlap in time; calls on
/// different contexts may.
pub struct latsol_context {
    _opaque: [u8; 0],
}

impl Handle for latsol_context {
    type Target = Context;
    const MAGIC: u64 = 0x6c61_7473_6f6c_6378; // "latsolcx"
    const NAME: &'static str = "latsol_context";
}

/// Receives the log lines of a context: `level` is the line's
/// `LATSOL_VERBOSITY_*`, `msg` a NUL-terminated line without a trailing
/// newline (valid only during the call), `user_data` the pointer given in
/// `latsol_init_param`. It may be called from a latsol worker thread, so it
/// must be thread-safe, and must not call back into latsol.
pub type latsol_log_fn = Option<
    unsafe extern "C" fn(level: latsol_verbosity, msg: *const c_char, user_data: *mut c_void),
>;

/// How to start a context. Start from `latsol_init_param_default()`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct latsol_init_param {
    /// `sizeof(latsol_init_param)` as the caller was compiled.
    pub struct_size: usize,
    /// `LATSOL_BACKEND_*`; default AUTO.
    pub backend: latsol_backend,
    /// The CUDA device ordinal (>= 0), or -1 (the default): the rank's
    /// place among the ranks on its node (QUDA's `initQuda(-1)`), or the
    /// environment variable `LATSOL_DEVICE` (one ordinal, or a list indexed
    /// by that place); device 0 for one process. Two ranks of a node on one
    /// device fail the init unless `LATSOL_SHARE_DEVICES=1`.
    pub device: i32,
    /// CPU worker threads; 0 (the default) means one per core.
    pub num_threads: i32,
    /// `LATSOL_VERBOSITY_*`; default SUMMARIZE (a line per solve). The
    /// environment variable `LATSOL_VERBOSITY` (silent, summarize, verbose
    /// or debug) overrides it, to raise a program's output without
    /// rebuilding it.
    pub verbosity: latsol_verbosity,
    /// Where log lines go; NULL (the default) prints them to stderr.
    pub log_callback: latsol_log_fn,
    /// Passed to `log_callback` unchanged; default NULL.
    pub log_user_data: *mut c_void,
    /// Many processes (a latsol built with MPI): a pointer to the host's
    /// `MPI_Comm` (`&comm`; read and duplicated by `latsol_init`, so the
    /// host may free its own after), or NULL: with a grid of one rank a
    /// single process, with a larger grid `MPI_COMM_WORLD`. MPI is the
    /// host's to initialise and finalise. Default NULL.
    pub mpi_comm: *const c_void,
    /// Ranks along x, y, z, t, each >= 1, their product the communicator's
    /// size; default 1, 1, 1, 1. With more than one rank every lattice a
    /// call takes (`dims`) is the rank's own part, the same on every rank,
    /// every extent even, and every call on the context is made by every
    /// rank in the same order; an error on one rank is an error on all
    /// (`LATSOL_ERROR_OTHER_RANK` where the arguments were in order).
    pub grid: [i32; 4],
    /// The rank at grid coordinates; NULL (the default): t fastest,
    /// `rank = ((x Gy + y) Gz + z) Gt + t`, QUDA's default. MILC's layout
    /// is x fastest; tmLQCD passes its `MPI_Cart_rank`.
    pub rank_map: latsol_rank_map_fn,
    /// Passed to `rank_map` unchanged; default NULL.
    pub rank_map_data: *mut c_void,
    /// 1: global sums in a fixed order, the same bits on every run; 0 (the
    /// default): `MPI_Allreduce`'s. The environment variable
    /// `LATSOL_DETERMINISTIC_SUMS` (1 or 0) overrides it.
    pub deterministic_sums: i32,
    /// Fortran hosts: 1 when `fortran_comm` holds the communicator (then
    /// `mpi_comm` stays NULL); default 0.
    pub fortran_comm_given: i32,
    /// A Fortran communicator handle: the integer of `use mpi`
    /// (`MPI_COMM_WORLD` included), or `comm%MPI_VAL` of `use mpi_f08`;
    /// converted with `MPI_Comm_f2c` and duplicated by `latsol_init`.
    /// Default 0.
    pub fortran_comm: i32,
}

unsafe impl Versioned for latsol_init_param {
    const NAME: &'static str = "latsol_init_param";
    // Before the fields of many processes (issue 34).
    const V1_SIZE: usize = std::mem::offset_of!(latsol_init_param, mpi_comm);
    fn defaults() -> Self {
        let d = InitParams::default();
        latsol_init_param {
            struct_size: size_of::<latsol_init_param>(),
            backend: BACKEND.encode(d.backend),
            device: d.device.map_or(-1, |d| d as i32),
            num_threads: d.num_threads as i32,
            verbosity: VERBOSITY.encode(d.verbosity),
            log_callback: None,
            log_user_data: std::ptr::null_mut(),
            mpi_comm: std::ptr::null(),
            grid: [1; 4],
            rank_map: None,
            rank_map_data: std::ptr::null_mut(),
            deterministic_sums: 0,
            fortran_comm_given: 0,
            fortran_comm: 0,
        }
    }
}

/// A C callback and its user pointer as a `Logger`.
struct CallbackLogger {
    callback: unsafe extern "C" fn(latsol_verbosity, *const c_char, *mut c_void),
    user_data: *mut c_void,
}

// The caller promises (latsol_log_fn's documentation) that the callback
// and its user data may be used from any thread.
unsafe impl Send for CallbackLogger {}
unsafe impl Sync for CallbackLogger {}

impl CallbackLogger {
    fn log(&self, level: Verbosity, msg: &str) {
        let line = CString::new(msg.replace('\0', " ")).unwrap_or_default();
        unsafe { (self.callback)(VERBOSITY.encode(level), line.as_ptr(), self.user_data) };
    }
}

impl latsol_init_param {
    /// The host's communicator: C's (`mpi_comm`), Fortran's
    /// (`fortran_comm`), or none.
    ///
    /// # Safety
    /// `mpi_comm` is NULL or points to a live `MPI_Comm`.
    unsafe fn host_comm(&self) -> Result<Option<ranks::HostComm>> {
        if !flag(self.fortran_comm_given, "param->fortran_comm_given")? {
            // SAFETY: as the caller promises.
            return Ok(unsafe { ranks::read_comm(self.mpi_comm) });
        }
        if !self.mpi_comm.is_null() {
            return Err(Error::InvalidArgument(
                "param->mpi_comm and param->fortran_comm both given: one communicator".into(),
            ));
        }
        ranks::fortran_comm(self.fortran_comm).map(Some)
    }

    /// # Safety
    /// `mpi_comm` is NULL or points to a live `MPI_Comm`.
    unsafe fn to_safe(self) -> Result<InitParams> {
        let logger: Option<Logger> = self.log_callback.map(|callback| {
            let sink = CallbackLogger {
                callback,
                user_data: self.log_user_data,
            };
            Arc::new(move |level: Verbosity, msg: &str| sink.log(level, msg)) as Logger
        });
        Ok(InitParams {
            backend: BACKEND.decode(self.backend, "param->backend")?,
            device: match self.device {
                -1 => None,
                d => Some(count(d, "param->device")?),
            },
            num_threads: count(self.num_threads, "param->num_threads")?,
            verbosity: VERBOSITY.decode(self.verbosity, "param->verbosity")?,
            logger,
            // C hosts see progress through the log callback (verbose level).
            progress: None,
            ranks: unsafe {
                ranks::ranks_params(
                    self.host_comm()?,
                    ranks::grid_of(self.grid, "param->grid")?,
                    ranks::rank_map(self.rank_map, self.rank_map_data),
                    flag(self.deterministic_sums, "param->deterministic_sums")?,
                )?
            },
        })
    }
}

/// The default init parameters: every field a valid choice, `struct_size`
/// set. AUTO backend, device 0, one thread per core, SUMMARIZE, log to
/// stderr.
#[no_mangle]
pub extern "C" fn latsol_init_param_default() -> latsol_init_param {
    // A struct_size of 0 (refused by every call) if building the defaults
    // ever failed: nothing unwinds into C.
    guard_value(
        || latsol_init_param {
            struct_size: 0,
            backend: 0,
            device: 0,
            num_threads: 0,
            verbosity: 0,
            log_callback: None,
            log_user_data: std::ptr::null_mut(),
            mpi_comm: std::ptr::null(),
            grid: [1; 4],
            rank_map: None,
            rank_map_data: std::ptr::null_mut(),
            deterministic_sums: 0,
            fortran_comm_given: 0,
            fortran_comm: 0,
        },
        latsol_init_param::defaults,
    )
}

/// Starts a context and stores its handle in `*ctx`.
///
/// Errors: NULL `param` or `ctx` (NULL_POINTER); a wrong `struct_size`, an
/// unknown enum value or a negative count (INVALID_ARGUMENT); no usable GPU
/// for `LATSOL_BACKEND_CUDA` (NO_DEVICE). On an error `*ctx` is unchanged.
///
/// # Safety
/// `param` is NULL or points to a `latsol_init_param` of its `struct_size`;
/// `ctx` is NULL or points to writable storage for a pointer.
#[no_mangle]
pub unsafe extern "C" fn latsol_init(
    param: *const latsol_init_param,
    ctx: *mut *mut latsol_context,
) -> latsol_status {
    call("latsol_init", || {
        boundary::check_ptr(ctx.cast_const(), "ctx")?;
        let params = unsafe { boundary::read_versioned(param, "param")?.to_safe()? };
        let context = Context::new(params)?;
        unsafe { ctx.write(boundary::into_handle::<latsol_context>(context)) };
        Ok(())
    })
}

/// The backend a context runs on (`LATSOL_BACKEND_CPU` or
/// `LATSOL_BACKEND_CUDA`): what `LATSOL_BACKEND_AUTO` chose.
///
/// Errors: NULL `ctx` or `backend` (NULL_POINTER); a bad handle
/// (INVALID_HANDLE). On an error `*backend` is unchanged.
///
/// # Safety
/// `ctx` is NULL or a handle from `latsol_init`; `backend` is NULL or
/// points to writable storage for a `latsol_backend`.
#[no_mangle]
pub unsafe extern "C" fn latsol_context_backend(
    ctx: *const latsol_context,
    backend: *mut latsol_backend,
) -> latsol_status {
    call("latsol_context_backend", || {
        boundary::check_ptr(backend.cast_const(), "backend")?;
        let context = unsafe { boundary::borrow(ctx, "ctx")? };
        let value = match context.backend_name() {
            "cuda" => LATSOL_BACKEND_CUDA,
            _ => LATSOL_BACKEND_CPU,
        };
        unsafe { backend.write(value) };
        Ok(())
    })
}

/// Ends a context and frees its handle. Gauge fields loaded into it stay
/// valid until freed (they keep what they need), but can no longer be used
/// with a context: free them with `latsol_gauge_free`.
///
/// Errors: NULL (NULL_POINTER); a handle already ended or not made by
/// latsol (INVALID_HANDLE; detected in practice, not guaranteed).
///
/// # Safety
/// `ctx` is NULL or a handle from `latsol_init`.
#[no_mangle]
pub unsafe extern "C" fn latsol_end(ctx: *mut latsol_context) -> latsol_status {
    call("latsol_end", || unsafe { boundary::free(ctx, "ctx") })
}

// The C ABI lets the caller move handles between threads and share them.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Context>();
    send_sync::<crate::api::Gauge>();
};
