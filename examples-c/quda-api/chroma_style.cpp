/*
 * chroma_style.cpp: QUDA's own interface (quda.h), called the way Chroma's
 * QUDA solvers call it (lib/actions/ferm/invert/quda_solvers/ of Chroma),
 * linked against latsol's libquda instead of QUDA.
 *
 * Chroma holds the links as four QDP colour-matrix arrays (QDP gauge
 * order) with the fermion boundary sign already applied, fermions in the
 * DeGrand-Rossi basis (DIRAC order), and fills QudaGaugeParam and
 * QudaInvertParam from newQuda*Param(). This program does the same on the
 * golden Wilson-clover set (6x4x4x8, kappa 0.12, QUDA's packed clover
 * field; computed with QUDA's host reference code) and checks:
 *   - plaqQuda against a plaquette computed here;
 *   - MatQuda (MAT, and MATPC in the symmetric and asymmetric forms) and
 *     dslashQuda against the set's M psi, M_pc psi and D psi;
 *   - invertQuda, MAT solution by even-odd BiCGstab and MATPC solution by
 *     CG on the normal equations (NORMOP_PC), whose answers must be psi;
 *   - invertMultiSrcQuda with two sources;
 *   - invertMultiShiftQuda on M_pc^dag M_pc with three offsets, each
 *     solution's residual recomputed with MatDagMatQuda.
 * It exits non-zero when a check fails.
 *
 * Usage: chroma_style DIR   (DIR: the golden-clover-6x4x4x8 folder)
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <quda.h>

static int failures = 0;

static std::vector<double> read_f64(const std::string &path, size_t n) {
  std::vector<double> v(n);
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f || std::fread(v.data(), sizeof(double), n, f) != n) {
    std::fprintf(stderr, "cannot read %zu doubles from %s\n", n, path.c_str());
    std::exit(2);
  }
  std::fclose(f);
  return v;
}

static double rel_diff(const double *a, const double *b, size_t n) {
  double d = 0, r = 0;
  for (size_t i = 0; i < n; i++) {
    d += (a[i] - b[i]) * (a[i] - b[i]);
    r += b[i] * b[i];
  }
  return std::sqrt(d / r);
}

/// Even-odd index of the site with coordinates c (extents X): even sites
/// first, checkerboard index (x + X0 (y + X1 (z + X2 t))) / 2.
static size_t eo_index(const int *X, const int *c) {
  const size_t lex = c[0] + X[0] * (c[1] + X[1] * (c[2] + X[2] * c[3]));
  const size_t V = (size_t)X[0] * X[1] * X[2] * X[3];
  return ((c[0] + c[1] + c[2] + c[3]) % 2) * (V / 2) + lex / 2;
}

static void mul(const double *a, bool adag, const double *b, bool bdag, double *out) {
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      double re = 0, im = 0;
      for (int k = 0; k < 3; k++) {
        const double *x = adag ? a + 2 * (3 * k + r) : a + 2 * (3 * r + k);
        const double *y = bdag ? b + 2 * (3 * c + k) : b + 2 * (3 * k + c);
        const double xr = x[0], xi = adag ? -x[1] : x[1];
        const double yr = y[0], yi = bdag ? -y[1] : y[1];
        re += xr * yr - xi * yi;
        im += xr * yi + xi * yr;
      }
      out[2 * (3 * r + c)] = re;
      out[2 * (3 * r + c) + 1] = im;
    }
}

/// The plaquettes (spatial, temporal) of QDP-order links, Re tr / 3,
/// written here independently of the library.
static void plaquettes(const int *X, const std::vector<double> &u, double *spatial, double *temporal) {
  const size_t V = (size_t)X[0] * X[1] * X[2] * X[3];
  double s = 0, t = 0;
  int c[4];
  for (c[3] = 0; c[3] < X[3]; c[3]++)
    for (c[2] = 0; c[2] < X[2]; c[2]++)
      for (c[1] = 0; c[1] < X[1]; c[1]++)
        for (c[0] = 0; c[0] < X[0]; c[0]++)
          for (int mu = 0; mu < 4; mu++)
            for (int nu = mu + 1; nu < 4; nu++) {
              int cm[4] = {c[0], c[1], c[2], c[3]}, cn[4] = {c[0], c[1], c[2], c[3]};
              cm[mu] = (cm[mu] + 1) % X[mu];
              cn[nu] = (cn[nu] + 1) % X[nu];
              const double *a = &u[(mu * V + eo_index(X, c)) * 18];
              const double *b = &u[(nu * V + eo_index(X, cm)) * 18];
              const double *cc = &u[(mu * V + eo_index(X, cn)) * 18];
              const double *d = &u[(nu * V + eo_index(X, c)) * 18];
              double ab[18], abc[18], abcd[18];
              mul(a, false, b, false, ab);
              mul(ab, false, cc, true, abc);
              mul(abc, false, d, true, abcd);
              const double tr = (abcd[0] + abcd[8] + abcd[16]) / 3.0;
              (nu == 3 ? t : s) += tr;
            }
  *spatial = s / (3.0 * V);
  *temporal = t / (3.0 * V);
}

static void check(const char *what, double err, double bound) {
  const bool ok = err <= bound;
  std::printf("%-44s %.2e (bound %.0e) %s\n", what, err, bound, ok ? "ok" : "FAILED");
  if (!ok) failures++;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s GOLDEN_CLOVER_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const int X[4] = {6, 4, 4, 8};
  const size_t V = 6 * 4 * 4 * 8, Vh = V / 2;
  const double kappa = 0.12;

  // Chroma's links carry the anti-periodic sign on the last time slice;
  // the golden set's do not, so fold it in as Chroma does.
  std::vector<double> links = read_f64(dir + "/gauge_qdp.f64", 4 * V * 18);
  double plaq_s, plaq_t;
  plaquettes(X, links, &plaq_s, &plaq_t);
  for (size_t i = 0; i < V; i++) {
    // Site i of the even-odd order: checkerboard index cb, x fastest.
    const size_t lex = 2 * (i % Vh);
    const size_t t = lex / (X[0] * X[1] * X[2]);
    if (t == (size_t)X[3] - 1)
      for (int k = 0; k < 18; k++) links[(3 * V + i) * 18 + k] *= -1;
  }
  void *gauge[4];
  for (int mu = 0; mu < 4; mu++) gauge[mu] = links.data() + mu * V * 18;
  std::vector<double> clover = read_f64(dir + "/clover_packed.f64", V * 72);
  std::vector<double> psi = read_f64(dir + "/psi_dirac.f64", V * 24);
  std::vector<double> m_psi = read_f64(dir + "/M_psi.f64", V * 24);
  std::vector<double> d_psi = read_f64(dir + "/Dslash_psi.f64", V * 24);
  std::vector<double> mpc_even_sym = read_f64(dir + "/Mpc_even_sym_psi.f64", Vh * 24);
  std::vector<double> mpc_odd_asym = read_f64(dir + "/Mpc_odd_asym_psi.f64", Vh * 24);

  initQuda(0);

  QudaGaugeParam gp = newQudaGaugeParam();
  for (int d = 0; d < 4; d++) gp.X[d] = X[d];
  gp.anisotropy = 1.0;
  gp.type = QUDA_WILSON_LINKS;
  gp.gauge_order = QUDA_QDP_GAUGE_ORDER;
  gp.t_boundary = QUDA_ANTI_PERIODIC_T;
  gp.cpu_prec = QUDA_DOUBLE_PRECISION;
  gp.cuda_prec = QUDA_DOUBLE_PRECISION;
  gp.reconstruct = QUDA_RECONSTRUCT_12;
  gp.cuda_prec_sloppy = QUDA_SINGLE_PRECISION;
  gp.reconstruct_sloppy = QUDA_RECONSTRUCT_12;
  gp.gauge_fix = QUDA_GAUGE_FIXED_NO;
  loadGaugeQuda(gauge, &gp);

  double plaq[3];
  plaqQuda(plaq);
  // Of the links without the boundary sign (docs/quda-compat.md).
  check("plaqQuda (spatial)", std::fabs(plaq[1] - plaq_s), 1e-14);
  check("plaqQuda (temporal)", std::fabs(plaq[2] - plaq_t), 1e-14);
  check("plaqQuda (average)", std::fabs(plaq[0] - 0.5 * (plaq_s + plaq_t)), 1e-14);

  QudaInvertParam ip = newQudaInvertParam();
  ip.dslash_type = QUDA_CLOVER_WILSON_DSLASH;
  ip.kappa = kappa;
  ip.clover_coeff = 0;  // the clover field is given
  ip.mass_normalization = QUDA_KAPPA_NORMALIZATION;
  ip.dagger = QUDA_DAG_NO;
  ip.cpu_prec = QUDA_DOUBLE_PRECISION;
  ip.cuda_prec = QUDA_DOUBLE_PRECISION;
  ip.cuda_prec_sloppy = QUDA_SINGLE_PRECISION;
  ip.dirac_order = QUDA_DIRAC_ORDER;
  ip.gamma_basis = QUDA_DEGRAND_ROSSI_GAMMA_BASIS;
  ip.clover_cpu_prec = QUDA_DOUBLE_PRECISION;
  ip.clover_cuda_prec = QUDA_DOUBLE_PRECISION;
  ip.clover_cuda_prec_sloppy = QUDA_SINGLE_PRECISION;
  ip.clover_order = QUDA_PACKED_CLOVER_ORDER;
  ip.verbosity = QUDA_SUMMARIZE;
  loadCloverQuda(clover.data(), NULL, &ip);

  // The operators against the golden set.
  std::vector<double> out(V * 24);
  ip.solution_type = QUDA_MAT_SOLUTION;
  ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
  MatQuda(out.data(), psi.data(), &ip);
  check("MatQuda MAT = M psi", rel_diff(out.data(), m_psi.data(), V * 24), 1e-13);
  ip.solution_type = QUDA_MATPC_SOLUTION;
  MatQuda(out.data(), psi.data(), &ip);
  check("MatQuda MATPC EVEN_EVEN = M_pc psi_e", rel_diff(out.data(), mpc_even_sym.data(), Vh * 24), 1e-13);
  ip.matpc_type = QUDA_MATPC_ODD_ODD_ASYMMETRIC;
  MatQuda(out.data(), psi.data() + Vh * 24, &ip);
  check("MatQuda MATPC ODD_ODD_ASYMMETRIC", rel_diff(out.data(), mpc_odd_asym.data(), Vh * 24), 1e-13);
  {
    QudaInvertParam wp = ip;
    wp.dslash_type = QUDA_WILSON_DSLASH;
    dslashQuda(out.data(), psi.data() + Vh * 24, &wp, QUDA_EVEN_PARITY);
    check("dslashQuda (Wilson) EVEN = (D psi)_e", rel_diff(out.data(), d_psi.data(), Vh * 24), 1e-13);
  }

  // Solves: the source M psi must give psi back.
  ip.inv_type = QUDA_BICGSTAB_INVERTER;
  ip.solution_type = QUDA_MAT_SOLUTION;
  ip.solve_type = QUDA_DIRECT_PC_SOLVE;
  ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
  ip.tol = 1e-11;
  ip.maxiter = 2000;
  ip.reliable_delta = 0.1;
  std::vector<double> x(V * 24, 0.0);
  invertQuda(x.data(), m_psi.data(), &ip);
  std::printf("invertQuda MAT, BiCGstab: %d iterations, true_res %.2e, %.3f s\n", ip.iter, ip.true_res[0], ip.secs);
  check("invertQuda MAT (double-single) x = psi", rel_diff(x.data(), psi.data(), V * 24), 1e-8);

  // Two sources at once (Chroma's multi-RHS path): M psi and 2 M psi.
  {
    std::vector<double> b2(m_psi), x1(V * 24, 0.0), x2(V * 24, 0.0);
    for (double &v : b2) v *= 2;
    void *xs2[2] = {x1.data(), x2.data()}, *bs2[2] = {m_psi.data(), b2.data()};
    ip.num_src = 2;
    invertMultiSrcQuda(xs2, bs2, &ip);
    ip.num_src = 1;
    for (double &v : x2) v *= 0.5;
    std::printf("invertMultiSrcQuda: %d iterations for 2 sources\n", ip.iter);
    check("invertMultiSrcQuda source 1 x = psi", rel_diff(x1.data(), psi.data(), V * 24), 1e-8);
    check("invertMultiSrcQuda source 2 x / 2 = psi", rel_diff(x2.data(), psi.data(), V * 24), 1e-8);
    check("  true_res[1] reported", ip.true_res[1], 1e-11);
  }

  // Chroma's default: the symmetric clover MatPC system itself (MATPC,
  // EVEN_EVEN, DIRECT_PC): the source M_pc psi_e gives psi_e.
  {
    ip.solution_type = QUDA_MATPC_SOLUTION;
    ip.solve_type = QUDA_DIRECT_PC_SOLVE;
    ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
    std::vector<double> xe(Vh * 24, 0.0);
    invertQuda(xe.data(), mpc_even_sym.data(), &ip);
    std::printf("invertQuda MATPC EVEN_EVEN (symmetric), BiCGstab: %d iterations\n", ip.iter);
    check("invertQuda MATPC EVEN_EVEN x = psi_e", rel_diff(xe.data(), psi.data(), Vh * 24), 1e-8);
  }

  ip.inv_type = QUDA_CG_INVERTER;
  ip.solution_type = QUDA_MATPC_SOLUTION;
  ip.solve_type = QUDA_NORMOP_PC_SOLVE;
  ip.matpc_type = QUDA_MATPC_ODD_ODD_ASYMMETRIC;
  std::vector<double> xo(Vh * 24, 0.0);
  invertQuda(xo.data(), mpc_odd_asym.data(), &ip);
  std::printf("invertQuda MATPC, CG: %d iterations, true_res %.2e\n", ip.iter, ip.true_res[0]);
  check("invertQuda MATPC ODD_ODD_ASYM x = psi_o", rel_diff(xo.data(), psi.data() + Vh * 24, Vh * 24), 1e-8);

  // Multi-shift on M_pc^dag M_pc (Chroma's RHMC solves).
  ip.solution_type = QUDA_MATPCDAG_MATPC_SOLUTION;
  ip.matpc_type = QUDA_MATPC_EVEN_EVEN;
  ip.num_offset = 3;
  const double offsets[3] = {0.01, 0.1, 1.0};
  std::vector<std::vector<double>> xs(3, std::vector<double>(Vh * 24));
  void *xp[3];
  for (int i = 0; i < 3; i++) {
    ip.offset[i] = offsets[i];
    ip.tol_offset[i] = 1e-10;
    xp[i] = xs[i].data();
  }
  invertMultiShiftQuda(xp, psi.data(), &ip);
  std::printf("invertMultiShiftQuda: %d iterations\n", ip.iter);
  for (int i = 0; i < 3; i++) {
    std::vector<double> ax(Vh * 24);
    MatDagMatQuda(ax.data(), xs[i].data(), &ip);
    for (size_t k = 0; k < Vh * 24; k++) ax[k] += offsets[i] * xs[i][k];
    char what[64];
    std::snprintf(what, sizeof what, "multi-shift residual, offset %.2f", offsets[i]);
    check(what, rel_diff(ax.data(), psi.data(), Vh * 24), 1e-9);
    check("  true_res_offset reported", ip.true_res_offset[i], 1e-10);
  }

  freeCloverQuda();
  freeGaugeQuda();
  endQuda();
  if (failures) {
    std::printf("%d check(s) FAILED\n", failures);
    return 1;
  }
  std::printf("all checks passed\n");
  return 0;
}
