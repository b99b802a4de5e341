// core.cuh: the storage formats of latsol's device fields and the accessors
// that hide them, so that every kernel body is written once (QUDA's accessor
// idea; seed clark2010 §4.1, §4.5).
//
// Layout (structure of arrays within each parity block, for coalescing):
// - spinor, 24 reals per site, complex index c = 3 spin + color (UKQCD basis,
//   CONVENTIONS.md). Double: 12 double2 per site, element (c, cb) at
//   `c * stride + cb`. Single: 6 float4 per site, float4 j holding complex
//   numbers 2j and 2j + 1, at `j * stride + cb`. The spin pair (0, 1) is thus
//   the first half of the vectors and (2, 3) the second half: a temporal hop
//   reads exactly one half (seed clark2010 Appendix B).
// - gauge, reconstruct 18: per parity and direction 9 complex numbers per
//   link, row-major (`U[row][col]` at k = 3 row + col), stored as double2 or
//   float2 (18 reals do not fill float4s) at `((parity 4 + mu) 9 + k) stride + cb`.
// A full field is the even block followed by the odd block. `stride` is the
// site count of one block (room for padding later).
//
// Each accessor loads into / stores from `cplx<Float>` arrays indexed only by
// compile-time constants (unrolled loops), so nothing lands in local memory.
// Later formats (half, quarter, reconstruct 12/8) add accessors, not bodies.
#pragma once

typedef unsigned long long u64;

template <typename T> struct cplx {
  T re, im;
};

template <typename T> __device__ __forceinline__ cplx<T> mk(T re, T im) {
  cplx<T> z;
  z.re = re;
  z.im = im;
  return z;
}
template <typename T> __device__ __forceinline__ cplx<T> operator+(cplx<T> a, cplx<T> b) {
  return mk(a.re + b.re, a.im + b.im);
}
template <typename T> __device__ __forceinline__ cplx<T> operator-(cplx<T> a, cplx<T> b) {
  return mk(a.re - b.re, a.im - b.im);
}
template <typename T> __device__ __forceinline__ cplx<T> operator*(T s, cplx<T> a) {
  return mk(s * a.re, s * a.im);
}
/// i z
template <typename T> __device__ __forceinline__ cplx<T> times_i(cplx<T> a) {
  return mk(-a.im, a.re);
}
/// acc + a b
template <typename T> __device__ __forceinline__ cplx<T> cmadd(cplx<T> a, cplx<T> b, cplx<T> acc) {
  acc.re = fma(a.re, b.re, acc.re);
  acc.re = fma(-a.im, b.im, acc.re);
  acc.im = fma(a.re, b.im, acc.im);
  acc.im = fma(a.im, b.re, acc.im);
  return acc;
}
/// acc + conj(a) b
template <typename T> __device__ __forceinline__ cplx<T> cjmadd(cplx<T> a, cplx<T> b, cplx<T> acc) {
  acc.re = fma(a.re, b.re, acc.re);
  acc.re = fma(a.im, b.im, acc.re);
  acc.im = fma(a.re, b.im, acc.im);
  acc.im = fma(-a.im, b.re, acc.im);
  return acc;
}

// ---- loads and stores with cache hints ------------------------------------
// Neighbour spinors are read by up to eight sites: ordinary read-only loads
// (L1 and L2 keep them). Links and outputs are touched once: streaming
// ("evict first") so that they do not push the reused spinors out of L2.

// LATSOL_NO_STREAM_HINTS (an experiment switch) makes them ordinary accesses.
#ifdef LATSOL_NO_STREAM_HINTS
#define LATSOL_LDS __ldg
#define LATSOL_STS(p, v) (*(p) = (v))
#else
#define LATSOL_LDS __ldcs
#define LATSOL_STS __stcs
#endif
// LATSOL_LDR (an experiment switch) replaces the read-only load of reused data.
#ifndef LATSOL_LDR
#define LATSOL_LDR __ldg
#endif
__device__ __forceinline__ double2 ld_reuse(const double2 *p) { return LATSOL_LDR(p); }
__device__ __forceinline__ float4 ld_reuse(const float4 *p) { return LATSOL_LDR(p); }
__device__ __forceinline__ double2 ld_stream(const double2 *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ float2 ld_stream(const float2 *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ float4 ld_stream(const float4 *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ void st_stream(double2 *p, double2 v) { LATSOL_STS(p, v); }
__device__ __forceinline__ void st_stream(float4 *p, float4 v) { LATSOL_STS(p, v); }

// ---- spinor accessors -----------------------------------------------------

template <typename Float> struct SpinorSoA;

/// Double: one complex per double2.
template <> struct SpinorSoA<double> {
  typedef double2 Vec;
  static constexpr int vecs = 12;
  /// Loads complex numbers [c0, c0 + n) of site cb (c0, n even).
  template <int c0, int n, bool stream>
  static __device__ __forceinline__ void load(const Vec *p, int stride, int cb, cplx<double> *z) {
#pragma unroll
    for (int c = 0; c < n; c++) {
      const Vec *q = p + (c0 + c) * stride + cb;
      double2 v = stream ? ld_stream(q) : ld_reuse(q);
      z[c] = mk(v.x, v.y);
    }
  }
  static __device__ __forceinline__ void store(Vec *p, int stride, int cb, const cplx<double> *z) {
#pragma unroll
    for (int c = 0; c < 12; c++) st_stream(p + c * stride + cb, make_double2(z[c].re, z[c].im));
  }
};

/// Single: two complex numbers per float4.
template <> struct SpinorSoA<float> {
  typedef float4 Vec;
  static constexpr int vecs = 6;
  template <int c0, int n, bool stream>
  static __device__ __forceinline__ void load(const Vec *p, int stride, int cb, cplx<float> *z) {
#pragma unroll
    for (int c = 0; c < n; c += 2) {
      const Vec *q = p + ((c0 + c) / 2) * stride + cb;
      float4 v = stream ? ld_stream(q) : ld_reuse(q);
      z[c] = mk(v.x, v.y);
      z[c + 1] = mk(v.z, v.w);
    }
  }
  static __device__ __forceinline__ void store(Vec *p, int stride, int cb, const cplx<float> *z) {
#pragma unroll
    for (int j = 0; j < 6; j++)
      st_stream(p + j * stride + cb, make_float4(z[2 * j].re, z[2 * j].im, z[2 * j + 1].re, z[2 * j + 1].im));
  }
};

// ---- gauge accessors ------------------------------------------------------

/// A 3×3 complex matrix, row-major.
template <typename Float> struct Link {
  cplx<Float> m[9];
};

template <typename Float, int Recon> struct GaugeSoA;

/// Reconstruct 18: all 9 complex numbers stored, one per double2 / float2.
template <typename Float> struct Pair;
template <> struct Pair<double> { typedef double2 T; };
template <> struct Pair<float> { typedef float2 T; };

template <typename Float> struct GaugeSoA<Float, 18> {
  typedef typename Pair<Float>::T Vec;
  static __device__ __forceinline__ Link<Float> load(const Vec *g, int stride, int parity, int mu, int cb) {
    Link<Float> u;
    const Vec *q = g + ((parity * 4 + mu) * 9) * stride + cb;
#pragma unroll
    for (int k = 0; k < 9; k++) {
      Vec v = ld_stream(q + k * stride);
      u.m[k] = mk<Float>(v.x, v.y);
    }
    return u;
  }
};

/// U h for the two colour vectors of a half spinor.
template <typename Float>
__device__ __forceinline__ void link_mul(const Link<Float> &u, const cplx<Float> *h, cplx<Float> *out) {
#pragma unroll
  for (int s = 0; s < 2; s++) {
#pragma unroll
    for (int r = 0; r < 3; r++) {
      cplx<Float> acc = mk<Float>(0, 0);
#pragma unroll
      for (int c = 0; c < 3; c++) acc = cmadd(u.m[3 * r + c], h[3 * s + c], acc);
      out[3 * s + r] = acc;
    }
  }
}

/// U† h for the two colour vectors of a half spinor.
template <typename Float>
__device__ __forceinline__ void link_adj_mul(const Link<Float> &u, const cplx<Float> *h, cplx<Float> *out) {
#pragma unroll
  for (int s = 0; s < 2; s++) {
#pragma unroll
    for (int r = 0; r < 3; r++) {
      cplx<Float> acc = mk<Float>(0, 0);
#pragma unroll
      for (int c = 0; c < 3; c++) acc = cjmadd(u.m[3 * c + r], h[3 * s + c], acc);
      out[3 * s + r] = acc;
    }
  }
}
