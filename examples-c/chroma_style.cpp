/*
 * chroma_style.cpp: latsol called the way Chroma's solver interface calls
 * a GPU solver, from C++.
 *
 * Chroma (through QDP++) holds the gauge field as four lattice colour
 * matrices, one per direction (LATSOL_GAUGE_ORDER_QDP: an array of four
 * pointers, each to V row-major 3x3 complex links, even sites first), and
 * fermions as lattice spin vectors of colour vectors in the DeGrand-Rossi
 * basis (LATSOL_DIRAC_ORDER_DIRAC, LATSOL_GAMMA_DEGRAND_ROSSI), in double.
 * A propagator is a set of solves, one per spin and colour of a point
 * source.
 *
 * Here: a 4^3 x 8 lattice of random SU(3) links; the three colour
 * components of spin 0 of a point source at the origin, each solved by
 * even-odd BiCGstab on the CPU backend; the handles owned by RAII wrappers
 * so every path frees them. The program recomputes each true residual
 * |b - M x| / |b| with latsol_apply and exits non-zero if a check fails.
 *
 * Usage: chroma_style [--backend auto|cpu|cuda]   (default cpu)
 */
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "example_util.h"
#include "latsol.h"

namespace {

using Complex = std::complex<double>;

// A failed latsol call as an exception carrying the library's message.
void check(latsol_status s, const char *what)
{
    if (s != LATSOL_SUCCESS)
        throw std::runtime_error(std::string(what) + ": " + latsol_status_string(s) + ": " +
                                 latsol_last_error());
}

struct ContextDeleter {
    void operator()(latsol_context *c) const { latsol_end(c); }
};
struct GaugeDeleter {
    void operator()(latsol_gauge *g) const { latsol_gauge_free(g); }
};
using Context = std::unique_ptr<latsol_context, ContextDeleter>;
using Gauge = std::unique_ptr<latsol_gauge, GaugeDeleter>;

// A lattice colour matrix field (one direction), as QDP++ lays it out for
// an external solver: V sites, even first, 3x3 complex row-major.
using ColorMatrixField = std::vector<Complex>;
// A lattice fermion: V sites, even first, 4 spins x 3 colours.
using FermionField = std::vector<Complex>;

struct Lattice {
    int32_t dims[4];
    size_t volume() const { return size_t(dims[0]) * dims[1] * dims[2] * dims[3]; }
};

Context make_context(latsol_backend backend)
{
    latsol_init_param p = latsol_init_param_default();
    p.backend = backend;
    p.verbosity = LATSOL_VERBOSITY_SILENT;
    latsol_context *ctx = nullptr;
    check(latsol_init(&p, &ctx), "latsol_init");
    return Context(ctx);
}

Gauge load_gauge(latsol_context *ctx, const Lattice &lat, const ColorMatrixField u[4])
{
    latsol_gauge_param p = latsol_gauge_param_default();
    std::memcpy(p.dims, lat.dims, sizeof p.dims);
    p.order = LATSOL_GAUGE_ORDER_QDP;
    p.host_precision = LATSOL_PRECISION_DOUBLE;
    p.t_boundary = LATSOL_T_BOUNDARY_ANTIPERIODIC; // Chroma's fermion BC in time
    const void *table[4] = {u[0].data(), u[1].data(), u[2].data(), u[3].data()};
    latsol_gauge *g = nullptr;
    check(latsol_gauge_load(ctx, &p, table, &g), "latsol_gauge_load");
    return Gauge(g);
}

// |b - M x| / |b| with M from latsol_apply, as the caller's own check.
double true_residual(latsol_context *ctx, latsol_gauge *g, const latsol_invert_param &p,
                     const FermionField &x, const FermionField &b)
{
    FermionField mx(b.size());
    check(latsol_apply(ctx, g, &p, LATSOL_OP_M, mx.data(), x.data()), "latsol_apply");
    double num = 0, den = 0;
    for (size_t i = 0; i < b.size(); i++) {
        num += std::norm(b[i] - mx[i]);
        den += std::norm(b[i]);
    }
    return std::sqrt(num / den);
}

} // namespace

int main(int argc, char **argv)
{
    latsol_backend backend = LATSOL_BACKEND_CPU;
    for (int a = 1; a + 1 < argc; a += 2)
        if (std::strcmp(argv[a], "--backend") == 0)
            backend = std::strcmp(argv[a + 1], "cuda") == 0   ? LATSOL_BACKEND_CUDA
                      : std::strcmp(argv[a + 1], "auto") == 0 ? LATSOL_BACKEND_AUTO
                                                              : LATSOL_BACKEND_CPU;
    int failures = 0;
    try {
        Lattice lat = {{4, 4, 4, 8}};
        const size_t V = lat.volume();
        std::printf("chroma_style: latsol %s, %dx%dx%dx%d, QDP links, DeGrand-Rossi spinors\n",
                    latsol_version(), lat.dims[0], lat.dims[1], lat.dims[2], lat.dims[3]);

        ColorMatrixField u[4];
        for (auto &dir : u) {
            dir.resize(V * 9);
            for (size_t s = 0; s < V; s++) ex_random_su3(reinterpret_cast<double *>(&dir[9 * s]));
        }

        Context ctx = make_context(backend);
        Gauge gauge = load_gauge(ctx.get(), lat, u);
        double plaq[3];
        check(latsol_gauge_plaquette(gauge.get(), plaq), "latsol_gauge_plaquette");
        std::printf("plaquette %.12f\n", plaq[0]);

        latsol_invert_param p = latsol_invert_param_default();
        p.dslash = LATSOL_DSLASH_WILSON;
        p.kappa = 0.115;
        p.mass_normalization = LATSOL_NORMALIZATION_KAPPA;
        p.solver = LATSOL_SOLVER_BICGSTAB;
        p.solve_type = LATSOL_SOLVE_DIRECT_PC;
        p.matpc = LATSOL_MATPC_EVEN_EVEN;
        p.tol = 1e-10;
        p.maxiter = 2000;
        p.host_precision = LATSOL_PRECISION_DOUBLE;
        p.dirac_order = LATSOL_DIRAC_ORDER_DIRAC;
        p.gamma_basis = LATSOL_GAMMA_DEGRAND_ROSSI;

        // The origin is even, so it is site 0 of the even-first order.
        const size_t origin = ex_eo_index(lat.dims, 0, 0, 0, 0);
        const int spin = 0;
        for (int colour = 0; colour < 3; colour++) {
            FermionField b(V * 12), x(V * 12);
            b[origin * 12 + 3 * spin + colour] = 1.0;
            latsol_invert_result res = latsol_invert_result_default();
            check(latsol_invert(ctx.get(), gauge.get(), &p, x.data(), b.data(), &res),
                  "latsol_invert");
            std::printf("spin %d colour %d: %d iterations, true residual %.3e, %.3f s\n", spin,
                        colour, res.iterations, res.true_residual, res.seconds);
            double r = true_residual(ctx.get(), gauge.get(), p, x, b);
            failures += ex_expect(r <= 1.01 * p.tol, "|b - M x| / |b| (latsol_apply)", r,
                                  1.01 * p.tol);
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "chroma_style: %s\n", e.what());
        return 1;
    }
    if (failures) {
        std::printf("chroma_style: %d check(s) FAILED\n", failures);
        return 1;
    }
    std::printf("chroma_style: all checks passed\n");
    return 0;
}
