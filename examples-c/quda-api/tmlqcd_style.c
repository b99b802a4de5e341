/*
 * tmlqcd_style.c: QUDA's interface called the way tmLQCD's quda_interface.c
 * calls it for a Wilson-clover solve: the links handed over in QDP order
 * with the anti-periodic sign on the last time slice, the clover term
 * computed by the library from those links (compute_clover = 1, its
 * coefficient kappa * c_sw), the inverse too, a MAT solution by CG on the
 * even-odd normal equations (NORMOP_PC, EVEN_EVEN), KAPPA normalization,
 * DeGrand-Rossi spinors. Links and source: the golden clover set's links
 * and spinor. Checked: the solve's residual recomputed with MatQuda, the
 * reported true_res, and the operator's gamma5-Hermiticity through MatQuda
 * with DAG_YES (<y, M x> = <M^dag y, x>), a DAG_YES solve; then the same
 * operator and solve with chiral-basis spinors (QUDA_CHIRAL_GAMMA_BASIS, as
 * tmLQCD passes them). Then a deliberate error: with
 * LATSOL_QUDA_ON_ERROR=return, a call with an invalid field returns and
 * latsol_quda_last_status() says why. It exits non-zero when a check fails.
 *
 * Usage: tmlqcd_style CLOVER_DIR
 */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <quda.h>

#include "golden_util.h"

/* DeGrand-Rossi <-> chiral spinors (QUDA's chiral basis): c = (-d3, d2, d1,
 * -d0) on the spins of every colour, a map that is its own inverse.
 * DIRAC order: spin outer, colour inner. */
static void dr_chiral_swap(double *out, const double *in, size_t sites) {
  for (size_t i = 0; i < sites; i++) {
    const double *d = in + 24 * i;
    double *c = out + 24 * i;
    for (int k = 0; k < 6; k++) {
      const double d0 = d[k], d1 = d[6 + k], d2 = d[12 + k], d3 = d[18 + k];
      c[k] = -d3, c[6 + k] = d2, c[12 + k] = d1, c[18 + k] = -d0;
    }
  }
}

static double dot(const double *a, const double *b, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CLOVER_DIR\n", argv[0]);
    return 2;
  }
  const int X[4] = {6, 4, 4, 8};
  const size_t V = 6 * 4 * 4 * 8, Vh = V / 2, n = V * 24;
  const double kappa = 0.125, csw = 1.75;

  double *links = read_f64(argv[1], "gauge_qdp.f64", 4 * V * 18);
  for (size_t i = 0; i < V; i++) {
    const size_t t = (2 * (i % Vh)) / (X[0] * X[1] * X[2]);
    if (t == (size_t)X[3] - 1)
      for (int k = 0; k < 18; k++) links[(3 * V + i) * 18 + k] *= -1;
  }
  void *gauge[4];
  for (int mu = 0; mu < 4; mu++) gauge[mu] = links + mu * V * 18;
  double *b = read_f64(argv[1], "psi_dirac.f64", n);

  setVerbosityQuda(QUDA_SUMMARIZE, "# QUDA: ", stdout);
  initQuda(0);
  QudaGaugeParam gp = newQudaGaugeParam();
  for (int d = 0; d < 4; d++) gp.X[d] = X[d];
  gp.anisotropy = 1.0;
  gp.type = QUDA_WILSON_LINKS;
  gp.gauge_order = QUDA_QDP_GAUGE_ORDER;
  gp.t_boundary = QUDA_ANTI_PERIODIC_T;
  gp.cpu_prec = QUDA_DOUBLE_PRECISION;
  gp.cuda_prec = QUDA_DOUBLE_PRECISION;
  gp.reconstruct = QUDA_RECONSTRUCT_NO;
  gp.cuda_prec_sloppy = QUDA_SINGLE_PRECISION;
  gp.reconstruct_sloppy = QUDA_RECONSTRUCT_NO;
  gp.gauge_fix = QUDA_GAUGE_FIXED_NO;
  loadGaugeQuda(gauge, &gp);

  QudaInvertParam ip = newQudaInvertParam();
  ip.dslash_type = QUDA_CLOVER_WILSON_DSLASH;
  ip.inv_type = QUDA_CG_INVERTER;
  ip.kappa = kappa;
  ip.clover_csw = csw;
  ip.clover_coeff = kappa * csw;
  ip.compute_clover = 1;
  ip.compute_clover_inverse = 1;
  ip.solution_type = QUDA_MAT_SOLUTION;
  ip.solve_type = QUDA_NORMOP_PC_SOLVE;
  ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
  ip.dagger = QUDA_DAG_NO;
  ip.mass_normalization = QUDA_KAPPA_NORMALIZATION;
  ip.cpu_prec = QUDA_DOUBLE_PRECISION;
  ip.cuda_prec = QUDA_DOUBLE_PRECISION;
  ip.cuda_prec_sloppy = QUDA_SINGLE_PRECISION;
  ip.dirac_order = QUDA_DIRAC_ORDER;
  ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
  ip.clover_cpu_prec = QUDA_DOUBLE_PRECISION;
  ip.clover_cuda_prec = QUDA_DOUBLE_PRECISION;
  ip.clover_cuda_prec_sloppy = QUDA_SINGLE_PRECISION;
  ip.clover_order = QUDA_PACKED_CLOVER_ORDER;
  ip.tol = 1e-10;
  ip.maxiter = 5000;
  ip.reliable_delta = 0.1;
  ip.verbosity = QUDA_SUMMARIZE;
  loadCloverQuda(NULL, NULL, &ip);
  check("clover_coeff written back (kappa c_sw)", fabs(ip.clover_coeff - kappa * csw), 1e-15);

  double *x = calloc(n, sizeof(double)), *mx = malloc(n * sizeof(double));
  invertQuda(x, b, &ip);
  printf("invertQuda: %d iterations, true_res %.2e, %.3f s, %.3f Gflop\n", ip.iter, ip.true_res[0], ip.secs, ip.gflops);
  MatQuda(mx, x, &ip);
  double r = 0;
  for (size_t i = 0; i < n; i++) r += (b[i] - mx[i]) * (b[i] - mx[i]);
  check("|b - M x| / |b| (MatQuda)", sqrt(r / dot(b, b, n)), 1e-10);
  check("true_res reported", ip.true_res[0], 1e-10);

  /* <y, M x> = <M^dag y, x> with real inner products of the reals. */
  double *y = read_f64(argv[1], "M_psi.f64", n), *mdy = malloc(n * sizeof(double));
  MatQuda(mx, b, &ip);
  ip.dagger = QUDA_DAG_YES;
  MatQuda(mdy, y, &ip);
  ip.dagger = QUDA_DAG_NO;
  const double lhs = dot(y, mx, n), rhs = dot(mdy, b, n);
  check("<y, M b> = <M^dag y, b>", fabs(lhs - rhs) / fabs(lhs), 1e-13);

  /* The dagger system: M^dag x = b, checked with MatQuda DAG_YES. */
  ip.dagger = QUDA_DAG_YES;
  memset(x, 0, n * sizeof(double));
  invertQuda(x, b, &ip);
  MatQuda(mx, x, &ip);
  ip.dagger = QUDA_DAG_NO;
  r = 0;
  for (size_t i = 0; i < n; i++) r += (b[i] - mx[i]) * (b[i] - mx[i]);
  printf("invertQuda DAG_YES: %d iterations\n", ip.iter);
  check("|b - M^dag x| / |b| (MatQuda DAG_YES)", sqrt(r / dot(b, b, n)), 1e-10);

  /* Chiral-basis spinors: the same operator seen through the basis change. */
  double *bc = malloc(n * sizeof(double)), *t = malloc(n * sizeof(double));
  dr_chiral_swap(bc, b, V);
  ip.gamma_basis = QUDA_CHIRAL_GAMMA_BASIS;
  MatQuda(t, bc, &ip);
  ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
  MatQuda(mx, b, &ip);
  dr_chiral_swap(mdy, mx, V);
  double dm = 0;
  for (size_t i = 0; i < n; i++) dm += (t[i] - mdy[i]) * (t[i] - mdy[i]);
  check("MatQuda(chiral b) = chiral(MatQuda(b))", sqrt(dm / dot(mdy, mdy, n)), 1e-14);
  ip.gamma_basis = QUDA_CHIRAL_GAMMA_BASIS;
  memset(t, 0, n * sizeof(double));
  invertQuda(t, bc, &ip);
  printf("invertQuda CHIRAL: %d iterations, true_res %.2e\n", ip.iter, ip.true_res[0]);
  ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
  dr_chiral_swap(x, t, V);
  MatQuda(mx, x, &ip);
  r = 0;
  for (size_t i = 0; i < n; i++) r += (b[i] - mx[i]) * (b[i] - mx[i]);
  check("|b - M x| / |b| of the chiral solve, in DeGrand-Rossi", sqrt(r / dot(b, b, n)), 1e-10);
  free(bc);
  free(t);

  /* An invalid field: QUDA would abort; here the call returns. */
  if (!getenv("LATSOL_TEST_NO_SETENV")) setenv("LATSOL_QUDA_ON_ERROR", "return", 1);
  QudaInvertParam bad = ip;
  bad.solve_type = (QudaSolveType)42;
  invertQuda(x, b, &bad);
  const int status = latsol_quda_last_status();
  printf("invalid solve_type: status %d, \"%s\"\n", status, latsol_last_error());
  check("an invalid solve_type is refused", status != 0 && strstr(latsol_last_error(), "solve_type") ? 0 : 1, 0);
  invertQuda(x, b, &ip);
  check("the next good call clears the status", latsol_quda_last_status() != 0, 0);

  freeCloverQuda();
  freeGaugeQuda();
  endQuda();
  free(links);
  free(b);
  free(x);
  free(mx);
  free(y);
  free(mdy);
  if (failures) {
    printf("%d check(s) FAILED\n", failures);
    return 1;
  }
  printf("all checks passed\n");
  return 0;
}
