/*
 * milc_style.c: latsol called the way a MILC application calls a GPU
 * solver.
 *
 * MILC keeps the lattice as an array of site structs, even sites first,
 * each with its four links (su3_matrix link[4]) and its Wilson vectors,
 * in single precision when built so. To call an external solver it
 * gathers the links site-major into one array (the 4 links of a site
 * together: LATSOL_GAUGE_ORDER_MILC), gathers the source Wilson vectors
 * (spin outer, colour inner, even sites first: LATSOL_DIRAC_ORDER_DIRAC),
 * solves, and scatters the solution back into the site structs.
 *
 * Here: a 4^3 x 8 lattice of random SU(3) links in float, a random source,
 * an even-odd CG on the normal equations (LATSOL_SOLVE_NORMOP_PC) in
 * single precision on the CPU backend. The program then recomputes the
 * true residual |b - M x| / |b| with latsol_apply (and, in double, by a
 * second solve) and exits non-zero if a check fails.
 *
 * Usage: milc_style [--backend auto|cpu|cuda]   (default cpu)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_util.h"
#include "latsol.h"

/* MILC-like types: complex numbers, 3x3 matrices and Wilson vectors in
 * single precision. */
typedef struct { float real, imag; } fcomplex;
typedef struct { fcomplex e[3][3]; } fsu3_matrix;
typedef struct { fcomplex c[3]; } fsu3_vector;
typedef struct { fsu3_vector d[4]; } fwilson_vector;

/* One lattice site as MILC stores it (the fields this program needs). */
typedef struct {
    short x, y, z, t;
    char parity;
    int index;
    fsu3_matrix link[4];   /* directions x, y, z, t */
    fwilson_vector src;    /* the source */
    fwilson_vector psi;    /* the solution */
} site;

#define EVEN 0x02
#define ODD 0x01

static int32_t nx = 4, ny = 4, nz = 4, nt = 8;
static size_t sites_on_node;
static site *lattice;

/* Lays the sites out as MILC's even-first layout does on one node, with
 * random SU(3) links (generated in double, stored as float) and a random
 * source. */
static void make_lattice(void)
{
    const int32_t dims[4] = {nx, ny, nz, nt};
    int x, y, z, t, dir, k;
    sites_on_node = (size_t)nx * ny * nz * nt;
    lattice = (site *)ex_calloc(sites_on_node, sizeof(site));
    for (t = 0; t < nt; t++)
        for (z = 0; z < nz; z++)
            for (y = 0; y < ny; y++)
                for (x = 0; x < nx; x++) {
                    size_t i = ex_eo_index(dims, x, y, z, t);
                    site *s = &lattice[i];
                    s->x = (short)x, s->y = (short)y, s->z = (short)z, s->t = (short)t;
                    s->parity = (x + y + z + t) % 2 ? ODD : EVEN;
                    s->index = (int)i;
                }
    for (size_t i = 0; i < sites_on_node; i++) {
        for (dir = 0; dir < 4; dir++) {
            double u[18];
            ex_random_su3(u);
            for (k = 0; k < 9; k++) {
                lattice[i].link[dir].e[k / 3][k % 3].real = (float)u[2 * k];
                lattice[i].link[dir].e[k / 3][k % 3].imag = (float)u[2 * k + 1];
            }
        }
        for (k = 0; k < 12; k++) {
            lattice[i].src.d[k / 3].c[k % 3].real = (float)ex_uniform();
            lattice[i].src.d[k / 3].c[k % 3].imag = (float)ex_uniform();
        }
    }
}

/* Site-major links for LATSOL_GAUGE_ORDER_MILC: the 4 links of site i at
 * [(4 i + dir) 18], each row-major, as MILC's own GPU interface gathers. */
static float *gather_links(void)
{
    float *links = (float *)ex_calloc(sites_on_node * 4 * 18, sizeof(float));
    for (size_t i = 0; i < sites_on_node; i++)
        memcpy(links + i * 4 * 18, lattice[i].link, 4 * sizeof(fsu3_matrix));
    return links;
}

/* A Wilson vector field of the lattice as one array (DIRAC order). */
static float *gather_vector(size_t offset)
{
    float *v = (float *)ex_calloc(sites_on_node * 24, sizeof(float));
    for (size_t i = 0; i < sites_on_node; i++)
        memcpy(v + i * 24, (const char *)&lattice[i] + offset, sizeof(fwilson_vector));
    return v;
}

static void scatter_vector(const float *v, size_t offset)
{
    for (size_t i = 0; i < sites_on_node; i++)
        memcpy((char *)&lattice[i] + offset, v + i * 24, sizeof(fwilson_vector));
}

static double *to_double(const float *v, size_t n)
{
    double *d = (double *)ex_calloc(n, sizeof(double));
    for (size_t i = 0; i < n; i++) d[i] = v[i];
    return d;
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
    printf("milc_style: latsol %s, %dx%dx%dx%d, single-precision MILC fields\n",
           latsol_version(), nx, ny, nz, nt);
    size_t n = sites_on_node * 24;

    latsol_init_param init = latsol_init_param_default();
    init.backend = backend;
    init.verbosity = LATSOL_VERBOSITY_SILENT;
    latsol_context *ctx = NULL;
    EX_CHECK(latsol_init(&init, &ctx));

    /* The links, as float, site-major; stored in single precision. */
    latsol_gauge_param gp = latsol_gauge_param_default();
    gp.dims[0] = nx, gp.dims[1] = ny, gp.dims[2] = nz, gp.dims[3] = nt;
    gp.order = LATSOL_GAUGE_ORDER_MILC;
    gp.host_precision = LATSOL_PRECISION_SINGLE;
    gp.precision = gp.precision_sloppy = LATSOL_PRECISION_SINGLE;
    gp.t_boundary = LATSOL_T_BOUNDARY_ANTIPERIODIC;
    float *links = gather_links();
    latsol_gauge *gauge = NULL;
    EX_CHECK(latsol_gauge_load(ctx, &gp, links, &gauge));
    free(links); /* latsol keeps its own copy */

    /* An even-odd CG in single precision, on M^dag M restricted to the
     * even sites, as MILC's Wilson inverters use. */
    latsol_invert_param p = latsol_invert_param_default();
    p.kappa = 0.12;
    p.solver = LATSOL_SOLVER_CG;
    p.solve_type = LATSOL_SOLVE_NORMOP_PC;
    p.matpc = LATSOL_MATPC_EVEN_EVEN;
    p.tol = 1e-5;
    p.maxiter = 2000;
    p.host_precision = LATSOL_PRECISION_SINGLE;
    p.precision = p.precision_sloppy = LATSOL_PRECISION_SINGLE;
    p.dirac_order = LATSOL_DIRAC_ORDER_DIRAC;
    p.gamma_basis = LATSOL_GAMMA_DEGRAND_ROSSI;

    float *src = gather_vector(offsetof(site, src));
    float *sol = (float *)ex_calloc(n, sizeof(float));
    latsol_invert_result res = latsol_invert_result_default();
    EX_CHECK(latsol_invert(ctx, gauge, &p, sol, src, &res));
    printf("even-odd CG (single): %d iterations, true residual %.3e, %.3f s\n", res.iterations,
           res.true_residual, res.seconds);
    scatter_vector(sol, offsetof(site, psi));
    failures += ex_expect(res.converged && res.true_residual <= p.tol,
                          "true residual (latsol)", res.true_residual, p.tol);

    /* The check a careful host code makes: M x from latsol_apply, the
     * residual in double. Float rounding of x and M x adds ~1e-7. */
    {
        float *mx = (float *)ex_calloc(n, sizeof(float));
        float *x = gather_vector(offsetof(site, psi));
        EX_CHECK(latsol_apply(ctx, gauge, &p, LATSOL_OP_M, mx, x));
        double *mxd = to_double(mx, n), *bd = to_double(src, n);
        double r = ex_rel_diff(mxd, bd, n);
        failures += ex_expect(r <= 1.5 * p.tol, "|b - M x| / |b| (latsol_apply)", r, 1.5 * p.tol);
        free(mx);
        free(x);
        free(mxd);
        free(bd);
    }

    /* The same links and source in double give the reference: the single
     * solution agrees to about the tolerance. */
    {
        double *links_d = to_double(links = gather_links(), sites_on_node * 4 * 18);
        double *src_d = to_double(src, n), *sol_d = (double *)ex_calloc(n, sizeof(double));
        double *sol_s = to_double(sol, n);
        latsol_gauge *gauge_d = NULL;
        free(links);
        gp.host_precision = gp.precision = gp.precision_sloppy = LATSOL_PRECISION_DOUBLE;
        /* Links rounded to float are unitary to ~1e-7 only; the default
         * check for double host links would reject them. */
        gp.su3_tolerance = 1e-5;
        EX_CHECK(latsol_gauge_load(ctx, &gp, links_d, &gauge_d));
        p.host_precision = p.precision = p.precision_sloppy = LATSOL_PRECISION_DOUBLE;
        p.tol = 1e-10;
        EX_CHECK(latsol_invert(ctx, gauge_d, &p, sol_d, src_d, &res));
        double d = ex_rel_diff(sol_s, sol_d, n);
        printf("even-odd CG (double): %d iterations, true residual %.3e\n", res.iterations,
               res.true_residual);
        failures += ex_expect(d < 1e-4, "|x_single - x_double| / |x_double|", d, 1e-4);
        EX_CHECK(latsol_gauge_free(gauge_d));
        free(links_d);
        free(src_d);
        free(sol_d);
        free(sol_s);
    }

    EX_CHECK(latsol_gauge_free(gauge));
    EX_CHECK(latsol_end(ctx));
    free(src);
    free(sol);
    free(lattice);
    if (failures) {
        printf("milc_style: %d check(s) FAILED\n", failures);
        return 1;
    }
    printf("milc_style: all checks passed\n");
    return 0;
}
