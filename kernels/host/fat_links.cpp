// fat_links.cpp: kernels/fat_links.cu run on the host (shim.h), one call of
// each kernel per thread index, for src/backend/cuda/fat_links_emulation.rs
// to compare with the host path (src/fat_links/paths.rs, unitarize.rs).
// Usage: fat_links IN OUT. IN (little-endian, as the test writes it):
//   int64 volume, int32 mu, nu, f64 one-link coefficient, staple
//   coefficient, Naik coefficient; the links, volume·4·18 f64; the
//   neighbours, volume·8 u32.
// OUT: F_μ = c₁ U_μ + c S[U_μ; μ, ν] (volume·18 f64), S itself, L_μ with the
// Naik coefficient (volume·18 each), then every link's U(3) projection
// (volume·4·18 f64) and its SVD flag (volume·4 int32).
#include "shim.h"
#include "../fat_links.cu"
#include <cstdio>
#include <vector>

template <typename T> static bool read(FILE *f, T *p, size_t n) { return fread(p, sizeof(T), n, f) == n; }

template <typename P> static void launch(void (*kernel)(P), const P &params, long long threads) {
  blockDim.x = 1;
  for (long long i = 0; i < threads; i++) {
    blockIdx.x = (unsigned)i;
    kernel(params);
  }
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  FILE *in = fopen(argv[1], "rb");
  if (!in) return 2;
  long long volume;
  int dirs[2];
  double coef[3];
  if (!read(in, &volume, 1) || !read(in, dirs, 2) || !read(in, coef, 3)) return 3;
  std::vector<double> links(volume * 72), acc(volume * 18), s(volume * 18), l(volume * 18), w(volume * 72);
  std::vector<unsigned> nb(volume * 8);
  std::vector<int> flags(volume * 4);
  if (!read(in, links.data(), links.size()) || !read(in, nb.data(), nb.size())) return 3;
  fclose(in);
  FatParams P;
  memset(&P, 0, sizeof P);
  P.links = (u64)links.data();
  P.neighbours = (u64)nb.data();
  P.m = (u64)(links.data() + dirs[0] * 18);
  P.m_step = 4;
  P.acc = (u64)acc.data();
  P.volume = volume;
  P.mu = dirs[0];
  P.nu = dirs[1];
  P.coef = coef[0];
  launch(fat_one_link, P, volume);
  P.out = (u64)s.data();
  P.coef = coef[1];
  launch(fat_staple, P, volume);
  P.out = (u64)l.data();
  P.coef = coef[2];
  launch(fat_long, P, volume);
  UnitarizeKernelParams U;
  memset(&U, 0, sizeof U);
  U.in = (u64)links.data();
  U.out = (u64)w.data();
  U.flags = (u64)flags.data();
  U.links = volume * 4;
  U.eps = 1e-14;
  U.svd_rel_error = 1e-6;
  U.svd_abs_error = 1e-6;
  U.allow_svd = 1;
  launch(unitarize_u3, U, volume * 4);
  FILE *out = fopen(argv[2], "wb");
  if (!out) return 4;
  for (auto *v : {&acc, &s, &l, &w}) fwrite(v->data(), 8, v->size(), out);
  fwrite(flags.data(), 4, flags.size(), out);
  fclose(out);
  return 0;
}
