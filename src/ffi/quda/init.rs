//! `initQuda` … `endQuda`, verbosity, the communicator grid, and the
//! `newQuda*Param` constructors (QUDA's defaults: every field a caller must
//! set left invalid, `struct_size` at its "unchecked" marker). The
//! semantics learned from QUDA's lib/interface_quda.cpp and
//! lib/check_params.h (docs/quda-compat.md); nothing copied.

use std::os::raw::{c_char, c_int, c_void};

use super::abi::*;
use super::convert::{INVALID_DOUBLE, UNSET_SIZE};
use super::errors::quda_call;
use super::state;
use crate::error::Error;

/// `initQuda(device)`: starts the implicit context on `device`, or with -1
/// on the device of the rank's place among the ranks on its node (QUDA's
/// `comm_gpuid`; `LATSOL_DEVICE` overrides it): CUDA when there is a GPU,
/// else the CPU backend.
#[no_mangle]
pub extern "C" fn initQuda(device: c_int) {
    quda_call("initQuda", || {
        if device < -1 {
            return Err(Error::InvalidArgument(format!(
                "device = {device}: not a device"
            )));
        }
        state::init(usize::try_from(device).ok())
    })
}

/// `initQudaDevice(device)`: as `initQuda` (latsol has no separate device
/// and memory start-up).
#[no_mangle]
pub extern "C" fn initQudaDevice(device: c_int) {
    initQuda(device)
}

/// `initQudaMemory()`: nothing to do after `initQudaDevice`.
#[no_mangle]
pub extern "C" fn initQudaMemory() {
    quda_call("initQudaMemory", || state::init(None))
}

/// `endQuda()`: frees the fields and the context.
#[no_mangle]
pub extern "C" fn endQuda() {
    quda_call("endQuda", state::end)
}

/// `setVerbosityQuda(verbosity, prefix, outfile)`: the verbosity of the
/// context's messages (they go to stderr; `outfile` is not used).
///
/// # Safety
/// `prefix` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn setVerbosityQuda(
    verbosity: QudaVerbosity,
    prefix: *const c_char,
    _outfile: *mut c_void,
) {
    quda_call("setVerbosityQuda", || {
        state::set_verbosity(super::convert::verbosity(verbosity));
        if !prefix.is_null() {
            // SAFETY: the caller passes a NUL-terminated string.
            let p = unsafe { std::ffi::CStr::from_ptr(prefix) };
            let p = p.to_string_lossy().into_owned();
            let _ = state::with(|s| {
                s.prefix = p;
                Ok(())
            });
        }
        Ok(())
    })
}

/// `initCommsGridQuda(nDim, dims, func, fdata)`: the grid of ranks (4
/// extents, their product the number of ranks) and `func`, the rank at
/// grid coordinates (NULL: QUDA's order, t fastest), for the context of
/// the next `initQuda`; the first call counts until `endQuda` (`comms`).
///
/// # Safety
/// `dims` points to `nDim` ints; `func`, if set, is callable with `fdata`
/// during this call.
#[no_mangle]
pub unsafe extern "C" fn initCommsGridQuda(
    n_dim: c_int,
    dims: *const c_int,
    func: QudaCommsMap,
    fdata: *mut c_void,
) {
    quda_call("initCommsGridQuda", || {
        if n_dim != 4 || dims.is_null() {
            return Err(Error::InvalidArgument(format!(
                "nDim = {n_dim}, dims = {dims:?}: a grid of 4 dimensions (as QUDA requires)"
            )));
        }
        // SAFETY: the caller passes nDim ints.
        let d = unsafe { std::slice::from_raw_parts(dims, 4) };
        let grid = crate::ffi::ranks::grid_of([d[0], d[1], d[2], d[3]], "dims")?;
        super::comms::set_grid(grid, crate::ffi::ranks::rank_map(func, fdata))
    })
}

/// `setMPICommHandleQuda(mycomm)`: the host's communicator (`mycomm`
/// points to its `MPI_Comm`), for the next `initCommsGridQuda`.
///
/// # Safety
/// `mycomm` is NULL or points to an `MPI_Comm` of the host's.
#[no_mangle]
pub unsafe extern "C" fn setMPICommHandleQuda(mycomm: *mut c_void) {
    // SAFETY: as the caller promises.
    quda_call("setMPICommHandleQuda", || {
        // SAFETY: as the caller promises.
        unsafe { super::comms::set_handle(mycomm) };
        Ok(())
    })
}

/// All-zero `T` (QUDA's structs are integers, floats and raw pointers).
fn zeroed<T>() -> T {
    // SAFETY: every type this is used for is a #[repr(C)] struct of
    // integers, floats, raw pointers and `Option<fn>`, for which all-zero
    // bytes are valid.
    unsafe { std::mem::zeroed() }
}

/// `newQudaGaugeParam()`: the fields a caller must set are invalid.
#[no_mangle]
pub extern "C" fn newQudaGaugeParam() -> QudaGaugeParam {
    let mut p: QudaGaugeParam = zeroed();
    p.struct_size = UNSET_SIZE;
    p.location = QUDA_CPU_FIELD_LOCATION;
    p.X = [QUDA_INVALID_ENUM; 4];
    p.anisotropy = INVALID_DOUBLE;
    p.tadpole_coeff = INVALID_DOUBLE;
    p.scale = 1.0;
    p.r#type = QUDA_INVALID_LINKS;
    p.gauge_order = QUDA_INVALID_GAUGE_ORDER;
    p.t_boundary = QUDA_INVALID_T_BOUNDARY;
    p.cpu_prec = QUDA_INVALID_PRECISION;
    p.cuda_prec = QUDA_INVALID_PRECISION;
    p.reconstruct = QUDA_RECONSTRUCT_INVALID;
    p.cuda_prec_sloppy = QUDA_INVALID_PRECISION;
    p.reconstruct_sloppy = QUDA_RECONSTRUCT_INVALID;
    p.cuda_prec_refinement_sloppy = QUDA_INVALID_PRECISION;
    p.reconstruct_refinement_sloppy = QUDA_RECONSTRUCT_INVALID;
    p.cuda_prec_precondition = QUDA_INVALID_PRECISION;
    p.reconstruct_precondition = QUDA_RECONSTRUCT_INVALID;
    p.cuda_prec_eigensolver = QUDA_INVALID_PRECISION;
    p.reconstruct_eigensolver = QUDA_RECONSTRUCT_INVALID;
    p.gauge_fix = QUDA_GAUGE_FIXED_INVALID;
    p.staggered_phase_type = QUDA_STAGGERED_PHASE_NO;
    p.return_result_gauge = 1;
    p.return_result_mom = 1;
    p
}

/// `newQudaInvertParam()`: QUDA's defaults; the fields a caller must set
/// are invalid, outputs zero.
#[no_mangle]
pub extern "C" fn newQudaInvertParam() -> QudaInvertParam {
    let mut p: QudaInvertParam = zeroed();
    p.struct_size = UNSET_SIZE;
    p.input_location = QUDA_CPU_FIELD_LOCATION;
    p.output_location = QUDA_CPU_FIELD_LOCATION;
    p.dslash_type = QUDA_INVALID_DSLASH;
    p.inv_type = QUDA_INVALID_INVERTER;
    p.mass = INVALID_DOUBLE;
    p.kappa = INVALID_DOUBLE;
    p.m5 = INVALID_DOUBLE;
    p.Ls = QUDA_INVALID_ENUM;
    p.mu = INVALID_DOUBLE;
    p.twist_flavor = QUDA_TWIST_INVALID;
    p.tol = INVALID_DOUBLE;
    p.residual_type = QUDA_L2_RELATIVE_RESIDUAL;
    p.maxiter = QUDA_INVALID_ENUM;
    p.reliable_delta = INVALID_DOUBLE;
    p.reliable_delta_refinement = INVALID_DOUBLE;
    p.solution_accumulator_pipeline = 1;
    p.max_res_increase = 1;
    p.max_res_increase_total = 10;
    p.max_hq_res_increase = 1;
    p.max_hq_res_restart_total = 10;
    p.heavy_quark_check = 10;
    p.num_src = 1;
    p.split_grid = [1; QUDA_MAX_DIM as usize];
    p.num_src_per_sub_partition = 1;
    p.compute_true_res = 1;
    p.solution_type = QUDA_INVALID_SOLUTION;
    p.solve_type = QUDA_INVALID_SOLVE;
    p.matpc_type = QUDA_MATPC_INVALID;
    p.dagger = QUDA_DAG_INVALID;
    p.mass_normalization = QUDA_INVALID_NORMALIZATION;
    p.solver_normalization = QUDA_DEFAULT_NORMALIZATION;
    p.preserve_source = QUDA_PRESERVE_SOURCE_INVALID;
    p.cpu_prec = QUDA_INVALID_PRECISION;
    p.cuda_prec = QUDA_INVALID_PRECISION;
    p.cuda_prec_sloppy = QUDA_INVALID_PRECISION;
    p.cuda_prec_refinement_sloppy = QUDA_INVALID_PRECISION;
    p.cuda_prec_precondition = QUDA_INVALID_PRECISION;
    p.cuda_prec_eigensolver = QUDA_INVALID_PRECISION;
    p.dirac_order = QUDA_INVALID_DIRAC_ORDER;
    p.gamma_basis = QUDA_INVALID_GAMMA_BASIS;
    p.clover_location = QUDA_CPU_FIELD_LOCATION;
    p.clover_cpu_prec = QUDA_INVALID_PRECISION;
    p.clover_cuda_prec = QUDA_INVALID_PRECISION;
    p.clover_cuda_prec_sloppy = QUDA_INVALID_PRECISION;
    p.clover_cuda_prec_refinement_sloppy = QUDA_INVALID_PRECISION;
    p.clover_cuda_prec_precondition = QUDA_INVALID_PRECISION;
    p.clover_cuda_prec_eigensolver = QUDA_INVALID_PRECISION;
    p.clover_order = QUDA_INVALID_CLOVER_ORDER;
    p.use_init_guess = QUDA_USE_INIT_GUESS_NO;
    p.verbosity = QUDA_INVALID_VERBOSITY;
    p.tune = QUDA_TUNE_YES;
    p.inv_type_precondition = QUDA_INVALID_INVERTER;
    // QUDA's "unset" markers (lib/check_params.h: INVALID_INT is
    // QUDA_INVALID_ENUM, INVALID_DOUBLE is DBL_MIN): a solver that needs
    // one of these and finds it unset refuses, as QUDA's does.
    p.Nsteps = QUDA_INVALID_ENUM;
    p.gcrNkrylov = QUDA_INVALID_ENUM;
    p.tol_precondition = INVALID_DOUBLE;
    p.maxiter_precondition = QUDA_INVALID_ENUM;
    p.accelerator_type_precondition = QUDA_INVALID_ACCELERATOR;
    p.dslash_type_precondition = QUDA_INVALID_DSLASH;
    p.verbosity_precondition = QUDA_INVALID_VERBOSITY;
    p.precondition_cycle = 1;
    p.schwarz_type = QUDA_INVALID_SCHWARZ;
    p.omega = 1.0;
    p.ca_basis = QUDA_POWER_BASIS;
    p.n_ev = 8;
    p.max_search_dim = 64;
    p.deflation_grid = 1;
    p.tol_restart = 5e-5;
    p.extlib_type = QUDA_EIGEN_EXTLIB;
    p.native_blas_lapack = QUDA_BOOLEAN_TRUE;
    p.use_mobius_fused_kernel = QUDA_BOOLEAN_TRUE;
    p.distance_pc_t0 = -1;
    p
}

/// `newQudaMultigridParam()`: all fields unset (latsol has no multigrid).
#[no_mangle]
pub extern "C" fn newQudaMultigridParam() -> QudaMultigridParam {
    let mut p: QudaMultigridParam = zeroed();
    p.struct_size = UNSET_SIZE;
    p
}

/// `newQudaEigParam()`: all fields unset (latsol has no eigensolver).
#[no_mangle]
pub extern "C" fn newQudaEigParam() -> QudaEigParam {
    let mut p: QudaEigParam = zeroed();
    p.struct_size = UNSET_SIZE;
    p
}

/// `newQudaGaugeObservableParam()`: nothing requested.
#[no_mangle]
pub extern "C" fn newQudaGaugeObservableParam() -> QudaGaugeObservableParam {
    let mut p: QudaGaugeObservableParam = zeroed();
    p.struct_size = UNSET_SIZE;
    p
}

/// `newQudaGaugeSmearParam()`: no smearing.
#[no_mangle]
pub extern "C" fn newQudaGaugeSmearParam() -> QudaGaugeSmearParam {
    let mut p: QudaGaugeSmearParam = zeroed();
    p.struct_size = UNSET_SIZE;
    p
}

/// `newQudaBLASParam()`: all fields unset.
#[no_mangle]
pub extern "C" fn newQudaBLASParam() -> QudaBLASParam {
    let mut p: QudaBLASParam = zeroed();
    p.struct_size = UNSET_SIZE;
    p
}
