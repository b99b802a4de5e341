/*
 * milc_style.c: QUDA's MILC interface (quda_milc_interface.h), called the
 * way MILC's generic_ks/d_congrad5_fn_gpu.c, ks_multicg_offset_gpu.c and
 * generic_clover call it, linked against latsol's libquda instead of QUDA.
 *
 * MILC keeps its fat and long links site-major (MILC gauge order, even
 * sites first) with the staggered phases, the anti-periodic sign and the
 * Naik coefficient already multiplied in, colour vectors as full-lattice
 * arrays of which one parity is solved for, and passes QudaInvertArgs_t by
 * value with only the fields the call reads set. On the golden sets
 * (computed with QUDA's host reference code) this program checks:
 *   - qudaInvert on the even parity from an initial guess, double and
 *     mixed double-single and double-half: the source M_pc chi_e gives chi_e;
 *   - qudaInvertMsrc with two sources;
 *   - qudaMultishiftInvert on the odd parity, offsets 4m^2 + {0, 0.05, 0.5}:
 *     the first solution is chi_o, every residual meets its target;
 *   - qudaCloverInvert (Wilson-clover, packed clover field, links in MILC
 *     order with the boundary sign): the source M psi gives psi;
 *   - qudaPlaquettePhased from MILC site structs and from a link array;
 *   - qudaDslash against D chi; on unit links with MILC's phases and sign,
 *     qudaPlaquettePhased (phases removed) = 1, qudaPolyakovLoopPhased = 3;
 *   - the same staggered systems through quda.h (loadGaugeQuda with fat and
 *     long links, long links compressed to 13 reals; invertQuda MATPC and
 *     invertMultiShiftQuda).
 * It exits non-zero when a check fails.
 *
 * Usage: milc_style STAGGERED_DIR CLOVER_DIR
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <quda_milc_interface.h>

#include "golden_util.h"

static double norm(const double *a, size_t n) {
  double r = 0;
  for (size_t i = 0; i < n; i++) r += a[i] * a[i];
  return sqrt(r);
}

/* The largest relative error of a solution of M_pc x = b whose relative
 * residual is res: M_pc = 4m^2 - D_pq D_qp >= 4m^2 (D anti-Hermitian), so
 * |x - chi| <= |r| / (4m^2) = res |b| / (4m^2). */
static double error_bound(double res, const double *b, const double *chi, size_t n, double m2) {
  return res * norm(b, n) / (m2 * norm(chi, n));
}

/* QDP order (direction-major) to MILC order (site-major). */
static double *qdp_to_milc(const double *qdp, size_t V) {
  double *m = malloc(4 * V * 18 * sizeof(double));
  for (size_t i = 0; i < V; i++)
    for (int mu = 0; mu < 4; mu++) memcpy(m + (i * 4 + mu) * 18, qdp + (mu * V + i) * 18, 18 * sizeof(double));
  return m;
}

/* A MILC site struct: the links among other members. */
typedef struct {
  short x, y, z, t, parity;
  int index;
  double link[4][18];
  double tmp[6];
} site;

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s STAGGERED_DIR CLOVER_DIR\n", argv[0]);
    return 2;
  }
  const int X[4] = {6, 4, 4, 8};
  const size_t V = 6 * 4 * 4 * 8, Vh = V / 2;
  const double mass = 0.05;

  int machsize[4] = {1, 1, 1, 1};
  QudaInitArgs_t init;
  memset(&init, 0, sizeof init);
  init.verbosity = QUDA_SUMMARIZE;
  init.layout.latsize = X;
  init.layout.machsize = machsize;
  init.layout.device = 0;
  qudaSetMPICommHandle(NULL);
  qudaInit(init);

  double *fat_q = read_f64(argv[1], "fat_qdp.f64", 4 * V * 18);
  double *long_q = read_f64(argv[1], "long_qdp.f64", 4 * V * 18);
  double *fat = qdp_to_milc(fat_q, V), *lng = qdp_to_milc(long_q, V);
  double *chi = read_f64(argv[1], "chi.f64", V * 6);
  double *mpc_e = read_f64(argv[1], "Mpc_chi_even.f64", Vh * 6);
  double *mpc_o = read_f64(argv[1], "Mpc_chi_odd.f64", Vh * 6);

  /* Full-lattice MILC vectors; the even half is the system. */
  double *src = qudaAllocatePinned(V * 6 * sizeof(double));
  double *sol = qudaAllocatePinned(V * 6 * sizeof(double));
  memcpy(src, mpc_e, Vh * 6 * sizeof(double));
  memset(src + Vh * 6, 0, Vh * 6 * sizeof(double));

  QudaInvertArgs_t args; /* MILC sets only what QUDA reads */
  args.max_iter = 1000;
  args.evenodd = QUDA_EVEN_PARITY;
  const int mixed[3] = {0, 1, 2};
  const char *names[3] = {"double", "double-single", "double-half"};
  for (int k = 0; k < 3; k++) {
    args.mixed_precision = mixed[k];
    for (size_t i = 0; i < V * 6; i++) sol[i] = 0.5 * chi[i]; /* an initial guess */
    double resid = -1, rel = -1;
    int iters = 0;
    qudaInvert(2, 2, mass, args, 1e-10, 0.0, fat, lng, src, sol, &resid, &rel, &iters);
    printf("qudaInvert %s: %d iterations, residual %.2e, fermilab %.2e\n", names[k], iters, resid, rel);
    char what[80];
    snprintf(what, sizeof what, "qudaInvert %s: x_e = chi_e", names[k]);
    check(what, rel_diff(sol, chi, Vh * 6), error_bound(1e-10, mpc_e, chi, Vh * 6, 4 * mass * mass));
    check("  reported residual", resid, 1e-10);
  }

  /* MILC's heavy-quark ("fermilab") target: alone (target_residual 0) and
   * beside an L2 target loose enough that the heavy-quark one decides. */
  {
    const double targets[2][2] = {{0.0, 1e-9}, {1e-4, 1e-9}};
    for (int k = 0; k < 2; k++) {
      memset(sol, 0, V * 6 * sizeof(double));
      double resid = -1, rel = -1;
      int iters = 0;
      args.mixed_precision = 1;
      qudaInvert(2, 2, mass, args, targets[k][0], targets[k][1], fat, lng, src, sol, &resid, &rel, &iters);
      printf("qudaInvert, targets L2 %g and heavy-quark %g: %d iterations, residual %.2e, fermilab %.2e\n",
             targets[k][0], targets[k][1], iters, resid, rel);
      check("  heavy-quark residual met", rel, targets[k][1]);
      check("  x_e = chi_e", rel_diff(sol, chi, Vh * 6), error_bound(resid, mpc_e, chi, Vh * 6, 4 * mass * mass));
    }
  }

  /* Two sources at once: the second is twice the first. */
  {
    double *src2 = malloc(V * 6 * sizeof(double)), *sol2 = calloc(V * 6, sizeof(double));
    for (size_t i = 0; i < V * 6; i++) src2[i] = 2 * src[i];
    memset(sol, 0, V * 6 * sizeof(double));
    void *srcs[2] = {src, src2}, *sols[2] = {sol, sol2};
    double resid, rel;
    int iters;
    args.mixed_precision = 1;
    qudaInvertMsrc(2, 2, mass, args, 1e-10, 0.0, fat, lng, srcs, sols, &resid, &rel, &iters, 2);
    printf("qudaInvertMsrc: %d iterations for 2 sources\n", iters);
    for (size_t i = 0; i < Vh * 6; i++) sol2[i] *= 0.5;
    const double bound = error_bound(1e-10, mpc_e, chi, Vh * 6, 4 * mass * mass);
    check("qudaInvertMsrc source 1", rel_diff(sol, chi, Vh * 6), bound);
    check("qudaInvertMsrc source 2 / 2", rel_diff(sol2, chi, Vh * 6), bound);
    free(src2);
    free(sol2);
  }

  /* RHMC multi-shift on the odd parity, mixed (MILC's default) and in
   * double alone, where MILC's non-mixed build sets only the first target. */
  for (int mixed_ms = 1; mixed_ms >= 0; mixed_ms--) {
    double offsets[3] = {4 * mass * mass, 4 * mass * mass + 0.05, 4 * mass * mass + 0.5};
    const double targets[3] = {1e-10, mixed_ms ? 1e-9 : 0, mixed_ms ? 1e-8 : 0}, fermilab[3] = {0, 0, 0};
    double *xs[3];
    void *xp[3];
    for (int i = 0; i < 3; i++) {
      xs[i] = calloc(V * 6, sizeof(double));
      xp[i] = xs[i];
    }
    memset(src, 0, V * 6 * sizeof(double));
    memcpy(src + Vh * 6, mpc_o, Vh * 6 * sizeof(double));
    args.evenodd = QUDA_ODD_PARITY;
    args.mixed_precision = mixed_ms;
    double res[3], fres[3];
    int iters;
    qudaMultishiftInvert(2, 2, 3, offsets, args, targets, fermilab, fat, lng, src, xp, res, fres, &iters);
    printf("qudaMultishiftInvert (mixed_precision %d): %d iterations\n", mixed_ms, iters);
    check("multi-shift offset 4m^2: x_o = chi_o", rel_diff(xs[0] + Vh * 6, chi + Vh * 6, Vh * 6),
          error_bound(1e-10, mpc_o, chi + Vh * 6, Vh * 6, 4 * mass * mass));
    for (int i = 0; i < 3; i++) {
      char what[80];
      snprintf(what, sizeof what, "  offset %d residual / target", i);
      check(what, res[i] / (targets[i] > 0 ? targets[i] : targets[0]), 1.0);
      free(xs[i]);
    }
  }

  /* The same systems through quda.h, as older MILC versions call QUDA. */
  {
    QudaGaugeParam gp = newQudaGaugeParam();
    for (int d = 0; d < 4; d++) gp.X[d] = X[d];
    gp.type = QUDA_ASQTAD_FAT_LINKS;
    gp.gauge_order = QUDA_MILC_GAUGE_ORDER;
    gp.t_boundary = QUDA_PERIODIC_T;
    gp.cpu_prec = QUDA_DOUBLE_PRECISION;
    gp.cuda_prec = QUDA_DOUBLE_PRECISION;
    gp.reconstruct = QUDA_RECONSTRUCT_NO;
    gp.cuda_prec_sloppy = QUDA_SINGLE_PRECISION;
    gp.reconstruct_sloppy = QUDA_RECONSTRUCT_NO;
    gp.gauge_fix = QUDA_GAUGE_FIXED_NO;
    gp.staggered_phase_type = QUDA_STAGGERED_PHASE_MILC;
    gp.staggered_phase_applied = 1;
    loadGaugeQuda(fat, &gp);
    gp.type = QUDA_ASQTAD_LONG_LINKS;
    gp.reconstruct = QUDA_RECONSTRUCT_13;
    gp.reconstruct_sloppy = QUDA_RECONSTRUCT_13;
    loadGaugeQuda(lng, &gp);

    QudaInvertParam ip = newQudaInvertParam();
    ip.dslash_type = QUDA_ASQTAD_DSLASH;
    ip.inv_type = QUDA_CG_INVERTER;
    ip.mass = mass;
    ip.solution_type = QUDA_MATPC_SOLUTION;
    ip.solve_type = QUDA_DIRECT_PC_SOLVE;
    ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
    ip.dagger = QUDA_DAG_NO;
    ip.mass_normalization = QUDA_MASS_NORMALIZATION;
    ip.cpu_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec = QUDA_DOUBLE_PRECISION;
    ip.cuda_prec_sloppy = QUDA_SINGLE_PRECISION;
    ip.dirac_order = QUDA_DIRAC_ORDER;
    ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
    ip.tol = 1e-10;
    ip.maxiter = 1000;
    ip.reliable_delta = 0.1;
    double *xe = calloc(Vh * 6, sizeof(double));
    invertQuda(xe, mpc_e, &ip);
    printf("invertQuda ASQTAD MATPC (long links 13): %d iterations, true_res %.2e\n", ip.iter, ip.true_res[0]);
    check("invertQuda ASQTAD MATPC x_e = chi_e", rel_diff(xe, chi, Vh * 6),
          error_bound(1e-10, mpc_e, chi, Vh * 6, 4 * mass * mass));

    ip.matpc_type = QUDA_MATPC_ODD_ODD;
    ip.num_offset = 2;
    ip.offset[0] = 4 * mass * mass;
    ip.offset[1] = 4 * mass * mass + 0.1;
    ip.tol_offset[0] = ip.tol_offset[1] = 1e-10;
    double *x0 = calloc(Vh * 6, sizeof(double)), *x1 = calloc(Vh * 6, sizeof(double));
    void *xp[2] = {x0, x1};
    invertMultiShiftQuda(xp, mpc_o, &ip);
    printf("invertMultiShiftQuda ASQTAD: %d iterations\n", ip.iter);
    check("invertMultiShiftQuda offset 4m^2: x_o = chi_o", rel_diff(x0, chi + Vh * 6, Vh * 6),
          error_bound(1e-10, mpc_o, chi + Vh * 6, Vh * 6, 4 * mass * mass));
    check("  true_res_offset[1]", ip.true_res_offset[1], 1e-10);
    free(xe);
    free(x0);
    free(x1);
  }

  /* qudaCloverInvert on the golden clover set. */
  {
    double *g = read_f64(argv[2], "gauge_qdp.f64", 4 * V * 18);
    /* MILC's links carry the anti-periodic sign; the golden ones do not. */
    for (size_t i = 0; i < V; i++) {
      const size_t t = (2 * (i % Vh)) / (X[0] * X[1] * X[2]);
      if (t == (size_t)X[3] - 1)
        for (int k = 0; k < 18; k++) g[(3 * V + i) * 18 + k] *= -1;
    }
    double *links = qdp_to_milc(g, V);
    double *clover = read_f64(argv[2], "clover_packed.f64", V * 72);
    double *psi = read_f64(argv[2], "psi_dirac.f64", V * 24);
    double *m_psi = read_f64(argv[2], "M_psi.f64", V * 24);
    double *x = calloc(V * 24, sizeof(double));
    double resid, fres;
    int iters;
    args.max_iter = 1000;
    args.mixed_precision = 1;
    args.solver_type = QUDA_BICGSTAB_INVERTER;
    qudaCloverInvert(2, 2, 0.12, 0.0, args, 1e-11, 0.0, links, clover, NULL, m_psi, x, &resid, &fres, &iters);
    printf("qudaCloverInvert: %d iterations, residual %.2e\n", iters, resid);
    check("qudaCloverInvert x = psi", rel_diff(x, psi, V * 24), 1e-8);
    /* MILC's onium: the heavy-quark (Fermilab) target alone. */
    memset(x, 0, V * 24 * sizeof(double));
    qudaCloverInvert(2, 2, 0.12, 0.0, args, 0.0, 5e-7, links, clover, NULL, m_psi, x, &resid, &fres, &iters);
    printf("qudaCloverInvert (Fermilab target 5e-7): %d iterations, residual %.2e, Fermilab %.2e\n", iters, resid, fres);
    check("qudaCloverInvert Fermilab residual met", fres > 0 && fres <= 5e-7 ? 0.0 : 1.0, 0.5);
    check("qudaCloverInvert (Fermilab) x = psi", rel_diff(x, psi, V * 24), 1e-4);
    free(g);
    free(links);
    free(clover);
    free(psi);
    free(m_psi);
    free(x);
  }

  /* The plaquette from site structs and from a link array agree. */
  {
    double *thin_q = read_f64(argv[1], "thin_qdp.f64", 4 * V * 18);
    double *thin = qdp_to_milc(thin_q, V);
    site *lattice = malloc(V * sizeof(site));
    for (size_t i = 0; i < V; i++) memcpy(lattice[i].link, thin + i * 72, sizeof lattice[i].link);
    QudaMILCSiteArg_t by_site = {lattice, NULL, offsetof(site, link), NULL, 0, sizeof(site)};
    QudaMILCSiteArg_t by_link = {NULL, thin, 0, NULL, 0, 0};
    double p1[3], p2[3];
    qudaPlaquettePhased(2, p1, &by_site, 1);
    qudaPlaquettePhased(2, p2, &by_link, 1);
    printf("qudaPlaquettePhased: %.12f (spatial %.12f, temporal %.12f)\n", p1[0], p1[1], p1[2]);
    check("plaquette: site structs = link array", fabs(p1[0] - p2[0]) + fabs(p1[1] - p2[1]), 1e-15);
    check("plaquette: average of spatial and temporal", fabs(p1[0] - 0.5 * (p1[1] + p1[2])), 1e-15);
    free(thin_q);
    free(thin);
    free(lattice);
  }

  /* qudaDslash: the even half of D chi from chi's odd half. */
  {
    double *d_chi = read_f64(argv[1], "D_chi.f64", V * 6);
    double *out = calloc(V * 6, sizeof(double));
    int iters = 0;
    args.evenodd = QUDA_EVEN_PARITY;
    qudaDslash(2, 2, args, fat, lng, chi, out, &iters);
    check("qudaDslash EVEN = (D chi)_e", rel_diff(out, d_chi, Vh * 6), 1e-14);
    free(d_chi);
    free(out);
  }

  /* Unit links carrying MILC's phases and the anti-periodic sign: with
   * phase_in the plaquette is 1; the Polyakov loop is 3 (QUDA's sign). */
  {
    double *unit = calloc(V * 4 * 18, sizeof(double));
    for (size_t i = 0; i < V; i++) {
      const size_t lex = 2 * (i % Vh);
      int c[4];
      c[3] = (int)(lex / (X[0] * X[1] * X[2]));
      c[2] = (int)((lex / (X[0] * X[1])) % X[2]);
      c[1] = (int)((lex / X[0]) % X[1]);
      c[0] = (int)(lex % X[0]) + (int)((c[1] + c[2] + c[3] + (i >= Vh)) & 1);
      for (int mu = 0; mu < 4; mu++) {
        const int sum = mu == 0 ? c[3] : mu == 1 ? c[3] + c[0] : mu == 2 ? c[3] + c[0] + c[1] : 0;
        double sign = (sum & 1) ? -1.0 : 1.0;
        if (mu == 3 && c[3] == X[3] - 1) sign = -sign;
        for (int k = 0; k < 3; k++) unit[(i * 4 + mu) * 18 + 8 * k] = sign;
      }
    }
    QudaMILCSiteArg_t by_link = {NULL, unit, 0, NULL, 0, 0};
    double p[3], pl[2];
    qudaPlaquettePhased(2, p, &by_link, 1);
    check("unit field, phases removed: plaquette 1", fabs(p[0] - 1) + fabs(p[1] - 1) + fabs(p[2] - 1), 1e-15);
    qudaPolyakovLoopPhased(2, pl, 3, &by_link, 1);
    check("unit field: Polyakov loop 3 (QUDA's sign)", fabs(pl[0] - 3) + fabs(pl[1]), 1e-15);
    free(unit);
  }

  qudaFreePinned(src);
  qudaFreePinned(sol);
  free(fat_q);
  free(long_q);
  free(fat);
  free(lng);
  /* qudaContractFT: both propagators a unit colour vector at the site
   * (x, y, z, t) = (5, 1, 2, 6), momentum (1, 0, 0, 0) with exp(+i theta)
   * in x, from the origin: corr[t] = exp(2 pi i 5/6) on slice 6 only. */
  {
    const int x[4] = {5, 1, 2, 6};
    const size_t lex = x[0] + X[0] * (x[1] + X[1] * (x[2] + X[2] * (size_t)x[3]));
    const size_t site = ((x[0] + x[1] + x[2] + x[3]) % 2) * Vh + lex / 2;
    double *q = calloc(V * 6, sizeof(double));
    q[6 * site] = 1.0;
    int modes[4] = {1, 0, 0, 0}, origin[4] = {0, 0, 0, 0};
    QudaFFTSymmType kinds[4] = {QUDA_FFT_SYMM_EO, QUDA_FFT_SYMM_EVEN, QUDA_FFT_SYMM_EVEN, QUDA_FFT_SYMM_EVEN};
    QudaContractArgs_t cargs = {1, modes, kinds, origin, 0.0, 0.0};
    double corr[2 * 8] = {0};
    qudaContractFT(2, &cargs, q, q, corr);
    const double pi = 3.14159265358979323846;
    double err = fabs(corr[12] - cos(2 * pi * 5 / 6)) + fabs(corr[13] - sin(2 * pi * 5 / 6));
    for (int t = 0; t < 8; t++)
      if (t != 6) err += fabs(corr[2 * t]) + fabs(corr[2 * t + 1]);
    printf("qudaContractFT: slice 6 = %.6f%+.6fi\n", corr[12], corr[13]);
    check("qudaContractFT point source", err, 1e-14);
    free(q);
  }

  /* HISQ links (MILC's WANT_FL_GPU): unit links carrying MILC's phases and
   * the anti-periodic sign. The first level (fat7) gives them back, and so
   * does its U(3) projection; the second gives 9/8 of them and -1/24 of
   * the three-hop products. */
  {
    const double p1[6] = {1.0 / 8, 0, -1.0 / 16, 1.0 / 64, -1.0 / 384, 0};
    const double p2[6] = {1, -1.0 / 24, -1.0 / 16, 1.0 / 64, -1.0 / 384, -1.0 / 8};
    const size_t n = V * 4 * 18;
    double *u = calloc(n, sizeof(double)), *v = calloc(n, sizeof(double));
    double *w = calloc(n, sizeof(double)), *f = calloc(n, sizeof(double));
    double *l = calloc(n, sizeof(double));
    double *eta = calloc(V * 4, sizeof(double)); /* by lexicographic site */
    for (size_t lex = 0; lex < V; lex++) {
      const int x = lex % 6, y = (lex / 6) % 4, z = (lex / 24) % 4, t = lex / 96;
      const size_t site = ((x + y + z + t) % 2) * Vh + lex / 2;
      const int parity[4] = {t, t + x, t + x + y, 0};
      for (int mu = 0; mu < 4; mu++) {
        double s = parity[mu] % 2 ? -1 : 1;
        if (mu == 3 && t == X[3] - 1) s = -s;
        eta[4 * lex + mu] = s;
        for (int c = 0; c < 3; c++) u[(4 * site + mu) * 18 + 8 * c] = s;
      }
    }
    QudaFatLinkArgs_t fl = {0, 0};
    qudaLoadUnitarizedLink(2, fl, p1, u, v, w);
    qudaLoadKSLink(2, fl, p2, w, f, l);
    double err_v = 0, err_f = 0, err_l = 0;
    for (size_t lex = 0; lex < V; lex++) {
      const int c4[4] = {(int)(lex % 6), (int)((lex / 6) % 4), (int)((lex / 24) % 4), (int)(lex / 96)};
      const size_t site = ((c4[0] + c4[1] + c4[2] + c4[3]) % 2) * Vh + lex / 2;
      for (int mu = 0; mu < 4; mu++) {
        /* The product of the phases of the three hops from x along mu. */
        double three = 1;
        for (int k = 0; k < 3; k++) {
          int y[4] = {c4[0], c4[1], c4[2], c4[3]};
          y[mu] = (y[mu] + k) % X[mu];
          three *= eta[4 * (y[0] + X[0] * (y[1] + X[1] * (y[2] + X[2] * (size_t)y[3]))) + mu];
        }
        for (int k = 0; k < 18; k++) {
          const size_t i = (4 * site + mu) * 18 + k;
          err_v = fmax(err_v, fabs(v[i] - u[i]) + fabs(w[i] - u[i]));
          err_f = fmax(err_f, fabs(f[i] - 9.0 / 8 * u[i]));
          const double want = k % 8 == 0 ? -three / 24 : 0;
          err_l = fmax(err_l, fabs(l[i] - want));
        }
      }
    }
    check("qudaLoadUnitarizedLink, free field: V = W = U", err_v, 1e-14);
    check("qudaLoadKSLink, free field: fat = 9/8 U", err_f, 1e-14);
    check("qudaLoadKSLink, free field: long = -1/24 U U U", err_l, 1e-15);
    free(u);
    free(v);
    free(w);
    free(f);
    free(l);
    free(eta);
  }

  free(chi);
  free(mpc_e);
  free(mpc_o);
  qudaFinalize();
  if (failures) {
    printf("%d check(s) FAILED\n", failures);
    return 1;
  }
  printf("all checks passed\n");
  return 0;
}
