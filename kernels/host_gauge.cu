// host_gauge.cu: a caller's gauge array, copied to the device as it is,
// checked and stored in the device layout (issue 18: the links' reordering,
// compression and precision change run where the links live, as the
// spinors' do in host_spinor.cu).
//
// The host orders and the link reads: host_links.cuh.
// Two kernels per host precision:
//   gauge_scan:  the checks and numbers a load needs, in one pass over the
//                sites: non-finite links, the largest SU(3) deviation
//                (Su3::su3_deviation), the largest deviation of a T link off
//                the last time slice from 1 (temporal gauge), the largest
//                stored magnitude of each reconstruct (fixed-point scale,
//                at least 1), and the spatial and temporal plaquette sums.
//                One partial per block, folded on the host in block order.
//   gauge_store: one thread per link: compressed as src/reconstruct.rs
//                `compress` does, converted as the host path converts (a
//                cast for double and single, round(x / max · MAX) clamped
//                for fixed point), written in the SoA layout of core.cuh,
//                or (staggered links, 18 reals) in the layout that
//                staggered_dslash.cuh's `load_link` reads (`fat_index` in
//                src/backend/cuda/staggered.rs).
// The scan's maxima start at 0: the Wilson links' scale takes at least 1
// on the host, the staggered links' none.
#include "host_links.cuh"

/// Quantities of the scan, in the order of its partials.
enum { SCAN_BAD, SCAN_SU3, SCAN_TEMPORAL, SCAN_MAX18, SCAN_MAX12, SCAN_MAX8, SCAN_PLAQ_S, SCAN_PLAQ_T, SCAN_N };
#define SCAN_BLOCK 256

/// The largest of |U U† − 1| (entry-wise) and |det U − 1|.
__device__ __forceinline__ double su3_deviation(const double (&u)[18]) {
  double dev = 0;
#pragma unroll
  for (int r = 0; r < 3; r++) {
#pragma unroll
    for (int c = 0; c < 3; c++) {
      double re = 0, im = 0;
#pragma unroll
      for (int k = 0; k < 3; k++) {
        // u[r][k] · conj(u[c][k])
        const double ar = u[2 * (3 * r + k)], ai = u[2 * (3 * r + k) + 1];
        const double br = u[2 * (3 * c + k)], bi = u[2 * (3 * c + k) + 1];
        re += ar * br + ai * bi;
        im += ai * br - ar * bi;
      }
      dev = fmax(dev, hypot(re - (r == c ? 1.0 : 0.0), im));
    }
  }
  // det = Σ_k u[0][k] · (u[1][k+1] u[2][k+2] − u[1][k+2] u[2][k+1])
  double dr = 0, di = 0;
#pragma unroll
  for (int k = 0; k < 3; k++) {
    const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    const double pr = u[2 * (3 + k1)] * u[2 * (6 + k2)] - u[2 * (3 + k1) + 1] * u[2 * (6 + k2) + 1];
    const double pi = u[2 * (3 + k1)] * u[2 * (6 + k2) + 1] + u[2 * (3 + k1) + 1] * u[2 * (6 + k2)];
    const double qr = u[2 * (3 + k2)] * u[2 * (6 + k1)] - u[2 * (3 + k2) + 1] * u[2 * (6 + k1) + 1];
    const double qi = u[2 * (3 + k2)] * u[2 * (6 + k1) + 1] + u[2 * (3 + k2) + 1] * u[2 * (6 + k1)];
    const double mr = pr - qr, mi = pi - qi;
    dr += u[2 * k] * mr - u[2 * k + 1] * mi;
    di += u[2 * k] * mi + u[2 * k + 1] * mr;
  }
  return fmax(dev, hypot(dr - 1.0, di));
}

/// Re tr(a b c† d†) / 3 for the plaquette U_mu(x) U_nu(x+mu) U_mu(x+nu)† U_nu(x)†.
__device__ __forceinline__ double plaquette_trace(const double (&a)[18], const double (&b)[18],
                                                  const double (&c)[18], const double (&d)[18]) {
  double ab[18], dc[18];
  mat_mul(a, b, ab);
  mat_mul(d, c, dc);
  // tr(ab (dc)†) = Σ_ij ab_ij conj(dc_ij)
  double t = 0;
#pragma unroll
  for (int k = 0; k < 9; k++) t += ab[2 * k] * dc[2 * k] + ab[2 * k + 1] * dc[2 * k + 1];
  return t / 3.0;
}

template <typename H> __device__ void gauge_scan(const HostGaugeParams &P) {
  double r[SCAN_N] = {0, 0, 0, 0, 0, 0, 0, 0};
  const long long volume = 2 * P.vh;
  const long long step = (long long)gridDim.x * SCAN_BLOCK;
  for (long long site = (long long)blockIdx.x * SCAN_BLOCK + threadIdx.x; site < volume; site += step) {
    const int p = site >= P.vh;
    int x[4];
    site_coords(P, p, site - p * P.vh, x);
    for (int mu = 0; mu < 4; mu++) {
      double u[18];
      host_link<H>(P, site, mu, u);
      bool finite = true;
      double m = 0;
#pragma unroll
      for (int k = 0; k < 18; k++) {
        finite = finite && isfinite(u[k]);
        m = fmax(m, fabs(u[k]));
        if (k == 11) r[SCAN_MAX12] = fmax(r[SCAN_MAX12], m);
        if (k >= 2 && k < 8) r[SCAN_MAX8] = fmax(r[SCAN_MAX8], fabs(u[k]));
      }
      r[SCAN_MAX18] = fmax(r[SCAN_MAX18], m);
      if (!finite) {
        r[SCAN_BAD] += 1;
        continue;
      }
      r[SCAN_SU3] = fmax(r[SCAN_SU3], su3_deviation(u));
      if (mu == 3 && x[3] != P.dims[3] - 1) {
        double dev = 0;
#pragma unroll
        for (int k = 0; k < 9; k++) dev = fmax(dev, hypot(u[2 * k] - (k % 4 == 0 ? 1.0 : 0.0), u[2 * k + 1]));
        r[SCAN_TEMPORAL] = fmax(r[SCAN_TEMPORAL], dev);
      }
    }
    for (int mu = 0; mu < 3; mu++) {
      for (int nu = mu + 1; nu < 4; nu++) {
        double a[18], b[18], c[18], d[18];
        host_link<H>(P, site, mu, a);
        host_link<H>(P, site_forward(P, x, mu), nu, b);
        host_link<H>(P, site_forward(P, x, nu), mu, c);
        host_link<H>(P, site, nu, d);
        const double t = plaquette_trace(a, b, c, d);
        if (nu == 3) r[SCAN_PLAQ_T] += t;
        else r[SCAN_PLAQ_S] += t;
      }
    }
  }
  // The block's partial: sums for the plaquettes and the count, maxima else.
  __shared__ double sh[SCAN_N][SCAN_BLOCK];
#pragma unroll
  for (int k = 0; k < SCAN_N; k++) sh[k][threadIdx.x] = r[k];
  __syncthreads();
  for (int half = SCAN_BLOCK / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
#pragma unroll
      for (int k = 0; k < SCAN_N; k++) {
        const double o = sh[k][threadIdx.x + half];
        const bool sum = k == SCAN_BAD || k == SCAN_PLAQ_S || k == SCAN_PLAQ_T;
        sh[k][threadIdx.x] = sum ? sh[k][threadIdx.x] + o : fmax(sh[k][threadIdx.x], o);
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    double *partials = reinterpret_cast<double *>(P.out);
#pragma unroll
    for (int k = 0; k < SCAN_N; k++) partials[blockIdx.x * SCAN_N + k] = sh[k][0];
  }
}

/// x / max · MAX rounded half away from zero and clamped, as the host's
/// `Fixed::from_scaled` (src/format/fixed.rs).
__device__ __forceinline__ double fixed_value(double x, const HostGaugeParams &P) {
  const double v = round(__dmul_rn(__ddiv_rn(x, P.max), P.fixed_max));
  return fmin(fmax(v, -P.fixed_max), P.fixed_max);
}

// ---- compressed staggered long links (src/long_links.rs) ----------------
// A long link is L = s W, W in U(3); stored (layout 2) as 13 reals (the first
// two rows of W and arg det W / π) or 9 (the 8 reals of reconstruct 8 of
// V = e^{−iφ/3} W, φ = arg det W, and φ / π), with |s| = long_scale.

__device__ __forceinline__ void zmul(double ar, double ai, double br, double bi, double &r, double &i) {
  r = ar * br - ai * bi;
  i = ar * bi + ai * br;
}

/// det of a 3×3 complex matrix, in `Su3::determinant`'s order.
__device__ __forceinline__ void det3(const double (&m)[18], double &dr, double &di) {
  auto e = [&](int r, int c, double &x, double &y) { x = m[2 * (3 * r + c)]; y = m[2 * (3 * r + c) + 1]; };
  double a[3][3][2];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) e(r, c, a[r][c][0], a[r][c][1]);
  double m1r, m1i, m2r, m2i, t1r, t1i, t2r, t2i, t3r, t3i, pr, pi_;
  // m00 (m11 m22 − m12 m21)
  zmul(a[1][1][0], a[1][1][1], a[2][2][0], a[2][2][1], m1r, m1i);
  zmul(a[1][2][0], a[1][2][1], a[2][1][0], a[2][1][1], m2r, m2i);
  zmul(a[0][0][0], a[0][0][1], m1r - m2r, m1i - m2i, t1r, t1i);
  // m01 (m10 m22 − m12 m20)
  zmul(a[1][0][0], a[1][0][1], a[2][2][0], a[2][2][1], m1r, m1i);
  zmul(a[1][2][0], a[1][2][1], a[2][0][0], a[2][0][1], m2r, m2i);
  zmul(a[0][1][0], a[0][1][1], m1r - m2r, m1i - m2i, t2r, t2i);
  // m02 (m10 m21 − m11 m20)
  zmul(a[1][0][0], a[1][0][1], a[2][1][0], a[2][1][1], m1r, m1i);
  zmul(a[1][1][0], a[1][1][1], a[2][0][0], a[2][0][1], m2r, m2i);
  zmul(a[0][2][0], a[0][2][1], m1r - m2r, m1i - m2i, t3r, t3i);
  pr = t1r - t2r + t3r;
  pi_ = t1i - t2i + t3i;
  dr = pr;
  di = pi_;
}

/// The stored reals of long link u (`long_links::compress`), `reals` 13 or 9.
__device__ void long_compress(const double (&u)[18], int reals, double scale, double (&z)[18]) {
  const double pi = 3.141592653589793;
  const double inv = 1.0 / scale;
  double w[18];
  for (int k = 0; k < 18; k++) w[k] = u[k] * inv;
  double dr, di;
  det3(w, dr, di);
  const double phi = atan2(di, dr);
  if (reals == 13) {
    for (int k = 0; k < 12; k++) z[k] = w[k];
    z[12] = phi / pi;
  } else {
    double s, c;
    sincos(-phi / 3.0, &s, &c);
    double v[18];
    for (int k = 0; k < 9; k++) zmul(w[2 * k], w[2 * k + 1], c, s, v[2 * k], v[2 * k + 1]);
    z[0] = v[2];
    z[1] = v[3];
    z[2] = v[4];
    z[3] = v[5];
    z[4] = v[6];
    z[5] = v[7];
    z[6] = atan2(v[1], v[0]) / pi;
    z[7] = atan2(v[13], v[12]) / pi;
    z[8] = phi / pi;
  }
}

/// The long link from its stored reals (`long_links::decompress`).
__device__ void long_decompress(const double (&z)[18], int reals, double scale, double (&u)[18]) {
  const double pi = 3.141592653589793;
  // Rows a, b, c of the U(3) (13) or SU(3) (9) matrix, then the factor.
  double a[6], b[6], c[6], fr, fi;
  if (reals == 13) {
    for (int k = 0; k < 6; k++) {
      a[k] = z[k];
      b[k] = z[6 + k];
    }
    double er, ei;
    sincos(z[12] * pi, &ei, &er);
    // c = conj(a × b) · e
    for (int k = 0; k < 3; k++) {
      const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
      double p1r, p1i, p2r, p2i;
      zmul(a[2 * k1], a[2 * k1 + 1], b[2 * k2], b[2 * k2 + 1], p1r, p1i);
      zmul(a[2 * k2], a[2 * k2 + 1], b[2 * k1], b[2 * k1 + 1], p2r, p2i);
      zmul(er, ei, p1r - p2r, -(p1i - p2i), c[2 * k], c[2 * k + 1]);
    }
    fr = scale;
    fi = 0;
  } else {
    // reconstruct 8 (src/reconstruct.rs, `decompress`)
    const double a2r = z[0], a2i = z[1], a3r = z[2], a3i = z[3], b1r = z[4], b1i = z[5];
    const double n2 = a2r * a2r + a2i * a2i + (a3r * a3r + a3i * a3i);
    double s, co;
    sincos(z[6] * pi, &s, &co);
    const double r1 = sqrt(fmax(1.0 - n2, 0.0));
    const double a1r = r1 * co, a1i = r1 * s;
    const double c1abs2 = fmax(1.0 - (a1r * a1r + a1i * a1i) - (b1r * b1r + b1i * b1i), 0.0);
    sincos(z[7] * pi, &s, &co);
    const double r2 = sqrt(c1abs2);
    const double c1r = r2 * co, c1i = r2 * s;
    const double n = sqrt(n2), inv_n = 1.0 / n;
    // b' = (0, −conj(a3)/n, conj(a2)/n); c' = (n, −conj(a1) a2 / n, −conj(a1) a3 / n)
    double bp[6] = {0, 0, -a3r * inv_n, a3i * inv_n, a2r * inv_n, -a2i * inv_n};
    double cp[6];
    cp[0] = n;
    cp[1] = 0;
    double tr, ti;
    zmul(-a1r, a1i, a2r, a2i, tr, ti);
    cp[2] = tr * inv_n;
    cp[3] = ti * inv_n;
    zmul(-a1r, a1i, a3r, a3i, tr, ti);
    cp[4] = tr * inv_n;
    cp[5] = ti * inv_n;
    const double p1r = c1r * inv_n, p1i = -c1i * inv_n, p2r = b1r * inv_n, p2i = b1i * inv_n;
    a[0] = a1r;
    a[1] = a1i;
    a[2] = a2r;
    a[3] = a2i;
    a[4] = a3r;
    a[5] = a3i;
    for (int k = 0; k < 3; k++) {
      double xr, xi, yr, yi;
      zmul(p1r, p1i, bp[2 * k], bp[2 * k + 1], xr, xi);
      zmul(p2r, p2i, cp[2 * k], cp[2 * k + 1], yr, yi);
      b[2 * k] = xr + yr;
      b[2 * k + 1] = xi + yi;
      zmul(-p2r, p2i, bp[2 * k], bp[2 * k + 1], xr, xi);
      zmul(p1r, -p1i, cp[2 * k], cp[2 * k + 1], yr, yi);
      c[2 * k] = xr + yr;
      c[2 * k + 1] = xi + yi;
    }
    sincos(z[8] * pi / 3.0, &fi, &fr);
    fr *= scale;
    fi *= scale;
  }
  for (int k = 0; k < 3; k++) {
    zmul(a[2 * k], a[2 * k + 1], fr, fi, u[2 * k], u[2 * k + 1]);
    zmul(b[2 * k], b[2 * k + 1], fr, fi, u[6 + 2 * k], u[6 + 2 * k + 1]);
    zmul(c[2 * k], c[2 * k + 1], fr, fi, u[12 + 2 * k], u[12 + 2 * k + 1]);
  }
}

/// The long links' scan for compression to `P.reals` (13 or 9): the largest
/// stored magnitude, the largest round-trip deviation relative to |s| (as
/// `long_links::check`), and the links whose deviation is not a number.
/// One partial of three per block.
template <typename H> __device__ void long_scan(const HostGaugeParams &P) {
  double m = 0, dev = 0, nan = 0;
  const long long links = 8 * P.vh;
  const long long step = (long long)gridDim.x * SCAN_BLOCK;
  for (long long k = (long long)blockIdx.x * SCAN_BLOCK + threadIdx.x; k < links; k += step) {
    double u[18], z[18], back[18];
    host_link<H>(P, k / 4, (int)(k % 4), u);
    long_compress(u, P.reals, P.long_scale, z);
    for (int n = 0; n < P.reals; n++) m = fmax(m, fabs(z[n]));
    long_decompress(z, P.reals, P.long_scale, back);
    double d = 0;
    for (int n = 0; n < 9; n++) d = fmax(d, hypot(u[2 * n] - back[2 * n], u[2 * n + 1] - back[2 * n + 1]));
    d /= P.long_scale;
    if (d != d) nan += 1;
    else dev = fmax(dev, d);
  }
  __shared__ double sh[3][SCAN_BLOCK];
  sh[0][threadIdx.x] = m;
  sh[1][threadIdx.x] = dev;
  sh[2][threadIdx.x] = nan;
  __syncthreads();
  for (int half = SCAN_BLOCK / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      sh[0][threadIdx.x] = fmax(sh[0][threadIdx.x], sh[0][threadIdx.x + half]);
      sh[1][threadIdx.x] = fmax(sh[1][threadIdx.x], sh[1][threadIdx.x + half]);
      sh[2][threadIdx.x] += sh[2][threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    double *partials = reinterpret_cast<double *>(P.out);
    for (int q = 0; q < 3; q++) partials[blockIdx.x * 3 + q] = sh[q][0];
  }
}

template <typename H> __device__ void gauge_store(const HostGaugeParams &P) {
  const long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (k >= 8 * P.vh) return;
  // Block (parity, mu) of the device layout, site cb within it.
  const long long block = k / P.vh, cb = k % P.vh;
  const int p = (int)(block / 4), mu = (int)(block % 4);
  double u[18];
  host_link<H>(P, p * P.vh + cb, mu, u);
  double z[18];
  if (P.layout == 2) {
    long_compress(u, P.reals, P.long_scale, z);
  } else if (P.reals == 8) {
    const double pi = 3.141592653589793;
    for (int n = 0; n < 6; n++) z[n] = u[2 + n];
    z[6] = __ddiv_rn(atan2(u[1], u[0]), pi);
    z[7] = __ddiv_rn(atan2(u[13], u[12]), pi);
  } else {
#pragma unroll
    for (int n = 0; n < 18; n++) z[n] = u[n];
  }
  const long long base = block * P.reals * P.stride;
  for (int n = 0; n < P.reals; n++) {
    // Staggered: reals 0..15 in vectors of `vec`, then 16 and 17 side by
    // side; compressed long links: the last (the phase) alone after the rest.
    const long long i =
        base + (P.layout == 1 && n >= 16           ? 16LL * P.stride + 2 * cb + (n - 16)
                : P.layout == 2 && n == P.reals - 1 ? (long long)(P.reals - 1) * P.stride + cb
                                                    : ((long long)(n / P.vec) * P.stride + cb) * P.vec + n % P.vec);
    switch (P.kind) {
    case 0: reinterpret_cast<double *>(P.out)[i] = z[n]; break;
    case 1: reinterpret_cast<float *>(P.out)[i] = (float)z[n]; break;
    case 2: reinterpret_cast<short *>(P.out)[i] = (short)fixed_value(z[n], P); break;
    case 3: reinterpret_cast<signed char *>(P.out)[i] = (signed char)fixed_value(z[n], P); break;
    default: reinterpret_cast<int *>(P.out)[i] = (int)fixed_value(z[n], P); break;
    }
  }
}

extern "C" __global__ __launch_bounds__(SCAN_BLOCK) void gauge_scan_f64(const HostGaugeParams P) { kernel_entry(); gauge_scan<double>(P); }
extern "C" __global__ __launch_bounds__(SCAN_BLOCK) void gauge_scan_f32(const HostGaugeParams P) { kernel_entry(); gauge_scan<float>(P); }
extern "C" __global__ __launch_bounds__(SCAN_BLOCK) void long_scan_f64(const HostGaugeParams P) { kernel_entry(); long_scan<double>(P); }
extern "C" __global__ __launch_bounds__(SCAN_BLOCK) void long_scan_f32(const HostGaugeParams P) { kernel_entry(); long_scan<float>(P); }
extern "C" __global__ void gauge_store_f64(const HostGaugeParams P) { kernel_entry(); gauge_store<double>(P); }
extern "C" __global__ void gauge_store_f32(const HostGaugeParams P) { kernel_entry(); gauge_store<float>(P); }
