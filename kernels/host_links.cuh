// host_links.cuh: a caller's gauge array as it lies on the device (staged as
// it is by src/backend/cuda/host_gauge.rs), read link by link, and the site
// arithmetic of the canonical even-odd order; shared by host_gauge.cu (the
// gauge load) and clover_compute.cu (the clover term from the links).
//
// Host orders (docs/conventions.md, src/layout/gauge.rs): every order lists
// sites even-odd (canonical index p·Vh + cb); a link is 9 complex numbers.
//   QDP:  four arrays, one per direction, V·18 reals each, row-major links
//         (staged one after the other in one device buffer);
//   MILC: one array, site-major, 4 links a site, row-major;
//   CPS:  as MILC with column-major links.
#pragma once
#include "core.cuh"

/// Kernel arguments; mirrored by `HostGaugeParams` in src/backend/cuda/host_gauge.rs.
struct HostGaugeParams {
  u64 host;           // the staged host array(s)
  u64 out;            // store: the device links; scan: the per-block partials
  long long vh;       // sites per parity
  long long stride;   // device block stride (sites)
  int dims[4];
  int order;          // 0 QDP, 1 MILC, 2 CPS
  int reals;          // stored reals per link: 18, 12 or 8
  int vec;            // reals per stored vector: 2 or 4
  int kind;           // 0 double, 1 float, 2 short, 3 signed char, 4 int
  int layout;         // 0 the Wilson links' SoA (core.cuh), 1 the staggered links' (fat_index)
  int t_sign_given;   // 1: the T links of the last time slice carry the anti-periodic sign (QUDA's
                      // convention), taken out as they are read
  double max;         // fixed point: the largest stored magnitude
  double fixed_max;   // fixed point: the integer type's largest value
  int fold_hops;      // staggered links without their phases: the hops a link spans (1 fat, 3 long),
                      // 0 none; each link is then multiplied by MILC's phase η_mu(x) times
                      // fold_coefficient, and a T link whose hops cross t = T − 1 by fold_t_sign
                      // (src/dirac/staggered.rs, `fold_phases`)
  int pad_;
  double fold_coefficient;
  double fold_t_sign;
  double long_scale;  // compressed long links (layout 2): |s|, the rows' common norm
};

/// Coordinates of canonical site (p, cb) (src/lattice.rs, `coords`).
__device__ __forceinline__ void site_coords(const HostGaugeParams &P, int p, long long cb, int (&x)[4]) {
  const long long lex = 2 * cb;
  const int X = P.dims[0], Y = P.dims[1], Z = P.dims[2];
  x[1] = (int)((lex / X) % Y);
  x[2] = (int)((lex / (X * Y)) % Z);
  x[3] = (int)(lex / ((long long)X * Y * Z));
  x[0] = (int)(lex % X) + ((x[1] + x[2] + x[3] + p) & 1);
}

/// Link mu of canonical site `site`, as 18 reals (row-major, re, im), in double.
template <typename H>
__device__ __forceinline__ void host_link(const HostGaugeParams &P, long long site, int mu, double (&u)[18]) {
  const H *h = reinterpret_cast<const H *>(P.host);
  const H *src = P.order == 0 ? h + ((long long)mu * 2 * P.vh + site) * 18 : h + (site * 4 + mu) * 18;
  const bool col_major = P.order == 2;
  // t of the site (src/lattice.rs, `coords`): the checkerboard index's
  // lexicographic site over one time slice.
  const long long cb = site >= P.vh ? site - P.vh : site;
  const bool negate = P.t_sign_given && mu == 3 &&
                      2 * cb / ((long long)P.dims[0] * P.dims[1] * P.dims[2]) == P.dims[3] - 1;
#pragma unroll
  for (int r = 0; r < 3; r++) {
#pragma unroll
    for (int c = 0; c < 3; c++) {
      const int k = col_major ? 3 * c + r : 3 * r + c;
      const double re = (double)src[2 * k], im = (double)src[2 * k + 1];
      u[2 * (3 * r + c)] = negate ? -re : re;
      u[2 * (3 * r + c) + 1] = negate ? -im : im;
    }
  }
  if (P.fold_hops) {
    // η_x = (−1)^t, η_y = (−1)^(t+x), η_z = (−1)^(t+x+y), η_t = 1.
    int x[4];
    const int p = site >= P.vh;
    site_coords(P, p, cb, x);
    const int sum = mu == 0 ? x[3] : mu == 1 ? x[3] + x[0] : mu == 2 ? x[3] + x[0] + x[1] : 0;
    double s = ((sum & 1) ? -1.0 : 1.0) * P.fold_coefficient;
    if (mu == 3 && x[3] + P.fold_hops >= P.dims[3]) s *= P.fold_t_sign;
#pragma unroll
    for (int k = 0; k < 18; k++) u[k] *= s;
  }
}

/// Canonical index of the site with coordinates y (each within the lattice).
__device__ __forceinline__ long long site_index(const HostGaugeParams &P, const int (&y)[4]) {
  const long long lex = y[0] + (long long)P.dims[0] * (y[1] + (long long)P.dims[1] * (y[2] + (long long)P.dims[2] * y[3]));
  const int parity = (y[0] + y[1] + y[2] + y[3]) & 1;
  return parity * P.vh + lex / 2;
}

/// Canonical index of the site x + one step along mu (periodic).
__device__ __forceinline__ long long site_forward(const HostGaugeParams &P, const int (&x)[4], int mu) {
  int y[4] = {x[0], x[1], x[2], x[3]};
  y[mu] = y[mu] + 1 == P.dims[mu] ? 0 : y[mu] + 1;
  return site_index(P, y);
}

/// c = a b for 3×3 complex matrices of 18 reals.
__device__ __forceinline__ void mat_mul(const double (&a)[18], const double (&b)[18], double (&c)[18]) {
#pragma unroll
  for (int r = 0; r < 3; r++) {
#pragma unroll
    for (int col = 0; col < 3; col++) {
      double re = 0, im = 0;
#pragma unroll
      for (int k = 0; k < 3; k++) {
        const double ar = a[2 * (3 * r + k)], ai = a[2 * (3 * r + k) + 1];
        const double br = b[2 * (3 * k + col)], bi = b[2 * (3 * k + col) + 1];
        re += ar * br - ai * bi;
        im += ar * bi + ai * br;
      }
      c[2 * (3 * r + col)] = re;
      c[2 * (3 * r + col) + 1] = im;
    }
  }
}

/// x moved by `step` (±1) along mu, periodically, in place.
__device__ __forceinline__ void shift_coords(const HostGaugeParams &P, int (&x)[4], int mu, int step) {
  x[mu] += step;
  if (x[mu] == P.dims[mu]) x[mu] = 0;
  if (x[mu] < 0) x[mu] = P.dims[mu] - 1;
}
