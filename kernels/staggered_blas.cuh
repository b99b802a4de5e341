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

/// The sums of fields of format `l` into double (`s64`) and single (`s32`)
/// colour vectors.
#define LATSOL_STAGGERED_AXPY_MANY(l, L)               \
  LATSOL_AXPY_MANY(s64, ColourSite<double>, l, L)      \
  LATSOL_AXPY_MANY(s32, ColourSite<float>, l, L)
