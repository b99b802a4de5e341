// packed.cpp: core.cuh's PackedSpinorSoA run on the host (shim.h), for
// src/backend/cuda/emulation.rs to compare with src/backend/cpu/packed.rs.
// Usage: packed B R N. Stores N sites of 24 reals (edge cases among random
// ones) with arithmetic R (0: double, as blas.cu; 1: float, as the 20-bit
// hopping term), then prints per site: the inputs (f64 bits), the site's
// words in the CPU's order, the loaded values (as blas.cu loads them) and
// the two spin pairs loaded apart (as a temporal hop loads them), in hex.
#include "shim.h"
#include "../core.cuh"
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

static void hx(double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  printf("%016llx ", (unsigned long long)u);
}

template <int B, typename R> void run(int n) {
  typedef PackedSpinorSoA<B> A;
  typedef typename A::Vec Vec;
  const int stride = n + 3;  // padding, as on the device
  std::vector<Vec> mem((size_t)A::vecs * stride);
  memset(mem.data(), 0, mem.size() * sizeof(Vec));
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g;
  const double M = A::MAX;
  std::vector<double> in((size_t)n * 24);
  for (int i = 0; i < n; i++) {
    const double mag = std::pow(10.0, double(int(rng() % 60)) - 30.0);
    for (int k = 0; k < 24; k++) {
      double v = g(rng) * mag;
      switch (i % 10) {
        case 1: v = 0; break;                                      // zero site
        case 2: v = k == 5 ? 1e-40 : 0; break;                     // underflow
        case 3: if (k == 7) v = NAN; break;                        // NaN component
        case 4: v = std::ldexp(k == 3 ? 1.0 : 0.25, int(rng() % 20) - 10) * ((k & 1) ? -1 : 1); break;
        case 5: v = (k % 3 - 1) * std::ldexp(M, -7); break;        // max/M a power of two
        case 6: v = double(int(rng() % 2001) - 1000) + 0.5; break; // ties
        case 7: if (sizeof(R) == 8) v = g(rng) * 1e45; break;      // exponent clamped
        case 8: v = g(rng) * std::ldexp(M, -126) * (0.25 + (i % 7) * 0.25); break;  // underflow edge
        case 9: if (k == 0) v = INFINITY; break;
      }
      if (sizeof(R) == 4) v = double(float(v));
      in[(size_t)i * 24 + k] = v;
    }
    cplx<R> z[12];
    for (int c = 0; c < 12; c++) z[c] = mk(R(in[(size_t)i * 24 + 2 * c]), R(in[(size_t)i * 24 + 2 * c + 1]));
    A::template store<R>(mem.data(), stride, i, z);
  }
  const unsigned *w = reinterpret_cast<const unsigned *>(mem.data());
  constexpr int per = A::P::per_vec;
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < 24; k++) hx(in[(size_t)i * 24 + k]);
    printf("| ");
    for (int j = 0; j < A::vecs; j++)
      for (int q = 0; q < per; q++) printf("%08x ", w[((size_t)j * stride + i) * per + q]);
    printf("| ");
    cplx<typename A::Item> a[12];
    cplx<typename A::F> lo[6], hi[6];
    A::template load<0, 12, false>(mem.data(), stride, i, a);
    A::template load<0, 6, true>(mem.data(), stride, i, lo);
    A::template load<6, 6, false>(mem.data(), stride, i, hi);
    for (int c = 0; c < 12; c++) { hx(a[c].re); hx(a[c].im); }
    printf("| ");
    for (int c = 0; c < 6; c++) { hx(lo[c].re); hx(lo[c].im); }
    for (int c = 0; c < 6; c++) { hx(hi[c].re); hx(hi[c].im); }
    printf("\n");
  }
}

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  const int b = atoi(argv[1]), r = atoi(argv[2]), n = atoi(argv[3]);
  if (b == 20 && r == 0) run<20, double>(n);
  else if (b == 20 && r == 1) run<20, float>(n);
  else if (b == 30 && r == 0) run<30, double>(n);
  else if (b == 30 && r == 1) run<30, float>(n);
  else return 2;
  return 0;
}
