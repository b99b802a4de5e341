! mpi_ranks.f90: latsol on many MPI ranks from Fortran. The program is the
! host: it initialises MPI (`use mpi`), hands latsol_init its communicator
! as Fortran holds it (the integer handle: ip%fortran_comm, with
! ip%fortran_comm_given = 1; under `use mpi_f08` it is comm%MPI_VAL) and a
! grid of ranks along t, and passes its local 4^3 x 4 part of the lattice.
! Checked: a unit gauge field's plaquette is 1 (a sum over every rank), a
! NULL-free even-odd BiCGstab converges with its true residual reported
! the same on every rank, and latsol_apply's residual summed over the ranks
! is within the tolerance. Stops with a non-zero exit code if a check fails.
!
! Usage: mpirun -np N mpi_ranks   (the grid is 1 x 1 x 1 x N)
program mpi_ranks
  use, intrinsic :: iso_c_binding
  use mpi
  use latsol
  implicit none

  integer, parameter :: nx = 4, ny = 4, nz = 4, nt = 4
  integer, parameter :: vol = nx * ny * nz * nt
  real(c_double), allocatable, target :: u(:, :, :)
  real(c_double), allocatable :: b(:, :), x(:, :), mx(:, :)
  type(c_ptr) :: ctx, gauge
  type(latsol_init_param) :: ip
  type(latsol_gauge_param) :: gp
  type(latsol_invert_param) :: p
  type(latsol_invert_result) :: res
  real(c_double) :: plaq(3), local(2), total(2), r
  integer :: ierr, rank, nranks, site, mu, failures

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  failures = 0

  ip = latsol_init_param_default()
  ip%backend = LATSOL_BACKEND_CPU
  ip%num_threads = 1
  ip%verbosity = LATSOL_VERBOSITY_SILENT
  ip%fortran_comm_given = 1
  ip%fortran_comm = MPI_COMM_WORLD
  ip%grid = [1, 1, 1, nranks]
  call check(latsol_init(ip, ctx), 'latsol_init')

  ! Unit links (the anti-periodic sign is latsol's to apply).
  allocate(u(18, 4, vol))
  u = 0
  do site = 1, vol
    do mu = 1, 4
      u(1, mu, site) = 1
      u(9, mu, site) = 1
      u(17, mu, site) = 1
    end do
  end do
  gp = latsol_gauge_param_default()
  gp%dims = [nx, ny, nz, nt]
  gp%order = LATSOL_GAUGE_ORDER_MILC
  call check(latsol_gauge_load(ctx, gp, u, gauge), 'latsol_gauge_load')
  call check(latsol_gauge_plaquette(gauge, plaq), 'latsol_gauge_plaquette')
  call expect(abs(plaq(1) - 1) <= 1e-15_c_double, 'plaquette of the unit field', abs(plaq(1) - 1), &
       1e-15_c_double)

  ! A source on every site of this rank, different on each rank.
  allocate(b(24, vol), x(24, vol), mx(24, vol))
  do site = 1, vol
    b(:, site) = sin(real(site + 97 * rank, c_double) * [(real(mu, c_double), mu = 1, 24)])
  end do
  x = 0
  p = latsol_invert_param_default()
  p%kappa = 0.12_c_double
  p%solver = LATSOL_SOLVER_BICGSTAB
  p%solve_type = LATSOL_SOLVE_DIRECT_PC
  p%tol = 1e-10_c_double
  p%maxiter = 1000
  res = latsol_invert_result_default()
  call check(latsol_invert(ctx, gauge, p, x, b, res), 'latsol_invert')
  call check(latsol_apply(ctx, gauge, p, LATSOL_OP_M, mx, x), 'latsol_apply')
  local = [sum((b - mx)**2), sum(b**2)]
  call MPI_Allreduce(local, total, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  r = sqrt(total(1) / total(2))
  call expect(res%converged == 1 .and. r <= 1.01_c_double * p%tol, '|b - M x| / |b| over the ranks', &
       r, 1.01_c_double * p%tol)

  call check(latsol_gauge_free(gauge), 'latsol_gauge_free')
  call check(latsol_end(ctx), 'latsol_end')
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    print '(a,i0,a,i0,a)', 'fortran mpi_ranks: ', nranks, ' ranks, BiCGstab ', res%iterations, &
         ' iterations'
    if (failures == 0) then
      print '(a)', 'all checks passed'
    else
      print '(i0,a)', failures, ' check(s) FAILED'
    end if
  end if
  call MPI_Finalize(ierr)
  if (failures /= 0) stop 1

contains

  subroutine check(status, what)
    integer(c_int32_t), intent(in) :: status
    character(*), intent(in) :: what
    if (status /= LATSOL_SUCCESS) then
      print '(a,a,a,i0,a,a)', 'FAILED: ', what, ': status ', status, ': ', latsol_string(latsol_last_error())
      failures = failures + 1
    end if
  end subroutine check

  subroutine expect(ok, what, value, bound)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    real(c_double), intent(in) :: value, bound
    if (rank == 0) print '(a,a,es10.3,a,es8.1,a)', what, ': ', value, ' (bound ', bound, ')'
    if (.not. ok) failures = failures + 1
  end subroutine expect
end program mpi_ranks
