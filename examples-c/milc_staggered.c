/*
 * milc_staggered.c: latsol's staggered solver called the way MILC's
 * improved-staggered (asqtad/HISQ) code calls a GPU solver.
 *
 * MILC keeps its lattice as an array of site structs, even sites first.
 * Before it hands fat and long links to an external solver it multiplies
 * in the staggered phases eta_mu(x) and the anti-periodic boundary sign
 * (its "rephase"), and the long links already carry the Naik coefficient;
 * it gathers the links site-major (the four links of a site together:
 * LATSOL_GAUGE_ORDER_MILC) and the source colour vectors (su3_vector, even
 * sites first), solves M x = b with M = 2m - D by even-odd CG on the even
 * sites, and scatters the solution back into the site structs.
 *
 * Here: a 4^3 x 8 lattice; fat links are random SU(3) matrices times
 * 9/8 plus a small random perturbation (not unitary, as smeared links
 * are not); long links random SU(3) times -1/24; phases folded in as MILC
 * does. Single precision on the host (MILC's usual build), a mixed
 * single/half CG; the true residual is then recomputed through
 * latsol_apply_staggered in double and the solution compared with a double
 * solve. Exits non-zero if a check fails.
 *
 * Usage: milc_staggered [--backend auto|cpu|cuda]   (default cpu)
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"
#include "latsol.h"

/* MILC-like single-precision types. */
typedef struct { float real, imag; } fcomplex;
typedef struct { fcomplex e[3][3]; } fsu3_matrix;
typedef struct { fcomplex c[3]; } fsu3_vector;

/* One lattice site as MILC's ks_imp code keeps it (the fields used here). */
typedef struct {
    short x, y, z, t;
    char parity;
    fsu3_matrix fatlink[4]; /* directions x, y, z, t; phases folded in */
    fsu3_matrix longlink[4];
    fsu3_vector phi; /* source */
    fsu3_vector xxx; /* solution */
} site;

static const int32_t dims[4] = {4, 4, 4, 8};
static size_t volume;
static site *lattice;
static const double mass = 0.1;

/* MILC's staggered phase of direction dir at (x, y, z, t) times the
 * anti-periodic sign of a hop of `hops` sites across the T boundary. */
static double phase(const site *s, int dir, int hops)
{
    int sum = dir == 0 ? s->t : dir == 1 ? s->t + s->x : dir == 2 ? s->t + s->x + s->y : 0;
    double eta = sum % 2 ? -1.0 : 1.0;
    if (dir == 3 && s->t + hops >= dims[3]) eta = -eta;
    return eta;
}

static void set_matrix(fsu3_matrix *m, const double *u, double scale)
{
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            m->e[r][c].real = (float)(scale * u[2 * (3 * r + c)]);
            m->e[r][c].imag = (float)(scale * u[2 * (3 * r + c) + 1]);
        }
}

static void make_lattice(void)
{
    volume = (size_t)dims[0] * dims[1] * dims[2] * dims[3];
    lattice = (site *)ex_calloc(volume, sizeof(site));
    for (int t = 0; t < dims[3]; t++)
        for (int z = 0; z < dims[2]; z++)
            for (int y = 0; y < dims[1]; y++)
                for (int x = 0; x < dims[0]; x++) {
                    site *s = &lattice[ex_eo_index(dims, x, y, z, t)];
                    s->x = (short)x, s->y = (short)y, s->z = (short)z, s->t = (short)t;
                    s->parity = (char)((x + y + z + t) % 2);
                    for (int dir = 0; dir < 4; dir++) {
                        double u[18];
                        ex_random_su3(u);
                        for (int k = 0; k < 18; k++) u[k] += 0.05 * ex_uniform();
                        set_matrix(&s->fatlink[dir], u, 9.0 / 8.0 * phase(s, dir, 1));
                        ex_random_su3(u);
                        set_matrix(&s->longlink[dir], u, -1.0 / 24.0 * phase(s, dir, 3));
                    }
                    for (int c = 0; c < 3; c++) {
                        s->phi.c[c].real = (float)ex_uniform();
                        s->phi.c[c].imag = (float)ex_uniform();
                    }
                }
}

/* Site-major links (LATSOL_GAUGE_ORDER_MILC), float. */
static float *gather_links(size_t offset)
{
    float *out = (float *)ex_calloc(volume * 4 * 18, sizeof(float));
    for (size_t i = 0; i < volume; i++)
        memcpy(out + i * 72, (const char *)&lattice[i] + offset, 4 * sizeof(fsu3_matrix));
    return out;
}

static float *gather_vector(size_t offset)
{
    float *out = (float *)ex_calloc(volume * 6, sizeof(float));
    for (size_t i = 0; i < volume; i++)
        memcpy(out + i * 6, (const char *)&lattice[i] + offset, sizeof(fsu3_vector));
    return out;
}

static void scatter_vector(const float *v, size_t offset)
{
    for (size_t i = 0; i < volume; i++)
        memcpy((char *)&lattice[i] + offset, v + i * 6, sizeof(fsu3_vector));
}

static double *to_double(const float *v, size_t n)
{
    double *d = (double *)ex_calloc(n, sizeof(double));
    for (size_t i = 0; i < n; i++) d[i] = v[i];
    return d;
}

/* Loads the fat and long links in `host` precision (float arrays widened
 * when DOUBLE), stored in `precision` with a `sloppy` copy. */
static latsol_staggered *load_links(latsol_context *ctx, latsol_precision host,
                                    latsol_precision precision, latsol_precision sloppy)
{
    latsol_staggered_param sp = latsol_staggered_param_default();
    memcpy(sp.dims, dims, sizeof dims);
    sp.order = LATSOL_GAUGE_ORDER_MILC;
    sp.host_precision = host;
    sp.precision = precision;
    sp.precision_sloppy = sloppy;
    float *fat = gather_links(offsetof(site, fatlink));
    float *lng = gather_links(offsetof(site, longlink));
    latsol_staggered *links = NULL;
    if (host == LATSOL_PRECISION_DOUBLE) {
        double *fd = to_double(fat, volume * 72), *ld = to_double(lng, volume * 72);
        EX_CHECK(latsol_staggered_load(ctx, &sp, fd, ld, &links));
        free(fd);
        free(ld);
    } else {
        EX_CHECK(latsol_staggered_load(ctx, &sp, fat, lng, &links));
    }
    free(fat); /* latsol keeps its own copy */
    free(lng);
    return links;
}

int main(int argc, char **argv)
{
    latsol_backend backend = LATSOL_BACKEND_CPU;
    int failures = 0;
    for (int a = 1; a + 1 < argc; a += 2)
        if (strcmp(argv[a], "--backend") == 0)
            backend = strcmp(argv[a + 1], "cuda") == 0   ? LATSOL_BACKEND_CUDA
                      : strcmp(argv[a + 1], "auto") == 0 ? LATSOL_BACKEND_AUTO
                                                         : LATSOL_BACKEND_CPU;
    make_lattice();
    printf("milc_staggered: latsol %s, %dx%dx%dx%d, improved staggered, m = %g\n",
           latsol_version(), dims[0], dims[1], dims[2], dims[3], mass);
    size_t n = volume * 6;

    latsol_init_param init = latsol_init_param_default();
    init.backend = backend;
    init.verbosity = LATSOL_VERBOSITY_SILENT;
    latsol_context *ctx = NULL;
    EX_CHECK(latsol_init(&init, &ctx));

    /* Single precision with a half-precision sloppy copy: MILC's mixed CG. */
    latsol_staggered *links = load_links(ctx, LATSOL_PRECISION_SINGLE, LATSOL_PRECISION_SINGLE,
                                          LATSOL_PRECISION_HALF);
    latsol_staggered_invert_param p = latsol_staggered_invert_param_default();
    p.mass = mass;
    p.solve = LATSOL_STAGGERED_SOLVE_EVEN;
    p.tol = 1e-5;
    p.maxiter = 5000;
    p.host_precision = LATSOL_PRECISION_SINGLE;
    p.precision = LATSOL_PRECISION_SINGLE;
    p.precision_sloppy = LATSOL_PRECISION_HALF;
    float *src = gather_vector(offsetof(site, phi));
    float *sol = (float *)ex_calloc(n, sizeof(float));
    latsol_invert_result res = latsol_invert_result_default();
    EX_CHECK(latsol_invert_staggered(ctx, links, &p, sol, src, &res));
    printf("even-odd CG (single/half): %d iterations, %d reliable updates, true residual %.3e\n",
           res.iterations, res.reliable_updates, res.true_residual);
    scatter_vector(sol, offsetof(site, xxx));
    failures += ex_expect(res.converged && res.true_residual <= p.tol, "true residual (latsol)",
                          res.true_residual, p.tol);

    /* The reference: the same links and source in double, solved to 1e-12;
     * its M x recomputed through latsol_apply_staggered. */
    latsol_staggered *links_d = load_links(ctx, LATSOL_PRECISION_DOUBLE, LATSOL_PRECISION_DOUBLE,
                                           LATSOL_PRECISION_DOUBLE);
    latsol_staggered_invert_param pd = latsol_staggered_invert_param_default();
    pd.mass = mass;
    pd.tol = 1e-12;
    double *src_d = to_double(src, n), *sol_d = (double *)ex_calloc(n, sizeof(double));
    EX_CHECK(latsol_invert_staggered(ctx, links_d, &pd, sol_d, src_d, &res));
    double *mx = (double *)ex_calloc(n, sizeof(double));
    pd.solve = LATSOL_STAGGERED_SOLVE_FULL;
    EX_CHECK(latsol_apply_staggered(ctx, links_d, &pd, LATSOL_OP_M, mx, sol_d));
    double r = ex_rel_diff(mx, src_d, n);
    failures += ex_expect(r <= 1e-12, "|b - M x| / |b| of the double solve", r, 1e-12);
    /* The single solution agrees with it to the tolerance times the
     * condition number of M, at most (2m + |D|)/2m ~ 60 here. */
    float *xs = gather_vector(offsetof(site, xxx));
    double *x = to_double(xs, n);
    free(xs);
    double e = ex_rel_diff(x, sol_d, n);
    failures += ex_expect(e <= 60 * p.tol, "|x_single - x_double| / |x_double|", e, 60 * p.tol);

    EX_CHECK(latsol_staggered_free(links));
    EX_CHECK(latsol_staggered_free(links_d));
    EX_CHECK(latsol_end(ctx));
    free(src);
    free(sol);
    free(src_d);
    free(sol_d);
    free(mx);
    free(x);
    free(lattice);
    printf("%s\n", failures ? "FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
