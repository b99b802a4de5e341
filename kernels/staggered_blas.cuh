// staggered_blas.cuh: the vector algebra of blas.cuh on colour-vector
// fields (3 complex numbers a site, staggered_dslash.cuh `ColourVector`).
// Element-wise ops and reductions on double and single colour vectors are
// the flat kernels of blas_f64.cu / blas_f32.cu (a flat array of reals is a
// flat array whatever its sites); the fixed-point formats, whose site norm
// scales three numbers rather than twelve, and the site-structured kernels
// (the sums of sloppy fields into a precise one, the conversions) are
// stamped out here for the tags `ColourSite<S>`.
#pragma once
#include "blas.cuh"
#include "staggered_dslash.cuh"

/// Tag of the colour-vector format of storage type S.
template <typename S> struct ColourSite {};
template <typename S> struct SiteNc<ColourSite<S>> {
  static constexpr int n = 3;
};
template <> struct RoundsToSingle<ColourSite<float>> {
  static constexpr bool value = true;
};

/// Double and single: one complex number an item (double2 / float2).
template <typename S> struct FlatColourItems {
  typedef typename Stag<S>::V V;
  static constexpr int nc = 1;
  static __device__ __forceinline__ void load(const BlasParams &, u64 p, long long i, z64 *z) {
    const V v = reinterpret_cast<const V *>(p)[i];
    z[0] = mk<double>(v.x, v.y);
  }
  /// Stores, and leaves in z the values as rounded to S.
  static __device__ __forceinline__ void store(const BlasParams &, u64 p, long long i, z64 *z) {
    V v;
    v.x = z[0].re;
    v.y = z[0].im;
    reinterpret_cast<V *>(p)[i] = v;
    z[0] = mk<double>(v.x, v.y);
  }
};
template <> struct Items<ColourSite<double>> : FlatColourItems<double> {};
template <> struct Items<ColourSite<float>> : FlatColourItems<float> {};

/// Half and quarter: one site an item, its norm computed in double as the
/// CPU backend computes it (src/backend/cpu/storage.rs), so stored fields
/// are the CPU's bit for bit.
template <typename T> struct FixedColourItems {
  typedef ColourVector<T> CV;
  typedef typename CV::V V;
  static constexpr int nc = 3;
  static __device__ __forceinline__ void load(const BlasParams &P, u64 p, long long i, z64 *z) {
    int cb;
    const V *q = site_block<V>(P, p, i, CV::site_bytes, cb);
    CV::load(q, int(P.stride), cb, z);
  }
  static __device__ __forceinline__ void store(const BlasParams &P, u64 p, long long i, z64 *z) {
    int cb;
    V *q = site_block<V>(P, p, i, CV::site_bytes, cb);
    CV::store(q, int(P.stride), cb, z);
  }
};
template <> struct Items<ColourSite<short>> : FixedColourItems<short> {};
template <> struct Items<ColourSite<signed char>> : FixedColourItems<signed char> {};
/// The packed formats: one site an item likewise, exact in double.
template <> struct Items<ColourSite<packed20>> : FixedColourItems<packed20> {};
template <> struct Items<ColourSite<packed30>> : FixedColourItems<packed30> {};
/// x̂ of the widened BiCGstab update beside colour vectors: single ones.
template <typename S> struct SingleOf<ColourSite<S>> {
  typedef ColourSite<float> T;
};

/// The sums of fields of format `l` into double (`s64`) and single (`s32`)
/// colour vectors.
#define LATSOL_STAGGERED_AXPY_MANY(l, L)               \
  LATSOL_AXPY_MANY(s64, ColourSite<double>, l, L)      \
  LATSOL_AXPY_MANY(s32, ColourSite<float>, l, L)

/// The vector algebra of a packed colour-vector format `s` (tag T): every
/// op and reduction, the sums of its fields into double and single, and the
/// conversions to and from the IEEE and fixed-point colour formats.
#define LATSOL_STAGGERED_PACKED_BLAS(s, T)                            \
  LATSOL_BLAS_OPS(s, ColourSite<T>)                                   \
  LATSOL_STAGGERED_AXPY_MANY(s, ColourSite<T>)                        \
  LATSOL_CONVERT(s, ColourSite<T>, s64, ColourSite<double>)           \
  LATSOL_CONVERT(s, ColourSite<T>, s32, ColourSite<float>)            \
  LATSOL_CONVERT(s, ColourSite<T>, s16, ColourSite<short>)            \
  LATSOL_CONVERT(s, ColourSite<T>, s8, ColourSite<signed char>)       \
  LATSOL_CONVERT(s64, ColourSite<double>, s, ColourSite<T>)           \
  LATSOL_CONVERT(s32, ColourSite<float>, s, ColourSite<T>)            \
  LATSOL_CONVERT(s16, ColourSite<short>, s, ColourSite<T>)            \
  LATSOL_CONVERT(s8, ColourSite<signed char>, s, ColourSite<T>)

/// MILC's heavy-quark residual sum Σ_x |r(x)|²/|x(x)|² (QUDA's
/// HeavyQuarkResidualNorm; a site with x = 0 adds nothing) over double or
/// single colour-vector fields x (P.x) and r (P.y): P.n site slots, blocks
/// of P.stride sites (padding included: x is 0 there). One thread a slot
/// at a time, the block sums and the last block's total as every
/// reduction (`reduce_finish`).
template <typename S> __device__ __forceinline__ void heavy_quark_kernel(const BlasParams &P) {
  typedef typename Stag<S>::V V;
  __shared__ double sh[1][RED_BLOCK];
  double acc[1] = {0.0};
  const V *x = reinterpret_cast<const V *>(P.x);
  const V *r = reinterpret_cast<const V *>(P.y);
  const long long step = (long long)gridDim.x * RED_BLOCK;
  for (long long i = (long long)blockIdx.x * RED_BLOCK + threadIdx.x; i < P.n; i += step) {
    const long long base = (i / P.stride) * 3 * P.stride + i % P.stride;
    double xx = 0.0, rr = 0.0;
#pragma unroll
    for (int c = 0; c < 3; c++) {
      const V a = x[base + c * P.stride], b = r[base + c * P.stride];
      xx += double(a.x) * double(a.x) + double(a.y) * double(a.y);
      rr += double(b.x) * double(b.x) + double(b.y) * double(b.y);
    }
    if (xx > 0.0) acc[0] += rr / xx;
  }
  reduce_finish<1>(P, acc, sh);
}
#define LATSOL_HEAVY_QUARK(name, S) \
  extern "C" __global__ void __launch_bounds__(RED_BLOCK) name(const BlasParams P) { kernel_entry(); heavy_quark_kernel<S>(P); }
