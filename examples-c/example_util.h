/*
 * example_util.h: what the latsol examples share and a host code already
 * has: a small deterministic RNG, random SU(3) links, the even-odd site
 * numbering of docs/conventions.md, and vector norms for checking residuals.
 * Header-only (static inline functions), valid C99 and C++.
 *
 * Site numbering: a site (x, y, z, t) of an X*Y*Z*T lattice has parity
 * (x + y + z + t) mod 2 and checkerboard index (x + X(y + Y(z + Z t)))/2;
 * the even-odd index puts the V/2 even sites first, then the odd ones.
 */
#ifndef LATSOL_EXAMPLE_UTIL_H
#define LATSOL_EXAMPLE_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "latsol.h"

/* Reports a failed latsol call with its status and message, and exits. */
#define EX_CHECK(call)                                                        \
    do {                                                                      \
        latsol_status ex_status_ = (call);                                    \
        if (ex_status_ != LATSOL_SUCCESS) {                                   \
            fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, \
                    #call, latsol_status_string(ex_status_),                  \
                    latsol_last_error());                                     \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

static inline void *ex_calloc(size_t count, size_t size)
{
    void *p = calloc(count, size);
    if (!p) {
        fprintf(stderr, "out of memory (%zu x %zu bytes)\n", count, size);
        exit(1);
    }
    return p;
}

/* splitmix64: small and deterministic, so every run sees the same field. */
static uint64_t ex_rng_state = 2026;
static inline double ex_uniform(void)
{
    uint64_t z = (ex_rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0; /* [-1, 1) */
}

/* A random SU(3) matrix, u[2 * (3 * row + col) + re/im] (row-major 3x3
 * complex): two random rows made orthonormal (Gram-Schmidt), the third the
 * complex conjugate of their cross product, which makes det u = 1. */
static inline void ex_random_su3(double *u)
{
    int r, c;
    for (r = 0; r < 2; r++) {
        double norm = 0;
        for (c = 0; c < 6; c++) u[6 * r + c] = ex_uniform();
        if (r == 1) { /* row1 -= (row0^dag row1) row0 */
            double dre = 0, dim = 0;
            for (c = 0; c < 3; c++) {
                dre += u[2 * c] * u[6 + 2 * c] + u[2 * c + 1] * u[6 + 2 * c + 1];
                dim += u[2 * c] * u[6 + 2 * c + 1] - u[2 * c + 1] * u[6 + 2 * c];
            }
            for (c = 0; c < 3; c++) {
                u[6 + 2 * c] -= dre * u[2 * c] - dim * u[2 * c + 1];
                u[6 + 2 * c + 1] -= dre * u[2 * c + 1] + dim * u[2 * c];
            }
        }
        for (c = 0; c < 6; c++) norm += u[6 * r + c] * u[6 * r + c];
        norm = sqrt(norm);
        for (c = 0; c < 6; c++) u[6 * r + c] /= norm;
    }
    for (c = 0; c < 3; c++) {
        const double *a = u, *b = u + 6;
        int i = (c + 1) % 3, j = (c + 2) % 3;
        /* (a_i b_j - a_j b_i)^* */
        double re = a[2 * i] * b[2 * j] - a[2 * i + 1] * b[2 * j + 1]
                  - (a[2 * j] * b[2 * i] - a[2 * j + 1] * b[2 * i + 1]);
        double im = a[2 * i] * b[2 * j + 1] + a[2 * i + 1] * b[2 * j]
                  - (a[2 * j] * b[2 * i + 1] + a[2 * j + 1] * b[2 * i]);
        u[12 + 2 * c] = re;
        u[12 + 2 * c + 1] = -im;
    }
}

/* The even-odd index of site (x, y, z, t) on a lattice of extents dims. */
static inline size_t ex_eo_index(const int32_t dims[4], int x, int y, int z, int t)
{
    size_t volume = (size_t)dims[0] * dims[1] * dims[2] * dims[3];
    size_t lex = (size_t)x + (size_t)dims[0] * (y + (size_t)dims[1] * (z + (size_t)dims[2] * t));
    return ((x + y + z + t) % 2) * (volume / 2) + lex / 2;
}

static inline double ex_norm2(const double *a, size_t n)
{
    double s = 0;
    size_t i;
    for (i = 0; i < n; i++) s += a[i] * a[i];
    return s;
}

/* |a - b| / |b| */
static inline double ex_rel_diff(const double *a, const double *b, size_t n)
{
    double d = 0;
    size_t i;
    for (i = 0; i < n; i++) d += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(d / ex_norm2(b, n));
}

/* Prints a check; returns 1 if it failed, for the caller to count. */
static inline int ex_expect(int ok, const char *what, double value, double limit)
{
    printf("  %-40s %.3e (limit %.1e) %s\n", what, value, limit, ok ? "ok" : "FAILED");
    return !ok;
}

#endif /* LATSOL_EXAMPLE_UTIL_H */
