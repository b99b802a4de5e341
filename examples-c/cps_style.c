/*
 * cps_style.c: latsol called with the field orders of the Columbia Physics
 * System (CPS).
 *
 * CPS keeps the gauge field as one array of 4 links per site, sites in
 * even-odd order, each link a column-major 3x3 complex matrix
 * (LATSOL_GAUGE_ORDER_CPS_WILSON), and Wilson fermions with the odd sites
 * first (LATSOL_DIRAC_ORDER_CPS_WILSON: odd-even sites, spin outer, colour
 * inner). It names the Wilson operator by its mass, M = (4 + m) - D/2
 * (LATSOL_NORMALIZATION_MASS with kappa = 1 / (2 (4 + m))), and solves
 * M^dag M on the odd checkerboard by CG.
 *
 * Here: a 4^3 x 8 lattice of random SU(3) links, a random source, an
 * even-odd CG on the normal equations on the odd sites, on the CPU
 * backend. The program recomputes the true residual |b - M x| / |b| with
 * latsol_apply, then reorders the very same links and source into QDP and
 * DIRAC order itself, solves again, and checks that both solutions are the
 * same field: the CPS orders mean what the header says. Exit status
 * non-zero if a check fails.
 *
 * Usage: cps_style [--backend auto|cpu|cuda]   (default cpu)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"
#include "latsol.h"

static const int32_t dims[4] = {4, 4, 4, 8};

/* Where CPS keeps the spinor of the site with even-odd index i: odd sites
 * first, each half in checkerboard order. */
static size_t cps_spinor_index(size_t i, size_t volume)
{
    size_t half = volume / 2;
    return i < half ? i + half : i - half;
}

int main(int argc, char **argv)
{
    latsol_backend backend = LATSOL_BACKEND_CPU;
    int failures = 0;
    size_t volume = (size_t)dims[0] * dims[1] * dims[2] * dims[3], i, mu;
    for (int a = 1; a + 1 < argc; a += 2)
        if (strcmp(argv[a], "--backend") == 0)
            backend = strcmp(argv[a + 1], "cuda") == 0   ? LATSOL_BACKEND_CUDA
                      : strcmp(argv[a + 1], "auto") == 0 ? LATSOL_BACKEND_AUTO
                                                         : LATSOL_BACKEND_CPU;
    printf("cps_style: latsol %s, %dx%dx%dx%d, CPS orders\n", latsol_version(), dims[0],
           dims[1], dims[2], dims[3]);

    /* The CPS gauge array: site i, direction mu at [(4 i + mu) 18],
     * column-major: element (row r, column c) at 2 (3 c + r). */
    double *cps_gauge = (double *)ex_calloc(volume * 4 * 18, sizeof(double));
    for (i = 0; i < volume; i++)
        for (mu = 0; mu < 4; mu++) {
            double u[18];
            int r, c;
            ex_random_su3(u);
            for (r = 0; r < 3; r++)
                for (c = 0; c < 3; c++) {
                    cps_gauge[(4 * i + mu) * 18 + 2 * (3 * c + r)] = u[2 * (3 * r + c)];
                    cps_gauge[(4 * i + mu) * 18 + 2 * (3 * c + r) + 1] = u[2 * (3 * r + c) + 1];
                }
        }
    double *cps_src = (double *)ex_calloc(volume * 24, sizeof(double));
    double *cps_sol = (double *)ex_calloc(volume * 24, sizeof(double));
    for (i = 0; i < volume * 24; i++) cps_src[i] = ex_uniform();

    latsol_init_param init = latsol_init_param_default();
    init.backend = backend;
    init.verbosity = LATSOL_VERBOSITY_SILENT;
    latsol_context *ctx = NULL;
    EX_CHECK(latsol_init(&init, &ctx));

    latsol_gauge_param gp = latsol_gauge_param_default();
    memcpy(gp.dims, dims, sizeof gp.dims);
    gp.order = LATSOL_GAUGE_ORDER_CPS_WILSON;
    gp.host_precision = LATSOL_PRECISION_DOUBLE;
    gp.t_boundary = LATSOL_T_BOUNDARY_ANTIPERIODIC;
    latsol_gauge *gauge = NULL;
    EX_CHECK(latsol_gauge_load(ctx, &gp, cps_gauge, &gauge));

    const double mass = -0.2; /* kappa = 1 / (2 (4 + m)) = 0.131578... */
    latsol_invert_param p = latsol_invert_param_default();
    p.mass = mass;
    p.kappa = 1.0 / (2.0 * (4.0 + mass));
    p.mass_normalization = LATSOL_NORMALIZATION_MASS;
    p.solver = LATSOL_SOLVER_CG;
    p.solve_type = LATSOL_SOLVE_NORMOP_PC;
    p.matpc = LATSOL_MATPC_ODD_ODD;
    p.tol = 1e-10;
    p.maxiter = 5000;
    p.dirac_order = LATSOL_DIRAC_ORDER_CPS_WILSON;
    p.gamma_basis = LATSOL_GAMMA_DEGRAND_ROSSI;

    latsol_invert_result res = latsol_invert_result_default();
    EX_CHECK(latsol_invert(ctx, gauge, &p, cps_sol, cps_src, &res));
    printf("CPS orders, odd-odd CG on M^dag M: %d iterations, true residual %.3e, %.3f s\n",
           res.iterations, res.true_residual, res.seconds);
    failures += ex_expect(res.converged && res.true_residual <= p.tol, "true residual (latsol)",
                          res.true_residual, p.tol);
    {
        double *m_sol = (double *)ex_calloc(volume * 24, sizeof(double));
        EX_CHECK(latsol_apply(ctx, gauge, &p, LATSOL_OP_M, m_sol, cps_sol));
        double r = ex_rel_diff(m_sol, cps_src, volume * 24);
        failures += ex_expect(r <= 1.01 * p.tol, "|b - M x| / |b| (latsol_apply)", r,
                              1.01 * p.tol);
        free(m_sol);
    }

    /* The same problem in QDP gauge order (row-major links, one array per
     * direction) and DIRAC spinor order (even sites first). */
    {
        double *qdp[4];
        const void *table[4];
        double *src = (double *)ex_calloc(volume * 24, sizeof(double));
        double *sol = (double *)ex_calloc(volume * 24, sizeof(double));
        latsol_gauge *gauge_qdp = NULL;
        for (mu = 0; mu < 4; mu++) {
            qdp[mu] = (double *)ex_calloc(volume * 18, sizeof(double));
            table[mu] = qdp[mu];
            for (i = 0; i < volume; i++) {
                int r, c;
                for (r = 0; r < 3; r++)
                    for (c = 0; c < 3; c++) {
                        const double *l = cps_gauge + (4 * i + mu) * 18 + 2 * (3 * c + r);
                        qdp[mu][i * 18 + 2 * (3 * r + c)] = l[0];
                        qdp[mu][i * 18 + 2 * (3 * r + c) + 1] = l[1];
                    }
            }
        }
        for (i = 0; i < volume; i++)
            memcpy(src + i * 24, cps_src + cps_spinor_index(i, volume) * 24, 24 * sizeof(double));
        gp.order = LATSOL_GAUGE_ORDER_QDP;
        EX_CHECK(latsol_gauge_load(ctx, &gp, table, &gauge_qdp));
        p.dirac_order = LATSOL_DIRAC_ORDER_DIRAC;
        EX_CHECK(latsol_invert(ctx, gauge_qdp, &p, sol, src, &res));
        printf("QDP/DIRAC orders, same solve: %d iterations, true residual %.3e\n",
               res.iterations, res.true_residual);
        /* Back into CPS order, then compare. */
        for (i = 0; i < volume; i++)
            memcpy(src + cps_spinor_index(i, volume) * 24, sol + i * 24, 24 * sizeof(double));
        {
            double d = ex_rel_diff(src, cps_sol, volume * 24);
            failures += ex_expect(d < 1e-8, "|x_CPS - x_QDP/DIRAC| / |x_CPS|", d, 1e-8);
        }
        EX_CHECK(latsol_gauge_free(gauge_qdp));
        for (mu = 0; mu < 4; mu++) free(qdp[mu]);
        free(src);
        free(sol);
    }

    EX_CHECK(latsol_gauge_free(gauge));
    EX_CHECK(latsol_end(ctx));
    free(cps_gauge);
    free(cps_src);
    free(cps_sol);
    if (failures) {
        printf("cps_style: %d check(s) FAILED\n", failures);
        return 1;
    }
    printf("cps_style: all checks passed\n");
    return 0;
}
