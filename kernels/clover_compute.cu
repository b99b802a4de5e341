// clover_compute.cu: the clover term of a caller's links, computed, inverted
// and stored on the device (issue 18: the computed clover took 4.5–6.5 s on
// the host at 32^3x64). The numbers are those of the host path, up to rounding:
//   src/clover/compute.rs  A = 1 − c Σ_{μ<ν} ½[γ_μ, γ_ν] ⊗ F_μν, F_μν = (Q − Q†)/8,
//                          Q the four leaves of the plane, each taken μ first;
//                          block k of A (Dirac spins 2k, 2k+1 of the
//                          DeGrand–Rossi basis), rows 3 s + colour;
//   src/clover/ldl.rs      each block's inverse by its LDL† factorisation, a
//                          pivot that is not finite or not above 1e-8 of the
//                          block's largest entry refused, the result made
//                          exactly Hermitian;
//   src/clover/chiral.rs   both stored as W_k⁻¹ B W_k / 2 (the storage basis
//                          of the UKQCD spinor), 36 packed reals a block;
//   src/clover/storage.rs  and rounded to the format beside the solve's
//                          spinors: a cast for double and single, fixed point
//                          relative to a per-block f32 norm for half and quarter;
//   src/backend/cuda/clover.rs  in the device layout clover.cuh reads (real n
//                          of canonical site i at ((n / vec) stride + i) vec + n % vec).
// The block coefficients c·½[γ_μ, γ_ν] (the 2×2 spin block k of each plane)
// and W_k come from the host, computed by the same functions as the host path.
// One thread per site. A refused block lowers `bad` to its site: the host then
// takes its own path, which names the site and the reason.
// kernels/host/clover.cpp runs this file on the host (src/backend/cuda/clover_emulation.rs).
#include "host_links.cuh"

/// One stored form of the field and its inverse; mirrored by `CloverOut` in
/// src/backend/cuda/clover_compute.rs.
struct CloverOut {
  u64 direct;        // A's stored reals
  u64 inverse;       // A⁻¹'s
  u64 direct_norm;   // fixed point: two f32 norms a site (one per block), else 0
  u64 inverse_norm;
  int kind;          // 0 double, 1 float, 2 short, 3 signed char
  int vec;           // reals per stored vector (2 or 4)
};

#define CLOVER_OUTS 2

/// Kernel arguments; mirrored by `CloverComputeParams` in src/backend/cuda/clover_compute.rs.
struct CloverComputeParams {
  HostGaugeParams links;  // the staged links: host, vh, dims, order
  u64 bad;                // unsigned long long: the first site with a refused block
  long long stride;       // the stored fields' stride (sites)
  double coef[2][6][8];   // c·½[γ_μ, γ_ν] block k, plane p (xy xz xt yz yt zt), 2×2 [s][t] (re, im)
  double w[2][8];         // W_k, 2×2 [s][t] (re, im)
  double w_inv[2][8];     // W_k⁻¹
  int outs;               // stored forms (1 or CLOVER_OUTS)
  int pad_;
  CloverOut out[CLOVER_OUTS];
};

/// b = a†.
__device__ __forceinline__ void adjoint(const double (&a)[18], double (&b)[18]) {
#pragma unroll
  for (int r = 0; r < 3; r++) {
#pragma unroll
    for (int c = 0; c < 3; c++) {
      b[2 * (3 * r + c)] = a[2 * (3 * c + r)];
      b[2 * (3 * r + c) + 1] = -a[2 * (3 * c + r) + 1];
    }
  }
}

/// The four leaves of the clover in the μν plane, each a path of four links
/// taken μ first (src/clover/compute.rs, `clover_leaves`): per link its start
/// as steps (along μ, along ν) from x, its direction (0 μ, 1 ν) and whether it
/// is taken backwards (the adjoint).
struct LeafLink {
  signed char dm, dn, dir, dag;
};
__device__ const LeafLink CLOVER_LEAVES[4][4] = {
    {{0, 0, 0, 0}, {1, 0, 1, 0}, {0, 1, 0, 1}, {0, 0, 1, 1}},        // x → x+μ → x+μ+ν → x+ν → x
    {{0, 0, 1, 0}, {-1, 1, 0, 1}, {-1, 0, 1, 1}, {-1, 0, 0, 0}},     // x → x+ν → x+ν−μ → x−μ → x
    {{-1, 0, 0, 1}, {-1, -1, 1, 1}, {-1, -1, 0, 0}, {0, -1, 1, 0}},  // x → x−μ → x−μ−ν → x−ν → x
    {{0, -1, 1, 1}, {0, -1, 0, 0}, {1, -1, 1, 0}, {0, 0, 0, 1}},     // x → x−ν → x−ν+μ → x+μ → x
};

/// F_μν(x) = (Q_μν − Q_μν†)/8, Q_μν the sum of the four leaves, each the
/// product of its links left to right, added in order.
template <typename H>
__device__ void field_strength(const HostGaugeParams &P, const int (&x)[4], int mu, int nu, double (&f)[18]) {
  double q[18];
#pragma unroll
  for (int k = 0; k < 18; k++) q[k] = 0;
#pragma unroll 1
  for (int leaf = 0; leaf < 4; leaf++) {
    double t[18];
#pragma unroll 1
    for (int j = 0; j < 4; j++) {
      const LeafLink l = CLOVER_LEAVES[leaf][j];
      int y[4] = {x[0], x[1], x[2], x[3]};
      if (l.dm) shift_coords(P, y, mu, l.dm);
      if (l.dn) shift_coords(P, y, nu, l.dn);
      double u[18];
      host_link<H>(P, site_index(P, y), l.dir ? nu : mu, u);
      if (l.dag) {
        double v[18];
        adjoint(u, v);
#pragma unroll
        for (int k = 0; k < 18; k++) u[k] = v[k];
      }
      if (j == 0) {
#pragma unroll
        for (int k = 0; k < 18; k++) t[k] = u[k];
      } else {
        double r[18];
        mat_mul(t, u, r);
#pragma unroll
        for (int k = 0; k < 18; k++) t[k] = r[k];
      }
    }
#pragma unroll
    for (int k = 0; k < 18; k++) q[k] += t[k];
  }
#pragma unroll
  for (int i = 0; i < 3; i++) {
#pragma unroll
    for (int j = 0; j < 3; j++) {
      f[2 * (3 * i + j)] = (q[2 * (3 * i + j)] - q[2 * (3 * j + i)]) * 0.125;
      f[2 * (3 * i + j) + 1] = (q[2 * (3 * i + j) + 1] + q[2 * (3 * j + i) + 1]) * 0.125;
    }
  }
}

/// A 6×6 complex block, [row][column] (re, im).
typedef double Block6[6][6][2];

/// Block k of A in the DeGrand–Rossi basis: δ − Σ_p coef[k][p] ⊗ F_p.
__device__ __forceinline__ void dr_block(const CloverComputeParams &C, int k, const double (&f)[6][18], Block6 &b) {
#pragma unroll 1
  for (int s = 0; s < 2; s++) {
#pragma unroll
    for (int t = 0; t < 2; t++) {
#pragma unroll
      for (int i = 0; i < 3; i++) {
#pragma unroll
        for (int j = 0; j < 3; j++) {
          double re = (s == t && i == j) ? 1.0 : 0.0, im = 0.0;
#pragma unroll
          for (int p = 0; p < 6; p++) {
            const double gr = C.coef[k][p][2 * (2 * s + t)], gi = C.coef[k][p][2 * (2 * s + t) + 1];
            const double fr = f[p][2 * (3 * i + j)], fi = f[p][2 * (3 * i + j) + 1];
            re -= gr * fr - gi * fi;
            im -= gr * fi + gi * fr;
          }
          b[3 * s + i][3 * t + j][0] = re;
          b[3 * s + i][3 * t + j][1] = im;
        }
      }
    }
  }
}

/// The inverse of a Hermitian block by LDL† (src/clover/ldl.rs, step for
/// step); false where ldl.rs refuses the block.
__device__ __noinline__ bool ldl_invert(const Block6 &b, Block6 &inv) {
  double scale = 0;
#pragma unroll
  for (int i = 0; i < 6; i++) {
#pragma unroll
    for (int j = 0; j < 6; j++) scale = fmax(scale, hypot(b[i][j][0], b[i][j][1]));
  }
  if (!isfinite(scale) || scale == 0) return false;
  bool ok = true;
#pragma unroll
  for (int i = 0; i < 6; i++) {
#pragma unroll
    for (int j = 0; j < i; j++)
      ok = ok && !(hypot(b[i][j][0] - b[j][i][0], b[i][j][1] + b[j][i][1]) > 1e-12 * scale);
  }
  double l[6][6][2], d[6];
#pragma unroll
  for (int j = 0; j < 6; j++) {
    double dj = b[j][j][0];
#pragma unroll
    for (int k = 0; k < j; k++) dj -= (l[j][k][0] * l[j][k][0] + l[j][k][1] * l[j][k][1]) * d[k];
    ok = ok && isfinite(dj) && fabs(dj) > 1e-8 * scale;
    d[j] = dj;
#pragma unroll
    for (int i = j + 1; i < 6; i++) {
      // L_ij = (B_ij − Σ_k L_ik d_k conj(L_jk)) / d_j
      double sr = b[i][j][0], si = b[i][j][1];
#pragma unroll
      for (int k = 0; k < j; k++) {
        const double ar = l[i][k][0] * d[k], ai = l[i][k][1] * d[k];
        sr -= ar * l[j][k][0] + ai * l[j][k][1];
        si -= ai * l[j][k][0] - ar * l[j][k][1];
      }
      l[i][j][0] = sr / dj;
      l[i][j][1] = si / dj;
    }
  }
  // Column by column: L y = e, y /= D, L† x = y.
#pragma unroll 1
  for (int col = 0; col < 6; col++) {
    double y[6][2];
#pragma unroll
    for (int i = 0; i < 6; i++) {
      double sr = i == col ? 1.0 : 0.0, si = 0.0;
#pragma unroll
      for (int k = 0; k < i; k++) {
        sr -= l[i][k][0] * y[k][0] - l[i][k][1] * y[k][1];
        si -= l[i][k][0] * y[k][1] + l[i][k][1] * y[k][0];
      }
      y[i][0] = sr;
      y[i][1] = si;
    }
#pragma unroll
    for (int i = 0; i < 6; i++) {
      y[i][0] /= d[i];
      y[i][1] /= d[i];
    }
#pragma unroll
    for (int i = 5; i >= 0; i--) {
      double sr = y[i][0], si = y[i][1];
#pragma unroll
      for (int k = i + 1; k < 6; k++) {
        // conj(L_ki) · inv[k][col]
        sr -= l[k][i][0] * inv[k][col][0] + l[k][i][1] * inv[k][col][1];
        si -= l[k][i][0] * inv[k][col][1] - l[k][i][1] * inv[k][col][0];
      }
      inv[i][col][0] = sr;
      inv[i][col][1] = si;
    }
  }
#pragma unroll
  for (int i = 0; i < 6; i++) {
    inv[i][i][1] = 0;
#pragma unroll
    for (int j = 0; j < i; j++) {
      const double re = (inv[i][j][0] + inv[j][i][0]) * 0.5, im = (inv[i][j][1] - inv[j][i][1]) * 0.5;
      inv[i][j][0] = re;
      inv[i][j][1] = im;
      inv[j][i][0] = re;
      inv[j][i][1] = -im;
    }
  }
  return ok;
}

/// The 36 stored reals of W⁻¹ B W / 2 (src/clover/chiral.rs, `storage_site`;
/// packed as src/clover/packed.rs: the real diagonal, then the strictly
/// lower entries column by column).
__device__ __noinline__ void storage_block(const CloverComputeParams &C, int k, const Block6 &b, double *out) {
  const double *w = C.w[k], *wi = C.w_inv[k];
  double r[6][6][2];
#pragma unroll 1
  for (int s = 0; s < 2; s++) {
#pragma unroll
    for (int c = 0; c < 3; c++) {
#pragma unroll
      for (int t = 0; t < 2; t++) {
#pragma unroll
        for (int e = 0; e < 3; e++) {
          double zr = 0, zi = 0;
#pragma unroll
          for (int a = 0; a < 2; a++) {
#pragma unroll
            for (int bb = 0; bb < 2; bb++) {
              // wi[s][a] · b[3a + c][3bb + e] · w[bb][t]
              const double xr = wi[2 * (2 * s + a)], xi = wi[2 * (2 * s + a) + 1];
              const double br = b[3 * a + c][3 * bb + e][0], bi = b[3 * a + c][3 * bb + e][1];
              const double pr = xr * br - xi * bi, pi = xr * bi + xi * br;
              const double yr = w[2 * (2 * bb + t)], yi = w[2 * (2 * bb + t) + 1];
              zr += pr * yr - pi * yi;
              zi += pr * yi + pi * yr;
            }
          }
          r[3 * s + c][3 * t + e][0] = zr * 0.5;
          r[3 * s + c][3 * t + e][1] = zi * 0.5;
        }
      }
    }
  }
#pragma unroll
  for (int i = 0; i < 6; i++) out[i] = r[i][i][0];
  int n = 6;
#pragma unroll
  for (int c = 0; c < 6; c++) {
#pragma unroll
    for (int row = c + 1; row < 6; row++) {
      out[n++] = r[row][c][0];
      out[n++] = r[row][c][1];
    }
  }
}

/// x · scale rounded half away from zero and clamped to ±max
/// (src/format/fixed.rs, `Fixed::from_scaled`).
__device__ __forceinline__ double clover_fixed(double x, double scale, double max) {
  return fmin(fmax(round(x * scale), -max), max);
}

/// One site's 72 stored reals (two blocks of 36) written in form `o`.
__device__ __noinline__ void store_site(const CloverOut &o, u64 values, u64 norms, long long stride, long long site,
                           const double (&s)[72]) {
  const double fixed_max = o.kind == 2 ? 32767.0 : 127.0;
  double scale[2] = {0, 0};
  if (o.kind >= 2) {
    for (int k = 0; k < 2; k++) {
      double m = 0;
      for (int n = 0; n < 36; n++) m = fmax(m, fabs(s[36 * k + n]));
      const float norm = (float)m;
      reinterpret_cast<float *>(norms)[2 * site + k] = norm;
      scale[k] = norm == 0.0f ? 0.0 : fixed_max / (double)norm;
    }
  }
  for (int n = 0; n < 72; n++) {
    const long long i = ((long long)(n / o.vec) * stride + site) * o.vec + n % o.vec;
    switch (o.kind) {
    case 0: reinterpret_cast<double *>(values)[i] = s[n]; break;
    case 1: reinterpret_cast<float *>(values)[i] = (float)s[n]; break;
    case 2: reinterpret_cast<short *>(values)[i] = (short)clover_fixed(s[n], scale[n / 36], fixed_max); break;
    default: reinterpret_cast<signed char *>(values)[i] = (signed char)clover_fixed(s[n], scale[n / 36], fixed_max); break;
    }
  }
}

template <typename H> __device__ void clover_compute(const CloverComputeParams &C) {
  const long long site = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (site >= 2 * C.links.vh) return;
  int x[4];
  const int p = site >= C.links.vh;
  site_coords(C.links, p, site - p * C.links.vh, x);
  double f[6][18];
  int plane = 0;
#pragma unroll 1
  for (int mu = 0; mu < 3; mu++)
    for (int nu = mu + 1; nu < 4; nu++) field_strength<H>(C.links, x, mu, nu, f[plane++]);
  double a[72], a_inv[72];
  bool ok = true;
#pragma unroll 1
  for (int k = 0; k < 2; k++) {
    Block6 b, inv;
    dr_block(C, k, f, b);
    ok = ldl_invert(b, inv) && ok;
    storage_block(C, k, b, a + 36 * k);
    storage_block(C, k, inv, a_inv + 36 * k);
  }
  if (!ok) atomicMin(reinterpret_cast<unsigned long long *>(C.bad), (unsigned long long)site);
  for (int o = 0; o < C.outs; o++) {
    store_site(C.out[o], C.out[o].direct, C.out[o].direct_norm, C.stride, site, a);
    store_site(C.out[o], C.out[o].inverse, C.out[o].inverse_norm, C.stride, site, a_inv);
  }
}

#define CLOVER_COMPUTE_BLOCK 128
extern "C" __global__ __launch_bounds__(CLOVER_COMPUTE_BLOCK) void clover_compute_f64(const CloverComputeParams C) {
  kernel_entry();
  clover_compute<double>(C);
}
extern "C" __global__ __launch_bounds__(CLOVER_COMPUTE_BLOCK) void clover_compute_f32(const CloverComputeParams C) {
  kernel_entry();
  clover_compute<float>(C);
}
