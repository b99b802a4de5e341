// clover.cpp: kernels/clover_compute.cu run on the host (shim.h), one call
// of the kernel per site, for src/backend/cuda/clover_emulation.rs to compare with
// the host path (src/clover/compute.rs, ldl.rs, chiral.rs, storage.rs).
// Usage: clover IN OUT. IN (little-endian, as the test writes it):
//   int32 dims[4], order (0 QDP, 1 MILC, 2 CPS), host kind (0 f64, 1 f32),
//   forms n (1 or 2), then n pairs (kind, vec) of the stored forms;
//   f64 coef[2][6][8], w[2][8], w_inv[2][8] (CloverComputeParams);
//   the links, 4 · volume · 18 reals of the host kind, in the order's layout.
// OUT: u64 the first refused site (all ones if none), then per form the
// stored A, the stored A⁻¹ (72 · volume elements of the kind each, stride =
// volume), and for fixed point their norms (2 · volume f32 each).
#include "shim.h"
#include "../clover_compute.cu"
#include <cstdio>
#include <vector>

template <typename T> static bool read(FILE *f, T *p, size_t n) { return fread(p, sizeof(T), n, f) == n; }

static size_t kind_bytes(int kind) { return kind == 0 ? 8 : kind == 1 ? 4 : kind == 2 ? 2 : 1; }

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  FILE *in = fopen(argv[1], "rb");
  if (!in) return 2;
  int head[7];
  if (!read(in, head, 7)) return 3;
  const int forms = head[6];
  if (forms < 1 || forms > CLOVER_OUTS) return 3;
  int kv[2 * CLOVER_OUTS];
  if (!read(in, kv, 2 * forms)) return 3;
  CloverComputeParams C;
  memset(&C, 0, sizeof C);
  if (!read(in, &C.coef[0][0][0], 96) || !read(in, &C.w[0][0], 16) || !read(in, &C.w_inv[0][0], 16)) return 3;
  long long volume = 1;
  for (int k = 0; k < 4; k++) {
    C.links.dims[k] = head[k];
    volume *= head[k];
  }
  C.links.vh = volume / 2;
  C.links.order = head[4];
  const size_t link_bytes = (head[5] == 0 ? 8 : 4) * (size_t)volume * 72;
  std::vector<unsigned char> links(link_bytes);
  if (!read(in, links.data(), link_bytes)) return 3;
  fclose(in);
  C.links.host = (u64)links.data();
  unsigned long long bad = ~0ULL;
  C.bad = (u64)&bad;
  C.stride = volume;
  C.outs = forms;
  std::vector<std::vector<unsigned char>> store;
  for (int o = 0; o < forms; o++) {
    CloverOut &out = C.out[o];
    out.kind = kv[2 * o];
    out.vec = kv[2 * o + 1];
    u64 *slots[4] = {&out.direct, &out.inverse, &out.direct_norm, &out.inverse_norm};
    for (int k = 0; k < 4; k++) {
      if (k >= 2 && out.kind < 2) continue;
      store.emplace_back(k < 2 ? 72 * volume * kind_bytes(out.kind) : 2 * volume * sizeof(float));
      *slots[k] = (u64)store.back().data();
    }
  }
  blockDim.x = 1;
  for (long long site = 0; site < volume; site++) {
    blockIdx.x = (unsigned)site;
    if (head[5] == 0) clover_compute_f64(C);
    else clover_compute_f32(C);
  }
  FILE *out = fopen(argv[2], "wb");
  if (!out) return 4;
  fwrite(&bad, 8, 1, out);
  for (auto &b : store) fwrite(b.data(), 1, b.size(), out);
  fclose(out);
  return 0;
}
