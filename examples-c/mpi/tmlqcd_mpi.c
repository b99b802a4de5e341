/*
 * tmlqcd_mpi.c: QUDA's interface on many MPI ranks, called the way tmLQCD's
 * quda_interface.c calls it: tmLQCD's own Cartesian communicator (its
 * dimensions ordered t, x, y, z), handed to QUDA through initCommsGridQuda
 * with a map function that asks MPI_Cart_rank for the rank at QUDA's grid
 * coordinates (x, y, z, t), then initQuda(-1). Each rank passes its local
 * part of the golden clover set's links (QDP order, the anti-periodic sign
 * on the global last time slice), the clover term computed by the library
 * (compute_clover), a MAT solution by CG on the even-odd normal equations.
 * Checked over all ranks: |b - M x| / |b| with MatQuda, the reported
 * true_res, and the solution against one rank's (the same program on
 * MPI_COMM_SELF first: endQuda, then the grid). Exits non-zero on a failed
 * check.
 *
 * Usage: mpirun -np N tmlqcd_mpi CLOVER_DIR X,Y,Z,T
 */
#include <mpi.h>
#include <string.h>

#include <quda.h>

#include "mpi_util.h"

/* QUDA's coordinates (x, y, z, t) to a rank of tmLQCD's (t, x, y, z) grid. */
static int cart_rank(const int *coords, void *data) {
  const int txyz[4] = {coords[3], coords[0], coords[1], coords[2]};
  int rank;
  MPI_Cart_rank(*(MPI_Comm *)data, txyz, &rank);
  return rank;
}

static QudaInvertParam invert_param(void) {
  QudaInvertParam ip = newQudaInvertParam();
  ip.dslash_type = QUDA_CLOVER_WILSON_DSLASH;
  ip.inv_type = QUDA_CG_INVERTER;
  ip.kappa = 0.125;
  ip.clover_csw = 1.75;
  ip.clover_coeff = 0.125 * 1.75;
  ip.compute_clover = 1;
  ip.compute_clover_inverse = 1;
  ip.solution_type = QUDA_MAT_SOLUTION;
  ip.solve_type = QUDA_NORMOP_PC_SOLVE;
  ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
  ip.dagger = QUDA_DAG_NO;
  ip.mass_normalization = QUDA_KAPPA_NORMALIZATION;
  ip.cpu_prec = QUDA_DOUBLE_PRECISION;
  ip.cuda_prec = QUDA_DOUBLE_PRECISION;
  ip.cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
  ip.dirac_order = QUDA_DIRAC_ORDER;
  ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
  ip.clover_cpu_prec = QUDA_DOUBLE_PRECISION;
  ip.clover_cuda_prec = QUDA_DOUBLE_PRECISION;
  ip.clover_cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
  ip.clover_order = QUDA_PACKED_CLOVER_ORDER;
  ip.tol = 1e-12;
  ip.maxiter = 5000;
  ip.reliable_delta = 0.1;
  ip.verbosity = QUDA_SILENT;
  return ip;
}

/* Loads this part's links, computes the clover term, solves M x = b;
 * returns x (the part's sites), the iterations in *iter. */
static double *solve(const part_t *p, const double *links_global, const double *b_global, int *iter,
                     double *true_res, double *residual) {
  const size_t v = volume(p->local), n = v * 24;
  double *links = local_links_qdp(p, links_global);
  void *gauge[4];
  for (int mu = 0; mu < 4; mu++) gauge[mu] = links + mu * v * 18;
  QudaGaugeParam gp = newQudaGaugeParam();
  for (int d = 0; d < 4; d++) gp.X[d] = p->local[d];
  gp.anisotropy = 1.0;
  gp.type = QUDA_WILSON_LINKS;
  gp.gauge_order = QUDA_QDP_GAUGE_ORDER;
  gp.t_boundary = QUDA_ANTI_PERIODIC_T;
  gp.cpu_prec = QUDA_DOUBLE_PRECISION;
  gp.cuda_prec = QUDA_DOUBLE_PRECISION;
  gp.reconstruct = QUDA_RECONSTRUCT_NO;
  gp.cuda_prec_sloppy = QUDA_DOUBLE_PRECISION;
  gp.reconstruct_sloppy = QUDA_RECONSTRUCT_NO;
  gp.gauge_fix = QUDA_GAUGE_FIXED_NO;
  loadGaugeQuda(gauge, &gp);
  QudaInvertParam ip = invert_param();
  loadCloverQuda(NULL, NULL, &ip);
  double *b = local_of(p, b_global, 24), *x = calloc(n, sizeof(double)), *mx = malloc(n * sizeof(double));
  invertQuda(x, b, &ip);
  MatQuda(mx, x, &ip);
  *residual = rel_diff_all(mx, b, n);
  *iter = ip.iter;
  *true_res = ip.true_res[0];
  freeCloverQuda();
  freeGaugeQuda();
  free(links);
  free(b);
  free(mx);
  return x;
}

int main(int argc, char **argv) {
  int grid[4], rank, size;
  start(&argc, &argv, grid, &rank, &size);
  const size_t V = volume(GLOBAL);
  double *links = read_f64(argv[1], "gauge_qdp.f64", 4 * V * 18);
  double *b = read_f64(argv[1], "psi_dirac.f64", V * 24);
  setVerbosityQuda(QUDA_SILENT, "", stdout);

  /* One rank first: the whole lattice on MPI_COMM_SELF. */
  MPI_Comm self = MPI_COMM_SELF;
  const int ones[4] = {1, 1, 1, 1};
  setMPICommHandleQuda(&self);
  initCommsGridQuda(4, ones, NULL, NULL);
  initQuda(-1);
  const part_t whole = part_at(ones, (int[4]){0, 0, 0, 0});
  int iter1;
  double tr1, res1;
  double *x1 = solve(&whole, links, b, &iter1, &tr1, &res1);
  endQuda();

  /* tmLQCD's Cartesian grid (t, x, y, z), not reordered: its ranks are the world's. */
  const int dims[4] = {grid[3], grid[0], grid[1], grid[2]}, periods[4] = {1, 1, 1, 1};
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 4, dims, periods, 0, &cart);
  int txyz[4];
  MPI_Cart_coords(cart, rank, 4, txyz);
  const int coords[4] = {txyz[1], txyz[2], txyz[3], txyz[0]};
  const part_t part = part_at(grid, coords);
  MPI_Comm world = MPI_COMM_WORLD;
  setMPICommHandleQuda(&world);
  initCommsGridQuda(4, grid, cart_rank, &cart);
  initQuda(-1);
  int iter;
  double true_res, res;
  double *x = solve(&part, links, b, &iter, &true_res, &res);
  endQuda();

  double *x1_part = local_of(&part, x1, 24);
  if (rank == 0)
    printf("tmlqcd_mpi: %d ranks, grid %d,%d,%d,%d: CG %d iterations (one rank: %d)\n", size, grid[0], grid[1],
           grid[2], grid[3], iter, iter1);
  check_all("|b - M x| / |b| (MatQuda), one rank", res1, 1e-11);
  check_all("|b - M x| / |b| (MatQuda), the grid", res, 1e-11);
  check_all("true_res reported, the grid", true_res, 1e-11);
  check_all("iterations: the grid's less one rank's", abs(iter - iter1), 1);
  check_all("|x - x(one rank)| / |x|", rel_diff_all(x, x1_part, volume(part.local) * 24), 1e-12);
  MPI_Comm_free(&cart);
  free(links);
  free(b);
  free(x1);
  free(x);
  free(x1_part);
  return finish();
}
