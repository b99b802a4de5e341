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
// at `c * stride + cb` (double2, float2 or char2; quarter's norms after the
// vectors), half a site in one 16-byte word at `cb` (`ColourVector`); links of 18 reals
// (row-major, complex k = 3 row + col) in wide vectors and one complex number
// (`load_link`), long links of 13 or 9 reals in wide vectors and the phase
// alone (`load_long`), blocks `[parity][mu]` of `gauge_stride` sites.
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
  double fat_fixed;   // fixed-point links: value = stored · fat_fixed (1 otherwise)
  double long_fixed;  // the same for the long links
  int dims[4];
  int parity;
  int vh;
  int stride;
  int gauge_stride;
  int interior_cut;  // on a cut lattice, bit mu where mu is cut: the launch computes the interior sites only
  int depth;         // the longest hop (1, or 3 with long links): sites within it of a cut face are edges
  unsigned div_magic[3];  // n / dims[mu] = divide(n, div_magic[mu], div_shift[mu]), mu < 3 (core.cuh)
  unsigned div_shift[3];
};
static_assert(sizeof(StaggeredParams) == 144, "StaggeredParams layout changed: update staggered.rs");

/// The storage formats of colour vectors and staggered links, by storage
/// type S: double2 / float2 per complex number in double and single; 16-bit
/// / 8-bit integers in half and quarter, vectors relative to a per-site f32
/// norm (the largest |real| of the site: half's beside its six integers in
/// one 16-byte word, quarter's after the block's 3 `stride` char2 vectors;
/// `site_bytes` a site) and links relative to one scale per link
/// field (`fat_fixed`, `long_fixed`: the largest stored magnitude over MAX,
/// as the CPU backend's src/backend/cpu/links.rs stores them). Arithmetic in
/// R: double for double, single otherwise.
///
/// The packed formats (tags packed20, packed30; seed clark2022 §4, Listings
/// 2 and 3) store a site's 6 reals and one shared exponent in 4 or 6 words
/// (`ColourVector` below) beside links of another type (`Link`): 16-bit
/// fixed point (short) beside 20-bit vectors, arithmetic in single; 32-bit
/// fixed point (int) beside 30-bit ones, arithmetic in double.
template <typename S> struct Stag;
template <> struct Stag<double> {
  typedef double R;
  typedef double2 V;
  typedef double Link;
  static constexpr bool fixed = false;
  static constexpr float MAX = 1.0f;
};
template <> struct Stag<float> {
  typedef float R;
  typedef float2 V;
  typedef float Link;
  static constexpr bool fixed = false;
  static constexpr float MAX = 1.0f;
};
template <> struct Stag<short> {
  typedef float R;
  typedef short2 V;
  typedef short Link;
  static constexpr bool fixed = true;
  static constexpr float MAX = 32767.0f;
};
template <> struct Stag<signed char> {
  typedef float R;
  typedef char2 V;
  typedef signed char Link;
  static constexpr bool fixed = true;
  static constexpr float MAX = 127.0f;
};
/// 32-bit fixed-point links (beside 30-bit colour vectors only).
template <> struct Stag<int> {
  typedef double R;
  typedef int2 V;
  typedef int Link;
  static constexpr bool fixed = true;
};
template <> struct Stag<packed20> {
  typedef float R;
  typedef uint4 V;
  typedef short Link;
  static constexpr bool fixed = false;  // the vectors: values, each site's exponent shared
};
template <> struct Stag<packed30> {
  typedef double R;
  typedef uint2 V;
  typedef int Link;
  static constexpr bool fixed = false;
};

/// Colour vectors of storage S: load and store site cb of a parity block
/// (double, single, quarter; half and the packed formats below).
template <typename S> struct ColourVector {
  typedef typename Stag<S>::V V;
  typedef typename Stag<S>::R R;
  /// Bytes of one site in a parity block (its vectors and, fixed point, its norm).
  static constexpr long long site_bytes = 3 * sizeof(V) + (Stag<S>::fixed ? sizeof(float) : 0);
  static __device__ __forceinline__ const float *norms(const V *p, int stride) {
    return reinterpret_cast<const float *>(p + 3 * stride);
  }
  /// Neighbours are read by up to 16 sites: read-only loads that L1 and L2 keep.
  /// In double (the vector algebra, bit for bit the CPU's) the scale is
  /// norm / MAX; in single (the hopping term) norm · (1 / MAX), a multiply
  /// where a division would cost more than the rest of the load.
  template <typename A> static __device__ __forceinline__ void load(const V *p, int stride, int cb, cplx<A> *v) {
    const A s = load_deferred(p, stride, cb, v);
    if constexpr (Stag<S>::fixed) {
#pragma unroll
      for (int c = 0; c < 3; c++) v[c] = s * v[c];
    }
  }
  /// Site cb as stored (the integers of the fixed-point formats, the values
  /// otherwise) and the factor that makes them values (the site's norm / MAX,
  /// or 1): the hopping term applies it once to a hop's result (`add_hop`).
  template <typename A> static __device__ __forceinline__ A load_deferred(const V *p, int stride, int cb, cplx<A> *v) {
#pragma unroll
    for (int c = 0; c < 3; c++) {
      if constexpr (Stag<S>::fixed && same_type<A, float>::value) {
        // Their bits, converted exactly without the conversion unit (core.cuh).
        typedef typename Fixed<S>::Raw2 W;
        float f[2];
        Fixed<S>::to_float(__ldg(reinterpret_cast<const W *>(p + c * stride + cb)), f);
        v[c] = mk<A>(f[0], f[1]);
      } else {
        const V t = __ldg(p + c * stride + cb);
        v[c] = mk<A>(A(t.x), A(t.y));
      }
    }
    if constexpr (!Stag<S>::fixed) {
      return A(1);
    } else if constexpr (same_type<A, float>::value) {
      return __ldg(norms(p, stride) + cb) * (1.0f / Stag<S>::MAX);
    } else {
      return A(__ldg(norms(p, stride) + cb)) / A(Stag<S>::MAX);
    }
  }
  /// Stores site cb (the norm computed in A, rounding to nearest as the CPU
  /// backend does) and leaves in v the values as stored.
  template <typename A> static __device__ __forceinline__ void store(V *p, int stride, int cb, cplx<A> *v) {
    if constexpr (Stag<S>::fixed) {
      const SiteScale<A> s = site_scale<3>(v, Stag<S>::MAX);
      LATSOL_STS(const_cast<float *>(norms(p, stride)) + cb, s.norm);
#pragma unroll
      for (int c = 0; c < 3; c++) {
        const A re = rint(v[c].re * s.to_int), im = rint(v[c].im * s.to_int);
        V t;
        t.x = re;
        t.y = im;
        LATSOL_STS(p + c * stride + cb, t);
        v[c] = mk<A>(re * s.back, im * s.back);
      }
    } else {
#pragma unroll
      for (int c = 0; c < 3; c++) {
        V t;
        t.x = v[c].re;
        t.y = v[c].im;
        LATSOL_STS(p + c * stride + cb, t);
        v[c] = mk<A>(A(t.x), A(t.y));
      }
    }
  }
};

/// Half colour vectors: a site in one 16-byte word, its six 16-bit integers
/// (colour 0 re, im, colour 1 re, im, colour 2 re, im) then its f32 norm, so
/// that a neighbour is one load where three vector rows and a norm row were
/// four (the hopping term reads 16 neighbours a site; QUDA keeps its half
/// staggered vectors with the norm beside them too,
/// include/color_spinor_field_order.h). Values, norms and rounding are the
/// generic fixed-point ones above (the CPU's, src/backend/cpu/storage.rs).
template <> struct ColourVector<short> {
  typedef uint4 V;
  typedef float R;
  static constexpr long long site_bytes = sizeof(V);
  template <typename A> static __device__ __forceinline__ void load(const V *p, int stride, int cb, cplx<A> *v) {
    const A s = load_deferred(p, stride, cb, v);
#pragma unroll
    for (int c = 0; c < 3; c++) v[c] = s * v[c];
  }
  /// The integers and the factor norm / MAX (`ColourVector::load_deferred`).
  template <typename A> static __device__ __forceinline__ A load_deferred(const V *p, int, int cb, cplx<A> *v) {
    const V t = __ldg(p + cb);
    const unsigned w[3] = {t.x, t.y, t.z};
#pragma unroll
    for (int c = 0; c < 3; c++) {
      if constexpr (same_type<A, float>::value) {
        float f[2];
        Fixed<short>::to_float(w[c], f);
        v[c] = mk<A>(f[0], f[1]);
      } else {
        v[c] = mk<A>(A(short(w[c] & 0xffffu)), A(short(w[c] >> 16)));
      }
    }
    const float n = __uint_as_float(t.w);
    if constexpr (same_type<A, float>::value) {
      return n * (1.0f / Stag<short>::MAX);
    } else {
      return A(n) / A(Stag<short>::MAX);
    }
  }
  template <typename A> static __device__ __forceinline__ void store(V *p, int, int cb, cplx<A> *v) {
    const SiteScale<A> s = site_scale<3>(v, Stag<short>::MAX);
    unsigned w[3];
#pragma unroll
    for (int c = 0; c < 3; c++) {
      const A re = rint(v[c].re * s.to_int), im = rint(v[c].im * s.to_int);
      w[c] = unsigned((unsigned short)short(re)) | (unsigned((unsigned short)short(im)) << 16);
      v[c] = mk<A>(re * s.back, im * s.back);
    }
    LATSOL_STS(p + cb, make_uint4(w[0], w[1], w[2], __float_as_uint(s.norm)));
  }
};

/// Packed colour vectors (`Stag<packed20>`, `Stag<packed30>`): a site's
/// words as the CPU stores them (src/format/packed.rs, 6 components of B
/// bits and the exponent byte), transposed vector by vector: 20-bit one
/// uint4 a site at `cb`, 30-bit three uint2 at `j stride + cb`; values and
/// rounding the CPU's (`pack_site`, `unpack_site` of core.cuh).
template <int B> struct PackedColourVec;
template <> struct PackedColourVec<20> {
  typedef uint4 V;
};
template <> struct PackedColourVec<30> {
  typedef uint2 V;
};
template <int B> struct PackedColour {
  typedef typename PackedColourVec<B>::V V;
  static constexpr int words = (6 * B + 8 + 31) / 32, per_vec = sizeof(V) / 4, vecs = words / per_vec;
  static constexpr long long site_bytes = 4LL * words;
  template <typename A> static __device__ __forceinline__ void load(const V *p, int stride, int cb, cplx<A> *v) {
    unsigned w[words];
#pragma unroll
    for (int j = 0; j < vecs; j++) unpack(__ldg(p + j * stride + cb), w + j * per_vec);
    unpack_site<B, 3, 0, 3>(w, v);
  }
  /// The values, and 1 (`ColourVector::load_deferred`).
  template <typename A> static __device__ __forceinline__ A load_deferred(const V *p, int stride, int cb, cplx<A> *v) {
    load(p, stride, cb, v);
    return A(1);
  }
  template <typename A> static __device__ __forceinline__ void store(V *p, int stride, int cb, cplx<A> *v) {
    unsigned w[words];
    pack_site<B, 3>(v, w);
#pragma unroll
    for (int j = 0; j < vecs; j++) LATSOL_STS(p + j * stride + cb, pack(w + j * per_vec));
  }
  static __device__ __forceinline__ void unpack(uint4 t, unsigned *w) {
    w[0] = t.x;
    w[1] = t.y;
    w[2] = t.z;
    w[3] = t.w;
  }
  static __device__ __forceinline__ void unpack(uint2 t, unsigned *w) {
    w[0] = t.x;
    w[1] = t.y;
  }
  static __device__ __forceinline__ V pack(const unsigned *w) {
    V t;
    if constexpr (B == 20) {
      t = make_uint4(w[0], w[1], w[2], w[3]);
    } else {
      t = make_uint2(w[0], w[1]);
    }
    return t;
  }
};
template <> struct ColourVector<packed20> : PackedColour<20> {};
template <> struct ColourVector<packed30> : PackedColour<30> {};

/// The wide loads of compressed long links: W reals a vector (16 bytes in
/// double and single, 8 in half, 4 in quarter).
template <typename S> struct LongVec;
template <> struct LongVec<double> {
  typedef double2 V;
  static constexpr int W = 2;
  static __device__ __forceinline__ void unpack(V t, double *v) {
    v[0] = t.x;
    v[1] = t.y;
  }
};
/// Four reals a vector (float4, short4, char4), unpacked to single.
template <typename V4> struct FourLongVec {
  typedef V4 V;
  static constexpr int W = 4;
  static __device__ __forceinline__ void unpack(V t, float *v) {
    v[0] = float(t.x);
    v[1] = float(t.y);
    v[2] = float(t.z);
    v[3] = float(t.w);
  }
};
/// Four fixed-point reals as their bits, converted exactly (core.cuh).
template <typename T> struct FixedLongVec {
  typedef typename Fixed<T>::Raw4 V;
  static constexpr int W = 4;
  static __device__ __forceinline__ void unpack(V t, float *v) { Fixed<T>::to_float(t, v); }
};
template <> struct LongVec<float> : FourLongVec<float4> {};
/// Four 32-bit fixed-point reals, converted to double (exact).
template <> struct LongVec<int> {
  typedef int4 V;
  static constexpr int W = 4;
  static __device__ __forceinline__ void unpack(V t, double *v) {
    v[0] = double(t.x);
    v[1] = double(t.y);
    v[2] = double(t.z);
    v[3] = double(t.w);
  }
};
template <> struct LongVec<short> : FixedLongVec<short> {};
template <> struct LongVec<signed char> : FixedLongVec<signed char> {};

/// Whether the hopping term of storage S defers scales: in the fixed-point
/// formats (links, and half and quarter vectors) a hop is computed on the
/// stored numbers and the link's and the vector's scales are applied once,
/// to the hop's 6 reals, rather than to the link's 18 and the vector's 6
/// (the product is bilinear; QUDA defers the same way, and the Wilson term's
/// `DeferredScale`, wilson_dslash.cuh).
template <typename S> struct Deferred {
  static constexpr bool value = Stag<S>::fixed || Stag<typename Stag<S>::Link>::fixed;
};

/// A link of 18 reals as stored, and the factor that makes them values
/// (`fixed` in fixed point, 1 otherwise). Layout of one (parity,
/// mu) block: reals 0 .. 15 in vectors of W (`LongVec`), vector j of site
/// cb at `j gauge_stride + cb`, then the last complex number (reals 16, 17)
/// as one V at `16 gauge_stride + 2 cb`, counted in reals
/// (src/backend/cuda/staggered.rs, `fat_index`): wide loads in single,
/// half and quarter; in double the layout of reconstruct-18 gauge links.
template <typename S>
__device__ __forceinline__ typename Stag<S>::R load_link(u64 links, int gs, int parity, int mu, int cb,
                                                         typename Stag<S>::R fixed, cplx<typename Stag<S>::R> *u) {
  typedef typename Stag<S>::Link Ls;
  typedef typename Stag<Ls>::V V;
  typedef typename Stag<S>::R R;
  typedef LongVec<Ls> L;
  const Ls *base = reinterpret_cast<const Ls *>(links) + ((parity * 4 + mu) * 18) * gs;
  const typename L::V *vecs = reinterpret_cast<const typename L::V *>(base);
  R v[18];
#pragma unroll
  for (int j = 0; j < 16 / L::W; j++) L::unpack(LATSOL_LDS(vecs + j * gs + cb), v + j * L::W);
  const V t = LATSOL_LDS(reinterpret_cast<const V *>(base + 16 * gs) + cb);
  v[16] = R(t.x);
  v[17] = R(t.y);
#pragma unroll
  for (int k = 0; k < 9; k++) u[k] = mk<R>(v[2 * k], v[2 * k + 1]);
  return Stag<Ls>::fixed ? fixed : R(1);
}

/// A long link stored in LR = 13 or 9 reals, rebuilt; returns the factor
/// still to apply (`Deferred`: `fixed · scale` for 13 reals, whose first
/// two rows stay as stored, `scale` for 9, whose rebuild wants the values),
/// or 1 with the link scaled here. Layout of one (parity, mu) block: reals
/// 0 .. LR−1 (12 or 8) in vectors of W, vector j of site cb at
/// `j gauge_stride + cb`, then the last real (the phase) at
/// `(LR − 1) gauge_stride + cb`, counted in reals
/// (src/backend/cuda/staggered.rs, `long_index`).
template <typename S, int LR>
__device__ __forceinline__ typename Stag<S>::R load_long(u64 links, int gs, int parity, int mu, int cb,
                                                         typename Stag<S>::R fixed, typename Stag<S>::R scale,
                                                         cplx<typename Stag<S>::R> *u) {
  typedef typename Stag<S>::Link Ls;
  typedef typename Stag<S>::R R;
  typedef LongVec<Ls> L;
  const Ls *base = reinterpret_cast<const Ls *>(links) + ((parity * 4 + mu) * LR) * gs;
  const typename L::V *vecs = reinterpret_cast<const typename L::V *>(base);
  R v[LR];
#pragma unroll
  for (int j = 0; j < (LR - 1) / L::W; j++) L::unpack(LATSOL_LDS(vecs + j * gs + cb), v + j * L::W);
  v[LR - 1] = R(LATSOL_LDS(base + (LR - 1) * gs + cb));
  constexpr bool deferred = Deferred<S>::value;
  // Links of 16 bits or fewer: their phases need no more than the special
  // function unit's sine and cosine.
  constexpr bool approx = same_type<Ls, short>::value || same_type<Ls, signed char>::value;
  if (!Stag<Ls>::fixed) fixed = R(1);
  R s, c;
  if (LR == 13) {
    // Stored in fixed point like the rows: phase = fixed · v[12]; the
    // rows' values are fixed · (A, B).
    const R phase = Stag<Ls>::fixed ? v[12] * fixed : v[12];
#pragma unroll
    for (int k = 0; k < 6; k++) u[k] = mk<R>(v[2 * k], v[2 * k + 1]);
    sincospi_link<approx>(phase, &s, &c);
    // Row 2 = e conj(a × b) = (fixed e) conj(A × B) for the stored rows A, B:
    // with the factor fixed deferred, (fixed e) conj(A × B) beside A, B.
    const cplx<R> e = mk<R>(fixed * c, fixed * s);
#pragma unroll
    for (int k = 0; k < 3; k++) {
      const int i = (k + 1) % 3, j = (k + 2) % 3;
      const cplx<R> x = cmadd(mk<R>(-u[j].re, -u[j].im), u[3 + i], cprod(u[i], u[3 + j]));
      u[6 + k] = cprod(e, mk<R>(x.re, -x.im));
    }
    if constexpr (deferred) {
      return fixed * scale;
    } else {
#pragma unroll
      for (int k = 0; k < 9; k++) u[k] = scale * u[k];
      return R(1);
    }
  } else {
    if constexpr (Stag<Ls>::fixed) {
#pragma unroll
      for (int k = 0; k < LR; k++) v[k] *= fixed;
    }
    const cplx<R> z[4] = {mk<R>(v[0], v[1]), mk<R>(v[2], v[3]), mk<R>(v[4], v[5]), mk<R>(v[6], v[7])};
    Link<R> w;
    rebuild8<R, approx>(z, w);
    sincospi_link<approx>(v[8] / R(3), &s, &c);
    const R f = deferred ? R(1) : scale;
    const cplx<R> e = mk<R>(f * c, f * s);
#pragma unroll
    for (int k = 0; k < 9; k++) u[k] = cprod(e, w.m[k]);
    return deferred ? scale : R(1);
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

/// acc + k U v (sign +1) or acc − k U† v (sign −1), U and v as stored and k
/// their factors (`Deferred`): the 3×3 product on the stored numbers, then
/// one fused multiply-add a real.
template <typename R, int sign>
__device__ __forceinline__ void hop_deferred(const cplx<R> *u, const cplx<R> *v, R k, cplx<R> *acc) {
  const R ks = sign > 0 ? k : -k;
#pragma unroll
  for (int r = 0; r < 3; r++) {
    cplx<R> t;
    if (sign > 0) {
      t = cmadd(u[3 * r + 2], v[2], cmadd(u[3 * r + 1], v[1], cprod(u[3 * r], v[0])));
    } else {
      t = cjmadd(u[6 + r], v[2], cjmadd(u[3 + r], v[1], cjprod(u[r], v[0])));
    }
    acc[r] = mk<R>(fma(ks, t.re, acc[r].re), fma(ks, t.im, acc[r].im));
  }
}

/// One hop: the link at `lcb` of block (lp, mu) of `links` (a long link in
/// LR reals where `compressed`; `fixed`, `scale`: their factors) and the
/// neighbour at n of the colour vectors `in`, added to acc (`hop`, or
/// `hop_deferred` for the fixed-point formats).
template <typename S, int LR, int sign>
__device__ __forceinline__ void add_hop(u64 links, int gs, int lp, int mu, int lcb, bool compressed,
                                        typename Stag<S>::R fixed, typename Stag<S>::R scale,
                                        const typename ColourVector<S>::V *in, int stride, int n,
                                        cplx<typename Stag<S>::R> *acc) {
  typedef typename Stag<S>::R R;
  cplx<R> u[9], v[3];
  R k = compressed ? load_long<S, LR>(links, gs, lp, mu, lcb, fixed, scale, u)
                   : load_link<S>(links, gs, lp, mu, lcb, fixed, u);
  if constexpr (Deferred<S>::value) {
    k *= ColourVector<S>::load_deferred(in, stride, n, v);
    hop_deferred<R, sign>(u, v, k, acc);
  } else {
    ColourVector<S>::load(in, stride, n, v);
    hop<R, sign>(u, v, acc);
  }
}

__device__ __forceinline__ int cb_index(const int *d, int x0, int x1, int x2, int x3) {
  return (x0 + d[0] * (x1 + d[1] * (x2 + d[2] * x3))) >> 1;
}

/// x + h wrapped into [0, d), for 0 ≤ x < d and |h| ≤ 3: compares and
/// subtractions, not a division (d may be 2, so a loop).
__device__ __forceinline__ int wrap(int y, int d) {
  while (y >= d) y -= d;
  while (y < 0) y += d;
  return y;
}

/// out[cb] = a · acc (+ b · x[cb]).
template <typename S>
__device__ __forceinline__ void store_site(const StaggeredParams &P, int cb, const cplx<typename Stag<S>::R> *acc) {
  typedef typename Stag<S>::R R;
  typedef typename ColourVector<S>::V V;
  typedef ColourVector<S> CV;
  cplx<R> o[3];
  if (P.x) CV::load(reinterpret_cast<const V *>(P.x), P.stride, cb, o);
#pragma unroll
  for (int c = 0; c < 3; c++) {
    o[c] = P.x ? mk<R>(R(P.a) * acc[c].re + R(P.b) * o[c].re, R(P.a) * acc[c].im + R(P.b) * o[c].im)
               : R(P.a) * acc[c];
  }
  CV::store(reinterpret_cast<V *>(P.out), P.stride, cb, o);
}

/// `block`: the block's place among the blocks of one field (blockIdx.x,
/// but for the several fields of `staggered_dslash_rhs`).
template <typename S, int LR>
__device__ __forceinline__ void staggered_dslash_body(const StaggeredParams &P, int block) {
  typedef typename Stag<S>::R R;
  typedef typename ColourVector<S>::V V;
  const int cb = block * blockDim.x + threadIdx.x;
  if (cb >= P.vh) return;
  const int *d = P.dims;
  int x[4];
  checkerboard_coords(P, cb, x);
  if (P.interior_cut) {
    // Sites whose hops leave the rank are the edges' launch's.
#pragma unroll
    for (int mu = 0; mu < 4; mu++)
      if (((P.interior_cut >> mu) & 1) && (x[mu] < P.depth || x[mu] >= d[mu] - P.depth)) return;
  }
  const int q = 1 - P.parity;
  const V *in = reinterpret_cast<const V *>(P.in);
  const R fat_fixed = R(P.fat_fixed), long_fixed = R(P.long_fixed), long_scale = R(P.long_scale);
  cplx<R> acc[3] = {mk<R>(0, 0), mk<R>(0, 0), mk<R>(0, 0)};
#pragma unroll
  for (int mu = 0; mu < 4; mu++) {
#pragma unroll
    for (int hops = 1; hops <= 3; hops += 2) {
      const u64 links = hops == 1 ? P.fat : P.lng;
      if (links == 0) continue;
      const R fixed = hops == 1 ? fat_fixed : long_fixed;
      const bool compressed = hops == 3 && LR != 18;
      int y[4] = {x[0], x[1], x[2], x[3]};
      y[mu] = wrap(x[mu] + hops, d[mu]);
      const int f = cb_index(d, y[0], y[1], y[2], y[3]);
      add_hop<S, LR, 1>(links, P.gauge_stride, P.parity, mu, cb, compressed, fixed, long_scale, in, P.stride, f, acc);
      y[mu] = wrap(x[mu] - hops, d[mu]);
      const int b = cb_index(d, y[0], y[1], y[2], y[3]);
      add_hop<S, LR, -1>(links, P.gauge_stride, q, mu, b, compressed, fixed, long_scale, in, P.stride, b, acc);
    }
  }
  store_site<S>(P, cb, acc);
}

/// The edges' launch: the hopping term's arguments and the faces.
struct StaggeredEdgeParams {
  StaggeredParams d;
  HaloView h;
};

/// The hopping term on the edge sites of a cut lattice (one thread a site
/// of `H.edges`), after the faces have arrived: a neighbour across a cut
/// face read from the faces (a hop of length h from layer x of the last h
/// lands in layer x + h − L of the rank ahead; backward, in layer h − x − 1
/// counted from the end of the rank behind), the link behind it from the
/// links' faces (the fat link of layer 0, the long link of layer x). The
/// same hops, loads and sums, in the same order, as `staggered_dslash_body`
/// on one device: the same numbers, bit for bit.
template <typename S, int LR>
__device__ __forceinline__ void staggered_edges_body(const StaggeredEdgeParams &E) {
  typedef typename Stag<S>::R R;
  typedef typename ColourVector<S>::V V;
  const StaggeredParams &P = E.d;
  const HaloView &H = E.h;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= H.n_edges) return;
  const int cb = reinterpret_cast<const unsigned *>(H.edges)[i];
  const int *d = P.dims;
  int x[4];
  checkerboard_coords(P, cb, x);
  const int q = 1 - P.parity;
  const V *in = reinterpret_cast<const V *>(P.in);
  const R fat_fixed = R(P.fat_fixed), long_fixed = R(P.long_fixed), long_scale = R(P.long_scale);
  cplx<R> acc[3] = {mk<R>(0, 0), mk<R>(0, 0), mk<R>(0, 0)};
#pragma unroll
  for (int mu = 0; mu < 4; mu++) {
    const bool cut = (H.cut >> mu) & 1;
    // The site's index in its layer of mu (src/comm/faces.rs, `face_index`).
    int fi = 0, fs = 1;
#pragma unroll
    for (int nu = 0; nu < 4; nu++) {
      if (nu == mu) continue;
      fi += x[nu] * fs;
      fs *= d[nu];
    }
    fi >>= 1;
    const int n = H.face_len[mu];
#pragma unroll
    for (int hops = 1; hops <= 3; hops += 2) {
      const u64 links = hops == 1 ? P.fat : P.lng;
      if (links == 0) continue;
      const R fixed = hops == 1 ? fat_fixed : long_fixed;
      const int set = hops == 1 ? 0 : 1;
      const bool compressed = hops == 3 && LR != 18;
      int y[4] = {x[0], x[1], x[2], x[3]};
      const int f = x[mu] + hops;
      const bool across = cut && f >= d[mu];
      y[mu] = wrap(f, d[mu]);
      add_hop<S, LR, 1>(links, P.gauge_stride, P.parity, mu, cb, compressed, fixed, long_scale,
                        across ? reinterpret_cast<const V *>(H.ahead[mu]) : in, across ? H.face_stride[mu] : P.stride,
                        across ? (f - d[mu]) * n + fi : cb_index(d, y[0], y[1], y[2], y[3]), acc);
      const int b = x[mu] - hops;
      // The link behind: from the links' face where it lies on the rank
      // behind (a face is one block: parity and direction 0).
      const bool ghost = cut && b < 0;
      const u64 lb = ghost ? H.links[set][mu][P.parity] : links;
      const int gs = ghost ? H.link_stride[set][mu] : P.gauge_stride;
      const int lp = ghost ? 0 : q, lmu = ghost ? 0 : mu;
      int lcb;
      if (ghost) {
        lcb = (hops == 1 ? 0 : x[mu]) * n + fi;
      } else {
        y[mu] = wrap(b, d[mu]);
        lcb = cb_index(d, y[0], y[1], y[2], y[3]);
      }
      add_hop<S, LR, -1>(lb, gs, lp, lmu, lcb, compressed, fixed, long_scale,
                         ghost ? reinterpret_cast<const V *>(H.behind[mu]) : in, ghost ? H.face_stride[mu] : P.stride,
                         ghost ? (-b - 1) * n + fi : lcb, acc);
    }
  }
  store_site<S>(P, cb, acc);
}
#define LATSOL_STAGGERED_EDGES(name, S, LR) \
  extern "C" __global__ void name(StaggeredEdgeParams P) { kernel_entry(); staggered_edges_body<S, LR>(P); }

// LATSOL_STAGGERED_BOUNDS="threads,min_blocks" (an experiment switch, or a
// module's setting) caps the registers of the hopping term so that more
// warps stay resident; none by default.
#ifdef LATSOL_STAGGERED_BOUNDS
#define LATSOL_STAGGERED_LB __launch_bounds__(LATSOL_STAGGERED_BOUNDS)
#else
#define LATSOL_STAGGERED_LB
#endif
#define LATSOL_STAGGERED(name, S, LR) \
  extern "C" __global__ void LATSOL_STAGGERED_LB name(StaggeredParams P) { kernel_entry(); staggered_dslash_body<S, LR>(P, blockIdx.x); }

// ---- several right-hand sides in one launch (issue 37, seed 002 §2.1) ----
//
// The hopping term of up to LATSOL_STAGGERED_MAX_RHS fields on the same links,
// as the Wilson term's several-field kernels (wilson_dslash.cuh,
// `wilson_dslash_rhs`): each field's output, input and xpay blocks in the
// arguments, the grid the one-field grid times the count with the field
// fastest, so that consecutive blocks are the same sites of different fields
// and the 16 links a site reads (most of a staggered term's traffic) come from
// memory once and from L2 for the other fields. Each field's numbers are the
// one-field kernel's, bit for bit (the same code on the same values).
#define LATSOL_STAGGERED_MAX_RHS 16
struct StaggeredRhsParams {
  StaggeredParams P;
  u64 out[LATSOL_STAGGERED_MAX_RHS];
  u64 in[LATSOL_STAGGERED_MAX_RHS];
  u64 x[LATSOL_STAGGERED_MAX_RHS];
  int count;
  int pad;
};
static_assert(sizeof(StaggeredRhsParams) == 144 + 3 * 8 * LATSOL_STAGGERED_MAX_RHS + 8,
              "StaggeredRhsParams layout changed: update staggered.rs");
template <typename S, int LR>
__device__ __forceinline__ void staggered_dslash_rhs(const StaggeredRhsParams &M) {
  const int r = blockIdx.x % M.count;
  StaggeredParams P = M.P;
  P.out = M.out[r];
  P.in = M.in[r];
  P.x = M.x[r];
  staggered_dslash_body<S, LR>(P, blockIdx.x / M.count);
}
#define LATSOL_STAGGERED_RHS(name, S, LR) \
  extern "C" __global__ void LATSOL_STAGGERED_LB name(StaggeredRhsParams P) { kernel_entry(); staggered_dslash_rhs<S, LR>(P); }

/// Flat conversions of colour-vector fields between double and single (their
/// layouts map real k to real k).
struct ConvertParams {
  u64 dst, src;
  long long n;  // reals
};
static_assert(sizeof(ConvertParams) == 24, "ConvertParams layout changed: update blas.rs");
