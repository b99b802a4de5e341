/*
 * invert.c: solve a Wilson system through latsol's C interface.
 *
 * A plain C99 program that uses only include/latsol.h. It builds a gauge
 * field (random SU(3) links on a 4x4x4x8 lattice from a small RNG, or the
 * links of the golden data set when given its directory), loads the same
 * links twice, in QDP order and in MILC order, and solves M x = b for a
 * point source b with each: even-odd BiCGstab on the QDP copy, even-odd CG
 * on the MILC copy. It prints iterations, true residual, time and Gflops,
 * checks the true residual again through latsol_apply(M), and checks that
 * the two solutions agree. Given the golden directory it also solves
 * M x = M psi and checks x against psi to 1e-10 relative.
 *
 * Exit status: 0 if every residual and check is met, 1 otherwise.
 *
 * Usage: invert [--backend auto|cpu|cuda] [GOLDEN_DIR]
 *   GOLDEN_DIR: e.g. tests/data/golden-wilson-6x4x4x8 (gauge_qdp.f64,
 *   psi_dirac.f64, M_psi_dirac.f64, meta.json).
 *
 * Conventions (docs/conventions.md): sites in even-odd order, links 3x3 complex
 * row-major, spinors in DIRAC order and the DeGrand-Rossi basis, M = 1 -
 * kappa D, anti-periodic in time.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latsol.h"

/* Reports a failed latsol call with its status and message, and exits. */
#define CHECK(call)                                                             \
    do {                                                                        \
        latsol_status check_status_ = (call);                                   \
        if (check_status_ != LATSOL_SUCCESS) {                                  \
            fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__,   \
                    #call, latsol_status_string(check_status_),                 \
                    latsol_last_error());                                       \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

static int failures = 0;

/* Records a check; the program exits non-zero if any fails. */
static void expect(int ok, const char *what, double value, double limit)
{
    printf("  %-44s %.3e (limit %.1e) %s\n", what, value, limit, ok ? "ok" : "FAILED");
    if (!ok) failures++;
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* ---- random SU(3) links ------------------------------------------------ */

/* splitmix64: small, deterministic, good enough for a test field. */
static uint64_t rng_state = 2026;
static double uniform(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0; /* [-1, 1) */
}

/* A random SU(3) matrix u[row][col][re/im]: Gram-Schmidt on two random
 * rows; the third row is the complex conjugate of their cross product,
 * which makes the determinant 1. */
static void random_su3(double u[3][3][2])
{
    int r, c;
    for (r = 0; r < 2; r++) {
        double norm = 0;
        for (c = 0; c < 3; c++) {
            u[r][c][0] = uniform();
            u[r][c][1] = uniform();
        }
        if (r == 1) { /* row1 -= (row0^dag row1) row0 */
            double dre = 0, dim = 0;
            for (c = 0; c < 3; c++) {
                dre += u[0][c][0] * u[1][c][0] + u[0][c][1] * u[1][c][1];
                dim += u[0][c][0] * u[1][c][1] - u[0][c][1] * u[1][c][0];
            }
            for (c = 0; c < 3; c++) {
                u[1][c][0] -= dre * u[0][c][0] - dim * u[0][c][1];
                u[1][c][1] -= dre * u[0][c][1] + dim * u[0][c][0];
            }
        }
        for (c = 0; c < 3; c++) norm += u[r][c][0] * u[r][c][0] + u[r][c][1] * u[r][c][1];
        norm = sqrt(norm);
        for (c = 0; c < 3; c++) {
            u[r][c][0] /= norm;
            u[r][c][1] /= norm;
        }
    }
    for (c = 0; c < 3; c++) {
        int i = (c + 1) % 3, j = (c + 2) % 3;
        /* (a_i b_j - a_j b_i)^* */
        double re = u[0][i][0] * u[1][j][0] - u[0][i][1] * u[1][j][1]
                  - (u[0][j][0] * u[1][i][0] - u[0][j][1] * u[1][i][1]);
        double im = u[0][i][0] * u[1][j][1] + u[0][i][1] * u[1][j][0]
                  - (u[0][j][0] * u[1][i][1] + u[0][j][1] * u[1][i][0]);
        u[2][c][0] = re;
        u[2][c][1] = -im;
    }
}

/* ---- the golden data set ----------------------------------------------- */

static char *read_text(const char *dir, const char *name)
{
    char path[4096];
    FILE *f;
    long n;
    char *text;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = xmalloc((size_t)n + 1);
    if (fread(text, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    text[n] = '\0';
    fclose(f);
    return text;
}

/* Reads `count` little-endian doubles (this program assumes a
 * little-endian host, as the data set does). */
static double *read_doubles(const char *dir, const char *name, size_t count)
{
    char path[4096];
    FILE *f;
    double *data = xmalloc(count * sizeof(double));
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (!f || fread(data, sizeof(double), count, f) != count) {
        fprintf(stderr, "cannot read %zu doubles from %s\n", count, path);
        exit(1);
    }
    fclose(f);
    return data;
}

/* The number after "key": in meta.json (a flat object). */
static double meta_number(const char *meta, const char *key)
{
    char quoted[128];
    const char *at;
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    at = strstr(meta, quoted);
    if (!at || !(at = strchr(at, ':'))) {
        fprintf(stderr, "meta.json lacks %s\n", key);
        exit(1);
    }
    return strtod(at + 1, NULL);
}

static void meta_dims(const char *meta, int32_t dims[4])
{
    const char *at = strstr(meta, "\"dims\"");
    int mu;
    if (!at || !(at = strchr(at, '['))) {
        fprintf(stderr, "meta.json lacks dims\n");
        exit(1);
    }
    for (mu = 0; mu < 4; mu++) {
        char *end;
        dims[mu] = (int32_t)strtol(at + 1, &end, 10);
        at = strchr(end, mu < 3 ? ',' : ']');
        if (!at) {
            fprintf(stderr, "meta.json: bad dims\n");
            exit(1);
        }
    }
}

/* ---- vectors ------------------------------------------------------------ */

static double norm2(const double *a, size_t n)
{
    double s = 0;
    size_t i;
    for (i = 0; i < n; i++) s += a[i] * a[i];
    return s;
}

/* |a - b| / |b| */
static double rel_diff(const double *a, const double *b, size_t n)
{
    double d = 0;
    size_t i;
    for (i = 0; i < n; i++) d += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(d / norm2(b, n));
}

/* |b - M x| / |b|, through latsol_apply. */
static double residual(latsol_context *ctx, const latsol_gauge *gauge,
                       const latsol_invert_param *param, const double *x,
                       const double *b, size_t n)
{
    double *mx = xmalloc(n * sizeof(double));
    double r;
    CHECK(latsol_apply(ctx, gauge, param, LATSOL_OP_M, mx, x));
    r = rel_diff(mx, b, n);
    free(mx);
    return r;
}

/* Solves M x = b and prints what the solve did; returns the status. */
static latsol_status solve(latsol_context *ctx, const latsol_gauge *gauge,
                           const latsol_invert_param *param, const char *label,
                           double *x, const double *b, size_t n)
{
    latsol_invert_result result = latsol_invert_result_default();
    latsol_status status = latsol_invert(ctx, gauge, param, x, b, &result);
    if (status != LATSOL_SUCCESS && status != LATSOL_ERROR_NOT_CONVERGED) {
        fprintf(stderr, "%s: latsol_invert failed: %s: %s\n", label,
                latsol_status_string(status), latsol_last_error());
        failures++;
        return status;
    }
    printf("%s: %d iterations, true residual %.3e, %.3f s, %.2f Gflops%s\n", label,
           result.iterations, result.true_residual, result.seconds, result.gflops,
           result.converged ? "" : " (NOT converged)");
    expect(status == LATSOL_SUCCESS && result.true_residual <= param->tol,
           "true residual (latsol)", result.true_residual, param->tol);
    {
        double r = residual(ctx, gauge, param, x, b, n);
        /* Recomputed in another order of summation: a little slack. */
        expect(r <= 1.01 * param->tol, "true residual (latsol_apply)", r, 1.01 * param->tol);
    }
    return status;
}

int main(int argc, char **argv)
{
    const char *golden = NULL;
    latsol_backend backend = LATSOL_BACKEND_AUTO;
    int32_t dims[4] = {4, 4, 4, 8};
    double kappa = 0.12;
    size_t volume, site;
    int a, mu;
    double *qdp[4], *milc, *b, *x_qdp, *x_milc;
    const void *qdp_table[4];
    latsol_init_param init;
    latsol_gauge_param gparam;
    latsol_invert_param param;
    latsol_context *ctx = NULL;
    latsol_gauge *gauge_qdp = NULL, *gauge_milc = NULL;
    double plaq_qdp[3], plaq_milc[3];

    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--backend") == 0 && a + 1 < argc) {
            const char *name = argv[++a];
            backend = strcmp(name, "cpu") == 0    ? LATSOL_BACKEND_CPU
                      : strcmp(name, "cuda") == 0 ? LATSOL_BACKEND_CUDA
                                                  : LATSOL_BACKEND_AUTO;
        } else {
            golden = argv[a];
        }
    }
    printf("latsol %s\n", latsol_version());

    /* The links, in QDP order: 4 arrays (mu = x, y, z, t) of V links. */
    if (golden) {
        char *meta = read_text(golden, "meta.json");
        double *all;
        meta_dims(meta, dims);
        kappa = meta_number(meta, "kappa");
        free(meta);
        volume = (size_t)dims[0] * dims[1] * dims[2] * dims[3];
        all = read_doubles(golden, "gauge_qdp.f64", 4 * volume * 18);
        for (mu = 0; mu < 4; mu++) {
            qdp[mu] = xmalloc(volume * 18 * sizeof(double));
            memcpy(qdp[mu], all + mu * volume * 18, volume * 18 * sizeof(double));
        }
        free(all);
    } else {
        volume = (size_t)dims[0] * dims[1] * dims[2] * dims[3];
        for (mu = 0; mu < 4; mu++) {
            qdp[mu] = xmalloc(volume * 18 * sizeof(double));
            for (site = 0; site < volume; site++)
                random_su3((double(*)[3][2])(qdp[mu] + site * 18));
        }
    }
    printf("lattice %dx%dx%dx%d, kappa %g, %s links\n", dims[0], dims[1], dims[2], dims[3],
           kappa, golden ? "golden" : "random SU(3)");

    /* The same links in MILC order: one array, the 4 links of a site
     * together. */
    milc = xmalloc(volume * 4 * 18 * sizeof(double));
    for (site = 0; site < volume; site++)
        for (mu = 0; mu < 4; mu++)
            memcpy(milc + (site * 4 + mu) * 18, qdp[mu] + site * 18, 18 * sizeof(double));
    for (mu = 0; mu < 4; mu++) qdp_table[mu] = qdp[mu];

    /* A context: defaults, then what this program wants. */
    init = latsol_init_param_default();
    init.backend = backend;
    init.verbosity = LATSOL_VERBOSITY_SILENT;
    CHECK(latsol_init(&init, &ctx));
    CHECK(latsol_context_backend(ctx, &backend));
    printf("backend %s\n", backend == LATSOL_BACKEND_CUDA ? "cuda" : "cpu");

    gparam = latsol_gauge_param_default();
    memcpy(gparam.dims, dims, sizeof dims);
    gparam.host_precision = LATSOL_PRECISION_DOUBLE;
    gparam.t_boundary = LATSOL_T_BOUNDARY_ANTIPERIODIC;
    gparam.order = LATSOL_GAUGE_ORDER_QDP;
    CHECK(latsol_gauge_load(ctx, &gparam, qdp_table, &gauge_qdp));
    gparam.order = LATSOL_GAUGE_ORDER_MILC;
    CHECK(latsol_gauge_load(ctx, &gparam, milc, &gauge_milc));

    CHECK(latsol_gauge_plaquette(gauge_qdp, plaq_qdp));
    CHECK(latsol_gauge_plaquette(gauge_milc, plaq_milc));
    printf("plaquette %.12f (spatial %.12f, temporal %.12f)\n", plaq_qdp[0], plaq_qdp[1],
           plaq_qdp[2]);
    expect(plaq_qdp[0] == plaq_milc[0], "plaquette QDP - MILC", fabs(plaq_qdp[0] - plaq_milc[0]),
           0.0);
    /* A point source at the origin, spin 0, colour 0 (DIRAC order). */
    b = calloc(volume * 24, sizeof(double));
    x_qdp = calloc(volume * 24, sizeof(double));
    x_milc = calloc(volume * 24, sizeof(double));
    if (!b || !x_qdp || !x_milc) return 1;
    b[0] = 1.0;

    param = latsol_invert_param_default();
    param.dslash = LATSOL_DSLASH_WILSON;
    param.kappa = kappa;
    param.mass_normalization = LATSOL_NORMALIZATION_KAPPA;
    param.solve_type = LATSOL_SOLVE_DIRECT_PC;
    param.matpc = LATSOL_MATPC_EVEN_EVEN;
    param.tol = 1e-10;
    param.maxiter = 5000;
    param.host_precision = LATSOL_PRECISION_DOUBLE;
    param.dirac_order = LATSOL_DIRAC_ORDER_DIRAC;
    param.gamma_basis = LATSOL_GAMMA_DEGRAND_ROSSI;

    param.solver = LATSOL_SOLVER_BICGSTAB;
    solve(ctx, gauge_qdp, &param, "QDP links, even-odd BiCGstab", x_qdp, b, volume * 24);
    param.solver = LATSOL_SOLVER_CG;
    solve(ctx, gauge_milc, &param, "MILC links, even-odd CG", x_milc, b, volume * 24);
    /* Both residuals are below tol; the solutions differ by at most about
     * the condition number times tol. */
    {
        double d = rel_diff(x_milc, x_qdp, volume * 24);
        expect(d < 1e-7, "|x_MILC - x_QDP| / |x_QDP|", d, 1e-7);
    }

    if (golden) {
        double *psi = read_doubles(golden, "psi_dirac.f64", volume * 24);
        double *m_psi = read_doubles(golden, "M_psi_dirac.f64", volume * 24);
        double *x = calloc(volume * 24, sizeof(double));
        double *out = xmalloc(volume * 24 * sizeof(double));
        if (!x) return 1;
        CHECK(latsol_apply(ctx, gauge_qdp, &param, LATSOL_OP_M, out, psi));
        expect(rel_diff(out, m_psi, volume * 24) < 1e-12, "|M psi - M_psi| / |M_psi|",
               rel_diff(out, m_psi, volume * 24), 1e-12);
        param.tol = 1e-12;
        param.solver = LATSOL_SOLVER_BICGSTAB;
        solve(ctx, gauge_qdp, &param, "golden M x = M psi, even-odd BiCGstab", x, m_psi,
              volume * 24);
        expect(rel_diff(x, psi, volume * 24) < 1e-10, "|x - psi| / |psi|",
               rel_diff(x, psi, volume * 24), 1e-10);
        free(psi);
        free(m_psi);
        free(x);
        free(out);
    }

    CHECK(latsol_gauge_free(gauge_qdp));
    CHECK(latsol_gauge_free(gauge_milc));
    CHECK(latsol_end(ctx));
    for (mu = 0; mu < 4; mu++) free(qdp[mu]);
    free(milc);
    free(b);
    free(x_qdp);
    free(x_milc);

    if (failures) {
        printf("%d check(s) FAILED\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
