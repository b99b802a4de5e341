// blas.cuh: the vector algebra of `Backend` on device spinor fields, fused as
// the trait fuses it (seed clark2010 §4.8: one pass over memory per fused op).
// The kernel bodies for every storage format; each module blas_<format>.cu
// instantiates those of one format (LATSOL_BLAS_FORMAT, the conversions from
// it, and the sums of its fields into double and single), so the modules
// compile in parallel at the first start.
//
// Element-wise ops see a field as a flat array of vectors (double2: one
// complex number; float4: two), since the structure-of-arrays layout keeps
// each complex number's (re, im) together (core.cuh). Arithmetic is done in
// double for both storage precisions, as in the CPU backend, and every
// stored value is rounded to the storage precision before it enters a norm.
//
// Reductions are deterministic: a fixed geometry (RED_BLOCK threads, a grid
// fixed by the host from the length alone), each thread summing its
// grid-stride elements in order, a fixed shared-memory tree per block, the
// per-block partials written to memory, and the last block to finish summing
// them in a fixed order. An atomic counter only elects that block; no sum
// depends on timing, so the same inputs give the same bits. The last block
// writes the result straight into host memory mapped for the device, so a
// reduction costs one launch and one stream synchronisation, no copy.
#pragma once
#include "core.cuh"

#define RED_BLOCK 256

/// Kernel arguments; mirrored by `BlasParams` in src/backend/cuda/blas.rs.
struct BlasParams {
  u64 x, y, z;   // vector fields (flat)
  u64 partials;  // per-block partial sums (reductions)
  double a_re, a_im, b_re, b_im;
  long long n;       // items per field: vectors (double2 / float4), or sites (half, quarter, packed)
  long long stride;  // sites per parity block (half, quarter, packed)
  u64 w, v;          // two more fields (BiCGstab's fused update)
  u64 counter;       // reductions: blocks done (unsigned, left at 0)
  u64 out;           // reductions: the results (mapped host memory)
};
static_assert(sizeof(BlasParams) == 112, "BlasParams layout changed: update blas.rs");

typedef cplx<double> z64;

/// How an op sees a field: items of `nc` complex numbers. Double and single
/// are flat arrays of vectors (double2: one complex number; float4: two);
/// half, quarter and the packed formats are sites, since a site's norm or
/// exponent scales all 12 numbers.
template <typename S> struct Items;
template <> struct Items<double> {
  typedef double2 Vec;
  static constexpr int nc = 1;
  static __device__ __forceinline__ void load(const BlasParams &, u64 p, long long i, z64 *z) {
    double2 v = reinterpret_cast<const Vec *>(p)[i];
    z[0] = mk(v.x, v.y);
  }
  static __device__ __forceinline__ void store(const BlasParams &, u64 p, long long i, z64 *z) {
    reinterpret_cast<Vec *>(p)[i] = make_double2(z[0].re, z[0].im);
  }
};
template <> struct Items<float> {
  typedef float4 Vec;
  static constexpr int nc = 2;
  static __device__ __forceinline__ void load(const BlasParams &, u64 p, long long i, z64 *z) {
    float4 v = reinterpret_cast<const Vec *>(p)[i];
    z[0] = mk<double>(v.x, v.y);
    z[1] = mk<double>(v.z, v.w);
  }
  /// Stores, and leaves in z the values as rounded to single.
  static __device__ __forceinline__ void store(const BlasParams &, u64 p, long long i, z64 *z) {
    float4 v = make_float4(float(z[0].re), float(z[0].im), float(z[1].re), float(z[1].im));
    reinterpret_cast<Vec *>(p)[i] = v;
    z[0] = mk<double>(v.x, v.y);
    z[1] = mk<double>(v.z, v.w);
  }
};
/// The parity block holding site i (i = block · stride + cb) of a field of
/// `site_bytes` a site, and the site's checkerboard index cb.
template <typename Vec>
__device__ __forceinline__ Vec *site_block(const BlasParams &P, u64 p, long long i, long long site_bytes, int &cb) {
  const long long b = i / P.stride;
  cb = int(i - b * P.stride);
  return reinterpret_cast<Vec *>(p + b * P.stride * site_bytes);
}

/// Site items: the accessors of core.cuh (half, quarter, packed), whose
/// loads are exact in double.
template <typename T> struct SiteItems {
  typedef SpinorSoA<T> A;
  typedef typename A::Vec Vec;
  static constexpr int nc = 12;
  static __device__ __forceinline__ Vec *block(const BlasParams &P, u64 p, long long i, int &cb) {
    return site_block<Vec>(P, p, i, A::site_bytes, cb);
  }
  static __device__ __forceinline__ void load(const BlasParams &P, u64 p, long long i, z64 *z) {
    int cb;
    const Vec *q = block(P, p, i, cb);
    cplx<typename A::Item> f[12];
    A::template load<0, 12, false>(q, int(P.stride), cb, f);
#pragma unroll
    for (int c = 0; c < 12; c++) z[c] = mk<double>(f[c].re, f[c].im);
  }
  /// Stores (norm or exponent computed in double, as on the CPU), leaving
  /// in z the values as stored.
  static __device__ __forceinline__ void store(const BlasParams &P, u64 p, long long i, z64 *z) {
    int cb;
    Vec *q = block(P, p, i, cb);
    A::store(q, int(P.stride), cb, z);
  }
};
template <> struct Items<short> : SiteItems<short> {};
template <> struct Items<signed char> : SiteItems<signed char> {};
template <> struct Items<packed20> : SiteItems<packed20> {};
template <> struct Items<packed30> : SiteItems<packed30> {};

/// Complex numbers a site of format S: 12 (a Wilson spinor) unless a
/// colour-vector format says 3 (staggered_blas.cuh).
template <typename S> struct SiteNc {
  static constexpr int n = 12;
};

/// The SiteNc<S>::n complex numbers of site i (i = block · stride + cb) of a
/// field in any format: one item for the site formats, else n / nc vectors
/// of the structure-of-arrays layout.
template <typename S> __device__ __forceinline__ void load_site(const BlasParams &P, u64 p, long long i, z64 *z) {
  constexpr int nc = Items<S>::nc, n = SiteNc<S>::n;
  if constexpr (nc == n) {
    Items<S>::load(P, p, i, z);
  } else {
    const long long b = i / P.stride, cb = i - b * P.stride;
#pragma unroll
    for (int v = 0; v < n / nc; v++) Items<S>::load(P, p, (b * (n / nc) + v) * P.stride + cb, z + v * nc);
  }
}
/// Stores site i (as `load_site` reads it), leaving in z the stored values.
template <typename S> __device__ __forceinline__ void store_site(const BlasParams &P, u64 p, long long i, z64 *z) {
  constexpr int nc = Items<S>::nc, n = SiteNc<S>::n;
  if constexpr (nc == n) {
    Items<S>::store(P, p, i, z);
  } else {
    const long long b = i / P.stride, cb = i - b * P.stride;
#pragma unroll
    for (int v = 0; v < n / nc; v++) Items<S>::store(P, p, (b * (n / nc) + v) * P.stride + cb, z + v * nc);
  }
}

/// A double rounded to the precision of S (double or single) and back.
template <typename S> struct RoundsToSingle {
  static constexpr bool value = sizeof(S) == sizeof(float);
};
template <typename S> __device__ __forceinline__ double round_to(double v) {
  if constexpr (RoundsToSingle<S>::value) {
    return double(float(v));
  } else {
    return v;
  }
}

__device__ __forceinline__ z64 cmul(z64 a, z64 b) { return mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
__device__ __forceinline__ double norm(z64 a) { return a.re * a.re + a.im * a.im; }

// ---- the operations: which fields they read and write, what they sum ------
// Each functor sees one complex number of x, y, z and may change y or z.

#define READS(X_, Y_, Z_) static constexpr bool rx = X_, ry = Y_, rz = Z_, five = false;
#define WRITES(Y_, Z_) static constexpr bool wy = Y_, wz = Z_;

/// What an op sums after its store (update-then-norm ops): by default nothing.
struct NoPost {
  static __device__ void post(const z64 &, const z64 &, double *) {}
};
/// ‖y‖² of the stored (rounded) y.
struct PostNorm2 {
  static __device__ void post(const z64 &, const z64 &y, double *r) { r[0] += norm(y); }
};

struct Ax : NoPost {  // y = a y (the trait's `ax` on its one field)
  READS(false, true, false) WRITES(true, false) static constexpr int nred = 0;
  static __device__ void f(const BlasParams &P, z64 &, z64 &y, z64 &, double *) { y = P.a_re * y; }
};
struct Axpy : NoPost {  // y = a x + y
  READS(true, true, false) WRITES(true, false) static constexpr int nred = 0;
  static __device__ void f(const BlasParams &P, z64 &x, z64 &y, z64 &, double *) {
    y = mk(fma(P.a_re, x.re, y.re), fma(P.a_re, x.im, y.im));
  }
};
struct Xpay : NoPost {  // y = x + a y
  READS(true, true, false) WRITES(true, false) static constexpr int nred = 0;
  static __device__ void f(const BlasParams &P, z64 &x, z64 &y, z64 &, double *) {
    y = mk(fma(P.a_re, y.re, x.re), fma(P.a_re, y.im, x.im));
  }
};
struct Axpby : NoPost {  // y = a x + b y
  READS(true, true, false) WRITES(true, false) static constexpr int nred = 0;
  static __device__ void f(const BlasParams &P, z64 &x, z64 &y, z64 &, double *) {
    y = mk(P.a_re * x.re + P.b_re * y.re, P.a_re * x.im + P.b_re * y.im);
  }
};
struct Caxpy : NoPost {  // y = a x + y, complex a
  READS(true, true, false) WRITES(true, false) static constexpr int nred = 0;
  static __device__ void f(const BlasParams &P, z64 &x, z64 &y, z64 &, double *) {
    y = cmul(mk(P.a_re, P.a_im), x) + y;
  }
};
struct XpayInto : NoPost {  // z = x + a y (z only written)
  READS(true, true, false) WRITES(false, true) static constexpr int nred = 0;
  static __device__ void f(const BlasParams &P, z64 &x, z64 &y, z64 &z, double *) {
    z = mk(fma(P.a_re, y.re, x.re), fma(P.a_re, y.im, x.im));
  }
};
struct Cxpaypbz : NoPost {  // z = x + a y + b z, complex a, b
  READS(true, true, true) WRITES(false, true) static constexpr int nred = 0;
  static __device__ void f(const BlasParams &P, z64 &x, z64 &y, z64 &z, double *) {
    z = x + cmul(mk(P.a_re, P.a_im), y) + cmul(mk(P.b_re, P.b_im), z);
  }
};
struct Norm2 : NoPost {  // ‖x‖²
  READS(true, false, false) WRITES(false, false) static constexpr int nred = 1;
  static __device__ void f(const BlasParams &, z64 &x, z64 &, z64 &, double *r) { r[0] += norm(x); }
};
struct Cdot : NoPost {  // x† y
  READS(true, true, false) WRITES(false, false) static constexpr int nred = 2;
  static __device__ void f(const BlasParams &, z64 &x, z64 &y, z64 &, double *r) {
    r[0] += x.re * y.re + x.im * y.im;
    r[1] += x.re * y.im - x.im * y.re;
  }
};
struct CdotNorm2 : NoPost {  // (x† y, ‖x‖²)
  READS(true, true, false) WRITES(false, false) static constexpr int nred = 3;
  static __device__ void f(const BlasParams &, z64 &x, z64 &y, z64 &, double *r) {
    r[0] += x.re * y.re + x.im * y.im;
    r[1] += x.re * y.im - x.im * y.re;
    r[2] += norm(x);
  }
};
// The fused update-then-norm ops: the norm is taken in `post`, after the
// store has rounded y to the storage precision.
struct AxpyNorm2 : PostNorm2 {
  READS(true, true, false) WRITES(true, false) static constexpr int nred = 1;
  static __device__ void f(const BlasParams &P, z64 &x, z64 &y, z64 &z, double *r) { Axpy::f(P, x, y, z, r); }
};
struct CaxpyNorm2 : PostNorm2 {
  READS(true, true, false) WRITES(true, false) static constexpr int nred = 1;
  static __device__ void f(const BlasParams &P, z64 &x, z64 &y, z64 &z, double *r) { Caxpy::f(P, x, y, z, r); }
};
struct XmyNorm2 : PostNorm2 {  // y = x − y
  READS(true, true, false) WRITES(true, false) static constexpr int nred = 1;
  static __device__ void f(const BlasParams &, z64 &x, z64 &y, z64 &, double *) { y = x - y; }
};
/// CG's residual update with the Polak–Ribière numerator (Backend::
/// axpy_norm2_pr): y += a x, then ‖y‖² and Re⟨y, x⟩ of the stored y (the
/// host multiplies the second by a). Each sum is the one the separate
/// axpy_norm2 and cdot would give, bit for bit: same elements, same order.
struct AxpyNorm2Pr {
  READS(true, true, false) WRITES(true, false) static constexpr int nred = 2;
  static __device__ void f(const BlasParams &P, z64 &x, z64 &y, z64 &z, double *r) { Axpy::f(P, x, y, z, r); }
  static __device__ void post(const z64 &x, const z64 &y, double *r) {
    r[0] += norm(y);
    r[1] += y.re * x.re + y.im * x.im;
  }
};

/// BiCGstab's closing update on five fields (x: p, y: s, z: x, w: t, v: r̂;
/// a = α, b = ω): x += α p + ω s; s −= ω t; sums (r̂, s) and ‖s‖² of the
/// stored s. One pass instead of four (two caxpy, caxpy_norm2, cdot).
struct BicgstabUpdate {
  static constexpr bool five = true;
  static constexpr int nred = 3;
  template <typename Float> static __device__ __forceinline__ void item(const BlasParams &P, long long i, double *r) {
    typedef Items<Float> A;
    constexpr int nc = A::nc;
    z64 p[nc], s[nc], x[nc], t[nc], h[nc];
    A::load(P, P.x, i, p);
    A::load(P, P.y, i, s);
    A::load(P, P.z, i, x);
    A::load(P, P.w, i, t);
    A::load(P, P.v, i, h);
    const z64 alpha = mk(P.a_re, P.a_im), omega = mk(P.b_re, P.b_im);
#pragma unroll
    for (int k = 0; k < nc; k++) {
      x[k] = x[k] + cmul(alpha, p[k]) + cmul(omega, s[k]);
      s[k] = s[k] - cmul(omega, t[k]);
    }
    A::store(P, P.z, i, x);
    A::store(P, P.y, i, s);
#pragma unroll
    for (int k = 0; k < nc; k++) {
      r[0] += h[k].re * s[k].re + h[k].im * s[k].im;
      r[1] += h[k].re * s[k].im - h[k].im * s[k].re;
      r[2] += norm(s[k]);
    }
  }
};

/// Four inner products in one pass, x† y, x† z, x† w, x† v (x read once):
/// the rows of a block solver's Gram matrix (`Backend::block_cdot`; a
/// missing field is passed as y again, its sum ignored).
struct Cdot4 {
  static constexpr bool five = true;
  static constexpr int nred = 8;
  template <typename Float> static __device__ __forceinline__ void item(const BlasParams &P, long long i, double *r) {
    typedef Items<Float> A;
    constexpr int nc = A::nc;
    z64 x[nc], y[nc];
    A::load(P, P.x, i, x);
    const u64 ys[4] = {P.y, P.z, P.w, P.v};
#pragma unroll
    for (int j = 0; j < 4; j++) {
      A::load(P, ys[j], i, y);
#pragma unroll
      for (int k = 0; k < nc; k++) {
        r[2 * j] += x[k].re * y[k].re + x[k].im * y[k].im;
        r[2 * j + 1] += x[k].re * y[k].im - x[k].im * y[k].re;
      }
    }
  }
};

/// The single-precision format of x̂ beside fields of format S in
/// `BicgstabUpdateWide`: Wilson spinors in single (staggered_blas.cuh
/// gives colour vectors theirs).
template <typename S> struct SingleOf {
  typedef float T;
};

/// `BicgstabUpdate` with x̂ kept in single while the other four fields are
/// half, quarter or packed 20-bit (the widened partial solution of
/// src/solver/bicgstab_reliable.rs): one thread per site, x̂ read and written
/// as a site of `SingleOf<Float>` (the six float4 of a Wilson spinor, the
/// three float2 of a colour vector), the rest as `Items<Float>` sites. One
/// pass instead of a conversion to single and a single `caxpy` per term.
struct BicgstabUpdateWide {
  static constexpr bool five = true;
  static constexpr int nred = 3;
  template <typename Float> static __device__ __forceinline__ void item(const BlasParams &P, long long i, double *r) {
    typedef Items<Float> A;
    constexpr int n = SiteNc<Float>::n;
    static_assert(A::nc == n, "the narrow fields must be site items");
    typedef typename SingleOf<Float>::T X;
    z64 p[n], s[n], x[n], t[n], h[n];
    A::load(P, P.x, i, p);
    A::load(P, P.y, i, s);
    A::load(P, P.w, i, t);
    A::load(P, P.v, i, h);
    load_site<X>(P, P.z, i, x);
    const z64 alpha = mk(P.a_re, P.a_im), omega = mk(P.b_re, P.b_im);
#pragma unroll
    for (int k = 0; k < n; k++) {
      x[k] = x[k] + cmul(alpha, p[k]) + cmul(omega, s[k]);
      s[k] = s[k] - cmul(omega, t[k]);
    }
    store_site<X>(P, P.z, i, x);
    A::store(P, P.y, i, s);
#pragma unroll
    for (int k = 0; k < n; k++) {
      r[0] += h[k].re * s[k].re + h[k].im * s[k].im;
      r[1] += h[k].re * s[k].im - h[k].im * s[k].re;
      r[2] += norm(s[k]);
    }
  }
};

/// The three-field ops.
template <typename Float, typename Op>
__device__ __forceinline__ void apply3(const BlasParams &P, long long i, double *r) {
  typedef Items<Float> A;
  constexpr int nc = A::nc;
  z64 x[nc], y[nc], z[nc];
  if (Op::rx) A::load(P, P.x, i, x);
  if (Op::ry) A::load(P, P.y, i, y);
  if (Op::rz) A::load(P, P.z, i, z);
#pragma unroll
  for (int k = 0; k < nc; k++) Op::f(P, x[k], y[k], z[k], r);
  if (Op::wy) A::store(P, P.y, i, y);
  if (Op::wz) A::store(P, P.z, i, z);
  // Update-then-norm ops sum the stored (rounded) values.
  if constexpr (Op::wy && Op::nred > 0) {
#pragma unroll
    for (int k = 0; k < nc; k++) Op::post(x[k], y[k], r);
  }
}

/// Applies `Op` to item i; returns the contributions to the sums in r.
template <typename Float, typename Op>
__device__ __forceinline__ void apply(const BlasParams &P, long long i, double *r) {
  if constexpr (Op::five) {
    Op::template item<Float>(P, i, r);
  } else {
    apply3<Float, Op>(P, i, r);
  }
}

/// Element-wise op, one vector per thread (block size tuned by the host).
template <typename Float, typename Op> __device__ __forceinline__ void map_kernel(const BlasParams &P) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < P.n) apply<Float, Op>(P, i, nullptr);
}

/// Sums v[k][0..RED_BLOCK) into v[k][0] by a fixed tree.
template <int N> __device__ __forceinline__ void block_sum(double (*v)[RED_BLOCK]) {
  const int t = threadIdx.x;
#pragma unroll
  for (int w = RED_BLOCK / 2; w > 0; w /= 2) {
    __syncthreads();
    if (t < w) {
#pragma unroll
      for (int k = 0; k < N; k++) v[k][t] += v[k][t + w];
    }
  }
  __syncthreads();
}

template <int N> __device__ __forceinline__ void reduce_final(const double *partials, int nblocks, double *out);

template <int N> __device__ __forceinline__ void reduce_final(const double *partials, int nblocks, double *out);
template <int N>
__device__ __forceinline__ void reduce_finish(const BlasParams &P, const double *r, double (*sh)[RED_BLOCK]);

/// A reduction: grid-stride sums, one partial per block; the last block
/// to finish sums the partials (`reduce_final`) into P.out.
template <typename Float, typename Op> __device__ __forceinline__ void reduce_kernel(const BlasParams &P) {
  constexpr int N = Op::nred;
  __shared__ double sh[N][RED_BLOCK];
  double r[N];
#pragma unroll
  for (int k = 0; k < N; k++) r[k] = 0.0;
  const long long step = (long long)gridDim.x * RED_BLOCK;
  for (long long i = (long long)blockIdx.x * RED_BLOCK + threadIdx.x; i < P.n; i += step) apply<Float, Op>(P, i, r);
  reduce_finish<N>(P, r, sh);
}

/// The end of every reduction: the block's sums of the threads' `r`
/// (through `sh`) become its partial; the last block to finish sums the
/// partials (`reduce_final`) into P.out.
template <int N>
__device__ __forceinline__ void reduce_finish(const BlasParams &P, const double *r, double (*sh)[RED_BLOCK]) {
#pragma unroll
  for (int k = 0; k < N; k++) sh[k][threadIdx.x] = r[k];
  block_sum<N>(sh);
  double *partials = reinterpret_cast<double *>(P.partials);
  __shared__ bool last;
  if (threadIdx.x == 0) {
#pragma unroll
    for (int k = 0; k < N; k++) partials[blockIdx.x * N + k] = sh[k][0];
    // Partials visible device-wide before the count says so.
    __threadfence();
    // atomicInc wraps to 0 after gridDim.x − 1: the counter is left at 0.
    last = atomicInc(reinterpret_cast<unsigned *>(P.counter), gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (last) reduce_final<N>(partials, gridDim.x, reinterpret_cast<double *>(P.out));
}

/// The last block sums `nblocks` partials of N numbers each, in a fixed
/// order, into out[0..N) (mapped host memory).
template <int N> __device__ __forceinline__ void reduce_final(const double *partials, int nblocks, double *out) {
  __shared__ double sh[N][RED_BLOCK];
  double r[N];
#pragma unroll
  for (int k = 0; k < N; k++) r[k] = 0.0;
  for (int b = threadIdx.x; b < nblocks; b += RED_BLOCK) {
#pragma unroll
    for (int k = 0; k < N; k++) r[k] += __ldcg(partials + b * N + k);  // from L2: other blocks wrote them
  }
#pragma unroll
  for (int k = 0; k < N; k++) sh[k][threadIdx.x] = r[k];
  block_sum<N>(sh);
  if (threadIdx.x < N) out[threadIdx.x] = sh[threadIdx.x][0];
  __threadfence_system();
}

#define LATSOL_MAP_ONE(name, S, Op) \
  extern "C" __global__ void name(const BlasParams P) { kernel_entry(); map_kernel<S, Op>(P); }
// LATSOL_RED_MIN_BLOCKS: the resident blocks per SM a reduction's register
// use must allow (site formats hold two or three sites of twelve complex
// doubles per thread); 1 unless a module sets it (blas_f16.cu) or an
// experiment does (LATSOL_NVRTC_OPTIONS).
#ifndef LATSOL_RED_MIN_BLOCKS
#define LATSOL_RED_MIN_BLOCKS 1
#endif
#define LATSOL_REDUCE_ONE(name, S, Op)                                                            \
  extern "C" __global__ void __launch_bounds__(RED_BLOCK, LATSOL_RED_MIN_BLOCKS) name(const BlasParams P) { kernel_entry(); \
    reduce_kernel<S, Op>(P);                                                                     \
  }

/// Every element-wise op and reduction of format `s` (storage type S); the
/// names are those of blas.rs (`MAPS`, `REDUCTIONS`).
#define LATSOL_BLAS_OPS(s, S)                                      \
  LATSOL_MAP_ONE(blas_ax_##s, S, Ax)                               \
  LATSOL_MAP_ONE(blas_axpy_##s, S, Axpy)                           \
  LATSOL_MAP_ONE(blas_xpay_##s, S, Xpay)                           \
  LATSOL_MAP_ONE(blas_axpby_##s, S, Axpby)                         \
  LATSOL_MAP_ONE(blas_caxpy_##s, S, Caxpy)                         \
  LATSOL_MAP_ONE(blas_cxpaypbz_##s, S, Cxpaypbz)                   \
  LATSOL_MAP_ONE(blas_xpay_into_##s, S, XpayInto)                  \
  LATSOL_REDUCE_ONE(blas_norm2_##s, S, Norm2)                      \
  LATSOL_REDUCE_ONE(blas_cdot_##s, S, Cdot)                        \
  LATSOL_REDUCE_ONE(blas_cdot_norm2_##s, S, CdotNorm2)             \
  LATSOL_REDUCE_ONE(blas_axpy_norm2_##s, S, AxpyNorm2)             \
  LATSOL_REDUCE_ONE(blas_caxpy_norm2_##s, S, CaxpyNorm2)           \
  LATSOL_REDUCE_ONE(blas_xmy_norm2_##s, S, XmyNorm2)               \
  LATSOL_REDUCE_ONE(blas_axpy_norm2_pr_##s, S, AxpyNorm2Pr)        \
  LATSOL_REDUCE_ONE(blas_bicgstab_update_##s, S, BicgstabUpdate)
/// MILC's heavy-quark residual sum Σ_x |r(x)|²/|x(x)|² (QUDA's
/// HeavyQuarkResidualNorm; a site with x = 0 adds nothing) over spinor
/// fields of format S, x (P.x) and r (P.y): P.n site slots, blocks of
/// P.stride sites (padding included: x is 0 there). One thread a slot at a
/// time, the block sums and the last block's total as every reduction.
/// (The colour-vector one is staggered_blas.cuh's.)
template <typename S> __device__ __forceinline__ void heavy_quark_sites(const BlasParams &P) {
  constexpr int n = SiteNc<S>::n;
  __shared__ double sh[1][RED_BLOCK];
  double acc[1] = {0.0};
  const long long step = (long long)gridDim.x * RED_BLOCK;
  for (long long i = (long long)blockIdx.x * RED_BLOCK + threadIdx.x; i < P.n; i += step) {
    z64 x[n], r[n];
    load_site<S>(P, P.x, i, x);
    load_site<S>(P, P.y, i, r);
    double xx = 0.0, rr = 0.0;
#pragma unroll
    for (int c = 0; c < n; c++) {
      xx += x[c].re * x[c].re + x[c].im * x[c].im;
      rr += r[c].re * r[c].re + r[c].im * r[c].im;
    }
    if (xx > 0.0) acc[0] += rr / xx;
  }
  reduce_finish<1>(P, acc, sh);
}
#define LATSOL_HEAVY_QUARK_SITES(name, S) \
  extern "C" __global__ void __launch_bounds__(RED_BLOCK) name(const BlasParams P) { kernel_entry(); heavy_quark_sites<S>(P); }

/// The ops of a spinor format and the sums of its fields into double and single.
#define LATSOL_BLAS_FORMAT(s, S)          \
  LATSOL_BLAS_OPS(s, S)                   \
  LATSOL_REDUCE_ONE(blas_cdot4_##s, S, Cdot4) \
  LATSOL_AXPY_MANY(f64, double, s, S)     \
  LATSOL_AXPY_MANY(f32, float, s, S)

// ---- sums of several sloppy fields into one precise field -------------------

/// Most fields one `axpy_many` launch adds (CG buffers eight directions).
#define MANY_MAX 8

/// Kernel arguments of `axpy_many`; mirrored by `ManyParams` in blas.rs.
struct ManyParams {
  u64 y;              // the sum, double or single
  u64 x[MANY_MAX];    // the fields added, one format
  double a[MANY_MAX]; // their coefficients
  long long stride;   // sites per parity block
  long long sites;    // sites in all (blocks · stride)
  int nx;             // fields used, 1..MANY_MAX
  int pad;
};
static_assert(sizeof(ManyParams) == 160, "ManyParams layout changed: update blas.rs");

/// y += Σ_j a_j x_j, one thread per site; each x_j converted to Hi and each
/// term rounded to Hi, as `copy` then `axpy` would (Backend::axpy_many).
template <typename Hi, typename Lo> __device__ __forceinline__ void axpy_many(const ManyParams &M) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= M.sites) return;
  constexpr int N = SiteNc<Hi>::n;
  static_assert(N == SiteNc<Lo>::n, "fields of one kind");
  BlasParams B;
  B.stride = M.stride;
  z64 y[N], x[N];
  load_site<Hi>(B, M.y, i, y);
#pragma unroll
  for (int j = 0; j < MANY_MAX; j++) {
    if (j < M.nx) {
      load_site<Lo>(B, M.x[j], i, x);
      const double a = M.a[j];
#pragma unroll
      for (int c = 0; c < N; c++) {
        y[c] = mk(round_to<Hi>(fma(a, round_to<Hi>(x[c].re), y[c].re)),
                  round_to<Hi>(fma(a, round_to<Hi>(x[c].im), y[c].im)));
      }
    }
  }
  store_site<Hi>(B, M.y, i, y);
}
#define LATSOL_AXPY_MANY(h, H, l, L) \
  extern "C" __global__ void blas_axpy_many_##h##_##l(const ManyParams M) { kernel_entry(); axpy_many<H, L>(M); }

// ---- site-structured ops: they need the spinor layout (core.cuh) ----------

/// Kernel arguments of `gamma5` and `convert`; mirrored in blas.rs.
struct SiteParams {
  u64 dst, src;
  int stride;  // sites per parity block
  int blocks;  // parity blocks in the field (1 or 2)
};
static_assert(sizeof(SiteParams) == 24, "SiteParams layout changed: update blas.rs");

__device__ __forceinline__ double2 neg(double2 v) { return make_double2(-v.x, -v.y); }
__device__ __forceinline__ float4 neg(float4 v) { return make_float4(-v.x, -v.y, -v.z, -v.w); }

/// out = γ5 in, UKQCD basis: (u, l) → (−l, −u); the spin pairs are the two
/// halves of a site's vectors.
template <typename Float> __device__ __forceinline__ void gamma5(const SiteParams &P) {
  typedef typename SpinorSoA<Float>::Vec V;
  constexpr int nv = SpinorSoA<Float>::vecs;
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long per_block = (long long)nv * P.stride;
  if (i >= per_block * P.blocks) return;
  const long long b = i / per_block;
  const long long r = i - b * per_block;
  const int j = int(r / P.stride);
  const int cb = int(r - (long long)j * P.stride);
  const int jp = j < nv / 2 ? j + nv / 2 : j - nv / 2;
  const V v = reinterpret_cast<const V *>(P.src)[b * per_block + (long long)jp * P.stride + cb];
  reinterpret_cast<V *>(P.dst)[i] = neg(v);
}

/// γ5 on a field of site items, one thread per site: the norm (exponent) is
/// unchanged, so the store reproduces every stored number.
template <typename T> __device__ __forceinline__ void gamma5_fixed(const SiteParams &P) {
  typedef Items<T> A;
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long long)P.stride * P.blocks) return;
  BlasParams B;
  B.stride = P.stride;
  z64 z[12], g[12];
  A::load(B, P.src, i, z);
#pragma unroll
  for (int c = 0; c < 6; c++) {
    g[c] = mk(-z[c + 6].re, -z[c + 6].im);
    g[c + 6] = mk(-z[c].re, -z[c].im);
  }
  A::store(B, P.dst, i, g);
}

/// The Schwarz boxes of a field (src/domains.rs): one thread per site zeroes
/// the sites outside the boxes of one colour, in place.
struct DomainParams {
  u64 field;
  int stride;        // sites per parity block
  int blocks;        // parity blocks in the field (1 or 2)
  int first_parity;  // the parity of the first block
  int colour;        // the boxes kept
  int dims[4];       // local extents
  int extent[4];     // a box's extents
  int origin[4];     // this rank's first site, globally
};
static_assert(sizeof(DomainParams) == 72, "DomainParams layout changed: update blas.rs");

template <typename S> __device__ __forceinline__ void domain_project(const DomainParams &P) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long long)P.stride * P.blocks) return;
  const int b = int(i / P.stride), cb = int(i - (long long)b * P.stride);
  const int vh = P.dims[0] * P.dims[1] * P.dims[2] * P.dims[3] / 2;
  if (cb >= vh) return;  // padding
  // Lattice::coords: two lexicographic sites share cb; x0 picks the parity.
  const int parity = (P.first_parity + b) & 1, lex = 2 * cb;
  int x[4];
  x[1] = (lex / P.dims[0]) % P.dims[1];
  x[2] = (lex / (P.dims[0] * P.dims[1])) % P.dims[2];
  x[3] = lex / (P.dims[0] * P.dims[1] * P.dims[2]);
  x[0] = lex % P.dims[0] + ((x[1] + x[2] + x[3] + parity) & 1);
  int colour = 0;
#pragma unroll
  for (int mu = 0; mu < 4; mu++) colour += (P.origin[mu] + x[mu]) / P.extent[mu];
  if ((colour & 1) == P.colour) return;
  BlasParams B;
  B.stride = P.stride;
  z64 z[SiteNc<S>::n];
#pragma unroll
  for (int c = 0; c < SiteNc<S>::n; c++) z[c] = mk(0.0, 0.0);
  store_site<S>(B, P.field, i, z);
}
#define LATSOL_DOMAIN_PROJECT(s, S) \
  extern "C" __global__ void domain_project_##s(const DomainParams P) { kernel_entry(); domain_project<S>(P); }

/// Any format to any other, one thread per site, through double.
template <typename S, typename D> __device__ __forceinline__ void convert_site(const SiteParams &P) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long long)P.stride * P.blocks) return;
  static_assert(SiteNc<S>::n == SiteNc<D>::n, "fields of one kind");
  BlasParams B;
  B.stride = P.stride;
  z64 z[SiteNc<S>::n];
  load_site<S>(B, P.src, i, z);
  store_site<D>(B, P.dst, i, z);
}
#define LATSOL_CONVERT(s, S, d, D) \
  extern "C" __global__ void convert_##s##_to_##d(const SiteParams P) { kernel_entry(); convert_site<S, D>(P); }

/// Precision conversion between the double (12 double2 per site) and the
/// single (6 float4 per site) layouts; one thread per float4.
template <bool to_single> __device__ __forceinline__ void convert(const SiteParams &P) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long per_block = 6LL * P.stride;
  if (i >= per_block * P.blocks) return;
  const long long b = i / per_block;
  const long long r = i - b * per_block;
  const long long j = r / P.stride;
  const long long cb = r - j * P.stride;
  const long long d0 = 2 * b * per_block + 2 * j * P.stride + cb;  // complex 2j in the double layout
  if (to_single) {
    const double2 *s = reinterpret_cast<const double2 *>(P.src);
    const double2 lo = s[d0], hi = s[d0 + P.stride];
    reinterpret_cast<float4 *>(P.dst)[i] = make_float4(float(lo.x), float(lo.y), float(hi.x), float(hi.y));
  } else {
    const float4 v = reinterpret_cast<const float4 *>(P.src)[i];
    double2 *d = reinterpret_cast<double2 *>(P.dst);
    d[d0] = make_double2(v.x, v.y);
    d[d0 + P.stride] = make_double2(v.z, v.w);
  }
}
