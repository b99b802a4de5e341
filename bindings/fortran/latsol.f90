! latsol.f90: the Fortran interface of latsol, Dirac solvers for lattice QCD.
!
! A mirror of include/latsol.h through iso_c_binding: a bind(c) derived type
! for every parameter and result struct (same fields, same order, so the
! same layout), the LATSOL_* constants as enumerators (one enum per C enum
! type; C int is int32_t on every platform latsol supports), and an
! interface for every C function. tests/fortran_module.rs compiles this
! module and compares each type's size and field offsets, each constant's
! value and each interface's arguments with the header, so a struct,
! constant or function added to the header and missing here fails CI.
!
! The language is Fortran 2003, plus the assumed type `type(*), dimension(*)`
! of Fortran 2018 (TS 29113) for the C `void *` field arrays: a program
! passes its native arrays (real(c_double) or real(c_float), of any rank)
! straight to latsol_gauge_load, latsol_invert and latsol_apply, in the
! precision its param struct declares. gfortran >= 4.9, ifort/ifx, nvfortran
! and flang accept it.
!
! Handles (latsol_context *, latsol_gauge *) are type(c_ptr). The strings
! the library returns are C pointers; latsol_string() copies one into a
! Fortran character variable.
!
! Conventions (orders, gamma bases, normalizations) are those of the C
! header: a host field of V sites in MILC order is real(c_double) ::
! u(18, 4, V) (row-major 3x3 complex links, the 4 directions of a site
! together), a spinor real(c_double) :: psi(24, V) in DIRAC order.
module latsol
  use, intrinsic :: iso_c_binding, only: c_int32_t, c_int64_t, c_size_t, c_double, c_char, &
       c_ptr, c_funptr, c_associated, c_f_pointer
  implicit none
  private :: c_int32_t, c_int64_t, c_size_t, c_double, c_char, c_ptr, c_funptr, &
       c_associated, c_f_pointer

  ! ---- enumerations (the #define LATSOL_* of latsol.h) -------------------

  ! latsol_backend
  enum, bind(c)
    enumerator :: LATSOL_BACKEND_AUTO = 0
    enumerator :: LATSOL_BACKEND_CPU = 1
    enumerator :: LATSOL_BACKEND_CUDA = 2
  end enum

  ! latsol_verbosity
  enum, bind(c)
    enumerator :: LATSOL_VERBOSITY_SILENT = 0
    enumerator :: LATSOL_VERBOSITY_SUMMARIZE = 1
    enumerator :: LATSOL_VERBOSITY_VERBOSE = 2
    enumerator :: LATSOL_VERBOSITY_DEBUG = 3
  end enum

  ! latsol_precision
  enum, bind(c)
    enumerator :: LATSOL_PRECISION_DOUBLE = 0
    enumerator :: LATSOL_PRECISION_SINGLE = 1
    enumerator :: LATSOL_PRECISION_HALF = 2
    enumerator :: LATSOL_PRECISION_QUARTER = 3
    enumerator :: LATSOL_PRECISION_PACKED20 = 4
    enumerator :: LATSOL_PRECISION_PACKED30 = 5
  end enum

  ! latsol_reconstruct (the value is the number of reals stored per link)
  enum, bind(c)
    enumerator :: LATSOL_RECONSTRUCT_18 = 18
    enumerator :: LATSOL_RECONSTRUCT_12 = 12
    enumerator :: LATSOL_RECONSTRUCT_8 = 8
    enumerator :: LATSOL_RECONSTRUCT_13 = 13
    enumerator :: LATSOL_RECONSTRUCT_9 = 9
  end enum

  ! latsol_gauge_order
  enum, bind(c)
    enumerator :: LATSOL_GAUGE_ORDER_QDP = 0
    enumerator :: LATSOL_GAUGE_ORDER_MILC = 1
    enumerator :: LATSOL_GAUGE_ORDER_CPS_WILSON = 2
  end enum

  ! latsol_t_boundary
  enum, bind(c)
    enumerator :: LATSOL_T_BOUNDARY_PERIODIC = 0
    enumerator :: LATSOL_T_BOUNDARY_ANTIPERIODIC = 1
  end enum

  ! latsol_dslash
  enum, bind(c)
    enumerator :: LATSOL_DSLASH_WILSON = 0
    enumerator :: LATSOL_DSLASH_CLOVER_WILSON = 1
  end enum

  ! latsol_mass_normalization
  enum, bind(c)
    enumerator :: LATSOL_NORMALIZATION_KAPPA = 0
    enumerator :: LATSOL_NORMALIZATION_MASS = 1
    enumerator :: LATSOL_NORMALIZATION_ASYMMETRIC_MASS = 2
  end enum

  ! latsol_solver
  enum, bind(c)
    enumerator :: LATSOL_SOLVER_CG = 0
    enumerator :: LATSOL_SOLVER_BICGSTAB = 1
    enumerator :: LATSOL_SOLVER_GCR = 2
    enumerator :: LATSOL_SOLVER_BICGSTABL = 3
  end enum

  ! latsol_schwarz
  enum, bind(c)
    enumerator :: LATSOL_SCHWARZ_MULTIPLICATIVE = 0
    enumerator :: LATSOL_SCHWARZ_ADDITIVE = 1
  end enum

  ! latsol_box_solver
  enum, bind(c)
    enumerator :: LATSOL_BOX_SSOR = 0
    enumerator :: LATSOL_BOX_MR = 1
  end enum

  ! latsol_solve_type
  enum, bind(c)
    enumerator :: LATSOL_SOLVE_DIRECT = 0
    enumerator :: LATSOL_SOLVE_DIRECT_PC = 1
    enumerator :: LATSOL_SOLVE_NORMOP = 2
    enumerator :: LATSOL_SOLVE_NORMOP_PC = 3
  end enum

  ! latsol_matpc
  enum, bind(c)
    enumerator :: LATSOL_MATPC_EVEN_EVEN = 0
    enumerator :: LATSOL_MATPC_ODD_ODD = 1
    enumerator :: LATSOL_MATPC_EVEN_EVEN_ASYMMETRIC = 2
    enumerator :: LATSOL_MATPC_ODD_ODD_ASYMMETRIC = 3
  end enum

  ! latsol_dirac_order
  enum, bind(c)
    enumerator :: LATSOL_DIRAC_ORDER_DIRAC = 0
    enumerator :: LATSOL_DIRAC_ORDER_QDP = 1
    enumerator :: LATSOL_DIRAC_ORDER_CPS_WILSON = 2
  end enum

  ! latsol_gamma_basis
  enum, bind(c)
    enumerator :: LATSOL_GAMMA_DEGRAND_ROSSI = 0
    enumerator :: LATSOL_GAMMA_UKQCD = 1
    enumerator :: LATSOL_GAMMA_CHIRAL = 2
  end enum

  ! latsol_mixed_scheme
  enum, bind(c)
    enumerator :: LATSOL_MIXED_RELIABLE_UPDATES = 0
    enumerator :: LATSOL_MIXED_DEFECT_CORRECTION = 1
    enumerator :: LATSOL_MIXED_DEFECT_CORRECTION_CORRECTED = 2
  end enum

  ! latsol_operator
  enum, bind(c)
    enumerator :: LATSOL_OP_M = 0
    enumerator :: LATSOL_OP_MDAG = 1
    enumerator :: LATSOL_OP_MDAG_M = 2
    enumerator :: LATSOL_OP_DSLASH = 3
    enumerator :: LATSOL_OP_MPC = 4
    enumerator :: LATSOL_OP_MPC_DAG = 5
    enumerator :: LATSOL_OP_CLOVER = 6
    enumerator :: LATSOL_OP_CLOVER_INV = 7
  end enum

  ! latsol_multimass_policy
  enum, bind(c)
    enumerator :: LATSOL_MULTIMASS_AUTO = 0
    enumerator :: LATSOL_MULTIMASS_BICGSTAB_M = 1
    enumerator :: LATSOL_MULTIMASS_SEQUENCE = 2
    enumerator :: LATSOL_MULTIMASS_SEQUENCE_MINRES = 3
    enumerator :: LATSOL_MULTIMASS_SEQUENCE_ZERO_GUESS = 4
  end enum

  ! latsol_staggered_solve
  enum, bind(c)
    enumerator :: LATSOL_STAGGERED_SOLVE_EVEN = 0
    enumerator :: LATSOL_STAGGERED_SOLVE_ODD = 1
    enumerator :: LATSOL_STAGGERED_SOLVE_FULL = 2
  end enum

  ! The most shifts (or masses) one multi-shift call takes: the length of
  ! the per-shift arrays in latsol_multishift_result.
  integer(c_int32_t), parameter :: LATSOL_MAX_SHIFTS = 32

  ! latsol_status
  enum, bind(c)
    enumerator :: LATSOL_SUCCESS = 0
    enumerator :: LATSOL_ERROR_INVALID_ARGUMENT = 1
    enumerator :: LATSOL_ERROR_NULL_POINTER = 2
    enumerator :: LATSOL_ERROR_INVALID_HANDLE = 3
    enumerator :: LATSOL_ERROR_UNSUPPORTED = 4
    enumerator :: LATSOL_ERROR_NOT_CONVERGED = 5
    enumerator :: LATSOL_ERROR_BREAKDOWN = 6
    enumerator :: LATSOL_ERROR_OUT_OF_MEMORY = 7
    enumerator :: LATSOL_ERROR_NO_DEVICE = 8
    enumerator :: LATSOL_ERROR_DEVICE = 9
    enumerator :: LATSOL_ERROR_INTERNAL = 10
    enumerator :: LATSOL_ERROR_OTHER_RANK = 11
  end enum

  ! ---- parameter and result structs ----------------------------------------
  ! Field comments are short; latsol.h documents each field and its default.
  ! Get a valid struct from its *_default() function, then change fields.

  ! How to start a context.
  type, bind(c) :: latsol_init_param
    integer(c_size_t) :: struct_size      ! c_sizeof(the struct); set by _default
    integer(c_int32_t) :: backend         ! LATSOL_BACKEND_*
    integer(c_int32_t) :: device          ! CUDA device ordinal; -1 (default): by the rank's place on its node
    integer(c_int32_t) :: num_threads     ! CPU threads; 0: one per core
    integer(c_int32_t) :: verbosity       ! LATSOL_VERBOSITY_*
    type(c_funptr) :: log_callback        ! c_funloc of a bind(c) subroutine, or null
    type(c_ptr) :: log_user_data          ! passed to log_callback unchanged
    type(c_ptr) :: mpi_comm               ! c_loc of the host's C MPI_Comm, or null
    integer(c_int32_t) :: grid(4)         ! ranks along x, y, z, t; default 1
    type(c_funptr) :: rank_map            ! rank from grid coordinates, or null
    type(c_ptr) :: rank_map_data          ! passed to rank_map unchanged
    integer(c_int32_t) :: deterministic_sums  ! 1: sums in a fixed order
    integer(c_int32_t) :: fortran_comm_given  ! 1: fortran_comm is the communicator
    integer(c_int32_t) :: fortran_comm    ! use mpi: the integer; mpi_f08: comm%MPI_VAL
  end type latsol_init_param

  ! How a host gauge field is laid out, and how the library stores it.
  type, bind(c) :: latsol_gauge_param
    integer(c_size_t) :: struct_size
    integer(c_int32_t) :: dims(4)         ! {X, Y, Z, T}, each positive and even
    integer(c_int32_t) :: host_precision  ! LATSOL_PRECISION_DOUBLE or _SINGLE
    integer(c_int32_t) :: order           ! LATSOL_GAUGE_ORDER_*
    integer(c_int32_t) :: t_boundary      ! LATSOL_T_BOUNDARY_*
    real(c_double) :: anisotropy          ! only 1.0
    integer(c_int32_t) :: precision       ! storage precision
    integer(c_int32_t) :: precision_sloppy
    integer(c_int32_t) :: reconstruct     ! LATSOL_RECONSTRUCT_*
    integer(c_int32_t) :: reconstruct_sloppy
    real(c_double) :: su3_tolerance       ! 0: by precision; < 0: no check
    integer(c_int32_t) :: gauge_fixed     ! 1: temporal gauge (unit T links off the last slice)
  end type latsol_gauge_param

  ! What latsol_invert and latsol_apply are asked to do.
  type, bind(c) :: latsol_invert_param
    integer(c_size_t) :: struct_size
    integer(c_int32_t) :: dslash              ! LATSOL_DSLASH_*
    real(c_double) :: kappa
    real(c_double) :: mass
    integer(c_int32_t) :: mass_normalization  ! LATSOL_NORMALIZATION_*
    integer(c_int32_t) :: solver              ! LATSOL_SOLVER_*
    integer(c_int32_t) :: solve_type          ! LATSOL_SOLVE_*
    integer(c_int32_t) :: matpc               ! LATSOL_MATPC_*
    real(c_double) :: tol                     ! target |b - M x| / |b|
    integer(c_int32_t) :: maxiter
    real(c_double) :: reliable_delta
    integer(c_int32_t) :: host_precision      ! of the spinor arrays
    integer(c_int32_t) :: precision
    integer(c_int32_t) :: precision_sloppy
    integer(c_int32_t) :: dirac_order         ! LATSOL_DIRAC_ORDER_*
    integer(c_int32_t) :: gamma_basis         ! LATSOL_GAMMA_*
    integer(c_int32_t) :: use_initial_guess   ! 1: solution holds a guess
    integer(c_int32_t) :: progress_every
    integer(c_int32_t) :: mixed               ! LATSOL_MIXED_*
    real(c_double) :: tol_inner
    integer(c_int32_t) :: cg_stabilised
    integer(c_int64_t) :: sources_per_block   ! latsol_invert_sources: 1 each alone, 0 all in one block
    integer(c_int32_t) :: block_memory_saving ! 1: block BiCGstab's memory-saving form
    real(c_double) :: sap_omega               ! SAP's SSOR relaxation, in (0, 2)
    integer(c_int32_t) :: sap_cycles          ! SAP preconditioner cycles; 0: no SAP
    integer(c_int32_t) :: sap_ssor_iterations ! SSOR steps of each box solve
    integer(c_int32_t) :: sap_extent(4)       ! a box's extents; all 0: default
    integer(c_int32_t) :: gcr_nkrylov         ! GCR's steps between restarts
    integer(c_int32_t) :: sap_schwarz         ! LATSOL_SCHWARZ_*
    integer(c_int32_t) :: sap_box_solver      ! LATSOL_BOX_*
  end type latsol_invert_param

  ! How a clover field is given and stored.
  type, bind(c) :: latsol_clover_param
    integer(c_size_t) :: struct_size
    integer(c_int32_t) :: host_precision  ! of the clover arrays or the links
    integer(c_int32_t) :: precision       ! of the solves that use it
    integer(c_int32_t) :: precision_sloppy
    real(c_double) :: c_sw                ! latsol_clover_compute
    real(c_double) :: kappa               ! latsol_clover_compute
  end type latsol_clover_param

  ! How staggered links are given and stored.
  type, bind(c) :: latsol_staggered_param
    integer(c_size_t) :: struct_size
    integer(c_int32_t) :: dims(4)
    integer(c_int32_t) :: host_precision
    integer(c_int32_t) :: order              ! QDP or MILC
    integer(c_int32_t) :: precision
    integer(c_int32_t) :: precision_sloppy
    integer(c_int32_t) :: fold_phases        ! 1: latsol folds phases and signs
    integer(c_int32_t) :: t_boundary         ! with fold_phases
    real(c_double) :: long_coefficient       ! with fold_phases
    integer(c_int32_t) :: long_reconstruct   ! 18, 13 or 9
    integer(c_int32_t) :: long_reconstruct_sloppy
    integer(c_int32_t) :: refinement_copy    ! 1: a third copy for multi-shift refinement
    integer(c_int32_t) :: precision_refinement
    integer(c_int32_t) :: long_reconstruct_refinement
  end type latsol_staggered_param

  ! A staggered solve.
  type, bind(c) :: latsol_staggered_invert_param
    integer(c_size_t) :: struct_size
    real(c_double) :: mass
    integer(c_int32_t) :: solve              ! LATSOL_STAGGERED_SOLVE_*
    real(c_double) :: tol
    integer(c_int32_t) :: maxiter
    integer(c_int32_t) :: host_precision
    integer(c_int32_t) :: precision
    integer(c_int32_t) :: precision_sloppy
    real(c_double) :: reliable_delta
    integer(c_int32_t) :: cg_stabilised
    integer(c_int32_t) :: use_init_guess
    real(c_double) :: tol_hq                 ! heavy-quark stop criterion; 0: off
    integer(c_int32_t) :: solver             ! LATSOL_SOLVER_CG, _BICGSTAB or _BICGSTABL
    integer(c_int32_t) :: bicgstab_l         ! l of BiCGstab(l); default 4
    integer(c_int32_t) :: refinement_precision_set  ! 1: refine in precision_refinement
    integer(c_int32_t) :: precision_refinement
  end type latsol_staggered_invert_param

  ! What a solve did.
  type, bind(c) :: latsol_invert_result
    integer(c_size_t) :: struct_size          ! set by the caller (_default)
    integer(c_int32_t) :: iterations
    real(c_double) :: true_residual
    real(c_double) :: iterated_residual
    real(c_double) :: seconds
    real(c_double) :: gflops
    integer(c_int32_t) :: converged           ! 1 if true_residual <= tol
    integer(c_int32_t) :: restarts
    integer(c_int32_t) :: reliable_updates
    real(c_double) :: true_residual_hq        ! staggered: MILC heavy-quark residual
  end type latsol_invert_result

  ! What a multi-shift or multi-mass solve did. Set struct_size (start from
  ! latsol_multishift_result_default()); entry (i) is the i-th shift or
  ! kappa of the call, for i <= num_shifts.
  type, bind(c) :: latsol_multishift_result
    integer(c_size_t) :: struct_size
    integer(c_int32_t) :: num_shifts
    integer(c_int32_t) :: iterations          ! all phases together
    integer(c_int32_t) :: multishift_iterations
    integer(c_int32_t) :: converged           ! 1 if every shift met its tolerance
    integer(c_int32_t) :: reliable_updates
    integer(c_int32_t) :: policy_used         ! LATSOL_MULTIMASS_*
    real(c_double) :: seconds
    real(c_double) :: gflops
    integer(c_int32_t) :: shift_iterations(LATSOL_MAX_SHIFTS)
    integer(c_int32_t) :: shift_multishift_iterations(LATSOL_MAX_SHIFTS)
    real(c_double) :: true_residual(LATSOL_MAX_SHIFTS)
    real(c_double) :: residual_after_multishift(LATSOL_MAX_SHIFTS)
    integer(c_int32_t) :: shift_converged(LATSOL_MAX_SHIFTS)
  end type latsol_multishift_result

  ! ---- the C functions ------------------------------------------------------

  interface
    function latsol_init_param_default() result(param) bind(c, name='latsol_init_param_default')
      import :: latsol_init_param
      type(latsol_init_param) :: param
    end function latsol_init_param_default

    function latsol_init(param, ctx) result(status) bind(c, name='latsol_init')
      import :: c_int32_t, c_ptr, latsol_init_param
      type(latsol_init_param), intent(in) :: param
      type(c_ptr), intent(out) :: ctx
      integer(c_int32_t) :: status
    end function latsol_init

    ! backend: the backend the context runs on (LATSOL_BACKEND_CPU or _CUDA;
    ! AUTO resolved at init).
    function latsol_context_backend(ctx, backend) result(status) &
         bind(c, name='latsol_context_backend')
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int32_t), intent(out) :: backend
      integer(c_int32_t) :: status
    end function latsol_context_backend

    function latsol_end(ctx) result(status) bind(c, name='latsol_end')
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: ctx
      integer(c_int32_t) :: status
    end function latsol_end

    function latsol_gauge_param_default() result(param) bind(c, name='latsol_gauge_param_default')
      import :: latsol_gauge_param
      type(latsol_gauge_param) :: param
    end function latsol_gauge_param_default

    ! host_gauge: for LATSOL_GAUGE_ORDER_QDP a type(c_ptr) :: table(4) of
    ! c_loc(links of direction mu); for MILC and CPS_WILSON the one array
    ! of V*4*18 reals itself.
    function latsol_gauge_load(ctx, param, host_gauge, gauge) result(status) &
         bind(c, name='latsol_gauge_load')
      import :: c_int32_t, c_ptr, latsol_gauge_param
      type(c_ptr), value :: ctx
      type(latsol_gauge_param), intent(in) :: param
      type(*), dimension(*), intent(in) :: host_gauge
      type(c_ptr), intent(out) :: gauge
      integer(c_int32_t) :: status
    end function latsol_gauge_load

    function latsol_gauge_free(gauge) result(status) bind(c, name='latsol_gauge_free')
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: gauge
      integer(c_int32_t) :: status
    end function latsol_gauge_free

    function latsol_gauge_plaquette(gauge, plaq) result(status) &
         bind(c, name='latsol_gauge_plaquette')
      import :: c_int32_t, c_ptr, c_double
      type(c_ptr), value :: gauge
      real(c_double), intent(out) :: plaq(3)
      integer(c_int32_t) :: status
    end function latsol_gauge_plaquette

    function latsol_invert_param_default() result(param) &
         bind(c, name='latsol_invert_param_default')
      import :: latsol_invert_param
      type(latsol_invert_param) :: param
    end function latsol_invert_param_default

    function latsol_invert_result_default() result(res) &
         bind(c, name='latsol_invert_result_default')
      import :: latsol_invert_result
      type(latsol_invert_result) :: res
    end function latsol_invert_result_default

    ! solution and source: V*24 reals each, as param%host_precision says.
    function latsol_invert(ctx, gauge, param, solution, source, result) result(status) &
         bind(c, name='latsol_invert')
      import :: c_int32_t, c_ptr, latsol_invert_param, latsol_invert_result
      type(c_ptr), value :: ctx
      type(c_ptr), value :: gauge
      type(latsol_invert_param), intent(in) :: param
      type(*), dimension(*), intent(inout) :: solution
      type(*), dimension(*), intent(in) :: source
      type(latsol_invert_result), intent(inout) :: result
      integer(c_int32_t) :: status
    end function latsol_invert

    function latsol_multishift_result_default() result(res) &
         bind(c, name='latsol_multishift_result_default')
      import :: latsol_multishift_result
      type(latsol_multishift_result) :: res
    end function latsol_multishift_result_default

    ! (A + shifts(i)) x_i = b for num_shifts shifts by multi-shift CG.
    ! solutions: a type(c_ptr) :: table(num_shifts) of c_loc(x_i); leave
    ! tol_shifts out to solve every shift to param%tol.
    function latsol_invert_multishift(ctx, gauge, param, num_shifts, shifts, &
         tol_shifts, solutions, source, result) result(status) &
         bind(c, name='latsol_invert_multishift')
      import :: c_int32_t, c_ptr, c_double, latsol_invert_param, latsol_multishift_result
      type(c_ptr), value :: ctx
      type(c_ptr), value :: gauge
      type(latsol_invert_param), intent(in) :: param
      integer(c_int32_t), value :: num_shifts
      real(c_double), intent(in) :: shifts(*)
      real(c_double), intent(in), optional :: tol_shifts(*)
      type(c_ptr), intent(in) :: solutions(*)
      type(*), dimension(*), intent(in) :: source
      type(latsol_multishift_result), intent(inout) :: result
      integer(c_int32_t) :: status
    end function latsol_invert_multishift

    ! M(kappas(i)) x_i = b for num_masses hopping parameters, as the
    ! policy (LATSOL_MULTIMASS_*) says; solutions and tol_masses as for
    ! latsol_invert_multishift.
    function latsol_invert_multimass(ctx, gauge, param, num_masses, kappas, &
         tol_masses, policy, solutions, source, result) result(status) &
         bind(c, name='latsol_invert_multimass')
      import :: c_int32_t, c_ptr, c_double, latsol_invert_param, latsol_multishift_result
      type(c_ptr), value :: ctx
      type(c_ptr), value :: gauge
      type(latsol_invert_param), intent(in) :: param
      integer(c_int32_t), value :: num_masses
      real(c_double), intent(in) :: kappas(*)
      real(c_double), intent(in), optional :: tol_masses(*)
      integer(c_int32_t), value :: policy
      type(c_ptr), intent(in) :: solutions(*)
      type(*), dimension(*), intent(in) :: source
      type(latsol_multishift_result), intent(inout) :: result
      integer(c_int32_t) :: status
    end function latsol_invert_multimass

    ! M x_k = b_k for num_sources sources in one call (the next source's
    ! upload behind the current solve on the GPU); results(k) for source k.
    function latsol_invert_sources(ctx, gauge, param, num_sources, solutions, &
         sources, results) result(status) bind(c, name='latsol_invert_sources')
      import :: c_int32_t, c_ptr, latsol_invert_param, latsol_invert_result
      type(c_ptr), value :: ctx
      type(c_ptr), value :: gauge
      type(latsol_invert_param), intent(in) :: param
      integer(c_int32_t), value :: num_sources
      type(c_ptr), intent(in) :: solutions(*)
      type(c_ptr), intent(in) :: sources(*)
      type(latsol_invert_result), intent(inout) :: results(*)
      integer(c_int32_t) :: status
    end function latsol_invert_sources

    function latsol_apply(ctx, gauge, param, op, out, in) result(status) &
         bind(c, name='latsol_apply')
      import :: c_int32_t, c_ptr, latsol_invert_param
      type(c_ptr), value :: ctx
      type(c_ptr), value :: gauge
      type(latsol_invert_param), intent(in) :: param
      integer(c_int32_t), value :: op
      type(*), dimension(*), intent(inout) :: out
      type(*), dimension(*), intent(in) :: in
      integer(c_int32_t) :: status
    end function latsol_apply

    function latsol_clover_param_default() result(param) &
         bind(c, name='latsol_clover_param_default')
      import :: latsol_clover_param
      type(latsol_clover_param) :: param
    end function latsol_clover_param_default

    ! host_clover (and host_inverse, or c_null_ptr): V*72 reals in QUDA's
    ! packed clover order, as param%host_precision says.
    function latsol_clover_load(ctx, gauge, param, host_clover, host_inverse, clover) &
         result(status) bind(c, name='latsol_clover_load')
      import :: c_int32_t, c_ptr, latsol_clover_param
      type(c_ptr), value :: ctx
      type(c_ptr), value :: gauge
      type(latsol_clover_param), intent(in) :: param
      type(*), dimension(*), intent(in) :: host_clover
      type(c_ptr), value :: host_inverse
      type(c_ptr), intent(out) :: clover
      integer(c_int32_t) :: status
    end function latsol_clover_load

    ! host_gauge: the links the gauge field was loaded from, as for
    ! latsol_gauge_load.
    function latsol_clover_compute(ctx, gauge, param, host_gauge, clover) result(status) &
         bind(c, name='latsol_clover_compute')
      import :: c_int32_t, c_ptr, latsol_clover_param
      type(c_ptr), value :: ctx
      type(c_ptr), value :: gauge
      type(latsol_clover_param), intent(in) :: param
      type(*), dimension(*), intent(in) :: host_gauge
      type(c_ptr), intent(out) :: clover
      integer(c_int32_t) :: status
    end function latsol_clover_compute

    function latsol_clover_free(clover) result(status) bind(c, name='latsol_clover_free')
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: clover
      integer(c_int32_t) :: status
    end function latsol_clover_free

    function latsol_invert_clover(ctx, gauge, clover, param, solution, source, result) &
         result(status) bind(c, name='latsol_invert_clover')
      import :: c_int32_t, c_ptr, latsol_invert_param, latsol_invert_result
      type(c_ptr), value :: ctx
      type(c_ptr), value :: gauge
      type(c_ptr), value :: clover
      type(latsol_invert_param), intent(in) :: param
      type(*), dimension(*), intent(inout) :: solution
      type(*), dimension(*), intent(in) :: source
      type(latsol_invert_result), intent(inout) :: result
      integer(c_int32_t) :: status
    end function latsol_invert_clover

    function latsol_invert_sources_clover(ctx, gauge, clover, param, num_sources, &
         solutions, sources, results) result(status) &
         bind(c, name='latsol_invert_sources_clover')
      import :: c_int32_t, c_ptr, latsol_invert_param, latsol_invert_result
      type(c_ptr), value :: ctx
      type(c_ptr), value :: gauge
      type(c_ptr), value :: clover
      type(latsol_invert_param), intent(in) :: param
      integer(c_int32_t), value :: num_sources
      type(c_ptr), intent(in) :: solutions(*)
      type(c_ptr), intent(in) :: sources(*)
      type(latsol_invert_result), intent(inout) :: results(*)
      integer(c_int32_t) :: status
    end function latsol_invert_sources_clover

    function latsol_apply_clover(ctx, gauge, clover, param, op, out, in) result(status) &
         bind(c, name='latsol_apply_clover')
      import :: c_int32_t, c_ptr, latsol_invert_param
      type(c_ptr), value :: ctx
      type(c_ptr), value :: gauge
      type(c_ptr), value :: clover
      type(latsol_invert_param), intent(in) :: param
      integer(c_int32_t), value :: op
      type(*), dimension(*), intent(inout) :: out
      type(*), dimension(*), intent(in) :: in
      integer(c_int32_t) :: status
    end function latsol_apply_clover

    function latsol_invert_multishift_clover(ctx, gauge, clover, param, num_shifts, &
         shifts, tol_shifts, solutions, source, result) result(status) &
         bind(c, name='latsol_invert_multishift_clover')
      import :: c_int32_t, c_ptr, c_double, latsol_invert_param, latsol_multishift_result
      type(c_ptr), value :: ctx
      type(c_ptr), value :: gauge
      type(c_ptr), value :: clover
      type(latsol_invert_param), intent(in) :: param
      integer(c_int32_t), value :: num_shifts
      real(c_double), intent(in) :: shifts(*)
      real(c_double), intent(in), optional :: tol_shifts(*)
      type(c_ptr), intent(in) :: solutions(*)
      type(*), dimension(*), intent(in) :: source
      type(latsol_multishift_result), intent(inout) :: result
      integer(c_int32_t) :: status
    end function latsol_invert_multishift_clover

    function latsol_staggered_param_default() result(param) &
         bind(c, name='latsol_staggered_param_default')
      import :: latsol_staggered_param
      type(latsol_staggered_param) :: param
    end function latsol_staggered_param_default

    ! host_fat, host_long: as host_gauge of latsol_gauge_load (QDP: four
    ! c_loc addresses; MILC: one array); host_long absent: naive operator.
    function latsol_staggered_load(ctx, param, host_fat, host_long, links) &
         result(status) bind(c, name='latsol_staggered_load')
      import :: c_int32_t, c_ptr, latsol_staggered_param
      type(c_ptr), value :: ctx
      type(latsol_staggered_param), intent(in) :: param
      type(*), dimension(*), intent(in) :: host_fat
      type(*), dimension(*), intent(in), optional :: host_long
      type(c_ptr), intent(out) :: links
      integer(c_int32_t) :: status
    end function latsol_staggered_load

    function latsol_staggered_free(links) result(status) &
         bind(c, name='latsol_staggered_free')
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: links
      integer(c_int32_t) :: status
    end function latsol_staggered_free

    function latsol_staggered_invert_param_default() result(param) &
         bind(c, name='latsol_staggered_invert_param_default')
      import :: latsol_staggered_invert_param
      type(latsol_staggered_invert_param) :: param
    end function latsol_staggered_invert_param_default

    function latsol_invert_staggered(ctx, links, param, solution, source, result) &
         result(status) bind(c, name='latsol_invert_staggered')
      import :: c_int32_t, c_ptr, latsol_staggered_invert_param, latsol_invert_result
      type(c_ptr), value :: ctx
      type(c_ptr), value :: links
      type(latsol_staggered_invert_param), intent(in) :: param
      type(*), dimension(*), intent(inout) :: solution
      type(*), dimension(*), intent(in) :: source
      type(latsol_invert_result), intent(inout) :: result
      integer(c_int32_t) :: status
    end function latsol_invert_staggered

    function latsol_apply_staggered(ctx, links, param, op, out, in) result(status) &
         bind(c, name='latsol_apply_staggered')
      import :: c_int32_t, c_ptr, latsol_staggered_invert_param
      type(c_ptr), value :: ctx
      type(c_ptr), value :: links
      type(latsol_staggered_invert_param), intent(in) :: param
      integer(c_int32_t), value :: op
      type(*), dimension(*), intent(inout) :: out
      type(*), dimension(*), intent(in) :: in
      integer(c_int32_t) :: status
    end function latsol_apply_staggered

    ! (A + shifts(i)) x_i = b, A = 4m^2 - D_pq D_qp on the parity of
    ! param%solve (or M^dag M for FULL); solutions as c_loc addresses.
    function latsol_invert_multishift_staggered(ctx, links, param, num_shifts, shifts, &
         tol_shifts, solutions, source, result) result(status) &
         bind(c, name='latsol_invert_multishift_staggered')
      import :: c_int32_t, c_ptr, c_double, latsol_staggered_invert_param, &
           latsol_multishift_result
      type(c_ptr), value :: ctx
      type(c_ptr), value :: links
      type(latsol_staggered_invert_param), intent(in) :: param
      integer(c_int32_t), value :: num_shifts
      real(c_double), intent(in) :: shifts(*)
      real(c_double), intent(in), optional :: tol_shifts(*)
      type(c_ptr), intent(in) :: solutions(*)
      type(*), dimension(*), intent(in) :: source
      type(latsol_multishift_result), intent(inout) :: result
      integer(c_int32_t) :: status
    end function latsol_invert_multishift_staggered

    function latsol_status_string(status) result(str) bind(c, name='latsol_status_string')
      import :: c_int32_t, c_ptr
      integer(c_int32_t), value :: status
      type(c_ptr) :: str
    end function latsol_status_string

    function latsol_last_error() result(str) bind(c, name='latsol_last_error')
      import :: c_ptr
      type(c_ptr) :: str
    end function latsol_last_error

    function latsol_version() result(str) bind(c, name='latsol_version')
      import :: c_ptr
      type(c_ptr) :: str
    end function latsol_version
  end interface

  ! The C library's strlen, for latsol_string (not part of latsol's ABI).
  interface
    function latsol_c_strlen(s) result(n) bind(c, name='strlen')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function latsol_c_strlen
  end interface

contains

  ! A copy of the NUL-terminated C string at `p` (from latsol_version,
  ! latsol_status_string or latsol_last_error); '' for a null pointer.
  function latsol_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = int(latsol_c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function latsol_string

end module latsol
