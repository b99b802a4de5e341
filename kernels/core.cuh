// core.cuh: the storage formats of latsol's device fields and the accessors
// that hide them, so that every kernel body is written once (QUDA's accessor
// idea; seed clark2010 §4.1, §4.5).
//
// Layout (structure of arrays within each parity block, for coalescing):
// - spinor, 24 reals per site, complex index c = 3 spin + color (UKQCD basis,
//   docs/conventions.md). Double: 12 double2 per site, element (c, cb) at
//   `c * stride + cb`. Single: 6 float4 per site, float4 j holding complex
//   numbers 2j and 2j + 1, at `j * stride + cb`. The spin pair (0, 1) is thus
//   the first half of the vectors and (2, 3) the second half: a temporal hop
//   reads exactly one half (seed clark2010 Appendix B).
//   Half (quarter): 6 short4 (char4) per site like single, fixed point
//   relative to a per-site f32 norm, the largest |real| of the site
//   (clark2010 §4.5); the block's `stride` norms follow its vectors.
//   Packed 20- and 30-bit (clark2022 §4, Appendix A): each site is the
//   CPU backend's bit string (src/format/packed.rs: component k, a
//   signed B-bit integer, in bits [kB, (k+1)B) of W little-endian 32-bit
//   words, then the 8-bit biased exponent of the site's power-of-two scale),
//   transposed word by word: word j of site cb at `j * stride + cb` (W = 23
//   for 30-bit, read as u32), for 20-bit read as 4 uint4, uint4 j holding
//   words 4j..4j+3 at `j * stride + cb`. Values and rounding are the CPU's
//   (same scale, round half away from zero, clamp, zero/underflow rule). A
//   temporal hop reads only the words of its spin pair and the exponent's.
//   kernels/host/ compiles these accessors for the host, so a test without
//   a GPU checks them bit for bit against the CPU (cuda/emulation.rs).
// - gauge, reconstruct 18 (12, 8): per parity and direction R/2 complex
//   numbers per link (18: row-major `U[row][col]` at k = 3 row + col; 12: the
//   first two rows; 8: a2, a3, b1 and the phases of a1 and c1 over π, see
//   src/reconstruct.rs). Reconstruct 18 and double: one complex number per
//   double2 / float2 / short2 / char2, number k at `((parity 4 + mu) R/2 + k)
//   stride + cb`. Reconstruct 12 and 8 in single, half and quarter: two per
//   float4 / short4 / char4 (one wide load instead of two), pair j at
//   `((parity 4 + mu) R/4 + j) stride + cb`. Fixed-point links are
//   `stored · gauge_scale` (gauge_scale = 1/32767 or 1/127 for unitary links).
//   Beside packed spinors the links are those of seed clark2022 §4: 16-bit
//   (as half, int16) for 20-bit spinors, 32-bit fixed point (int2 / int4,
//   gauge_scale = 1/2147483647 for unitary links) for 30-bit spinors.
// A full field is the even block followed by the odd block. `stride` is the
// site count of one block (Vh plus padding).
//
// Each accessor loads into / stores from `cplx<Float>` arrays indexed only by
// compile-time constants (unrolled loops), so nothing lands in local memory.
// A new format adds accessors, not bodies.
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

/// a b
template <typename T> __device__ __forceinline__ cplx<T> cprod(cplx<T> a, cplx<T> b) {
  return mk(fma(-a.im, b.im, a.re * b.re), fma(a.im, b.re, a.re * b.im));
}
/// conj(a) b
template <typename T> __device__ __forceinline__ cplx<T> cjprod(cplx<T> a, cplx<T> b) {
  return mk(fma(a.im, b.im, a.re * b.re), fma(-a.im, b.re, a.re * b.im));
}

/// n / d for the multiplier m and shift s of d (hopping_params.rs, `division_magic`:
/// the round-up method of Granlund and Montgomery, exact for every 32-bit n).
__device__ __forceinline__ unsigned divide(unsigned n, unsigned m, unsigned s) {
  const unsigned t = __umulhi(n, m);
  return (t + ((n - t) >> 1)) >> s;
}

/// Coordinates x of checkerboard site cb of the parity `P.parity`, and its
/// lexicographic index: two lexicographic sites share each cb index and the
/// parity picks x0 (lattice.rs, `coords`). The divisions by X, Y and Z by
/// multiplication (`divide`, the constants `P.div_magic`, `P.div_shift`);
/// the indices are never negative. For any hopping term's parameters.
template <typename Params> __device__ __forceinline__ int checkerboard_coords(const Params &P, int cb, int *x) {
  const unsigned X = P.dims[0], Y = P.dims[1], Z = P.dims[2];
  const unsigned lex2 = 2u * unsigned(cb);
  const unsigned q1 = divide(lex2, P.div_magic[0], P.div_shift[0]);
  const unsigned q2 = divide(q1, P.div_magic[1], P.div_shift[1]);
  const unsigned x3 = divide(q2, P.div_magic[2], P.div_shift[2]);
  x[1] = int(q1 - q2 * Y);
  x[3] = int(x3);
  x[2] = int(q2 - x3 * Z);
  x[0] = int(lex2 - q1 * X) + ((x[1] + x[2] + x[3] + P.parity) & 1);
  return int(q1 * X) + x[0];
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
__device__ __forceinline__ short4 ld_reuse(const short4 *p) { return LATSOL_LDR(p); }
__device__ __forceinline__ char4 ld_reuse(const char4 *p) { return LATSOL_LDR(p); }
__device__ __forceinline__ short4 ld_stream(const short4 *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ char4 ld_stream(const char4 *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ short2 ld_stream(const short2 *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ char2 ld_stream(const char2 *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ float ld_reuse(const float *p) { return LATSOL_LDR(p); }
__device__ __forceinline__ float ld_stream(const float *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ void st_stream(short4 *p, short4 v) { LATSOL_STS(p, v); }
__device__ __forceinline__ void st_stream(char4 *p, char4 v) { LATSOL_STS(p, v); }
__device__ __forceinline__ void st_stream(float *p, float v) { LATSOL_STS(p, v); }
__device__ __forceinline__ uint4 ld_reuse(const uint4 *p) { return LATSOL_LDR(p); }
__device__ __forceinline__ uint2 ld_reuse(const uint2 *p) { return LATSOL_LDR(p); }
__device__ __forceinline__ uint2 ld_stream(const uint2 *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ unsigned short ld_stream(const unsigned short *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ unsigned ld_reuse(const unsigned *p) { return LATSOL_LDR(p); }
__device__ __forceinline__ uint4 ld_stream(const uint4 *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ unsigned ld_stream(const unsigned *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ int2 ld_stream(const int2 *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ int4 ld_stream(const int4 *p) { return LATSOL_LDS(p); }
__device__ __forceinline__ void st_stream(uint4 *p, uint4 v) { LATSOL_STS(p, v); }
__device__ __forceinline__ void st_stream(unsigned *p, unsigned v) { LATSOL_STS(p, v); }

/// a · b rounded once, never contracted into a fused multiply-add.
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }

// ---- programmatic dependent launch (sm_90) ---------------------------------
// A kernel launched with programmatic stream serialization (Hopper: the
// backend's `Kernel::programmatic`) may be placed on the device while the
// previous kernel of its stream finishes, so that the launch and the
// placement of its blocks overlap that kernel's last wave;
// `grid_dependency_wait` holds it until the previous kernel has finished and
// its writes are visible. Elsewhere both are no-ops.
__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void grid_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
/// The first statement of every kernel (a test checks that each one makes
/// it: src/backend/cuda/catalogue.rs): the backend launches every kernel with
/// programmatic serialization on sm_90, so a kernel waits for its
/// predecessor before it touches memory, and then lets its successor be
/// placed (a successor allowed in before this one has started its work
/// measured slower at 16^4: docs/performance.md, "Small volumes"). The
/// Wilson hopping terms ask L2 for their links first, which reads nothing
/// into the kernel (kernels/wilson_dslash.cuh, `kernel_entry_after_links`),
/// and some load their first links before they wait (`wilson_dslash`'s
/// `links_first` there: no kernel before one writes links).
__device__ __forceinline__ void kernel_entry() {
  grid_dependency_wait();
  grid_launch_dependents();
}

/// What a launch over the edge sites of a cut lattice reads besides the
/// fields (issue 36: kernels/wilson_dslash.cuh, `wilson_dslash_edges`;
/// kernels/staggered_dslash.cuh, `staggered_edges`); mirrored by
/// `HaloView` in src/backend/cuda/halo.rs. A face is a block of the
/// field's layout whose sites are the face's slots, `layer · face_len +
/// face index` (src/comm/faces.rs), the layer counted from the face that
/// touches this rank.
struct HaloView {
  u64 ahead[4];       // per direction: the first layers of the rank ahead (the input's parity)
  u64 behind[4];      // the last layers of the rank behind
  u64 links[2][4][2]; // per link field (Wilson: one; staggered: fat, long), direction and
                      // parity of the receiving site x: the links U(x − d mu) the rank behind holds
  u64 edges;          // u32 checkerboard index of each edge site of the output parity
  int face_stride[4];     // slots between a spinor face's rows
  int link_stride[2][4];  // slots between a link face's rows
  int face_len[4];        // sites of one parity in a layer
  int cut;                // bit mu: mu is cut
  int n_edges;
  double t_sign_ahead;   // Wilson: sign of a T hop forward across the last local slice
  double t_sign_behind;  // of a T hop backward across the first
};
static_assert(sizeof(HaloView) == 288, "HaloView layout changed: update halo.rs");

// ---- spinor accessors -----------------------------------------------------

template <typename Float> struct SpinorSoA;

/// Double: one complex per double2.
template <> struct SpinorSoA<double> {
  typedef double2 Vec;
  typedef double F;  // arithmetic type
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
  typedef float F;
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

/// Whether two types are the same.
template <typename A, typename B> struct same_type {
  static constexpr bool value = false;
};
template <typename A> struct same_type<A, A> {
  static constexpr bool value = true;
};

// Fixed-point numbers to float and back without the conversion unit. On
// sm_80 and sm_90 I2F, F2I and FRND issue at 16 a clock per SM (a quarter of
// the integer rate, an eighth of the FP32 rate), and the half hopping term
// converts 315 numbers a site (24^4 half with xpay 74% -> 77% of the
// roofline, reconstruct 12 61% -> 66%: docs/performance.md, "Small
// volumes"). The float whose bits are 0x4B000000 | u (0 ≤ u < 2^23) is
// 2^23 + u; a 16- or 8-bit integer v with its sign bit flipped is u = v + 2^15
// (or v + 2^7), so one byte permute beside 0x4B and one exact subtraction give
// float(v). Back: p + 1.5·2^23 rounds p to the nearest integer, ties to even,
// as rint does, for |p| < 2^22, and leaves it in the low bits. Both are exact:
// the numbers are those of the conversion instructions, bit for bit, except
// that a zero rounded from a negative number is +0 (kernels/host/packed.cpp
// checks every 16- and 8-bit integer and the rounding ties on the host).
/// The float 2^23 + u, u the bytes of t that `sel` picks (the permute alone).
__device__ __forceinline__ float biased(unsigned t, unsigned sel) {
  return __int_as_float(__byte_perm(t, 0x4B000000u, sel));
}
/// p + 1.5·2^23, rounded once (no contraction with the product before it).
__device__ __forceinline__ unsigned round_biased(float p) { return __float_as_uint(__fadd_rn(p, 12582912.0f)); }
/// rint(p) from round_biased(p).
__device__ __forceinline__ float unbias(unsigned t) { return __fsub_rn(__uint_as_float(t), 12582912.0f); }

/// The fixed-point types: their vectors of four and two, the same bits as
/// unsigned words (what a load reads: a load of the vector types sign-extends
/// every field into its own register), the largest magnitude, and the exact
/// conversions above.
template <typename T> struct Fixed;
template <> struct Fixed<short> {
  typedef short4 Vec4;
  typedef short2 Vec2;
  typedef uint2 Raw4;
  typedef unsigned Raw2;
  static constexpr float MAX = 32767.0f;
  static constexpr float BIAS = 8421376.0f;  // 2^23 + 2^15
  /// BIAS + each integer of w, exact: `to_float` before its subtraction.
  static __device__ __forceinline__ void to_biased(unsigned w, float *f) {
    const unsigned t = w ^ 0x80008000u;
    f[0] = biased(t, 0x7410);
    f[1] = biased(t, 0x7432);
  }
  static __device__ __forceinline__ void to_biased(uint2 w, float *f) {
    to_biased(w.x, f);
    to_biased(w.y, f + 2);
  }
  template <typename W> static __device__ __forceinline__ void to_float(W w, float *f) {
    static_assert(same_type<W, unsigned>::value || same_type<W, uint2>::value, "a word or two of 16-bit integers");
    constexpr int n = sizeof(W) / sizeof(short);
    to_biased(w, f);
#pragma unroll
    for (int k = 0; k < n; k++) f[k] = f[k] - BIAS;
  }
  /// The vector of four integers from their round_biased values.
  static __device__ __forceinline__ Vec4 pack4(unsigned a, unsigned b, unsigned c, unsigned d) {
    const unsigned lo = __byte_perm(a, b, 0x5410), hi = __byte_perm(c, d, 0x5410);
    return make_short4(short(lo), short(lo >> 16), short(hi), short(hi >> 16));
  }
};
template <> struct Fixed<signed char> {
  typedef char4 Vec4;
  typedef char2 Vec2;
  typedef unsigned Raw4;
  typedef unsigned short Raw2;
  static constexpr float MAX = 127.0f;
  static constexpr float BIAS = 8388736.0f;  // 2^23 + 2^7
  static __device__ __forceinline__ void to_biased(unsigned w, float *f) {
    const unsigned t = w ^ 0x80808080u;
    f[0] = biased(t, 0x7440);
    f[1] = biased(t, 0x7441);
    f[2] = biased(t, 0x7442);
    f[3] = biased(t, 0x7443);
  }
  static __device__ __forceinline__ void to_biased(unsigned short w, float *f) {
    const unsigned t = unsigned(w) ^ 0x8080u;
    f[0] = biased(t, 0x7440);
    f[1] = biased(t, 0x7441);
  }
  template <typename W> static __device__ __forceinline__ void to_float(W w, float *f) {
    static_assert(same_type<W, unsigned>::value || same_type<W, unsigned short>::value, "a word of 8-bit integers");
    constexpr int n = sizeof(W);
    to_biased(w, f);
#pragma unroll
    for (int k = 0; k < n; k++) f[k] = f[k] - BIAS;
  }
  static __device__ __forceinline__ Vec4 pack4(unsigned a, unsigned b, unsigned c, unsigned d) {
    const unsigned w = __byte_perm(__byte_perm(a, b, 0x0040), __byte_perm(c, d, 0x0040), 0x5410);
    return make_char4((signed char)w, (signed char)(w >> 8), (signed char)(w >> 16), (signed char)(w >> 24));
  }
};

/// The f32 norm kept for a site whose largest |real| is m (computed in R):
/// rounded up so that no component overflows the fixed-point range.
template <typename R> __device__ __forceinline__ float site_norm(R m) {
  float n = float(m);
  if (R(n) < m) n = __int_as_float(__float_as_int(n) + 1);
  return n;
}

/// A fixed-point site's scale, in R: its norm (`site_norm` of the largest
/// |real| of its n complex numbers), the factor to integers (max / norm; 0
/// for a zero site) and back (norm / max). Every fixed-point store rounds
/// `z · to_int` to the nearest integer and keeps `integer · back`.
template <typename R> struct SiteScale {
  float norm;
  R to_int, back;
};
template <int n, typename R> __device__ __forceinline__ SiteScale<R> site_scale(const cplx<R> *z, float max) {
  R m = 0;
#pragma unroll
  for (int c = 0; c < n; c++) m = fmax(m, fmax(fabs(z[c].re), fabs(z[c].im)));
  const float norm = site_norm(m);
  return {norm, norm > 0.0f ? R(max) / R(norm) : R(0), R(norm) / R(max)};
}

/// Half and quarter: two complex numbers per short4 / char4, scaled by the
/// site's norm (stored after the block's `6 stride` vectors). Arithmetic in
/// single. The store rounds to nearest, as the CPU backend does.
template <typename T> struct FixedSpinorSoA {
  typedef typename Fixed<T>::Vec4 Vec;
  typedef float F;
  static constexpr int vecs = 6;
  /// Bytes of one site in a parity block (its vectors and its norm).
  static constexpr long long site_bytes = vecs * sizeof(Vec) + sizeof(float);
  /// What the BLAS (blas.cuh `SiteItems`) loads into.
  typedef float Item;
  static __device__ __forceinline__ const float *norms(const Vec *p, int stride) {
    return reinterpret_cast<const float *>(p + vecs * stride);
  }
  template <int c0, int n, bool stream>
  static __device__ __forceinline__ void load(const Vec *p, int stride, int cb, cplx<float> *z) {
    const float s = load_unscaled<c0, n, stream>(p, stride, cb, z);
#pragma unroll
    for (int c = 0; c < n; c++) z[c] = s * z[c];
  }
  /// `load` without the site's scale: z holds the stored integers (exact in
  /// single) and the scale is returned, for callers that apply linear maps
  /// first and scale once (the hopping term: `DeferredScale`).
  template <int c0, int n, bool stream>
  static __device__ __forceinline__ float load_unscaled(const Vec *p, int stride, int cb, cplx<float> *z) {
    const float s = load_biased<c0, n, stream>(p, stride, cb, z);
#pragma unroll
    for (int c = 0; c < n; c++) z[c] = mk(z[c].re - BIAS, z[c].im - BIAS);
    return s;
  }
  /// The bias `load_biased` leaves in each number.
  static constexpr float BIAS = Fixed<T>::BIAS;
  /// `load_unscaled` with the bias kept: z holds BIAS + each stored integer
  /// (exact), for a caller whose sums cancel it (the hopping term's
  /// projection, `project_biased`: one subtraction instead of three).
  template <int c0, int n, bool stream>
  static __device__ __forceinline__ float load_biased(const Vec *p, int stride, int cb, cplx<float> *z) {
    const float *nr = norms(p, stride) + cb;
    const float s = (stream ? ld_stream(nr) : ld_reuse(nr)) * (1.0f / Fixed<T>::MAX);
#pragma unroll
    for (int c = 0; c < n; c += 2) {
      const Vec *q = p + ((c0 + c) / 2) * stride + cb;
      typedef typename Fixed<T>::Raw4 W;
      const W *w = reinterpret_cast<const W *>(q);
      float f[4];
      Fixed<T>::to_biased(stream ? ld_stream(w) : ld_reuse(w), f);
      z[c] = mk(f[0], f[1]);
      z[c + 1] = mk(f[2], f[3]);
    }
    return s;
  }
  /// Stores the 12 complex numbers of site cb and leaves in z the values as
  /// stored (what a norm of the stored field sees). Arithmetic in R.
  template <typename R> static __device__ __forceinline__ void store(Vec *p, int stride, int cb, cplx<R> *z) {
    const SiteScale<R> s = site_scale<12>(z, Fixed<T>::MAX);
    const R sc = s.to_int, back = s.back;
    st_stream(const_cast<float *>(norms(p, stride)) + cb, s.norm);
#pragma unroll
    for (int j = 0; j < 6; j++) {
      unsigned t[4];
      R r[4];
      const R in[4] = {z[2 * j].re, z[2 * j].im, z[2 * j + 1].re, z[2 * j + 1].im};
#pragma unroll
      for (int k = 0; k < 4; k++) {
        if constexpr (same_type<R, float>::value) {
          t[k] = round_biased(__fmul_rn(in[k], sc));
          r[k] = unbias(t[k]);
        } else {
          r[k] = rint(in[k] * sc);
          t[k] = round_biased(float(r[k]));  // exact: an integer below 2^15
        }
      }
      st_stream(p + j * stride + cb, Fixed<T>::pack4(t[0], t[1], t[2], t[3]));
      z[2 * j] = mk(r[0] * back, r[1] * back);
      z[2 * j + 1] = mk(r[2] * back, r[3] * back);
    }
  }
};
template <> struct SpinorSoA<short> : FixedSpinorSoA<short> {};
template <> struct SpinorSoA<signed char> : FixedSpinorSoA<signed char> {};

/// Whether a storage type's spinors and links keep their integers apart from
/// their scale (`load_unscaled`): then a hop projects and multiplies the
/// integers and scales its result once, twelve multiplications instead of
/// one per stored real of the neighbour and of the link (with reconstruct
/// 18: 2616 -> 2360 instructions in the half hopping term; issue 18). The
/// other formats scale as they load, so their numbers do not change.
template <typename S> struct DeferredScale {
  static constexpr bool value = false;
};
template <> struct DeferredScale<short> {
  static constexpr bool value = true;
};
template <> struct DeferredScale<signed char> {
  static constexpr bool value = true;
};

/// The packed formats' storage types (tags: the words are the storage).
struct packed20 {};
struct packed30 {};

/// What differs between the two packed widths: the vector a load reads and
/// the arithmetic (20-bit in single like half, 30-bit in double as in the
/// seed, clark2022 §4).
template <int B> struct PackedWords;
template <> struct PackedWords<20> {
  typedef uint4 Vec;
  typedef float F;
  static constexpr int words = 16, per_vec = 4;
  static __device__ __forceinline__ void unpack(uint4 v, unsigned *w) {
    w[0] = v.x;
    w[1] = v.y;
    w[2] = v.z;
    w[3] = v.w;
  }
  static __device__ __forceinline__ uint4 pack(const unsigned *w) { return make_uint4(w[0], w[1], w[2], w[3]); }
};
template <> struct PackedWords<30> {
  typedef unsigned Vec;
  typedef double F;
  static constexpr int words = 23, per_vec = 1;
  static __device__ __forceinline__ void unpack(unsigned v, unsigned *w) { w[0] = v; }
  static __device__ __forceinline__ unsigned pack(const unsigned *w) { return w[0]; }
};

/// 2^e and the unbiased exponent of a normal number, in float or double.
__device__ __forceinline__ float pow2_(float, int e) { return __int_as_float((e + 127) << 23); }
__device__ __forceinline__ double pow2_(double, int e) { return __longlong_as_double((long long)(e + 1023) << 52); }
__device__ __forceinline__ int exponent_(float x) { return ((__float_as_int(x) >> 23) & 0xff) - 127; }
__device__ __forceinline__ int exponent_(double x) { return int((__double_as_longlong(x) >> 52) & 0x7ff) - 1023; }

/// Packed B-bit spinors (layout above). The bit manipulation is on unsigned
/// words; the sign is restored by an arithmetic shift (seed Appendix A).
/// Every word index is a compile-time constant once the loops unroll, so
/// the words stay in registers.
template <int B, int NC, typename R> __device__ __forceinline__ void pack_site(cplx<R> *z, unsigned *w);
template <int B, int NC, int c0, int n, typename T>
__device__ __forceinline__ void unpack_site(const unsigned *w, cplx<T> *z);
template <int B> struct PackedSpinorSoA {
  typedef PackedWords<B> P;
  typedef typename P::Vec Vec;
  typedef typename P::F F;
  static constexpr int words = P::words, vecs = P::words / P::per_vec;
  static constexpr long long site_bytes = 4LL * words;
  /// What the BLAS loads into: double, exact over the whole exponent range
  /// (single overflows above 2^128; the dslash of 20-bit fields loads in F).
  typedef double Item;
  /// Bit offset of the exponent byte (it never straddles two words).
  static constexpr int exp_bit = 24 * B;
  /// Exponent bias (as IEEE single); the stored byte is e + BIAS, 0 for a zero site.
  static constexpr int BIAS = 127;
  /// The largest magnitude stored, 2^(B−1) − 1.
  static constexpr double MAX = double((1 << (B - 1)) - 1);

  /// Signed component k (a real) of the site's words.
  static __device__ __forceinline__ int component(const unsigned *w, int k) {
    const int at = k * B, wi = at >> 5, off = at & 31;
    const unsigned u = off + B > 32 ? __funnelshift_r(w[wi], w[wi + 1], off) : w[wi] >> off;
    return int(u << (32 - B)) >> (32 - B);
  }
  /// ORs the B low bits of v in at component k (or the byte at exp_bit).
  static __device__ __forceinline__ void put(unsigned *w, int at, int len, unsigned v) {
    const int wi = at >> 5, off = at & 31;
    w[wi] |= v << off;
    if (off + len > 32) w[wi + 1] |= v >> (32 - off);
  }

  /// Loads complex numbers [c0, c0 + n) of site cb, in T: only the vectors
  /// that hold their bits and the exponent's. Exact (as on the CPU) unless
  /// T = float overflows.
  template <int c0, int n, bool stream, typename T>
  static __device__ __forceinline__ void load(const Vec *p, int stride, int cb, cplx<T> *z) {
    constexpr int lo = (2 * c0 * B) / 32, hi = (2 * (c0 + n) * B - 1) / 32, we = exp_bit / 32;
    unsigned w[words];
#pragma unroll
    for (int j = 0; j < vecs; j++) {
      const int first = j * P::per_vec, last = first + P::per_vec - 1;
      if ((last >= lo && first <= hi) || (first <= we && we <= last)) {
        const Vec *q = p + j * stride + cb;
        P::unpack(stream ? ld_stream(q) : ld_reuse(q), w + first);
      } else {
#pragma unroll
        for (int k = 0; k < P::per_vec; k++) w[first + k] = 0;
      }
    }
    unpack_site<B, 12, c0, n>(w, z);
  }

  /// Stores the 12 complex numbers of site cb (`pack_site`) and leaves in
  /// z the values as stored.
  template <typename R> static __device__ __forceinline__ void store(Vec *p, int stride, int cb, cplx<R> *z) {
    unsigned w[words];
    pack_site<B, 12>(z, w);
#pragma unroll
    for (int j = 0; j < vecs; j++) st_stream(p + j * stride + cb, P::pack(w + j * P::per_vec));
  }
};

/// The words of one packed site of NC complex numbers z (NC = 12: a Wilson
/// spinor, 3: a colour vector; `words` = ceil((2 NC B + 8)/32)), by the rule
/// of src/format/packed.rs `store` (arithmetic in R), leaving in z the
/// values as stored (what a norm of the stored field sees): the scale is
/// 2^e with 2^(e−1) ≤ max|z| / MAX < 2^e (e ≤ BIAS), each real rounded half
/// away from zero and clamped to ±MAX; a site whose max/MAX is below 2^−126
/// or not finite is stored as zero; NaN components as 0.
template <int B, int NC, typename R> __device__ __forceinline__ void pack_site(cplx<R> *z, unsigned *w) {
  typedef PackedSpinorSoA<B> A;
  constexpr int n_words = (2 * NC * B + 8 + 31) / 32, exp_bit = 2 * NC * B;
  R m = 0;
#pragma unroll
  for (int c = 0; c < NC; c++) m = fmax(m, fmax(fabs(z[c].re), fabs(z[c].im)));
  const R ratio = m / R(A::MAX);
  const bool ok = ratio >= pow2_(R(0), 1 - A::BIAS) && isfinite(ratio);
  const int e = ok ? min(exponent_(ratio) + 1, A::BIAS) : 0;
  const R inv = ok ? pow2_(R(0), -e) : R(0), back = ok ? pow2_(R(0), e) : R(0);
#pragma unroll
  for (int k = 0; k < n_words; k++) w[k] = 0;
#pragma unroll
  for (int k = 0; k < 2 * NC; k++) {
    R &v = (k & 1) ? z[k >> 1].im : z[k >> 1].re;
    R q = round(v * inv);
    // Comparisons, not fmin/fmax, so that NaN stays NaN; stored as 0 (as
    // Rust's `as i32` does).
    if (q > R(A::MAX)) q = R(A::MAX);
    if (q < -R(A::MAX)) q = -R(A::MAX);
    const int qi = q == q ? int(q) : 0;
    A::put(w, k * B, B, unsigned(qi) & ((1u << B) - 1));
    v = R(qi) * back;
  }
  if (ok) A::put(w, exp_bit, 8, unsigned(e + A::BIAS));
}

/// Complex numbers [c0, c0 + n) of one packed site of NC complex numbers
/// (its words w), in T: exact (as on the CPU) unless T = float overflows.
template <int B, int NC, int c0, int n, typename T>
__device__ __forceinline__ void unpack_site(const unsigned *w, cplx<T> *z) {
  typedef PackedSpinorSoA<B> A;
  constexpr int exp_bit = 2 * NC * B;
  const int stored = (w[exp_bit / 32] >> (exp_bit & 31)) & 0xff;
  // A zero site has stored == 0 and all components 0.
  const T s = stored == 0 ? T(0) : pow2_(T(0), stored - A::BIAS);
#pragma unroll
  for (int c = 0; c < n; c++)
    z[c] = mk(s * T(A::component(w, 2 * (c0 + c))), s * T(A::component(w, 2 * (c0 + c) + 1)));
}
template <> struct SpinorSoA<packed20> : PackedSpinorSoA<20> {};
template <> struct SpinorSoA<packed30> : PackedSpinorSoA<30> {};

// ---- gauge accessors ------------------------------------------------------

/// A 3×3 complex matrix, row-major.
template <typename Float> struct Link {
  cplx<Float> m[9];
};

/// One stored complex number of a link: its vector type and its value; for
/// the narrow types also a vector of two (`Pair`, `get2`).
template <typename S> struct LinkElem;
template <> struct LinkElem<double> {
  typedef double2 Vec;
  typedef double F;
  static constexpr bool paired = false;  // a double2 is already a 16-byte load
  static __device__ __forceinline__ cplx<double> get(Vec v, double) { return mk(v.x, v.y); }
};
template <> struct LinkElem<float> {
  typedef float2 Vec;
  typedef float4 Pair;
  typedef float F;
  static constexpr bool paired = true;
  static __device__ __forceinline__ cplx<float> get(Vec v, float) { return mk(v.x, v.y); }
  static __device__ __forceinline__ void get2(Pair v, float, cplx<float> *z) {
    z[0] = mk(v.x, v.y);
    z[1] = mk(v.z, v.w);
  }
};
/// Fixed-point links: the stored integer times the field's scale, in
/// arithmetic F: double for the 32-bit links beside 30-bit spinors (below),
/// single for 16- and 8-bit links, loaded as their bits and converted
/// through Fixed (NarrowLinkElem).
template <typename S, typename V2, typename V4, typename F_ = float> struct FixedLinkElem {
  typedef V2 Vec;
  typedef V4 Pair;
  typedef F_ F;
  static constexpr bool paired = true;
  static __device__ __forceinline__ cplx<F> get(Vec v, F s) { return mk(s * F(v.x), s * F(v.y)); }
  static __device__ __forceinline__ void get2(Pair v, F s, cplx<F> *z) {
    z[0] = mk(s * F(v.x), s * F(v.y));
    z[1] = mk(s * F(v.z), s * F(v.w));
  }
};
template <typename S> struct NarrowLinkElem {
  typedef typename Fixed<S>::Raw2 Vec;
  typedef typename Fixed<S>::Raw4 Pair;
  typedef float F;
  static constexpr bool paired = true;
  /// The stored integers of a link word as floats, exact. 16-bit: the low
  /// one converted in place (I2F.S16), the high one shifted down and
  /// converted from 32 bits (I2FP.F32.S32): three instructions for the two,
  /// where `Fixed::to_float` issues five (xor, two permutes, two
  /// subtractions). (The narrowing and the arithmetic shift are what NVRTC
  /// and the host compilers do; kernels/host/packed.cpp checks every
  /// integer.) The conversion unit (16 a clock per SM) then handles a
  /// link's half of the numbers and the permutes the spinors': 24^4 half
  /// r18 79 -> 81% of the roofline, r12 73 -> 75% (issue 18). 8-bit: the
  /// permutes.
  static __device__ __forceinline__ void cvt(Vec v, float *f) {
    if constexpr (sizeof(S) == 2) {
      f[0] = __int2float_rn(int(short(v & 0xffffu)));
      f[1] = __int2float_rn(int(v) >> 16);
    } else {
      Fixed<S>::to_float(v, f);
    }
  }
  static __device__ __forceinline__ void cvt(Pair v, float *f) {
    if constexpr (sizeof(S) == 2) {
      cvt(v.x, f);
      cvt(v.y, f + 2);
    } else {
      Fixed<S>::to_float(v, f);
    }
  }
  static __device__ __forceinline__ cplx<F> get(Vec v, F s) {
    float f[2];
    cvt(v, f);
    return mk(s * f[0], s * f[1]);
  }
  static __device__ __forceinline__ void get2(Pair v, F s, cplx<F> *z) {
    float f[4];
    cvt(v, f);
    z[0] = mk(s * f[0], s * f[1]);
    z[1] = mk(s * f[2], s * f[3]);
  }
};
template <> struct LinkElem<short> : NarrowLinkElem<short> {};
template <> struct LinkElem<signed char> : NarrowLinkElem<signed char> {};
template <> struct LinkElem<int> : FixedLinkElem<int, int2, int4, double> {};

/// sin(π x), cos(π x) for |x| ≤ 1 where `approx`: in single by the special
/// function unit (absolute error about 2^-21, beside 2^-16 of a 16-bit
/// link's own rounding, in a few instructions), else exact.
template <bool approx> __device__ __forceinline__ void sincospi_link(float x, float *s, float *c) {
  if constexpr (approx) {
    __sincosf(3.14159265358979f * x, s, c);
  } else {
    sincospif(x, s, c);
  }
}
template <bool approx> __device__ __forceinline__ void sincospi_link(double x, double *s, double *c) {
  sincospi(x, s, c);
}

/// The unit a link is loaded in: a pair of stored complex numbers where
/// the format pairs them (`LinkElem::Pair`), else one (`Vec`).
template <typename E, bool paired> struct LinkWord {
  typedef typename E::Vec type;
};
template <typename E> struct LinkWord<E, true> {
  typedef typename E::Pair type;
};

/// The link from its 8 stored numbers z = (a2, a3, b1, (θ_a1, θ_c1)/π), in
/// the arithmetic of `src/reconstruct.rs` (seed clark2010 Appendix A, with
/// its fix for a negative square-root argument).
/// `approx`: the phases by `sincospi_link`'s approximation (links of 16
/// bits or fewer).
template <typename F, bool approx = false> __device__ __forceinline__ void rebuild8(const cplx<F> *z, Link<F> &u) {
  const cplx<F> a2 = z[0], a3 = z[1], b1 = z[2];
  const F n2 = a2.re * a2.re + a2.im * a2.im + a3.re * a3.re + a3.im * a3.im;
  F s, c;
  sincospi_link<approx>(z[3].re, &s, &c);
  const F a1_abs = sqrt(fmax(F(1) - n2, F(0)));
  const cplx<F> a1 = mk(a1_abs * c, a1_abs * s);
  const F c1_abs = sqrt(fmax(F(1) - a1_abs * a1_abs - (b1.re * b1.re + b1.im * b1.im), F(0)));
  sincospi_link<approx>(z[3].im, &s, &c);
  const cplx<F> c1 = mk(c1_abs * c, c1_abs * s);
  const F n = sqrt(n2), inv_n = F(1) / n;
  // b' = (0, −a3*, a2*)/N, c' = (N, −a1* a2/N, −a1* a3/N).
  const cplx<F> bp[3] = {mk(F(0), F(0)), mk(-a3.re * inv_n, a3.im * inv_n), mk(a2.re * inv_n, -a2.im * inv_n)};
  const cplx<F> zero = mk(F(0), F(0));
  const cplx<F> cp[3] = {mk(n, F(0)), (-inv_n) * cjmadd(a1, a2, zero), (-inv_n) * cjmadd(a1, a3, zero)};
  // b = p1 b' + p2 c', c = −p2* b' + p1* c', p1 = c1*/N, p2 = b1/N.
  const cplx<F> p1 = mk(c1.re * inv_n, -c1.im * inv_n), p2 = inv_n * b1;
  u.m[0] = a1;
  u.m[1] = a2;
  u.m[2] = a3;
#pragma unroll
  for (int k = 0; k < 3; k++) {
    u.m[3 + k] = cmadd(p2, cp[k], cmadd(p1, bp[k], zero));
    u.m[6 + k] = cjmadd(p1, cp[k], zero - cjmadd(p2, bp[k], zero));
  }
}

/// Links stored as R/2 complex numbers (R = 18: all; R = 12: the first two
/// rows, the third rebuilt as the conjugate cross product, exact for SU(3);
/// R = 8: rebuilt from unitarity; seed clark2010 §4.3, Appendix A).
template <typename S, int R> struct GaugeSoA {
  typedef LinkElem<S> E;
  typedef typename E::Vec Vec;
  typedef typename E::F F;
  static constexpr bool paired = E::paired && R != 18;
  /// Whether `load_unscaled` leaves the scale out: fixed-point links stored
  /// whole. (Reconstruct 8 needs the values; with reconstruct 12 the longer
  /// life of the scales made the half hopping term spill at an 80-register
  /// budget, and at 96 it measured no faster: 24^4 73-74% either way.)
  static constexpr bool deferred = DeferredScale<S>::value && R == 18;
  /// Stored rows of one direction and parity, and a row's bytes a site.
  static constexpr int rows = paired ? R / 4 : R / 2;
  static __device__ __forceinline__ constexpr int row_bytes() {
    if constexpr (paired) return int(sizeof(typename E::Pair));
    else return int(sizeof(Vec));
  }
  /// The `rows` words one link is stored in (a pair of complex numbers each
  /// where `paired`, one otherwise), as loaded and not yet converted: what a
  /// hopping term holds across its wait for the previous kernel
  /// (kernels/wilson_dslash.cuh, `links_first`), in fewer registers than
  /// the link's numbers (reconstruct 12 half: 6 instead of 18).
  typedef typename LinkWord<E, paired>::type Word;
  struct Stored {
    Word w[rows];
  };
  static __device__ __forceinline__ Stored load_words(const Vec *g, int stride, int parity, int mu, int cb) {
    Stored s;
    const Word *q = reinterpret_cast<const Word *>(g) + ((parity * 4 + mu) * rows) * stride + cb;
#pragma unroll
    for (int j = 0; j < rows; j++) s.w[j] = ld_stream(q + j * stride);
    return s;
  }
  /// The link u with the true link `*factor` · u (`*factor` 1 where not
  /// `deferred`: then u is the link).
  static __device__ __forceinline__ Link<F> load_unscaled(const Vec *g, int stride, int parity, int mu, int cb,
                                                          F scale, F *factor) {
    *factor = deferred ? scale : F(1);
    return load(g, stride, parity, mu, cb, deferred ? F(1) : scale);
  }
  /// `load_unscaled` of words loaded before (`load_words`).
  static __device__ __forceinline__ Link<F> decode_unscaled(const Stored &s, F scale, F *factor) {
    *factor = deferred ? scale : F(1);
    const F applied = deferred ? F(1) : scale;
    cplx<F> z[R / 2];
#pragma unroll
    for (int j = 0; j < rows; j++) word_values(s.w[j], applied, z + (paired ? 2 : 1) * j);
    return rebuild(z);
  }
  static __device__ __forceinline__ Link<F> load(const Vec *g, int stride, int parity, int mu, int cb, F scale) {
    cplx<F> z[R / 2];
    const Word *q = reinterpret_cast<const Word *>(g) + ((parity * 4 + mu) * rows) * stride + cb;
    // Each word converted as it is loaded (the order the kernels without
    // `links_first` were measured in).
#pragma unroll
    for (int j = 0; j < rows; j++) word_values(ld_stream(q + j * stride), scale, z + (paired ? 2 : 1) * j);
    return rebuild(z);
  }
  /// The stored complex numbers of one word, times `scale`.
  static __device__ __forceinline__ void word_values(Word w, F scale, cplx<F> *z) {
    if constexpr (paired)
      E::get2(w, scale, z);
    else
      z[0] = E::get(w, scale);
  }
  /// The link from its R/2 stored complex numbers, the rest rebuilt.
  static __device__ __forceinline__ Link<F> rebuild(const cplx<F> *z) {
    Link<F> u;
    constexpr int n = R / 2;
    if constexpr (R == 8) {
      rebuild8(z, u);
    } else {
#pragma unroll
      for (int k = 0; k < n; k++) u.m[k] = z[k];
    }
    if constexpr (R == 12) {
      // c = (a × b)*: c_i = conj(a_j b_k − a_k b_j), (i, j, k) cyclic.
#pragma unroll
      for (int i = 0; i < 3; i++) {
        const int j = (i + 1) % 3, k = (i + 2) % 3;
        cplx<F> t = mk<F>(0, 0);
        t = cmadd(u.m[j], u.m[3 + k], t);
        t = cmadd(mk(-u.m[k].re, -u.m[k].im), u.m[3 + j], t);
        u.m[6 + i] = mk(t.re, -t.im);
      }
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
