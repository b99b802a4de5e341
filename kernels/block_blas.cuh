// block_blas.cuh: the algebra of blocks of fields that the block solvers
// (src/solver/block*.rs, seed 002) spend their vector work on, each in one
// pass over memory: `Y += X A`, `Y = X A`, `Y = W + X A` with a small dense A (every x_i
// read once for all y_j), and the Gram block `Xᴴ Y` (each field read once
// per tile of the block). Done one field pair at a time, a 12-column Gram
// block reads 288 fields and `Y += X A` 432; here 48 (24 where X = Y) and 36.
//
// Double and single fields (flat arrays of double2 / float4: blas.cuh's
// `Items`); the coarser formats take the backend's field-at-a-time path.
// Arithmetic in double as every blas op; sums in a fixed order (the Gram
// block: each thread its grid-stride items, warp shuffles, the warps, the
// blocks by the last block of the tile), so the same inputs give the same bits.
#pragma once
#include "blas.cuh"

/// Most fields X and Y of one `block_caxpy` launch (the coefficients must
/// fit the 4 KiB of kernel parameters).
#define BLOCK_X_MAX 16
#define BLOCK_Y_MAX 12

/// Kernel arguments of `block_caxpy`; mirrored by `BlockAxpyParams` in
/// src/backend/cuda/block_blas.rs.
struct BlockAxpyParams {
  u64 x[BLOCK_X_MAX];
  u64 y[BLOCK_Y_MAX];
  u64 w[BLOCK_Y_MAX];  // the base of mode 2
  /// x_i's coefficient in y_j: (re, im) at 2 (i · BLOCK_Y_MAX + j).
  double a[2 * BLOCK_X_MAX * BLOCK_Y_MAX];
  long long n;    // items per field
  int nx, ny;     // fields used
  /// 0: y_j += Σ_i a_ij x_i; 1: y_j = Σ_i a_ij x_i (y may be x: every x_i
  /// is read first); 2: y_j = w_j + Σ_i a_ij x_i.
  int mode;
  int pad;
};
static_assert(sizeof(BlockAxpyParams) == 3416, "BlockAxpyParams layout changed: update block_blas.rs");

/// One thread per item: the item of every x_i into registers, then each
/// y_j's item formed from them (terms added in order of i, as a caxpy per
/// term would) and stored.
template <typename Float> __device__ __forceinline__ void block_caxpy(const BlockAxpyParams &P) {
  typedef Items<Float> A;
  constexpr int nc = A::nc;
  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= P.n) return;
  const BlasParams unused{};  // double and single items need no stride
  z64 x[BLOCK_X_MAX][nc];
#pragma unroll
  for (int i = 0; i < BLOCK_X_MAX; i++) {
    if (i < P.nx) A::load(unused, P.x[i], e, x[i]);
  }
#pragma unroll
  for (int j = 0; j < BLOCK_Y_MAX; j++) {
    if (j < P.ny) {
      z64 y[nc];
      if (P.mode == 1) {
#pragma unroll
        for (int c = 0; c < nc; c++) y[c] = mk(0.0, 0.0);
      } else {
        A::load(unused, P.mode == 2 ? P.w[j] : P.y[j], e, y);
      }
#pragma unroll
      for (int i = 0; i < BLOCK_X_MAX; i++) {
        if (i < P.nx) {
          const z64 a = mk(P.a[2 * (i * BLOCK_Y_MAX + j)], P.a[2 * (i * BLOCK_Y_MAX + j) + 1]);
#pragma unroll
          for (int c = 0; c < nc; c++) y[c] = cmul(a, x[i][c]) + y[c];
        }
      }
      A::store(unused, P.y[j], e, y);
    }
  }
}

/// The Gram block is summed in square tiles of GRAM_T × GRAM_T entries, one
/// tile per group of thread blocks: a thread holds a tile's sums in
/// registers (2 GRAM_T² doubles), so a tile reads its 2 GRAM_T fields once.
#define GRAM_T 6
#define GRAM_SUMS (2 * GRAM_T * GRAM_T)
/// Most tiles of one launch (fields of 16 columns: 3 × 3).
#define GRAM_TILES_MAX 16

/// Kernel arguments of `block_cdot`; mirrored by `BlockDotParams` in
/// src/backend/cuda/block_blas.rs.
struct BlockDotParams {
  u64 x[16];
  u64 y[16];
  u64 partials;  // GRAM_SUMS per thread block, tile after tile
  u64 counters;  // one per tile (unsigned, left at 0)
  u64 out;       // GRAM_SUMS per tile (mapped host memory)
  long long n;   // items per field
  int nx, ny;
  int tile_i[GRAM_TILES_MAX];  // first row (x) of each tile
  int tile_j[GRAM_TILES_MAX];  // first column (y) of each tile
  int blocks_per_tile;
  int pad;
};
static_assert(sizeof(BlockDotParams) == 432, "BlockDotParams layout changed: update block_blas.rs");

/// Sum of v over a warp's lanes, in a fixed order (lane 0 holds it).
__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

/// Tile `blockIdx.x / blocks_per_tile` of the Gram block:
/// out[tile][2 (a GRAM_T + b) + {0, 1}] = x_{i0+a}† y_{j0+b}.
template <typename Float> __device__ __forceinline__ void block_cdot(const BlockDotParams &P) {
  typedef Items<Float> A;
  constexpr int nc = A::nc;
  constexpr int T = GRAM_T;
  constexpr int WARPS = RED_BLOCK / 32;
  const int tile = blockIdx.x / P.blocks_per_tile;
  const int block = blockIdx.x - tile * P.blocks_per_tile;
  const int i0 = P.tile_i[tile], j0 = P.tile_j[tile];
  const int ni = min(T, P.nx - i0), nj = min(T, P.ny - j0);
  const BlasParams unused{};
  double r[GRAM_SUMS];
#pragma unroll
  for (int k = 0; k < GRAM_SUMS; k++) r[k] = 0.0;
  const long long step = (long long)P.blocks_per_tile * RED_BLOCK;
  for (long long e = (long long)block * RED_BLOCK + threadIdx.x; e < P.n; e += step) {
    z64 x[T][nc], y[T][nc];
#pragma unroll
    for (int a = 0; a < T; a++) {
      if (a < ni) A::load(unused, P.x[i0 + a], e, x[a]);
      if (a < nj) A::load(unused, P.y[j0 + a], e, y[a]);
    }
#pragma unroll
    for (int a = 0; a < T; a++) {
#pragma unroll
      for (int b = 0; b < T; b++) {
        if (a < ni && b < nj) {
#pragma unroll
          for (int c = 0; c < nc; c++) {
            r[2 * (a * T + b)] += x[a][c].re * y[b][c].re + x[a][c].im * y[b][c].im;
            r[2 * (a * T + b) + 1] += x[a][c].re * y[b][c].im - x[a][c].im * y[b][c].re;
          }
        }
      }
    }
  }
  // The thread block's sums: over each warp, then over the warps.
  __shared__ double sh[GRAM_SUMS][WARPS];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int k = 0; k < GRAM_SUMS; k++) {
    const double v = warp_sum(r[k]);
    if (lane == 0) sh[k][warp] = v;
  }
  __syncthreads();
  double *partials = reinterpret_cast<double *>(P.partials) + (long long)tile * P.blocks_per_tile * GRAM_SUMS;
  if (threadIdx.x < GRAM_SUMS) {
    double s = 0.0;
#pragma unroll
    for (int w = 0; w < WARPS; w++) s += sh[threadIdx.x][w];
    partials[block * GRAM_SUMS + threadIdx.x] = s;
    // Partials visible device-wide before the count says so.
    __threadfence();
  }
  __syncthreads();
  __shared__ bool last;
  if (threadIdx.x == 0) {
    unsigned *counter = reinterpret_cast<unsigned *>(P.counters) + tile;
    // atomicInc wraps to 0 after blocks_per_tile − 1: the counter is left at 0.
    last = atomicInc(counter, P.blocks_per_tile - 1) == unsigned(P.blocks_per_tile - 1);
  }
  __syncthreads();
  if (!last) return;
  // The tile's last block: each warp sums some of its numbers over the
  // blocks, lane-strided, then over the lanes.
  double *out = reinterpret_cast<double *>(P.out) + (long long)tile * GRAM_SUMS;
  for (int k = warp; k < GRAM_SUMS; k += WARPS) {
    double v = 0.0;
    for (int b = lane; b < P.blocks_per_tile; b += 32) v += __ldcg(partials + b * GRAM_SUMS + k);  // from L2: other blocks wrote them
    v = warp_sum(v);
    if (lane == 0) out[k] = v;
  }
  __threadfence_system();
}

/// The block kernels of format `s` (storage type S); the names are those
/// of src/backend/cuda/block_blas.rs.
#define LATSOL_BLOCK_BLAS(s, S)                                                                     \
  extern "C" __global__ void __launch_bounds__(128) blas_block_caxpy_##s(const BlockAxpyParams P) { \
    kernel_entry();                                                                                 \
    block_caxpy<S>(P);                                                                              \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(RED_BLOCK) blas_block_cdot_##s(const BlockDotParams P) { \
    kernel_entry();                                                                                 \
    block_cdot<S>(P);                                                                               \
  }
