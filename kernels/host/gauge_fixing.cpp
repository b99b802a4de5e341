// gauge_fixing.cpp: kernels/gauge_fixing.cu run on the host (shim.h), for
// src/gauge_fixing/device_emulation.rs to compare with the host path
// (src/gauge_fixing/ovr.rs, quality.rs). One thread a block, so every
// block's sum is one site's.
// Usage: gauge_fixing IN OUT. IN (little-endian): int64 volume, int32 dirs,
//   f64 relax_boost; the links, volume·4·18 f64; the neighbours, volume·8 u32.
// OUT: the quality sums of the links as given (volume·2 f64, one pair a
//   site), then the links after an even and an odd half sweep.
#include "shim.h"
#include "../gauge_fixing.cu"
#include <cstdio>
#include <vector>

template <typename T> static bool read(FILE *f, T *p, size_t n) { return fread(p, sizeof(T), n, f) == n; }

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  FILE *in = fopen(argv[1], "rb");
  if (!in) return 2;
  long long volume;
  int dirs;
  double boost;
  if (!read(in, &volume, 1) || !read(in, &dirs, 1) || !read(in, &boost, 1)) return 3;
  std::vector<double> links(volume * 72), partials(volume * 2);
  std::vector<unsigned> nb(volume * 8);
  if (!read(in, links.data(), links.size()) || !read(in, nb.data(), nb.size())) return 3;
  fclose(in);
  GaugeFixParams P;
  memset(&P, 0, sizeof P);
  P.links = (u64)links.data();
  P.neighbours = (u64)nb.data();
  P.partials = (u64)partials.data();
  P.vh = volume / 2;
  P.dirs = dirs;
  P.relax_boost = boost;
  blockDim.x = 1;
  threadIdx.x = 0;
  for (long long x = 0; x < volume; x++) {
    blockIdx.x = (unsigned)x;
    gauge_fix_quality(P);
  }
  for (int parity = 0; parity < 2; parity++) {
    P.parity = parity;
    for (long long k = 0; k < volume / 2; k++) {
      blockIdx.x = (unsigned)k;
      gauge_fix_half_sweep(P);
    }
  }
  FILE *out = fopen(argv[2], "wb");
  if (!out) return 4;
  fwrite(partials.data(), 8, partials.size(), out);
  fwrite(links.data(), 8, links.size(), out);
  fclose(out);
  return 0;
}
