// host_spinor.cu: a caller's Wilson spinor array (or staggered colour
// vectors), copied to the device as it is, into a device field, and back (issue 18: the reordering, the basis
// change and the scale run where the field lives, not on the host). The
// same arithmetic as the host path (src/layout/spinor.rs, `read_sites` and
// `write_sites`), operation for operation and without contraction into
// fused multiply-adds, so that the two paths agree bit for bit:
//   in:  z = host · s0 · s1 (exact powers of two), then ψ = M z;
//   out: z = M ψ, then host = z · s0 · s1 rounded to the host precision.
// M is the basis change (DeGrand–Rossi or chiral ↔ UKQCD, src/gamma.rs), or
// none. Host orders (docs/conventions.md): DIRAC (spin outer, colour inner),
// QDP (colour outer, spin inner), CPS (spin outer; a full field's odd sites
// first). Device fields: double or single, layout of core.cuh.
#include "core.cuh"

/// Kernel arguments; mirrored by `HostSpinorParams` in
/// src/backend/cuda/host_spinor.rs.
struct HostSpinorParams {
  u64 host;  // the caller's array, staged on the device
  u64 field; // the device field, every block
  u64 flags; // [0] largest |x| (bits of a non-negative double), [1] first bad host site
  long long sites; // sites of the field (V or Vh)
  long long vh;
  long long stride; // device block stride (sites)
  int order;        // 0 DIRAC, 1 QDP, 2 CPS
  int full;         // a full field (two blocks)
  int rotate;       // apply m
  int pad;
  double s0, s1;    // the scale 2^exp as two exact factors
  double m[32];     // 4x4 complex spin matrix, row-major, (re, im)
};

/// Host site of canonical site i (an involution: a full CPS field swaps halves).
__device__ __forceinline__ long long host_site(long long i, const HostSpinorParams &P) {
  if (P.order == 2 && P.full) return i < P.vh ? i + P.vh : i - P.vh;
  return i;
}

/// Complex index, within a host site, of canonical component k = 3 spin + colour.
__device__ __forceinline__ int host_component(int k, int order) {
  const int spin = k / 3, colour = k % 3;
  return order == 1 ? colour * 4 + spin : k;
}

/// Real n of canonical site i within the device field of vector width `vec`.
__device__ __forceinline__ long long device_index(long long i, int n, int vec,
                                                  const HostSpinorParams &P) {
  const long long block = P.full ? i / P.vh : 0, cb = P.full ? i % P.vh : i;
  return block * 24 * P.stride + ((long long)(n / vec) * P.stride + cb) * vec + n % vec;
}

/// out = m z on each colour, as num_complex evaluates Σ_j m[s][j] z[j][c]
/// left to right (complex products (ac − bd, ad + bc)), no contraction.
__device__ __forceinline__ void rotate(const double *m, const double (&z)[24], double (&out)[24]) {
#pragma unroll
  for (int s = 0; s < 4; s++) {
#pragma unroll
    for (int c = 0; c < 3; c++) {
      double re = 0, im = 0;
#pragma unroll
      for (int j = 0; j < 4; j++) {
        const double mr = m[2 * (4 * s + j)], mi = m[2 * (4 * s + j) + 1];
        const double zr = z[2 * (3 * j + c)], zi = z[2 * (3 * j + c) + 1];
        const double pr = __dsub_rn(__dmul_rn(mr, zr), __dmul_rn(mi, zi));
        const double pi = __dadd_rn(__dmul_rn(mr, zi), __dmul_rn(mi, zr));
        if (j == 0) {
          re = pr;
          im = pi;
        } else {
          re = __dadd_rn(re, pr);
          im = __dadd_rn(im, pi);
        }
      }
      out[2 * (3 * s + c)] = re;
      out[2 * (3 * s + c) + 1] = im;
    }
  }
}

template <typename H, typename D, int VEC>
__device__ void import_spinor(const HostSpinorParams &P) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= P.sites) return;
  const long long h = host_site(i, P);
  const H *src = reinterpret_cast<const H *>(P.host) + h * 24;
  double z[24];
  bool finite = true;
#pragma unroll
  for (int k = 0; k < 12; k++) {
    const int hk = host_component(k, P.order);
#pragma unroll
    for (int r = 0; r < 2; r++) {
      const double x = __dmul_rn(__dmul_rn((double)src[2 * hk + r], P.s0), P.s1);
      finite = finite && isfinite(x);
      z[2 * k + r] = x;
    }
  }
  if (!finite) {
    atomicMin(reinterpret_cast<unsigned long long *>(P.flags) + 1, (unsigned long long)h);
    return;
  }
  double psi[24];
  if (P.rotate) {
    rotate(P.m, z, psi);
  } else {
#pragma unroll
    for (int n = 0; n < 24; n++) psi[n] = z[n];
  }
  D *dst = reinterpret_cast<D *>(P.field);
#pragma unroll
  for (int n = 0; n < 24; n++) dst[device_index(i, n, VEC, P)] = (D)psi[n];
}

template <typename D, typename H, int VEC>
__device__ void export_spinor(const HostSpinorParams &P) {
  const long long h = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (h >= P.sites) return;
  const long long i = host_site(h, P);
  const D *src = reinterpret_cast<const D *>(P.field);
  double psi[24], z[24];
#pragma unroll
  for (int n = 0; n < 24; n++) psi[n] = (double)src[device_index(i, n, VEC, P)];
  if (P.rotate) {
    rotate(P.m, psi, z);
  } else {
#pragma unroll
    for (int n = 0; n < 24; n++) z[n] = psi[n];
  }
  H *dst = reinterpret_cast<H *>(P.host) + h * 24;
#pragma unroll
  for (int k = 0; k < 12; k++) {
    const int hk = host_component(k, P.order);
#pragma unroll
    for (int r = 0; r < 2; r++) dst[2 * hk + r] = (H)__dmul_rn(__dmul_rn(z[2 * k + r], P.s0), P.s1);
  }
}

/// Real n (0..6) of canonical site i within a staggered colour-vector
/// field (double or single): vectors of two reals, vector j of site cb at
/// `j stride + cb` (src/backend/cuda/fields.rs, `soa_shape`).
__device__ __forceinline__ long long colour_index(long long i, int n, const HostSpinorParams &P) {
  const long long block = P.full ? i / P.vh : 0, cb = P.full ? i % P.vh : i;
  return block * 6 * P.stride + ((long long)(n / 2) * P.stride + cb) * 2 + n % 2;
}

/// A caller's colour vectors (src/layout/colour.rs: 6 reals a site, sites
/// even-odd as the field's) into a staggered field: x · s0 · s1 as the
/// host path, a non-finite number of the caller's reported by its site.
template <typename H, typename D> __device__ void import_colour(const HostSpinorParams &P) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= P.sites) return;
  const H *src = reinterpret_cast<const H *>(P.host) + i * 6;
  double z[6];
  bool finite = true;
#pragma unroll
  for (int n = 0; n < 6; n++) {
    // The caller's number is checked, as the host path checks it (a scale
    // that overflows a finite number is the caller's choice of guess).
    const double x = (double)src[n];
    finite = finite && isfinite(x);
    z[n] = __dmul_rn(__dmul_rn(x, P.s0), P.s1);
  }
  if (!finite) {
    atomicMin(reinterpret_cast<unsigned long long *>(P.flags) + 1, (unsigned long long)i);
    return;
  }
  D *dst = reinterpret_cast<D *>(P.field);
#pragma unroll
  for (int n = 0; n < 6; n++) dst[colour_index(i, n, P)] = (D)z[n];
}

template <typename D, typename H> __device__ void export_colour(const HostSpinorParams &P) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= P.sites) return;
  const D *src = reinterpret_cast<const D *>(P.field);
  H *dst = reinterpret_cast<H *>(P.host) + i * 6;
#pragma unroll
  for (int n = 0; n < 6; n++) dst[n] = (H)__dmul_rn(__dmul_rn((double)src[colour_index(i, n, P)], P.s0), P.s1);
}

/// Arguments of the largest-magnitude kernels; mirrored by `MaxAbsParams`.
struct MaxAbsParams {
  u64 x;
  long long n;
  u64 flags;
};

/// flags[0] = max(flags[0], the largest |x| of x[0..n)) as the bits of a
/// non-negative double; NaN is passed over, as the host's fold does.
template <typename T> __device__ void max_abs(const MaxAbsParams &P) {
  const T *x = reinterpret_cast<const T *>(P.x);
  const long long n = P.n;
  double m = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const double a = fabs((double)x[i]);
    if (a > m) m = a;
  }
  // Non-negative doubles order as their bit patterns.
  atomicMax(reinterpret_cast<unsigned long long *>(P.flags), (unsigned long long)__double_as_longlong(m));
}

extern "C" __global__ void import_spinor_f64_to_f64(const HostSpinorParams P) { kernel_entry(); import_spinor<double, double, 2>(P); }
extern "C" __global__ void import_spinor_f64_to_f32(const HostSpinorParams P) { kernel_entry(); import_spinor<double, float, 4>(P); }
extern "C" __global__ void import_spinor_f32_to_f64(const HostSpinorParams P) { kernel_entry(); import_spinor<float, double, 2>(P); }
extern "C" __global__ void import_spinor_f32_to_f32(const HostSpinorParams P) { kernel_entry(); import_spinor<float, float, 4>(P); }
extern "C" __global__ void export_spinor_f64_to_f64(const HostSpinorParams P) { kernel_entry(); export_spinor<double, double, 2>(P); }
extern "C" __global__ void export_spinor_f64_to_f32(const HostSpinorParams P) { kernel_entry(); export_spinor<double, float, 2>(P); }
extern "C" __global__ void export_spinor_f32_to_f64(const HostSpinorParams P) { kernel_entry(); export_spinor<float, double, 4>(P); }
extern "C" __global__ void export_spinor_f32_to_f32(const HostSpinorParams P) { kernel_entry(); export_spinor<float, float, 4>(P); }
extern "C" __global__ void max_abs_f64(const MaxAbsParams P) { kernel_entry(); max_abs<double>(P); }
extern "C" __global__ void max_abs_f32(const MaxAbsParams P) { kernel_entry(); max_abs<float>(P); }
extern "C" __global__ void import_colour_f64_to_f64(const HostSpinorParams P) { kernel_entry(); import_colour<double, double>(P); }
extern "C" __global__ void import_colour_f64_to_f32(const HostSpinorParams P) { kernel_entry(); import_colour<double, float>(P); }
extern "C" __global__ void import_colour_f32_to_f64(const HostSpinorParams P) { kernel_entry(); import_colour<float, double>(P); }
extern "C" __global__ void import_colour_f32_to_f32(const HostSpinorParams P) { kernel_entry(); import_colour<float, float>(P); }
extern "C" __global__ void export_colour_f64_to_f64(const HostSpinorParams P) { kernel_entry(); export_colour<double, double>(P); }
extern "C" __global__ void export_colour_f64_to_f32(const HostSpinorParams P) { kernel_entry(); export_colour<double, float>(P); }
extern "C" __global__ void export_colour_f32_to_f64(const HostSpinorParams P) { kernel_entry(); export_colour<float, double>(P); }
extern "C" __global__ void export_colour_f32_to_f32(const HostSpinorParams P) { kernel_entry(); export_colour<float, float>(P); }
