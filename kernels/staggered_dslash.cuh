// staggered_dslash.cuh: the improved (and naive) staggered hopping term on one
// parity (docs/conventions.md, "The staggered operator"):
//
//   out[p] = a · Σ_μ [ F_μ(x) χ(x+μ̂) − F_μ(x−μ̂)† χ(x−μ̂) + L_μ(x) χ(x+3μ̂) − L_μ(x−3μ̂)† χ(x−3μ̂) ]
//            + b · x[p]
//
// with the staggered phases, boundary signs and Naik coefficient in the links
// (every hop wraps periodically); no long terms when `lng` is 0 (naive). One
// thread per output site. The semantics of `Backend::staggered_dslash` and the
// CPU reference src/backend/cpu/staggered.rs.
//
// Layout: a colour vector field, per parity block, complex c (0..2) of site cb
// at `c * stride + cb` (double2 in double, float2 in single); links 18 reals,
// the layout of reconstruct-18 gauge links (core.cuh): complex k = 3 row + col
// of link (parity, mu) at `((parity 4 + mu) 9 + k) gauge_stride + cb`.
#pragma once
#include "core.cuh"

/// Kernel arguments; mirrored by `StaggeredParams` in src/backend/cuda/staggered.rs.
struct StaggeredParams {
  u64 out;  // output parity block
  u64 in;   // input parity block (the other parity)
  u64 x;    // xpay parity block, or 0
  u64 fat;  // fat (or thin) links, both parities
  u64 lng;  // long links, both parities, or 0
  double a, b;
  double long_scale;  // |s| of long links stored in 13 or 9 reals
  int dims[4];
  int parity;
  int vh;
  int stride;
  int gauge_stride;
};
static_assert(sizeof(StaggeredParams) == 96, "StaggeredParams layout changed: update staggered.rs");

template <typename R> struct StagVec;
template <> struct StagVec<double> {
  typedef double2 V;
};
template <> struct StagVec<float> {
  typedef float2 V;
};

template <typename R>
__device__ __forceinline__ void load_vector(const StaggeredParams &P, int cb, cplx<R> *v) {
  typedef typename StagVec<R>::V V;
  const V *in = reinterpret_cast<const V *>(P.in);
#pragma unroll
  for (int c = 0; c < 3; c++) {
    V t = __ldg(in + c * P.stride + cb);
    v[c] = mk<R>(t.x, t.y);
  }
}

template <typename R>
__device__ __forceinline__ void load_link(u64 links, int gs, int parity, int mu, int cb, cplx<R> *u) {
  typedef typename StagVec<R>::V V;
  const V *l = reinterpret_cast<const V *>(links) + ((parity * 4 + mu) * 9) * gs + cb;
#pragma unroll
  for (int k = 0; k < 9; k++) {
    V t = LATSOL_LDS(l + k * gs);
    u[k] = mk<R>(t.x, t.y);
  }
}

/// A long link stored in LR = 13 or 9 reals, rebuilt and scaled by `scale`.
template <typename R, int LR>
__device__ __forceinline__ void load_long(u64 links, int gs, int parity, int mu, int cb, R scale, cplx<R> *u) {
  const R *l = reinterpret_cast<const R *>(links) + ((parity * 4 + mu) * LR) * gs + cb;
  R v[LR];
#pragma unroll
  for (int k = 0; k < LR; k++) v[k] = LATSOL_LDS(l + k * gs);
  R s, c;
  if (LR == 13) {
#pragma unroll
    for (int k = 0; k < 6; k++) u[k] = mk<R>(v[2 * k], v[2 * k + 1]);
    sincospi_(v[12], &s, &c);
    const cplx<R> e = mk<R>(c, s), zero = mk<R>(0, 0);
#pragma unroll
    for (int k = 0; k < 3; k++) {
      const int i = (k + 1) % 3, j = (k + 2) % 3;
      // (row0 × row1)*_k = conj(a_i b_j − a_j b_i)
      const cplx<R> x = cmadd(u[i], u[3 + j], zero) - cmadd(u[j], u[3 + i], zero);
      const cplx<R> cx = mk<R>(x.re, -x.im);
      u[6 + k] = cmadd(e, cx, zero);
    }
#pragma unroll
    for (int k = 0; k < 9; k++) u[k] = scale * u[k];
  } else {
    const cplx<R> z[4] = {mk<R>(v[0], v[1]), mk<R>(v[2], v[3]), mk<R>(v[4], v[5]), mk<R>(v[6], v[7])};
    Link<R> w;
    rebuild8<R>(z, w);
    sincospi_(v[8] / R(3), &s, &c);
    const cplx<R> e = mk<R>(scale * c, scale * s), zero = mk<R>(0, 0);
#pragma unroll
    for (int k = 0; k < 9; k++) u[k] = cmadd(e, w.m[k], zero);
  }
}

/// acc += U v (sign +1) or acc −= U† v (sign −1).
template <typename R, int sign>
__device__ __forceinline__ void hop(const cplx<R> *u, const cplx<R> *v, cplx<R> *acc) {
#pragma unroll
  for (int r = 0; r < 3; r++) {
#pragma unroll
    for (int c = 0; c < 3; c++) {
      if (sign > 0) {
        acc[r] = cmadd(u[3 * r + c], v[c], acc[r]);
      } else {
        // −conj(u[c][r]) v[c]
        cplx<R> t = cjmadd(u[3 * c + r], v[c], mk<R>(0, 0));
        acc[r] = acc[r] - t;
      }
    }
  }
}

__device__ __forceinline__ int cb_index(const int *d, int x0, int x1, int x2, int x3) {
  return (x0 + d[0] * (x1 + d[1] * (x2 + d[2] * x3))) >> 1;
}

template <typename R, int LR>
__device__ __forceinline__ void staggered_dslash_body(const StaggeredParams &P) {
  const int cb = blockIdx.x * blockDim.x + threadIdx.x;
  if (cb >= P.vh) return;
  const int *d = P.dims;
  // Coordinates of checkerboard site cb of the output parity.
  const int lex = 2 * cb;
  int x[4];
  x[1] = (lex / d[0]) % d[1];
  x[2] = (lex / (d[0] * d[1])) % d[2];
  x[3] = lex / (d[0] * d[1] * d[2]);
  x[0] = lex % d[0] + ((x[1] + x[2] + x[3] + P.parity) & 1);
  const int q = 1 - P.parity;
  cplx<R> acc[3] = {mk<R>(0, 0), mk<R>(0, 0), mk<R>(0, 0)};
  cplx<R> u[9], v[3];
#pragma unroll
  for (int mu = 0; mu < 4; mu++) {
#pragma unroll
    for (int hops = 1; hops <= 3; hops += 2) {
      const u64 links = hops == 1 ? P.fat : P.lng;
      if (links == 0) continue;
      int y[4] = {x[0], x[1], x[2], x[3]};
      y[mu] = (x[mu] + hops) % d[mu];
      if (hops == 3 && LR != 18) {
        load_long<R, LR>(links, P.gauge_stride, P.parity, mu, cb, R(P.long_scale), u);
      } else {
        load_link<R>(links, P.gauge_stride, P.parity, mu, cb, u);
      }
      load_vector<R>(P, cb_index(d, y[0], y[1], y[2], y[3]), v);
      hop<R, 1>(u, v, acc);
      y[mu] = (x[mu] - hops + 3 * d[mu]) % d[mu];
      const int b = cb_index(d, y[0], y[1], y[2], y[3]);
      if (hops == 3 && LR != 18) {
        load_long<R, LR>(links, P.gauge_stride, q, mu, b, R(P.long_scale), u);
      } else {
        load_link<R>(links, P.gauge_stride, q, mu, b, u);
      }
      load_vector<R>(P, b, v);
      hop<R, -1>(u, v, acc);
    }
  }
  typedef typename StagVec<R>::V V;
  V *out = reinterpret_cast<V *>(P.out);
  const V *xp = reinterpret_cast<const V *>(P.x);
#pragma unroll
  for (int c = 0; c < 3; c++) {
    R re = R(P.a) * acc[c].re, im = R(P.a) * acc[c].im;
    if (P.x) {
      V t = LATSOL_LDS(xp + c * P.stride + cb);
      re += R(P.b) * t.x;
      im += R(P.b) * t.y;
    }
    V o;
    o.x = re;
    o.y = im;
    out[c * P.stride + cb] = o;
  }
}

/// Flat conversions of colour-vector fields between double and single (their
/// layouts map real k to real k).
struct ConvertParams {
  u64 dst, src;
  long long n;  // reals
};
static_assert(sizeof(ConvertParams) == 24, "ConvertParams layout changed: update staggered.rs");
