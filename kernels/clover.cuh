// clover.cuh: the clover term of the Wilson-clover operator on the device
// (src/clover/chiral.rs and src/clover/storage.rs define the numbers; the
// CPU backend applies the same ones).
//
// Storage: per site 72 reals, the two chiral blocks of B̃_k / 2 in the
// chiral basis of the UKQCD spinor, each block 6 real diagonal entries then
// 15 complex strictly lower entries column by column (QUDA's packing).
// Structure of arrays over all V sites in canonical order (site
// s = parity · Vh + cb): double as 36 double2, chunk j of site s at
// `j * stride + s`; single as 18 float4; half and quarter as 18 short4 /
// char4 with two f32 norms per site (one per block, `norm[2 s + k]`, the
// block's largest |real|), value = stored · norm / MAX.
//
// Application to a UKQCD spinor ψ = (u, l) (upper and lower spin pairs):
// χ0 = u + l, χ1 = u − l, χ'_k = B_k χ_k, ψ' = (χ'0 + χ'1, χ'0 − χ'1).
#pragma once
#include "core.cuh"

template <typename C> struct CloverSoA;

/// Double: 18 double2 per block.
template <> struct CloverSoA<double> {
  template <typename F>
  static __device__ __forceinline__ void load_block(u64 base, u64, int stride, int site, int k, F *b) {
    const double2 *q = reinterpret_cast<const double2 *>(base);
#pragma unroll
    for (int j = 0; j < 18; j++) {
      const double2 v = ld_stream(q + (18 * k + j) * stride + site);
      b[2 * j] = F(v.x);
      b[2 * j + 1] = F(v.y);
    }
  }
};

/// Single: 9 float4 per block.
template <> struct CloverSoA<float> {
  template <typename F>
  static __device__ __forceinline__ void load_block(u64 base, u64, int stride, int site, int k, F *b) {
    const float4 *q = reinterpret_cast<const float4 *>(base);
#pragma unroll
    for (int j = 0; j < 9; j++) {
      const float4 v = ld_stream(q + (9 * k + j) * stride + site);
      b[4 * j] = F(v.x);
      b[4 * j + 1] = F(v.y);
      b[4 * j + 2] = F(v.z);
      b[4 * j + 3] = F(v.w);
    }
  }
};

/// Half and quarter: 9 short4 / char4 per block and the block's norm.
template <typename T> struct FixedCloverSoA {
  template <typename F>
  static __device__ __forceinline__ void load_block(u64 base, u64 norm, int stride, int site, int k, F *b) {
    typedef typename Fixed<T>::Vec4 Vec;
    const Vec *q = reinterpret_cast<const Vec *>(base);
    const float n = ld_stream(reinterpret_cast<const float *>(norm) + 2 * site + k);
    const F s = F(n) / F(Fixed<T>::MAX);
#pragma unroll
    for (int j = 0; j < 9; j++) {
      if constexpr (same_type<F, float>::value) {
        // Its bits, converted exactly without the conversion unit (core.cuh).
        typedef typename Fixed<T>::Raw4 W;
        float f[4];
        Fixed<T>::to_float(ld_stream(reinterpret_cast<const W *>(q + (9 * k + j) * stride + site)), f);
#pragma unroll
        for (int i = 0; i < 4; i++) b[4 * j + i] = s * f[i];
      } else {
        const Vec v = ld_stream(q + (9 * k + j) * stride + site);
        b[4 * j] = s * F(v.x);
        b[4 * j + 1] = s * F(v.y);
        b[4 * j + 2] = s * F(v.z);
        b[4 * j + 3] = s * F(v.w);
      }
    }
  }
};
template <> struct CloverSoA<short> : FixedCloverSoA<short> {};
template <> struct CloverSoA<signed char> : FixedCloverSoA<signed char> {};

/// out = B chi for one Hermitian block of 36 packed reals.
template <typename F> __device__ __forceinline__ void clover_block_mul(const F *b, const cplx<F> *chi, cplx<F> *out) {
#pragma unroll
  for (int i = 0; i < 6; i++) out[i] = b[i] * chi[i];
  int k = 0;
#pragma unroll
  for (int c = 0; c < 6; c++) {
#pragma unroll
    for (int r = c + 1; r < 6; r++) {
      const cplx<F> z = mk(b[6 + 2 * k], b[7 + 2 * k]);
      out[r] = cmadd(z, chi[c], out[r]);
      out[c] = cjmadd(z, chi[r], out[c]);
      k++;
    }
  }
}

/// psi ← A psi (or A⁻¹, whichever field `base` holds) at canonical site `site`.
template <typename C, typename F>
__device__ __forceinline__ void apply_clover(u64 base, u64 norm, int stride, int site, cplx<F> *psi) {
  F b[36];
  cplx<F> chi[6], o0[6], o1[6];
#pragma unroll
  for (int i = 0; i < 6; i++) chi[i] = psi[i] + psi[6 + i];
  CloverSoA<C>::load_block(base, norm, stride, site, 0, b);
  clover_block_mul(b, chi, o0);
#pragma unroll
  for (int i = 0; i < 6; i++) chi[i] = psi[i] - psi[6 + i];
  CloverSoA<C>::load_block(base, norm, stride, site, 1, b);
  clover_block_mul(b, chi, o1);
#pragma unroll
  for (int i = 0; i < 6; i++) {
    psi[i] = o0[i] + o1[i];
    psi[6 + i] = o0[i] - o1[i];
  }
}

/// Arguments of the site-local clover kernel; mirrored by `CloverParams`
/// in src/backend/cuda/clover.rs.
struct CloverParams {
  u64 out;    // output parity block
  u64 in;     // input parity block (same parity)
  u64 clover; // A or A⁻¹, all sites
  u64 norm;   // fixed point: two norms per site, else 0
  int parity;
  int vh;
  int stride;        // spinor block stride (sites)
  int clover_stride; // clover stride (sites)
};
static_assert(sizeof(CloverParams) == 48, "CloverParams layout changed: update clover.rs");

/// out[p] = A_pp in[p] (or A⁻¹): one thread per site of the parity.
template <typename S, typename C> __device__ __forceinline__ void clover_site(const CloverParams &P) {
  typedef typename SpinorSoA<S>::F F;
  typedef typename SpinorSoA<S>::Vec SV;
  const int cb = blockIdx.x * blockDim.x + threadIdx.x;
  if (cb >= P.vh) return;
  cplx<F> psi[12];
  SpinorSoA<S>::template load<0, 12, true>(reinterpret_cast<const SV *>(P.in), P.stride, cb, psi);
  apply_clover<C>(P.clover, P.norm, P.clover_stride, P.parity * P.vh + cb, psi);
  SpinorSoA<S>::store(reinterpret_cast<SV *>(P.out), P.stride, cb, psi);
}
