// fat_links.cu: improved staggered links from links on the device, the
// numbers of the host path up to rounding (src/fat_links/paths.rs,
// src/fat_links/unitarize.rs):
//   fat_one_link   F_μ = c U_μ                          (c = c₀ − 6 c_L)
//   fat_staple     S = S[M; μ, ν], F_μ += c S, S kept for the next level:
//                  S[M; μ, ν](x) = U_ν(x) M(x+ν̂) U_ν(x+μ̂)† + U_ν(x−ν̂)† M(x−ν̂) U_ν(x−ν̂+μ̂)
//   fat_long       L_μ(x) = c U_μ(x) U_μ(x+μ̂) U_μ(x+2μ̂)
//   unitarize_u3   W = V (V†V)^{−1/2} by Cayley–Hamilton; a link the SVD must
//                  decide is flagged and left to the host.
// Fields are the host's GaugeField, double: link μ of even-odd site x at
// links + (4x + μ)·18, row-major (re, im); one-direction fields at x·18.
// Neighbours come from the host (the lattice's own tables, so any periodic
// lattice, extended ones included): neighbours[x][0][μ] = x+μ̂, [1][μ] = x−μ̂.
// One thread per site (per link for unitarize_u3), launched by
// src/backend/cuda/fat_links.rs; kernels/host/fat_links.cpp runs them on the
// host (src/backend/cuda/fat_links_emulation.rs).
#include "core.cuh"

#define FAT_LINKS_BLOCK 128

/// Kernel arguments; mirrored by `FatParams` in src/backend/cuda/fat_links.rs.
struct FatParams {
  u64 links;       // double[volume][4][18]
  u64 neighbours;  // unsigned[volume][2][4]
  u64 m;           // the field stapled: site y at m + y·m_step·18
  u64 out;         // S or L: double[volume][18]; 0: S not kept
  u64 acc;         // F_μ: double[volume][18]
  long long volume;
  int mu, nu;
  int m_step;      // 4 (M the links along μ: m = links + μ·18) or 1
  int pad_;
  double coef;
};

/// Mirrored by `UnitarizeParams` in src/backend/cuda/fat_links.rs.
struct UnitarizeKernelParams {
  u64 in;          // V: double[links][18]
  u64 out;         // W
  u64 flags;       // int[links]: 1 where the SVD must decide
  long long links;
  double eps, svd_rel_error, svd_abs_error;
  int allow_svd, svd_only;
};

__device__ __forceinline__ void load18(const double *p, double (&a)[18]) {
#pragma unroll
  for (int k = 0; k < 18; k++) a[k] = p[k];
}

/// c = op(a) op(b) for 3×3 complex matrices of 18 reals, op the adjoint
/// where asked.
template <bool AdjA, bool AdjB>
__device__ __forceinline__ void product(const double (&a)[18], const double (&b)[18], double (&c)[18]) {
#pragma unroll
  for (int r = 0; r < 3; r++) {
#pragma unroll
    for (int col = 0; col < 3; col++) {
      double re = 0, im = 0;
#pragma unroll
      for (int k = 0; k < 3; k++) {
        const int ia = AdjA ? 2 * (3 * k + r) : 2 * (3 * r + k);
        const int ib = AdjB ? 2 * (3 * col + k) : 2 * (3 * k + col);
        const double ar = a[ia], ai = AdjA ? -a[ia + 1] : a[ia + 1];
        const double br = b[ib], bi = AdjB ? -b[ib + 1] : b[ib + 1];
        re += ar * br - ai * bi;
        im += ar * bi + ai * br;
      }
      c[2 * (3 * r + col)] = re;
      c[2 * (3 * r + col) + 1] = im;
    }
  }
}

__device__ __forceinline__ long long fat_site() {
  return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ long long step(const FatParams &P, long long x, int mu, int backward) {
  return ((const unsigned *)P.neighbours)[8 * x + 4 * backward + mu];
}

extern "C" __global__ void __launch_bounds__(FAT_LINKS_BLOCK) fat_one_link(FatParams P) {
  kernel_entry();
  const long long x = fat_site();
  if (x >= P.volume) return;
  const double *u = (const double *)P.links + (4 * x + P.mu) * 18;
  double *f = (double *)P.acc + x * 18;
  for (int k = 0; k < 18; k++) f[k] = P.coef * u[k];
}

extern "C" __global__ void __launch_bounds__(FAT_LINKS_BLOCK) fat_staple(FatParams P) {
  kernel_entry();
  const long long x = fat_site();
  if (x >= P.volume) return;
  const int mu = P.mu, nu = P.nu;
  const double *links = (const double *)P.links, *m = (const double *)P.m;
  const long long xn = step(P, x, nu, 0), xm = step(P, x, mu, 0);
  const long long xb = step(P, x, nu, 1), xbm = step(P, xb, mu, 0);
  double a[18], b[18], t[18], s[18];
  // Upper: U_ν(x) M(x+ν̂) U_ν(x+μ̂)†.
  load18(links + (4 * x + nu) * 18, a);
  load18(m + xn * P.m_step * 18, b);
  product<false, false>(a, b, t);
  load18(links + (4 * xm + nu) * 18, a);
  product<false, true>(t, a, s);
  // Lower: U_ν(x−ν̂)† M(x−ν̂) U_ν(x−ν̂+μ̂).
  load18(links + (4 * xb + nu) * 18, a);
  load18(m + xb * P.m_step * 18, b);
  product<true, false>(a, b, t);
  load18(links + (4 * xbm + nu) * 18, a);
  product<false, false>(t, a, b);
#pragma unroll
  for (int k = 0; k < 18; k++) s[k] += b[k];
  if (P.out) {
    double *o = (double *)P.out + x * 18;
    for (int k = 0; k < 18; k++) o[k] = s[k];
  }
  double *f = (double *)P.acc + x * 18;
  for (int k = 0; k < 18; k++) f[k] += P.coef * s[k];
}

extern "C" __global__ void __launch_bounds__(FAT_LINKS_BLOCK) fat_long(FatParams P) {
  kernel_entry();
  const long long x = fat_site();
  if (x >= P.volume) return;
  const int mu = P.mu;
  const double *links = (const double *)P.links;
  const long long x1 = step(P, x, mu, 0), x2 = step(P, x1, mu, 0);
  double a[18], b[18], t[18];
  load18(links + (4 * x + mu) * 18, a);
  load18(links + (4 * x1 + mu) * 18, b);
  product<false, false>(a, b, t);
  load18(links + (4 * x2 + mu) * 18, a);
  product<false, false>(t, a, b);
  double *o = (double *)P.out + x * 18;
  for (int k = 0; k < 18; k++) o[k] = P.coef * b[k];
}

/// tr of a 3×3 complex matrix, real part.
__device__ __forceinline__ double re_trace(const double (&a)[18]) { return a[0] + a[8] + a[16]; }

/// Real part of det a.
__device__ __forceinline__ double re_det(const double (&a)[18]) {
  // det = Σ over the first row of a_0c · cofactor.
  double re = 0;
#pragma unroll
  for (int c = 0; c < 3; c++) {
    const int c1 = (c + 1) % 3, c2 = (c + 2) % 3;
    // minor = a_1c1 a_2c2 − a_1c2 a_2c1
    const double pr = a[2 * (3 + c1)] * a[2 * (6 + c2)] - a[2 * (3 + c1) + 1] * a[2 * (6 + c2) + 1]
                      - (a[2 * (3 + c2)] * a[2 * (6 + c1)] - a[2 * (3 + c2) + 1] * a[2 * (6 + c1) + 1]);
    const double pi = a[2 * (3 + c1)] * a[2 * (6 + c2) + 1] + a[2 * (3 + c1) + 1] * a[2 * (6 + c2)]
                      - (a[2 * (3 + c2)] * a[2 * (6 + c1) + 1] + a[2 * (3 + c2) + 1] * a[2 * (6 + c1)]);
    re += a[2 * c] * pr - a[2 * c + 1] * pi;
  }
  return re;
}

extern "C" __global__ void __launch_bounds__(FAT_LINKS_BLOCK) unitarize_u3(UnitarizeKernelParams P) {
  kernel_entry();
  const long long i = fat_site();
  if (i >= P.links) return;
  double v[18], q[18], t[18];
  load18((const double *)P.in + i * 18, v);
  product<true, false>(v, v, q);
  // Eigenvalues of Q from its traceless part's characteristic polynomial.
  const double mean = re_trace(q) / 3.0;
  for (int k = 0; k < 18; k++) t[k] = q[k];
  t[0] -= mean;
  t[8] -= mean;
  t[16] -= mean;
  double t2[18];
  product<false, false>(t, t, t2);
  const double p = re_trace(t2) / 6.0;
  double l[3] = {mean, mean, mean};
  if (p >= P.eps) {
    const double r = re_det(t) / 2.0;
    const double phi = acos(fmin(1.0, fmax(-1.0, r / pow(p, 1.5)))) / 3.0;
    const double sp = sqrt(p), third = 2.0 * 3.14159265358979323846 / 3.0;
    for (int k = 0; k < 3; k++) l[k] = mean + 2.0 * sp * cos(phi + k * third);
  }
  int *flag = (int *)P.flags + i;
  double *w = (double *)P.out + i * 18;
  if (P.allow_svd) {
    const double det = re_det(q);
    if (P.svd_only || fabs(det) < P.svd_abs_error || fabs((l[0] * l[1] * l[2] - det) / det) > P.svd_rel_error) {
      *flag = 1;
      for (int k = 0; k < 18; k++) w[k] = v[k];
      return;
    }
  }
  *flag = 0;
  const double s0 = sqrt(l[0]), s1 = sqrt(l[1]), s2 = sqrt(l[2]);
  const double u = s0 + s1 + s2, vv = s0 * s1 + s0 * s2 + s1 * s2, ww = s0 * s1 * s2;
  const double d = ww * (u * vv - ww);
  const double f0 = (u * vv * vv - ww * (u * u + vv)) / d;
  const double f1 = (2.0 * u * vv - u * u * u - ww) / d;
  const double f2 = u / d;
  product<false, false>(q, q, t2);
  for (int k = 0; k < 18; k++) t[k] = f1 * q[k] + f2 * t2[k];
  t[0] += f0;
  t[8] += f0;
  t[16] += f0;
  product<false, false>(v, t, q);
  for (int k = 0; k < 18; k++) w[k] = q[k];
}
