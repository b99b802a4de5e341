/*
 * milc_mpi.c: QUDA's MILC interface on many MPI ranks, called the way MILC
 * calls it: qudaSetMPICommHandle with MILC's communicator, qudaInit with
 * the *global* lattice size and MILC's machine grid (each rank's part is
 * the global size divided by the grid; MILC numbers its ranks x fastest),
 * then site-major (MILC-order) local fields: the golden clover set's links
 * with the anti-periodic sign folded in on the global last time slice, its
 * packed clover field, and qudaCloverInvert on M x = M psi. Checked over
 * all ranks: the solution against the golden psi and against one rank's
 * (the same calls on MPI_COMM_SELF first, then qudaFinalize), the
 * iterations, and qudaPlaquettePhased against one rank's. Exits non-zero
 * on a failed check.
 *
 * Usage: mpirun -np N milc_mpi CLOVER_DIR X,Y,Z,T
 */
#include <mpi.h>
#include <string.h>

#include <quda_milc_interface.h>

#include "mpi_util.h"

/* Site-major links: the four links of each site in turn. */
static double *site_major(const part_t *p, const double *qdp) {
  const size_t v = volume(p->local);
  double *out = malloc(v * 4 * 18 * sizeof(double));
  for (size_t i = 0; i < v; i++)
    for (int mu = 0; mu < 4; mu++)
      memcpy(out + (4 * i + mu) * 18, qdp + (mu * v + i) * 18, 18 * sizeof(double));
  return out;
}

typedef struct {
  double *x, plaq[3];
  int iters;
} result_t;

/* The MILC calls on this rank's part (qudaInit already called). */
static result_t milc_calls(const part_t *p, const char *dir) {
  const size_t V = volume(GLOBAL), v = volume(p->local), n = v * 24;
  double *links_global = read_f64(dir, "gauge_qdp.f64", 4 * V * 18);
  double *signed_qdp = local_links_qdp(p, links_global);
  double *links = site_major(p, signed_qdp);
  /* The plaquette of the links without the sign. */
  double *plain_qdp = malloc(4 * v * 18 * sizeof(double));
  for (int mu = 0; mu < 4; mu++) {
    double *part = local_of(p, links_global + mu * V * 18, 18);
    memcpy(plain_qdp + mu * v * 18, part, v * 18 * sizeof(double));
    free(part);
  }
  double *plain = site_major(p, plain_qdp);
  result_t r;
  QudaMILCSiteArg_t arg = {0};
  arg.link = plain;
  qudaPlaquettePhased(2, r.plaq, &arg, 0);

  double *clover_global = read_f64(dir, "clover_packed.f64", V * 72);
  double *b_global = read_f64(dir, "M_psi.f64", V * 24);
  double *clover = local_of(p, clover_global, 72), *b = local_of(p, b_global, 24);
  r.x = calloc(n, sizeof(double));
  QudaInvertArgs_t args;
  memset(&args, 0, sizeof args);
  args.max_iter = 2000;
  args.evenodd = QUDA_EVEN_PARITY;
  args.mixed_precision = 0;
  args.solver_type = QUDA_BICGSTAB_INVERTER;
  double res = 0, fres = 0;
  qudaCloverInvert(2, 2, 0.12, 1.0, args, 1e-12, 0.0, links, clover, NULL, b, r.x, &res, &fres, &r.iters);
  free(links_global);
  free(signed_qdp);
  free(links);
  free(plain_qdp);
  free(plain);
  free(clover_global);
  free(b_global);
  free(clover);
  free(b);
  return r;
}

int main(int argc, char **argv) {
  int grid[4], rank, size;
  start(&argc, &argv, grid, &rank, &size);
  int latsize[4] = {GLOBAL[0], GLOBAL[1], GLOBAL[2], GLOBAL[3]}, ones[4] = {1, 1, 1, 1};

  /* One rank first: the whole lattice on MPI_COMM_SELF. */
  MPI_Comm self = MPI_COMM_SELF;
  qudaSetMPICommHandle(&self);
  QudaInitArgs_t init = {QUDA_SILENT, {latsize, ones, 0}};
  qudaInit(init);
  const part_t whole = part_at(ones, (int[4]){0, 0, 0, 0});
  result_t one = milc_calls(&whole, argv[1]);
  qudaFinalize();

  /* MILC's layout: ranks x fastest. */
  int c[4], r = rank;
  for (int mu = 0; mu < 4; mu++) {
    c[mu] = r % grid[mu];
    r /= grid[mu];
  }
  const part_t part = part_at(grid, c);
  MPI_Comm world = MPI_COMM_WORLD;
  qudaSetMPICommHandle(&world);
  QudaInitArgs_t init_grid = {QUDA_SILENT, {latsize, grid, 0}};
  qudaInit(init_grid);
  result_t cut = milc_calls(&part, argv[1]);
  qudaFinalize();

  const size_t n = volume(part.local) * 24;
  double *psi_global = read_f64(argv[1], "psi_dirac.f64", volume(GLOBAL) * 24);
  double *psi = local_of(&part, psi_global, 24), *one_x = local_of(&part, one.x, 24);
  if (rank == 0)
    printf("milc_mpi: %d ranks, grid %d,%d,%d,%d: BiCGstab %d iterations (one rank: %d)\n", size, grid[0],
           grid[1], grid[2], grid[3], cut.iters, one.iters);
  check_all("|x - psi| / |psi| (golden), the grid", rel_diff_all(cut.x, psi, n), 1e-9);
  check_all("|x - x(one rank)| / |x|", rel_diff_all(cut.x, one_x, n), 1e-12);
  check_all("iterations: the grid's less one rank's", abs(cut.iters - one.iters), 1);
  double dp = 0;
  for (int k = 0; k < 3; k++) dp = fmax(dp, fabs(cut.plaq[k] - one.plaq[k]));
  check_all("plaquette: the grid's less one rank's", dp, 1e-14);
  free(psi_global);
  free(psi);
  free(one_x);
  free(one.x);
  free(cut.x);
  return finish();
}
