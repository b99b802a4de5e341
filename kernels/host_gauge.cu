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
/// `Fixed::from_scaled` (src/backend/cpu/storage.rs).
__device__ __forceinline__ double fixed_value(double x, const HostGaugeParams &P) {
  const double v = round(__dmul_rn(__ddiv_rn(x, P.max), P.fixed_max));
  return fmin(fmax(v, -P.fixed_max), P.fixed_max);
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
  if (P.reals == 8) {
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
    // Staggered: reals 0..15 in vectors of `vec`, then 16 and 17 side by side.
    const long long i = base + (P.layout == 1 && n >= 16 ? 16LL * P.stride + 2 * cb + (n - 16)
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
extern "C" __global__ void gauge_store_f64(const HostGaugeParams P) { kernel_entry(); gauge_store<double>(P); }
extern "C" __global__ void gauge_store_f32(const HostGaugeParams P) { kernel_entry(); gauge_store<float>(P); }
