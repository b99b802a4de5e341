/*
 * multishift.c: many shifted systems from one source, the way an RHMC
 * force or a mass scan calls latsol.
 *
 * An RHMC code needs (M^dag M + sigma_i) x_i = b for the shifts sigma_i of
 * a rational approximation, each to its own tolerance; a spectroscopy
 * code needs M(kappa_i) x_i = b for several quark masses. This program
 * does both on a 4^3 x 8 lattice of random SU(3) links (MILC gauge order,
 * double-precision host fields, DeGrand-Rossi spinors in DIRAC order):
 *
 *  1. latsol_invert_multishift with five shifts in arbitrary order and a
 *     tolerance per shift, in mixed precision (double, sloppy single);
 *  2. the same shifts on the even-odd system (single-parity arrays);
 *  3. latsol_invert_multimass with three hopping parameters and the AUTO
 *     policy.
 *
 * Each solution is checked by the program itself: the true residual is
 * recomputed from latsol_apply (M^dag M, or M at each kappa) plus the
 * shift, and must meet that system's tolerance. Exit status non-zero if a
 * check fails.
 *
 * Usage: multishift [--backend auto|cpu|cuda]   (default cpu)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"
#include "latsol.h"

#define NUM_SHIFTS 5
#define NUM_MASSES 3

static const int32_t dims[4] = {4, 4, 4, 8};

/* |b - (A x + sigma x)| / |b| for A x already computed into ax. */
static double shifted_residual(const double *ax, const double *x, double sigma, const double *b,
                               size_t n)
{
    double r2 = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        double d = b[i] - (ax[i] + sigma * x[i]);
        r2 += d * d;
    }
    return sqrt(r2 / ex_norm2(b, n));
}

/* out = Mhat x_e = x_e - kappa^2 D_eo D_oe x_e on the even sites (kappa
 * normalization; docs/conventions.md), from latsol's full-lattice hopping term:
 * D applied to x_e padded with zero odd sites is D_oe x_e on the odd sites,
 * and D applied to that is D_eo D_oe x_e on the even ones. tmp1 and tmp2
 * hold full fields. Even sites come first in DIRAC order. */
static void apply_mhat_even(latsol_context *ctx, const latsol_gauge *gauge,
                            const latsol_invert_param *p, double *out, const double *x_e,
                            double *tmp1, double *tmp2, size_t n)
{
    size_t half = n / 2, i;
    memcpy(tmp1, x_e, half * sizeof(double));
    memset(tmp1 + half, 0, half * sizeof(double));
    EX_CHECK(latsol_apply(ctx, gauge, p, LATSOL_OP_DSLASH, tmp2, tmp1));
    memset(tmp2, 0, half * sizeof(double));
    EX_CHECK(latsol_apply(ctx, gauge, p, LATSOL_OP_DSLASH, tmp1, tmp2));
    for (i = 0; i < half; i++) out[i] = x_e[i] - p->kappa * p->kappa * tmp1[i];
}

/* gamma_5 in the DeGrand-Rossi basis, diag(-1, -1, 1, 1), on a field in
 * DIRAC order (spin outer, colour inner: 6 reals per spin). */
static void apply_gamma5(double *v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if ((i / 6) % 4 < 2) v[i] = -v[i];
}

int main(int argc, char **argv)
{
    latsol_backend backend = LATSOL_BACKEND_CPU;
    int failures = 0, k;
    size_t volume = (size_t)dims[0] * dims[1] * dims[2] * dims[3], i, mu;
    size_t n = volume * 24;
    char what[64];
    for (int a = 1; a + 1 < argc; a += 2)
        if (strcmp(argv[a], "--backend") == 0)
            backend = strcmp(argv[a + 1], "cuda") == 0   ? LATSOL_BACKEND_CUDA
                      : strcmp(argv[a + 1], "auto") == 0 ? LATSOL_BACKEND_AUTO
                                                         : LATSOL_BACKEND_CPU;
    printf("multishift: latsol %s, %dx%dx%dx%d\n", latsol_version(), dims[0], dims[1], dims[2],
           dims[3]);

    /* MILC order: the 4 links of a site together, sites in even-odd order. */
    double *gauge_milc = (double *)ex_calloc(volume * 4 * 18, sizeof(double));
    for (i = 0; i < volume; i++)
        for (mu = 0; mu < 4; mu++) ex_random_su3(gauge_milc + (4 * i + mu) * 18);
    double *source = (double *)ex_calloc(n, sizeof(double));
    for (i = 0; i < n; i++) source[i] = ex_uniform();
    double *ax = (double *)ex_calloc(n, sizeof(double));
    double *x[NUM_SHIFTS];
    void *solutions[NUM_SHIFTS];
    for (k = 0; k < NUM_SHIFTS; k++) {
        x[k] = (double *)ex_calloc(n, sizeof(double));
        solutions[k] = x[k];
    }

    latsol_init_param init = latsol_init_param_default();
    init.backend = backend;
    init.verbosity = LATSOL_VERBOSITY_SILENT;
    latsol_context *ctx = NULL;
    EX_CHECK(latsol_init(&init, &ctx));

    latsol_gauge_param gp = latsol_gauge_param_default();
    memcpy(gp.dims, dims, sizeof gp.dims);
    gp.order = LATSOL_GAUGE_ORDER_MILC;
    gp.host_precision = LATSOL_PRECISION_DOUBLE;
    gp.t_boundary = LATSOL_T_BOUNDARY_ANTIPERIODIC;
    gp.precision = LATSOL_PRECISION_DOUBLE;
    gp.precision_sloppy = LATSOL_PRECISION_SINGLE;
    latsol_gauge *gauge = NULL;
    EX_CHECK(latsol_gauge_load(ctx, &gp, gauge_milc, &gauge));

    latsol_invert_param p = latsol_invert_param_default();
    p.kappa = 0.12;
    p.mass_normalization = LATSOL_NORMALIZATION_KAPPA;
    p.tol = 1e-10;
    p.maxiter = 10000;
    p.precision = LATSOL_PRECISION_DOUBLE;
    p.precision_sloppy = LATSOL_PRECISION_SINGLE;
    p.reliable_delta = 0.1;
    p.dirac_order = LATSOL_DIRAC_ORDER_DIRAC;
    p.gamma_basis = LATSOL_GAMMA_DEGRAND_ROSSI;

    /* 1. (M^dag M + sigma_i) x_i = b on the full lattice; shifts in any
     * order, the smallest needing the most iterations. */
    {
        const double shifts[NUM_SHIFTS] = {0.4, 0.0, 0.02, 1.5, 0.1};
        const double tols[NUM_SHIFTS] = {1e-9, 1e-10, 1e-10, 1e-8, 1e-10};
        latsol_multishift_result r = latsol_multishift_result_default();
        p.solve_type = LATSOL_SOLVE_NORMOP;
        EX_CHECK(latsol_invert_multishift(ctx, gauge, &p, NUM_SHIFTS, shifts, tols, solutions,
                                          source, &r));
        printf("full M^dag M, %d shifts, double-single: %d iterations (%d multi-shift), %.3f s\n",
               r.num_shifts, r.iterations, r.multishift_iterations, r.seconds);
        failures += ex_expect(r.converged == 1, "every shift converged", r.converged, 1);
        for (k = 0; k < NUM_SHIFTS; k++) {
            EX_CHECK(latsol_apply(ctx, gauge, &p, LATSOL_OP_MDAG_M, ax, x[k]));
            double res = shifted_residual(ax, x[k], shifts[k], source, n);
            printf("  sigma %-5g refinement %3d its, latsol's true residual %.3e\n", shifts[k],
                   r.shift_iterations[k], r.true_residual[k]);
            snprintf(what, sizeof what, "|b - (A + %g) x| / |b|", shifts[k]);
            failures += ex_expect(res <= tols[k], what, res, tols[k]);
        }
    }

    /* 2. The even-odd system Mhat^dag Mhat on the even sites: source and
     * solutions hold the V/2 even sites; tol_shifts NULL, so every shift
     * goes to p.tol. Mhat^dag = gamma_5 Mhat gamma_5 (docs/conventions.md). */
    {
        const double shifts[NUM_SHIFTS] = {0.4, 0.0, 0.02, 1.5, 0.1};
        latsol_multishift_result r = latsol_multishift_result_default();
        double *tmp1 = (double *)ex_calloc(n, sizeof(double));
        double *tmp2 = (double *)ex_calloc(n, sizeof(double));
        double *mx = (double *)ex_calloc(n / 2, sizeof(double));
        p.solve_type = LATSOL_SOLVE_NORMOP_PC;
        p.matpc = LATSOL_MATPC_EVEN_EVEN;
        EX_CHECK(latsol_invert_multishift(ctx, gauge, &p, NUM_SHIFTS, shifts, NULL, solutions,
                                          source, &r));
        printf("even-odd Mhat^dag Mhat, %d shifts: %d iterations (%d multi-shift), %.3f s\n",
               r.num_shifts, r.iterations, r.multishift_iterations, r.seconds);
        for (k = 0; k < NUM_SHIFTS; k++) {
            apply_mhat_even(ctx, gauge, &p, mx, x[k], tmp1, tmp2, n);
            apply_gamma5(mx, n / 2);
            apply_mhat_even(ctx, gauge, &p, ax, mx, tmp1, tmp2, n);
            apply_gamma5(ax, n / 2);
            double res = shifted_residual(ax, x[k], shifts[k], source, n / 2);
            snprintf(what, sizeof what, "even-odd |b - (A + %g) x| / |b|", shifts[k]);
            failures += ex_expect(r.shift_converged[k] && res <= p.tol, what, res, p.tol);
        }
        free(tmp1);
        free(tmp2);
        free(mx);
    }

    /* 3. M(kappa_i) x_i = b for three quark masses. */
    {
        const double kappas[NUM_MASSES] = {0.115, 0.12, 0.125};
        latsol_multishift_result r = latsol_multishift_result_default();
        p.solve_type = LATSOL_SOLVE_DIRECT;
        EX_CHECK(latsol_invert_multimass(ctx, gauge, &p, NUM_MASSES, kappas, NULL,
                                         LATSOL_MULTIMASS_AUTO, solutions, source, &r));
        printf("multi-mass, %d kappas: policy %s, %d iterations, %.3f s\n", r.num_shifts,
               r.policy_used == LATSOL_MULTIMASS_BICGSTAB_M ? "BiCGstab-M" : "sequence",
               r.iterations, r.seconds);
        for (k = 0; k < NUM_MASSES; k++) {
            latsol_invert_param pk = p;
            pk.kappa = kappas[k];
            EX_CHECK(latsol_apply(ctx, gauge, &pk, LATSOL_OP_M, ax, x[k]));
            double res = shifted_residual(ax, x[k], 0.0, source, n);
            snprintf(what, sizeof what, "|b - M(%g) x| / |b|", kappas[k]);
            failures += ex_expect(res <= p.tol, what, res, p.tol);
        }
    }

    EX_CHECK(latsol_gauge_free(gauge));
    EX_CHECK(latsol_end(ctx));
    free(gauge_milc);
    free(source);
    free(ax);
    for (k = 0; k < NUM_SHIFTS; k++) free(x[k]);
    if (failures) {
        printf("multishift: %d check(s) FAILED\n", failures);
        return 1;
    }
    printf("multishift: all checks passed\n");
    return 0;
}
