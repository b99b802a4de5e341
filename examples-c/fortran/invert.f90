! invert.f90: a Wilson solve through latsol's Fortran module.
!
! A Fortran program passes its own arrays: the links as
! real(c_double) :: u(18, 4, V) (per site the 4 directions together, each a
! row-major 3x3 complex matrix: LATSOL_GAUGE_ORDER_MILC, sites in even-odd
! order), or as four arrays, one per direction, through a table of c_loc
! pointers (LATSOL_GAUGE_ORDER_QDP); spinors as real(c_double) :: psi(24, V)
! (spin outer, colour inner: LATSOL_DIRAC_ORDER_DIRAC).
!
! Here: random SU(3) links on a 4^3 x 8 lattice loaded both ways (the
! plaquettes must agree), a point source, an even-odd BiCGstab on the CPU
! backend, and the true residual |b - M x| / |b| recomputed with
! latsol_apply; then latsol_invert_multishift for (M^dag M + sigma_i) x_i = b
! with three shifts (solutions passed as a table of c_loc pointers), each
! residual recomputed with latsol_apply(LATSOL_OP_MDAG_M). Stops with a
! non-zero exit code if a check fails.
program invert
  use, intrinsic :: iso_c_binding
  use latsol
  implicit none

  integer, parameter :: nx = 4, ny = 4, nz = 4, nt = 8
  integer, parameter :: vol = nx * ny * nz * nt
  real(c_double), allocatable, target :: u_milc(:, :, :), u_qdp(:, :, :)
  real(c_double), allocatable :: b(:, :), x(:, :), mx(:, :)
  real(c_double), allocatable, target :: xs(:, :, :)
  real(c_double), parameter :: shifts(3) = [0.0_c_double, 0.05_c_double, 0.5_c_double]
  real(c_double), parameter :: tol_shifts(3) = [1e-10_c_double, 1e-10_c_double, 1e-9_c_double]
  type(c_ptr) :: table(4), solutions(3), ctx, gauge_milc, gauge_qdp
  type(latsol_multishift_result) :: mres
  type(latsol_init_param) :: ip
  type(latsol_gauge_param) :: gp
  type(latsol_invert_param) :: p
  type(latsol_invert_result) :: res
  real(c_double) :: plaq_milc(3), plaq_qdp(3), r
  integer :: site, mu, failures, k

  failures = 0
  print '(a,a)', 'fortran invert: latsol ', latsol_string(latsol_version())

  allocate(u_milc(18, 4, vol), u_qdp(18, vol, 4))
  call seed_rng()
  do site = 1, vol
    do mu = 1, 4
      call random_su3(u_milc(:, mu, site))
      u_qdp(:, site, mu) = u_milc(:, mu, site)
    end do
  end do

  ip = latsol_init_param_default()
  ip%backend = LATSOL_BACKEND_CPU
  ip%verbosity = LATSOL_VERBOSITY_SILENT
  call check(latsol_init(ip, ctx), 'latsol_init')

  gp = latsol_gauge_param_default()
  gp%dims = [nx, ny, nz, nt]
  gp%host_precision = LATSOL_PRECISION_DOUBLE
  gp%t_boundary = LATSOL_T_BOUNDARY_ANTIPERIODIC
  gp%order = LATSOL_GAUGE_ORDER_MILC
  call check(latsol_gauge_load(ctx, gp, u_milc, gauge_milc), 'latsol_gauge_load (MILC)')
  do mu = 1, 4
    table(mu) = c_loc(u_qdp(1, 1, mu))
  end do
  gp%order = LATSOL_GAUGE_ORDER_QDP
  call check(latsol_gauge_load(ctx, gp, table, gauge_qdp), 'latsol_gauge_load (QDP)')
  call check(latsol_gauge_plaquette(gauge_milc, plaq_milc), 'latsol_gauge_plaquette')
  call check(latsol_gauge_plaquette(gauge_qdp, plaq_qdp), 'latsol_gauge_plaquette')
  print '(a,f16.12)', 'plaquette ', plaq_milc(1)
  call expect(plaq_milc(1) == plaq_qdp(1), 'plaquette MILC - QDP', abs(plaq_milc(1) - plaq_qdp(1)), &
       0.0_c_double)

  ! A point source at the origin (an even site: index 1), spin 0, colour 0.
  allocate(b(24, vol), x(24, vol), mx(24, vol))
  b = 0
  x = 0
  b(1, 1) = 1

  p = latsol_invert_param_default()
  p%kappa = 0.12_c_double
  p%solver = LATSOL_SOLVER_BICGSTAB
  p%solve_type = LATSOL_SOLVE_DIRECT_PC
  p%matpc = LATSOL_MATPC_EVEN_EVEN
  p%tol = 1e-10_c_double
  p%maxiter = 2000
  p%host_precision = LATSOL_PRECISION_DOUBLE
  p%dirac_order = LATSOL_DIRAC_ORDER_DIRAC
  p%gamma_basis = LATSOL_GAMMA_DEGRAND_ROSSI
  res = latsol_invert_result_default()
  call check(latsol_invert(ctx, gauge_milc, p, x, b, res), 'latsol_invert')
  print '(a,i0,a,es10.3,a,f7.3,a)', 'even-odd BiCGstab: ', res%iterations, &
       ' iterations, true residual ', res%true_residual, ', ', res%seconds, ' s'
  call expect(res%converged == 1 .and. res%true_residual <= p%tol, 'true residual (latsol)', &
       res%true_residual, p%tol)

  call check(latsol_apply(ctx, gauge_milc, p, LATSOL_OP_M, mx, x), 'latsol_apply')
  r = sqrt(sum((b - mx)**2) / sum(b**2))
  call expect(r <= 1.01_c_double * p%tol, '|b - M x| / |b| (latsol_apply)', r, 1.01_c_double * p%tol)

  ! (M^dag M + sigma_i) x_i = b on the full lattice, one tolerance each.
  allocate(xs(24, vol, 3))
  xs = 0
  do k = 1, 3
    solutions(k) = c_loc(xs(1, 1, k))
  end do
  p%solve_type = LATSOL_SOLVE_NORMOP
  mres = latsol_multishift_result_default()
  call check(latsol_invert_multishift(ctx, gauge_milc, p, 3, shifts, tol_shifts, solutions, b, &
       mres), 'latsol_invert_multishift')
  print '(a,i0,a,i0,a)', 'multi-shift CG, 3 shifts: ', mres%iterations, ' iterations (', &
       mres%multishift_iterations, ' multi-shift)'
  do k = 1, 3
    call check(latsol_apply(ctx, gauge_milc, p, LATSOL_OP_MDAG_M, mx, xs(:, :, k)), 'latsol_apply')
    r = sqrt(sum((b - mx - shifts(k) * xs(:, :, k))**2) / sum(b**2))
    call expect(mres%shift_converged(k) == 1 .and. r <= tol_shifts(k), &
         '|b - (A + sigma) x| / |b| (latsol_apply)', r, tol_shifts(k))
  end do
  deallocate(xs)

  call check(latsol_gauge_free(gauge_milc), 'latsol_gauge_free')
  call check(latsol_gauge_free(gauge_qdp), 'latsol_gauge_free')
  call check(latsol_end(ctx), 'latsol_end')
  deallocate(u_milc, u_qdp, b, x, mx)

  if (failures > 0) then
    print '(a,i0,a)', 'fortran invert: ', failures, ' check(s) FAILED'
    error stop 1
  end if
  print '(a)', 'fortran invert: all checks passed'

contains

  ! Stops with the library's message when a call fails.
  subroutine check(status, what)
    integer(c_int32_t), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= LATSOL_SUCCESS) then
      print '(5a)', what, ' failed: ', latsol_string(latsol_status_string(status)), ': ', &
           latsol_string(latsol_last_error())
      error stop 1
    end if
  end subroutine check

  subroutine expect(ok, what, value, limit)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    real(c_double), intent(in) :: value, limit
    character(len=6) :: verdict
    character(len=40) :: label
    label = what
    verdict = 'ok'
    if (.not. ok) then
      verdict = 'FAILED'
      failures = failures + 1
    end if
    print '(2x,a,1x,es10.3,a,es8.1,a,a)', label, value, ' (limit ', limit, ') ', trim(verdict)
  end subroutine expect

  ! The same field on every run.
  subroutine seed_rng()
    integer :: n
    integer, allocatable :: seed(:)
    call random_seed(size=n)
    allocate(seed(n))
    seed = 2026
    call random_seed(put=seed)
  end subroutine seed_rng

  ! A random SU(3) matrix as 18 reals, row-major (re, im): two random rows
  ! made orthonormal, the third the complex conjugate of their cross
  ! product, which makes the determinant 1.
  subroutine random_su3(link)
    real(c_double), intent(out) :: link(18)
    complex(c_double) :: m(3, 3)
    real(c_double) :: re(3), im(3)
    integer :: row, col
    do row = 1, 2
      call random_number(re)
      call random_number(im)
      m(row, :) = cmplx(2 * re - 1, 2 * im - 1, c_double)
    end do
    m(1, :) = m(1, :) / sqrt(sum(abs(m(1, :))**2))
    m(2, :) = m(2, :) - dot_product(m(1, :), m(2, :)) * m(1, :)
    m(2, :) = m(2, :) / sqrt(sum(abs(m(2, :))**2))
    m(3, 1) = conjg(m(1, 2) * m(2, 3) - m(1, 3) * m(2, 2))
    m(3, 2) = conjg(m(1, 3) * m(2, 1) - m(1, 1) * m(2, 3))
    m(3, 3) = conjg(m(1, 1) * m(2, 2) - m(1, 2) * m(2, 1))
    do row = 1, 3
      do col = 1, 3
        link(2 * (3 * (row - 1) + col) - 1) = real(m(row, col), c_double)
        link(2 * (3 * (row - 1) + col)) = aimag(m(row, col))
      end do
    end do
  end subroutine random_su3

end program invert
