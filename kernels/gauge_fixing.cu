// gauge_fixing.cu: gauge fixing by over-relaxation on the device, the numbers
// of the host path up to rounding (src/gauge_fixing/ovr.rs, quality.rs):
//   gauge_fix_half_sweep  at every site x of one parity, K = Σ_{μ<dirs}
//                         [U_μ(x) + U_μ(x−μ̂)†]; the over-relaxed SU(2) hits
//                         of subgroups (0,1), (1,2), (0,2) give g(x); then
//                         U_μ(x) ← g U_μ(x), U_μ(x−μ̂) ← U_μ(x−μ̂) g† for every μ
//                         (each link has one writer: its two ends differ in
//                         parity);
//   gauge_fix_quality     per block, Σ Re tr U_μ(x) over μ < dirs and
//                         Σ tr(Δ Δ†), Δ = A − A† traceless, A = Σ_μ [U_μ(x−μ̂) − U_μ(x)];
//                         the host adds the blocks' sums in order.
// Links as kernels/fat_links.cu keeps them (the host GaugeField's order,
// double); the neighbour table is the same. The projection back on SU(3) is
// fat_links.cu's `unitarize_u3`. Launched by src/backend/cuda/gauge_fixing.rs.
#include "core.cuh"

#define GAUGE_FIX_BLOCK 128

/// Mirrors `GaugeFixParams` in src/backend/cuda/gauge_fixing.rs.
struct GaugeFixParams {
  u64 links;       // double[volume][4][18]
  u64 neighbours;  // unsigned[volume][2][4]
  u64 partials;    // quality: double[blocks][2]
  long long vh;    // sites a parity
  int parity;      // half sweep: the parity updated
  int dirs;        // 3 Coulomb, 4 Landau
  double relax_boost;
};

__device__ __forceinline__ long long gf_step(const GaugeFixParams &P, long long x, int mu, int backward) {
  return ((const unsigned *)P.neighbours)[8 * x + 4 * backward + mu];
}

/// rows i, j of m (18 reals) ← r (rows i, j); r = {r00, r01, r10, r11} as (re, im).
__device__ __forceinline__ void left_hit(double *m, int i, int j, const double (&r)[8]) {
  for (int c = 0; c < 3; c++) {
    const double ar = m[2 * (3 * i + c)], ai = m[2 * (3 * i + c) + 1];
    const double br = m[2 * (3 * j + c)], bi = m[2 * (3 * j + c) + 1];
    m[2 * (3 * i + c)] = r[0] * ar - r[1] * ai + r[2] * br - r[3] * bi;
    m[2 * (3 * i + c) + 1] = r[0] * ai + r[1] * ar + r[2] * bi + r[3] * br;
    m[2 * (3 * j + c)] = r[4] * ar - r[5] * ai + r[6] * br - r[7] * bi;
    m[2 * (3 * j + c) + 1] = r[4] * ai + r[5] * ar + r[6] * bi + r[7] * br;
  }
}

/// columns i, j of m ← (columns i, j) r† (the right action of g† on a link).
__device__ __forceinline__ void right_hit_adjoint(double *m, int i, int j, const double (&r)[8]) {
  for (int row = 0; row < 3; row++) {
    const double ar = m[2 * (3 * row + i)], ai = m[2 * (3 * row + i) + 1];
    const double br = m[2 * (3 * row + j)], bi = m[2 * (3 * row + j) + 1];
    // (m r†)_{row,i} = a conj(r00) + b conj(r01); (m r†)_{row,j} = a conj(r10) + b conj(r11)
    m[2 * (3 * row + i)] = ar * r[0] + ai * r[1] + br * r[2] + bi * r[3];
    m[2 * (3 * row + i) + 1] = ai * r[0] - ar * r[1] + bi * r[2] - br * r[3];
    m[2 * (3 * row + j)] = ar * r[4] + ai * r[5] + br * r[6] + bi * r[7];
    m[2 * (3 * row + j) + 1] = ai * r[4] - ar * r[5] + bi * r[6] - br * r[7];
  }
}

extern "C" __global__ void __launch_bounds__(GAUGE_FIX_BLOCK) gauge_fix_half_sweep(GaugeFixParams P) {
  kernel_entry();
  const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= P.vh) return;
  const long long x = P.parity * P.vh + k;
  double *links = (double *)P.links;
  double K[18];
  for (int n = 0; n < 18; n++) K[n] = 0;
  for (int mu = 0; mu < P.dirs; mu++) {
    const double *u = links + (4 * x + mu) * 18;
    const double *b = links + (4 * gf_step(P, x, mu, 1) + mu) * 18;
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) {
        K[2 * (3 * r + c)] += u[2 * (3 * r + c)] + b[2 * (3 * c + r)];
        K[2 * (3 * r + c) + 1] += u[2 * (3 * r + c) + 1] - b[2 * (3 * c + r) + 1];
      }
  }
  const int sub[3][2] = {{0, 1}, {1, 2}, {0, 2}};
  for (int s = 0; s < 3; s++) {
    const int i = sub[s][0], j = sub[s][1];
    const double a0 = K[2 * (3 * i + i)] + K[2 * (3 * j + j)];
    const double a1 = K[2 * (3 * i + j) + 1] + K[2 * (3 * j + i) + 1];
    const double a2 = K[2 * (3 * i + j)] - K[2 * (3 * j + i)];
    const double a3 = K[2 * (3 * i + i) + 1] - K[2 * (3 * j + j) + 1];
    const double a0sq = a0 * a0, asq = a1 * a1 + a2 * a2 + a3 * a3;
    if (a0sq + asq == 0.0) continue;
    const double xi = (P.relax_boost * a0sq + asq) / (a0sq + asq);
    const double norm = 1.0 / sqrt(a0sq + xi * xi * asq);
    const double b0 = a0 * norm, b1 = -a1 * xi * norm, b2 = -a2 * xi * norm, b3 = -a3 * xi * norm;
    // r = [[b0 + i b3, b2 + i b1], [−b2 + i b1, b0 − i b3]]
    const double r[8] = {b0, b3, b2, b1, -b2, b1, b0, -b3};
    left_hit(K, i, j, r);
    for (int mu = 0; mu < 4; mu++) {
      left_hit(links + (4 * x + mu) * 18, i, j, r);
      right_hit_adjoint(links + (4 * gf_step(P, x, mu, 1) + mu) * 18, i, j, r);
    }
  }
}

/// tr(Δ Δ†) of the traceless Δ = A − A†.
__device__ __forceinline__ double theta_site(const double (&A)[18]) {
  double D[18];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      D[2 * (3 * r + c)] = A[2 * (3 * r + c)] - A[2 * (3 * c + r)];
      D[2 * (3 * r + c) + 1] = A[2 * (3 * r + c) + 1] + A[2 * (3 * c + r) + 1];
    }
  const double tr_im = (D[1] + D[9] + D[17]) / 3.0;  // the trace is imaginary
  D[1] -= tr_im;
  D[9] -= tr_im;
  D[17] -= tr_im;
  double s = 0;
  for (int n = 0; n < 18; n++) s += D[n] * D[n];
  return s;
}

extern "C" __global__ void __launch_bounds__(GAUGE_FIX_BLOCK) gauge_fix_quality(GaugeFixParams P) {
  kernel_entry();
  __shared__ double sums[2][GAUGE_FIX_BLOCK];
  const long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  double f = 0, t = 0;
  if (x < 2 * P.vh) {
    const double *links = (const double *)P.links;
    double A[18];
    for (int n = 0; n < 18; n++) A[n] = 0;
    for (int mu = 0; mu < P.dirs; mu++) {
      const double *u = links + (4 * x + mu) * 18;
      const double *b = links + (4 * gf_step(P, x, mu, 1) + mu) * 18;
      f += u[0] + u[8] + u[16];
      for (int n = 0; n < 18; n++) A[n] += b[n] - u[n];
    }
    t = theta_site(A);
  }
  sums[0][threadIdx.x] = f;
  sums[1][threadIdx.x] = t;
  __syncthreads();
  for (int half = GAUGE_FIX_BLOCK / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      sums[0][threadIdx.x] += sums[0][threadIdx.x + half];
      sums[1][threadIdx.x] += sums[1][threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    double *out = (double *)P.partials + 2 * blockIdx.x;
    out[0] = sums[0][0];
    out[1] = sums[1][0];
  }
}
