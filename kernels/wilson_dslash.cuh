// wilson_dslash.cuh: the Wilson hopping term on one parity, UKQCD basis
// (docs/conventions.md, "The Wilson operator"; seed clark2010 §4 and Appendix B):
//
//   out[p] = a · Σ_μ [ (1 − γ_μ) U_μ(x) ψ(x+μ̂) + (1 + γ_μ) U_μ†(x−μ̂) ψ(x−μ̂) ]  (+ x[p])
//
// with the projector signs swapped for the dagger (D† = γ5 D γ5). One thread
// per output site, sites of the output parity in checkerboard order. The
// same semantics as `Backend::wilson_dslash` and the CPU reference
// `src/backend/cpu/wilson.rs`.
//
// In the UKQCD basis γ_k = ((0, iσ_k), (−iσ_k, 0)), so `(1 + s γ_k) ψ` is
// `(h, −s iσ_k h)` with `h = u + s iσ_k l` (u, l: upper and lower spin
// pairs), and γ_4 = diag(1, 1, −1, −1), so `1 ± γ_4` keeps only the upper or
// the lower pair: a temporal hop reads half of the neighbour's spinor.
// The time boundary sign multiplies the hops that cross the last time slice
// (links are stored as given, so that reconstruct 12 stays exact).
//
// The Wilson-clover kernels (wilson_clover_<format>.cu) add the clover term
// (clover.cuh) in the epilogue: form 1, `out = a · C D in (+ x)` (C = A⁻¹
// in the even-odd operators); form 2, `out = a · D in + C x` (C = A).
#pragma once
#include "core.cuh"
#include "clover.cuh"

// A source compiled with -DLATSOL_ONLY_RECONSTRUCT=r instantiates the
// hopping terms of reconstruct r only (one module per reconstruct, so that
// a solve compiles what its links use: src/backend/cuda/catalogue.rs).
#ifdef LATSOL_ONLY_RECONSTRUCT
#define LATSOL_HAS_RECONSTRUCT(r) (LATSOL_ONLY_RECONSTRUCT == (r))
#else
#define LATSOL_HAS_RECONSTRUCT(r) 1
#endif

/// Kernel arguments; mirrored by `DslashParams` in src/backend/cuda/hopping_params.rs.
struct DslashParams {
  u64 out;   // output parity block
  u64 in;    // input parity block (the other parity)
  u64 x;     // xpay parity block, or 0
  u64 gauge; // the whole gauge field, both parities
  double a;
  double gauge_scale; // fixed-point links: value = stored · gauge_scale
  double t_sign;      // boundary sign of the T hops across t = T − 1 → 0
  int dims[4];      // X, Y, Z, T
  int parity;       // parity of the output sites
  int vh;           // sites per parity
  int stride;       // spinor block stride (sites)
  int gauge_stride; // gauge stride (sites)
  u64 clover;       // clover (or inverse) of all sites, or 0
  u64 clover_norm;  // its fixed-point norms, or 0
  int clover_stride;
  int prefetch_links;  // 1: ask L2 for the links before the wait (`kernel_entry_after_links`)
  unsigned div_magic[3];  // n / dims[mu] = divide(n, div_magic[mu], div_shift[mu]), mu < 3
  unsigned div_shift[3];
  int interior_cut;  // on a cut lattice, bit mu where mu is cut: the launch computes the interior sites only
  int pad;
};
static_assert(sizeof(DslashParams) == 144, "DslashParams layout changed: update hopping_params.rs");

/// Half spinor h of (1 + s γ_mu) ψ for a spatial mu (0, 1, 2).
template <int mu, int s, typename F>
__device__ __forceinline__ void project(const cplx<F> *psi, cplx<F> *h) {
  const F sf = F(s);
#pragma unroll
  for (int c = 0; c < 3; c++) {
    const cplx<F> u0 = psi[c], u1 = psi[3 + c], l0 = psi[6 + c], l1 = psi[9 + c];
    if (mu == 0) {  // iσ1 (l0, l1) = (i l1, i l0)
      h[c] = u0 + sf * times_i(l1);
      h[3 + c] = u1 + sf * times_i(l0);
    } else if (mu == 1) {  // iσ2 (l0, l1) = (l1, −l0)
      h[c] = u0 + sf * l1;
      h[3 + c] = u1 - sf * l0;
    } else {  // iσ3 (l0, l1) = (i l0, −i l1)
      h[c] = u0 + sf * times_i(l0);
      h[3 + c] = u1 - sf * times_i(l1);
    }
  }
}

/// `project` on numbers that each carry the bias B (`load_biased`): the
/// half spinor of the integers themselves, exact. A difference cancels the
/// bias, (B + u) − (B + l) = u − l; a sum takes it out of one term first,
/// (B + u) + ((B + l) − 2B) = u + l, where (B + l) − 2B = l − B is exact
/// (an integer of magnitude below 2^24). Three subtractions become one, or two.
template <int s> __device__ __forceinline__ float biased_pm(float u, float l, float two_b) {
  static_assert(s == 1 || s == -1, "a sign");
  if constexpr (s > 0)
    return u + (l - two_b);
  else
    return u - l;
}
template <int mu, int s>
__device__ __forceinline__ void project_biased(const cplx<float> *psi, float bias, cplx<float> *h) {
  const float two_b = 2.0f * bias;
#pragma unroll
  for (int c = 0; c < 3; c++) {
    const cplx<float> u0 = psi[c], u1 = psi[3 + c], l0 = psi[6 + c], l1 = psi[9 + c];
    // The same signs as `project`: times_i(z) = (−z.im, z.re).
    if (mu == 0) {  // h0 = u0 + s i l1, h1 = u1 + s i l0
      h[c] = mk(biased_pm<-s>(u0.re, l1.im, two_b), biased_pm<s>(u0.im, l1.re, two_b));
      h[3 + c] = mk(biased_pm<-s>(u1.re, l0.im, two_b), biased_pm<s>(u1.im, l0.re, two_b));
    } else if (mu == 1) {  // h0 = u0 + s l1, h1 = u1 − s l0
      h[c] = mk(biased_pm<s>(u0.re, l1.re, two_b), biased_pm<s>(u0.im, l1.im, two_b));
      h[3 + c] = mk(biased_pm<-s>(u1.re, l0.re, two_b), biased_pm<-s>(u1.im, l0.im, two_b));
    } else {  // h0 = u0 + s i l0, h1 = u1 − s i l1
      h[c] = mk(biased_pm<-s>(u0.re, l0.im, two_b), biased_pm<s>(u0.im, l0.re, two_b));
      h[3 + c] = mk(biased_pm<s>(u1.re, l1.im, two_b), biased_pm<-s>(u1.im, l1.re, two_b));
    }
  }
}

/// acc += (H, −s iσ_k H) for a spatial mu: the spinor rebuilt from a half spinor.
template <int mu, int s, typename F>
__device__ __forceinline__ void accumulate(const cplx<F> *H, cplx<F> *acc) {
  const F sf = F(s);
#pragma unroll
  for (int c = 0; c < 3; c++) {
    acc[c] = acc[c] + H[c];
    acc[3 + c] = acc[3 + c] + H[3 + c];
    if (mu == 0) {
      acc[6 + c] = acc[6 + c] - sf * times_i(H[3 + c]);
      acc[9 + c] = acc[9 + c] - sf * times_i(H[c]);
    } else if (mu == 1) {
      acc[6 + c] = acc[6 + c] - sf * H[3 + c];
      acc[9 + c] = acc[9 + c] + sf * H[c];
    } else {
      acc[6 + c] = acc[6 + c] - sf * times_i(H[c]);
      acc[9 + c] = acc[9 + c] + sf * times_i(H[3 + c]);
    }
  }
}

/// One hop: the neighbour `n` (checkerboard index in the input parity) seen
/// through the projector (1 + s γ_mu) and the link (U, or U† when `adjoint`).
/// With `deferred` the true link is `link_factor` · u
/// (`GaugeSoA::load_unscaled`). A half or quarter neighbour comes as its
/// stored integers (`DeferredScale`), whatever the links: the projection
/// (on the biased integers, `project_biased`) and the product run on those,
/// and the hop's result is scaled once. (That scale, the site's norm / 32767
/// times the links' scale where they are deferred, is subnormal for a site
/// whose norm is below about 1e-29 with reconstruct 18, 4e-34 otherwise:
/// such a site keeps fewer bits, as it would in the fixed-point format anyway.)
template <int mu, int s, bool adjoint, bool deferred, typename S, typename F>
__device__ __forceinline__ void hop(const typename SpinorSoA<S>::Vec *in, int stride, const Link<F> &u,
                                    F link_factor, int n, F sign, cplx<F> *acc) {
  constexpr bool spinor_deferred = DeferredScale<S>::value;
  constexpr bool scale_once = deferred || spinor_deferred;
  cplx<F> h[6], uh[6];
  F k = link_factor;
  if (mu == 3) {
    // 1 + γ4 = diag(2, 2, 0, 0), 1 − γ4 = diag(0, 0, 2, 2): read only that pair;
    // the factor 2 and the boundary sign go with it.
    constexpr int c0 = s > 0 ? 0 : 6;
    if constexpr (spinor_deferred) {
      k = (F(2) * sign) * (k * SpinorSoA<S>::template load_unscaled<c0, 6, false>(in, stride, n, h));
    } else {
      SpinorSoA<S>::template load<c0, 6, false>(in, stride, n, h);
      if constexpr (scale_once) {
        k = (F(2) * sign) * k;
      } else {
#pragma unroll
        for (int c = 0; c < 6; c++) h[c] = (F(2) * sign) * h[c];
      }
    }
  } else {
    cplx<F> psi[12];
    if constexpr (spinor_deferred) {
      k = k * SpinorSoA<S>::template load_biased<0, 12, false>(in, stride, n, psi);
      project_biased<mu, s>(psi, SpinorSoA<S>::BIAS, h);
    } else {
      SpinorSoA<S>::template load<0, 12, false>(in, stride, n, psi);
      project<mu, s>(psi, h);
    }
  }
  if (adjoint)
    link_adj_mul(u, h, uh);
  else
    link_mul(u, h, uh);
  if constexpr (scale_once) {
    // Rounded on its own, never fused with the sum that follows: the split
    // form adds these terms in another place, and both forms must agree bit
    // for bit.
#pragma unroll
    for (int c = 0; c < 6; c++) uh[c] = mk(mul_rn(k, uh[c].re), mul_rn(k, uh[c].im));
  }
  if (mu == 3) {
    const int o = s > 0 ? 0 : 6;
#pragma unroll
    for (int c = 0; c < 6; c++) acc[o + c] = acc[o + c] + uh[c];
  } else {
    accumulate<mu, s>(uh, acc);
  }
}

/// The forward link of direction mu at output site cb, unscaled as
/// `GaugeSoA::load_unscaled` says. It needs no coordinates: written before
/// the neighbours are computed, so that the compiler may issue its loads
/// first (it places them where registers allow).
template <int mu, int R, typename Lk, typename F>
__device__ __forceinline__ Link<F> forward_link(const DslashParams &P, int cb, F *factor) {
  typedef GaugeSoA<Lk, R> G;
  const typename G::Vec *g = reinterpret_cast<const typename G::Vec *>(P.gauge);
  return G::load_unscaled(g, P.gauge_stride, P.parity, mu, cb, F(P.gauge_scale), factor);
}

/// Asks L2 for the links at indices [first, first + count) of both parities
/// (every stored row of the four directions), one bulk prefetch a row by the
/// block's first threads. A block's forward links are those of its own
/// sites; the backward ones are its neighbours', a few sites or a slice
/// away, which the grid's blocks ask for between them. Issued before the
/// kernel waits for its predecessor (`kernel_entry_after_links`): no kernel
/// of a solve writes the links, so they can come from memory while that
/// kernel still runs, and a prefetch changes no value that a load sees
/// (L2 is where the device's writes meet). sm_90 (`cp.async.bulk`) only.
/// (PTX 8.0: compiled by NVRTC 12 and later only; with NVRTC 11 the
/// hopping terms load their links as before.)
template <typename Lk, int R>
__device__ __forceinline__ void prefetch_links(const DslashParams &P, int first, int count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ >= 12
  typedef GaugeSoA<Lk, R> G;
  constexpr unsigned long long bytes = G::row_bytes();
  if (count <= 0) return;
  for (int r = threadIdx.x; r < 2 * 4 * G::rows; r += blockDim.x) {
    const unsigned long long row = P.gauge + bytes * (unsigned long long)r * unsigned(P.gauge_stride);
    // Whole 16-byte units inside the row's part (the instruction's unit).
    const unsigned long long lo = (row + bytes * unsigned(first)) & ~15ull;
    const unsigned long long hi = (row + bytes * unsigned(first + count)) & ~15ull;
    if (hi > lo)
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(lo), "r"(unsigned(hi - lo)) : "memory");
  }
#endif
}

/// The hopping terms' first statement: the links' prefetch for the block's
/// sites where the backend asks for it (`P.prefetch_links`), then
/// `kernel_entry` (the wait for the predecessor). The backend asks where the
/// grid fits on the device beside another of its size (16^4 half: a parity
/// is a third of a wave): the blocks are then placed while the previous
/// kernel runs (programmatic launches), and the links arrive meanwhile.
/// Where they are placed only as that kernel's blocks leave, the prefetch
/// comes no earlier than the loads and measured slower (src/backend/cuda/
/// dslash_forms.rs, `links_prefetched`; docs/performance.md, "Small volumes").
/// `wait` false: the caller waits itself, after its first links
/// (`wilson_dslash`, `links_first`).
template <typename Lk, int R, bool wait = true>
__device__ __forceinline__ void kernel_entry_after_links(const DslashParams &P, int first, int count) {
  if (P.prefetch_links) prefetch_links<Lk, R>(P, first, min(count, P.vh - first));
  if constexpr (wait) kernel_entry();
}

/// Both hops of direction mu for the site at lexicographic index `lex`
/// with coordinate `xmu` along mu, the forward one (through `uf`, from
/// `forward_link` or from words loaded before the wait, `hops_with_words`)
/// added to `acc_f` and then the backward one to `acc_b`
/// (the same sum, or each its own for the split form).
template <int mu, int sf, int R, typename S, typename Lk, typename F>
__device__ __forceinline__ void hops(const DslashParams &P, int cb, int lex, int xmu, int step, const Link<F> &uf,
                                     F kf, cplx<F> *acc_f, cplx<F> *acc_b) {
  typedef typename SpinorSoA<S>::Vec SV;
  typedef GaugeSoA<Lk, R> G;
  constexpr bool deferred = G::deferred;
  const SV *in = reinterpret_cast<const SV *>(P.in);
  const typename G::Vec *g = reinterpret_cast<const typename G::Vec *>(P.gauge);
  const int L = P.dims[mu];
  const int fwd = (xmu == L - 1 ? lex - (L - 1) * step : lex + step) >> 1;
  const int bwd = (xmu == 0 ? lex + (L - 1) * step : lex - step) >> 1;
  // Only T hops across the time boundary carry its sign.
  const F sign_f = (mu == 3 && xmu == L - 1) ? F(P.t_sign) : F(1);
  const F sign_b = (mu == 3 && xmu == 0) ? F(P.t_sign) : F(1);
  // Forward: (1 − γ_mu) U_mu(x) ψ(x + mu), signs swapped for the dagger.
  hop<mu, sf, false, deferred, S>(in, P.stride, uf, kf, fwd, sign_f, acc_f);
  // Backward: (1 + γ_mu) U_mu(x − mu)† ψ(x − mu); the link lives on the other parity.
  F kb;
  const Link<F> ub = G::load_unscaled(g, P.gauge_stride, 1 - P.parity, mu, bwd, F(P.gauge_scale), &kb);
  hop<mu, -sf, true, deferred, S>(in, P.stride, ub, kb, bwd, sign_b, acc_b);
}

/// `hops` with the forward link loaded here.
template <int mu, int sf, int R, typename S, typename Lk, typename F>
__device__ __forceinline__ void hops(const DslashParams &P, int cb, int lex, int xmu, int step, cplx<F> *acc_f,
                                     cplx<F> *acc_b) {
  F kf;
  const Link<F> uf = forward_link<mu, R, Lk>(P, cb, &kf);
  hops<mu, sf, R, S, Lk>(P, cb, lex, xmu, step, uf, kf, acc_f, acc_b);
}

/// Coordinates of an output site and its lexicographic index.
struct DslashSite {
  int x[4];
  int lex;
};

/// Coordinates and lexicographic index of site cb (`checkerboard_coords`).
__device__ __forceinline__ DslashSite dslash_site(const DslashParams &P, int cb) {
  DslashSite s;
  s.lex = checkerboard_coords(P, cb, s.x);
  return s;
}

/// Whether a site touches a face of the interior launch's cut directions
/// (`P.interior_cut`): its hops of length 1 leave the rank, so the edges'
/// launch computes it (`wilson_dslash_edges`) once the faces are here.
__device__ __forceinline__ bool on_cut_face(const DslashParams &P, const DslashSite &s) {
  bool edge = false;
#pragma unroll
  for (int mu = 0; mu < 4; mu++)
    edge |= ((P.interior_cut >> mu) & 1) && (s.x[mu] == 0 || s.x[mu] == P.dims[mu] - 1);
  return edge;
}

/// out[cb] = a · acc (+ x[cb]), with the clover term of the form (clover
/// 1: on acc, 2: on x).
template <typename S, bool xpay, int clover, typename C, typename F>
__device__ __forceinline__ void epilogue(const DslashParams &P, int cb, cplx<F> (&acc)[12]) {
  typedef typename SpinorSoA<S>::Vec SV;
  const F a = F(P.a);
  if (clover == 1) apply_clover<C>(P.clover, P.clover_norm, P.clover_stride, P.parity * P.vh + cb, acc);
  if (xpay) {
    cplx<F> xs[12];
    SpinorSoA<S>::template load<0, 12, true>(reinterpret_cast<const SV *>(P.x), P.stride, cb, xs);
    if (clover == 2) apply_clover<C>(P.clover, P.clover_norm, P.clover_stride, P.parity * P.vh + cb, xs);
#pragma unroll
    for (int c = 0; c < 12; c++) acc[c] = mk(fma(a, acc[c].re, xs[c].re), fma(a, acc[c].im, xs[c].im));
  } else {
#pragma unroll
    for (int c = 0; c < 12; c++) acc[c] = a * acc[c];
  }
  SpinorSoA<S>::store(reinterpret_cast<SV *>(P.out), P.stride, cb, acc);
}

/// `hops` of direction mu, its forward link from the words `w[mu]` loaded
/// before the wait where mu < links_first (`wilson_dslash`), else loaded here.
template <int mu, int links_first, int sf, int R, typename S, typename Lk, typename F>
__device__ __forceinline__ void hops_with_words(const DslashParams &P, int cb, int lex, int xmu, int step,
                                                const typename GaugeSoA<Lk, R>::Stored *w, cplx<F> *acc) {
  if constexpr (mu < links_first) {
    F k;
    const Link<F> u = GaugeSoA<Lk, R>::decode_unscaled(w[mu], F(P.gauge_scale), &k);
    hops<mu, sf, R, S, Lk>(P, cb, lex, xmu, step, u, k, acc, acc);
  } else {
    hops<mu, sf, R, S, Lk>(P, cb, lex, xmu, step, acc, acc);
  }
}

/// S: the spinors' storage type; Lk: the links' (the same, or beside packed
/// spinors the fixed-point links of seed clark2022 §4); clover: 0 none, 1
/// on the hopping term, 2 on the xpay field; C: the clover's storage type;
/// links_first: 0, the kernel has waited for its predecessor already; 1 to
/// 4, it has not, and waits after loading the stored words of the forward
/// links of that many directions (kept as loaded, converted after the wait
/// where each is used: reconstruct 12 half holds a link in 6 registers
/// instead of 18, so three compile without spilling at 96 registers, where
/// three converted links measured slower than two). Where a grid is placed
/// as the previous kernel's blocks leave, its first blocks then read those
/// links in that kernel's tail, where the multiprocessors idle (Nsight
/// Compute, 24^4 half r12: 17% of the cycles): 24^4 half r12 75% -> 79% of
/// the roofline with 3 (4: 73%), 32^3x64 86% -> 89% (docs/performance.md,
/// "Small volumes"; a format chooses per reconstruct,
/// `LATSOL_LINKS_FIRST_OF`). Safe because the kernel before a hopping term
/// never writes its links: the gauge stores end with a synchronisation
/// (src/backend/cuda/host_gauge.rs, `import_gauge_impl`), and a kernel
/// placed early starts only after that kernel's own wait, when every kernel
/// before it has finished.
/// `block`: the block's place among the blocks of one right-hand side
/// (blockIdx.x, but for the several right-hand sides of `wilson_dslash_rhs`).
template <typename S, typename Lk, int R, bool dagger, bool xpay, int clover = 0, typename C = float,
          int links_first = 0>
__device__ __forceinline__ void wilson_dslash(const DslashParams &P, int block) {
  typedef typename SpinorSoA<S>::F F;
  static_assert(same_type<F, typename LinkElem<Lk>::F>::value, "links and spinors must share the arithmetic");
  const int cb = block * blockDim.x + threadIdx.x;
  if (cb >= P.vh) return;
  static_assert(links_first >= 0 && links_first <= 4, "the four forward links at most");
  typedef GaugeSoA<Lk, R> G;
  F k0;
  Link<F> u0;
  typename G::Stored w[links_first > 0 ? links_first : 1];
  if constexpr (links_first == 0) {
    u0 = forward_link<0, R, Lk>(P, cb, &k0);
  } else {
    const typename G::Vec *g = reinterpret_cast<const typename G::Vec *>(P.gauge);
#pragma unroll
    for (int mu = 0; mu < links_first; mu++) w[mu] = G::load_words(g, P.gauge_stride, P.parity, mu, cb);
    // Nothing but the links' words above is read before this wait; they are
    // turned into numbers after it, where each is used.
    kernel_entry();
  }
  const DslashSite site = dslash_site(P, cb);
  if (P.interior_cut && on_cut_face(P, site)) return;
  constexpr int sf = dagger ? 1 : -1;  // forward hops carry (1 + sf γ)
  cplx<F> acc[12];
#pragma unroll
  for (int c = 0; c < 12; c++) acc[c] = mk<F>(0, 0);
  const int X = P.dims[0], XY = X * P.dims[1], XYZ = XY * P.dims[2];
  if constexpr (links_first > 0) u0 = G::decode_unscaled(w[0], F(P.gauge_scale), &k0);
  hops<0, sf, R, S, Lk>(P, cb, site.lex, site.x[0], 1, u0, k0, acc, acc);
  hops_with_words<1, links_first, sf, R, S, Lk>(P, cb, site.lex, site.x[1], X, w, acc);
  hops_with_words<2, links_first, sf, R, S, Lk>(P, cb, site.lex, site.x[2], XY, w, acc);
  hops_with_words<3, links_first, sf, R, S, Lk>(P, cb, site.lex, site.x[3], XYZ, w, acc);
  epilogue<S, xpay, clover, C>(P, cb, acc);
}

/// The same hopping term with four threads a site (small volumes, issue 18):
/// a block of 128 threads serves 32 sites, warp g of the block doing both
/// hops of direction g for the 32 sites of its lanes. One site's work is then
/// two hops (two rounds of neighbour loads instead of eight) and a lattice
/// puts four times the threads in flight, which is what hides the memory
/// latency where a parity has too few sites to fill the device (16^4: 32768).
/// Warps 1–3 hand each hop's term to warp 0 through shared memory, and warp 0
/// adds them in the one-thread form's order (forward, backward, direction by
/// direction), so both forms give the same numbers, bit for bit, and the
/// tuner's choice between them changes no result. The backend times the
/// forms (this, the plain and the wide one) on first use and keeps the
/// fastest (src/backend/cuda/dslash_forms.rs);
/// launched with blocks of exactly 4 · LATSOL_SPLIT_SITES threads.
#define LATSOL_SPLIT_SITES 32
/// One warp's part of the split form: both hops of direction mu, the forward
/// link on its way before the coordinates are computed.
template <int mu, int sf, int R, typename S, typename Lk, typename F>
__device__ __forceinline__ void split_hops(const DslashParams &P, int cb, cplx<F> *acc_f, cplx<F> *acc_b) {
  F kf;
  const Link<F> uf = forward_link<mu, R, Lk>(P, cb, &kf);
  const DslashSite site = dslash_site(P, cb);
  const int X = P.dims[0], XY = X * P.dims[1], XYZ = XY * P.dims[2];
  const int step = mu == 0 ? 1 : mu == 1 ? X : mu == 2 ? XY : XYZ;
  hops<mu, sf, R, S, Lk>(P, cb, site.lex, site.x[mu], step, uf, kf, acc_f, acc_b);
}
template <typename S, typename Lk, int R, bool dagger, bool xpay>
__device__ __forceinline__ void wilson_dslash_split(const DslashParams &P) {
  typedef typename SpinorSoA<S>::F F;
  static_assert(same_type<F, typename LinkElem<Lk>::F>::value, "links and spinors must share the arithmetic");
  const int lane = threadIdx.x % LATSOL_SPLIT_SITES, g = threadIdx.x / LATSOL_SPLIT_SITES;
  const int cb = blockIdx.x * LATSOL_SPLIT_SITES + lane;
  // No early return: every warp of the block meets the barrier below.
  const bool active = cb < P.vh && !(P.interior_cut && on_cut_face(P, dslash_site(P, cb)));
  // [direction − 1][forward, backward][component][site]
  __shared__ cplx<F> terms[3][2][12][LATSOL_SPLIT_SITES];
  constexpr int sf = dagger ? 1 : -1;
  cplx<F> acc[12], back[12];
#pragma unroll
  for (int c = 0; c < 12; c++) acc[c] = back[c] = mk<F>(0, 0);
  if (active) {
    // g is the warp's: no divergence. Warp 0 sums its two hops as the
    // one-thread form does; the others keep each hop's term apart.
    if (g == 0) split_hops<0, sf, R, S, Lk>(P, cb, acc, acc);
    else if (g == 1) split_hops<1, sf, R, S, Lk>(P, cb, acc, back);
    else if (g == 2) split_hops<2, sf, R, S, Lk>(P, cb, acc, back);
    else split_hops<3, sf, R, S, Lk>(P, cb, acc, back);
  }
  if (g > 0) {
#pragma unroll
    for (int c = 0; c < 12; c++) {
      terms[g - 1][0][c][lane] = acc[c];
      terms[g - 1][1][c][lane] = back[c];
    }
  }
  __syncthreads();
  if (g > 0 || !active) return;
#pragma unroll
  for (int k = 0; k < 3; k++) {
#pragma unroll
    for (int d = 0; d < 2; d++) {
#pragma unroll
      for (int c = 0; c < 12; c++) acc[c] = acc[c] + terms[k][d][c][lane];
    }
  }
  epilogue<S, xpay, 0, float>(P, cb, acc);
}

/// The edges' launch: the hopping term's arguments and the faces.
struct EdgeParams {
  DslashParams d;
  HaloView h;
};

/// The index of site s among its parity's sites in its layer of direction
/// mu (src/comm/faces.rs, `face_index`).
__device__ __forceinline__ int face_index(const DslashParams &P, const DslashSite &s, int mu) {
  int index = 0, stride = 1;
#pragma unroll
  for (int nu = 0; nu < 4; nu++) {
    if (nu == mu) continue;
    index += s.x[nu] * stride;
    stride *= P.dims[nu];
  }
  return index >> 1;
}

/// `hops` for an edge site: a neighbour across a cut face read from the
/// face, the link behind a cut face from the links' face. The same hops
/// through the same `hop`, in the same order, as the one-device kernel.
template <int mu, int sf, int R, typename S, typename Lk, typename F>
__device__ __forceinline__ void edge_hops(const DslashParams &P, const HaloView &H, int cb, const DslashSite &site,
                                          int step, cplx<F> *acc) {
  typedef typename SpinorSoA<S>::Vec SV;
  typedef GaugeSoA<Lk, R> G;
  constexpr bool deferred = G::deferred;
  const SV *in = reinterpret_cast<const SV *>(P.in);
  const typename G::Vec *g = reinterpret_cast<const typename G::Vec *>(P.gauge);
  const int L = P.dims[mu], xmu = site.x[mu], lex = site.lex;
  const bool cut = (H.cut >> mu) & 1;
  F kf;
  const Link<F> uf = forward_link<mu, R, Lk>(P, cb, &kf);
  if (cut && xmu == L - 1) {
    const F sign = mu == 3 ? F(H.t_sign_ahead) : F(1);
    const SV *face = reinterpret_cast<const SV *>(H.ahead[mu]);
    hop<mu, sf, false, deferred, S>(face, H.face_stride[mu], uf, kf, face_index(P, site, mu), sign, acc);
  } else {
    const int fwd = (xmu == L - 1 ? lex - (L - 1) * step : lex + step) >> 1;
    const F sign = (mu == 3 && xmu == L - 1) ? F(P.t_sign) : F(1);
    hop<mu, sf, false, deferred, S>(in, P.stride, uf, kf, fwd, sign, acc);
  }
  F kb;
  if (cut && xmu == 0) {
    const int slot = face_index(P, site, mu);
    const typename G::Vec *gf = reinterpret_cast<const typename G::Vec *>(H.links[0][mu][P.parity]);
    const Link<F> ub = G::load_unscaled(gf, H.link_stride[0][mu], 0, 0, slot, F(P.gauge_scale), &kb);
    const F sign = mu == 3 ? F(H.t_sign_behind) : F(1);
    const SV *face = reinterpret_cast<const SV *>(H.behind[mu]);
    hop<mu, -sf, true, deferred, S>(face, H.face_stride[mu], ub, kb, slot, sign, acc);
  } else {
    const int bwd = (xmu == 0 ? lex + (L - 1) * step : lex - step) >> 1;
    const Link<F> ub = G::load_unscaled(g, P.gauge_stride, 1 - P.parity, mu, bwd, F(P.gauge_scale), &kb);
    const F sign = (mu == 3 && xmu == 0) ? F(P.t_sign) : F(1);
    hop<mu, -sf, true, deferred, S>(in, P.stride, ub, kb, bwd, sign, acc);
  }
}

/// The hopping term on the edge sites of a cut lattice (one thread a site
/// of `H.edges`), after the faces have arrived; the interior sites are the
/// plain kernel's (`P.interior_cut`). The same numbers, bit for bit, as one
/// device computing the whole lattice.
template <typename S, typename Lk, int R, bool dagger, bool xpay, int clover = 0, typename C = float>
__device__ __forceinline__ void wilson_dslash_edges(const EdgeParams &E) {
  typedef typename SpinorSoA<S>::F F;
  const DslashParams &P = E.d;
  const HaloView &H = E.h;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= H.n_edges) return;
  const int cb = reinterpret_cast<const unsigned *>(H.edges)[i];
  const DslashSite site = dslash_site(P, cb);
  constexpr int sf = dagger ? 1 : -1;
  cplx<F> acc[12];
#pragma unroll
  for (int c = 0; c < 12; c++) acc[c] = mk<F>(0, 0);
  const int X = P.dims[0], XY = X * P.dims[1], XYZ = XY * P.dims[2];
  edge_hops<0, sf, R, S, Lk>(P, H, cb, site, 1, acc);
  edge_hops<1, sf, R, S, Lk>(P, H, cb, site, X, acc);
  edge_hops<2, sf, R, S, Lk>(P, H, cb, site, XY, acc);
  edge_hops<3, sf, R, S, Lk>(P, H, cb, site, XYZ, acc);
  epilogue<S, xpay, clover, C>(P, cb, acc);
}

/// The edges' kernels of one storage format (kernels/wilson_edges_<format>.cu):
/// the hopping term's four forms and the clover forms' six, named as the
/// one-device kernels + "_edges".
#define LATSOL_EDGES(name, S, L, R, dagger, xpay, form, C) \
  extern "C" __global__ void name(const EdgeParams P) { kernel_entry(); wilson_dslash_edges<S, L, R, dagger, xpay, form, C>(P); }
#define LATSOL_EDGE_FORMS(prefix, S, L, R)                          \
  LATSOL_EDGES(prefix##_edges, S, L, R, false, false, 0, float)      \
  LATSOL_EDGES(prefix##_dag_edges, S, L, R, true, false, 0, float)   \
  LATSOL_EDGES(prefix##_xpay_edges, S, L, R, false, true, 0, float)  \
  LATSOL_EDGES(prefix##_dag_xpay_edges, S, L, R, true, true, 0, float)
#define LATSOL_CLOVER_EDGE_FORMS(prefix, S, L, R, C)                   \
  LATSOL_EDGES(prefix##_inv_edges, S, L, R, false, false, 1, C)         \
  LATSOL_EDGES(prefix##_dag_inv_edges, S, L, R, true, false, 1, C)      \
  LATSOL_EDGES(prefix##_inv_xpay_edges, S, L, R, false, true, 1, C)     \
  LATSOL_EDGES(prefix##_dag_inv_xpay_edges, S, L, R, true, true, 1, C)  \
  LATSOL_EDGES(prefix##_dir_edges, S, L, R, false, true, 2, C)          \
  LATSOL_EDGES(prefix##_dag_dir_edges, S, L, R, true, true, 2, C)

/// The four kernels of one form (`make`): plain, dagger, xpay, both; named
/// prefix, prefix_dag, prefix_xpay, prefix_dag_xpay, each + `suffix`.
#define LATSOL_FOUR_FORMS(make, prefix, suffix, S, L, R) \
  make(prefix##suffix, S, L, R, false, false)             \
  make(prefix##_dag##suffix, S, L, R, true, false)        \
  make(prefix##_xpay##suffix, S, L, R, false, true)       \
  make(prefix##_dag_xpay##suffix, S, L, R, true, true)

// LATSOL_SPLIT_BOUNDS (an experiment switch): the split form's minimum
// blocks per SM, which caps its registers.
#ifndef LATSOL_SPLIT_BOUNDS
#define LATSOL_SPLIT_BOUNDS 128, 8
#endif
#define LATSOL_DSLASH_SPLIT(name, S, L, R, dagger, xpay)                                       \
  extern "C" __global__ void __launch_bounds__(LATSOL_SPLIT_BOUNDS) name(const DslashParams P) { \
    kernel_entry_after_links<L, R>(P, blockIdx.x * LATSOL_SPLIT_SITES, LATSOL_SPLIT_SITES);     \
    wilson_dslash_split<S, L, R, dagger, xpay>(P);                                             \
  }
/// The split forms of one storage format (the plain forms' names + "_split").
#define LATSOL_DSLASH_SPLIT_FORMS(prefix, S, L, R) LATSOL_FOUR_FORMS(LATSOL_DSLASH_SPLIT, prefix, _split, S, L, R)

/// The one-thread form with the widest register budget (blocks of at most
/// 256, one an SM: 255 registers), named `<kernel>_wide`: the third form of
/// a small volume (issue 18). A 16^4 parity (32768 sites) is 7.75 warps an
/// SM, all resident whatever the budget, so registers cost no warps there,
/// and with 145 instead of 96 the compiler issues more of a site's loads
/// before the arithmetic that needs them: 16^4 half r18 53/56% -> 56/60% of
/// the roofline (docs/performance.md). The same code as the plain form,
/// so the same numbers; the backend times the three forms on first use
/// (up to `SMALL_VOLUME_SITES`); instantiated in wilson_dslash_f16_small.cu.
// LATSOL_WIDE_BOUNDS (an experiment switch): the wide form's bounds.
#ifndef LATSOL_WIDE_BOUNDS
#define LATSOL_WIDE_BOUNDS 256, 1
#endif
#define LATSOL_DSLASH_WIDE(name, S, L, R, dagger, xpay)                                 \
  extern "C" __global__ void __launch_bounds__(LATSOL_WIDE_BOUNDS) name(const DslashParams P) { \
    kernel_entry_after_links<L, R, LATSOL_LINKS_FIRST_OF(R) == 0>(P, blockIdx.x * blockDim.x, blockDim.x); \
    wilson_dslash<S, L, R, dagger, xpay, 0, float, LATSOL_LINKS_FIRST_OF(R)>(P, blockIdx.x);               \
  }
#define LATSOL_DSLASH_WIDE_FORMS(prefix, S, L, R) LATSOL_FOUR_FORMS(LATSOL_DSLASH_WIDE, prefix, _wide, S, L, R)

// LATSOL_DSLASH_BOUNDS="threads,min_blocks" (an experiment switch) caps the
// registers through __launch_bounds__; by default the compiler chooses.
#ifdef LATSOL_DSLASH_BOUNDS
#define LATSOL_BOUNDS __launch_bounds__(LATSOL_DSLASH_BOUNDS)
#else
#define LATSOL_BOUNDS
#endif

// A format may bound the plain hopping term per reconstruct instead
// (LATSOL_DSLASH_BOUNDS_18, _12, _8, defined before this header where
// LATSOL_DSLASH_BOUNDS is not): the best register budget differs with the
// links' size (docs/performance.md, "Small volumes").
#ifdef LATSOL_DSLASH_BOUNDS_18
#define LATSOL_BOUNDS_OF_18 __launch_bounds__(LATSOL_DSLASH_BOUNDS_18)
#else
#define LATSOL_BOUNDS_OF_18 LATSOL_BOUNDS
#endif
#ifdef LATSOL_DSLASH_BOUNDS_12
#define LATSOL_BOUNDS_OF_12 __launch_bounds__(LATSOL_DSLASH_BOUNDS_12)
#else
#define LATSOL_BOUNDS_OF_12 LATSOL_BOUNDS
#endif
#ifdef LATSOL_DSLASH_BOUNDS_8
#define LATSOL_BOUNDS_OF_8 __launch_bounds__(LATSOL_DSLASH_BOUNDS_8)
#else
#define LATSOL_BOUNDS_OF_8 LATSOL_BOUNDS
#endif
#define LATSOL_BOUNDS_OF(R) LATSOL_BOUNDS_OF_##R

// The forward links whose stored words a one-thread hopping term loads
// before it waits for the previous kernel (`wilson_dslash`, `links_first`),
// per reconstruct: a
// format defines LATSOL_LINKS_FIRST_18, _12 or _8 before this header where
// it measured faster; 0 otherwise.
#ifndef LATSOL_LINKS_FIRST_18
#define LATSOL_LINKS_FIRST_18 0
#endif
#ifndef LATSOL_LINKS_FIRST_12
#define LATSOL_LINKS_FIRST_12 0
#endif
#ifndef LATSOL_LINKS_FIRST_8
#define LATSOL_LINKS_FIRST_8 0
#endif
#define LATSOL_LINKS_FIRST_OF(R) LATSOL_LINKS_FIRST_##R

#define LATSOL_DSLASH(name, S, L, R, dagger, xpay) \
  extern "C" __global__ void LATSOL_BOUNDS_OF(R) name(const DslashParams P) { \
    kernel_entry_after_links<L, R, LATSOL_LINKS_FIRST_OF(R) == 0>(P, blockIdx.x * blockDim.x, blockDim.x); \
    wilson_dslash<S, L, R, dagger, xpay, 0, float, LATSOL_LINKS_FIRST_OF(R)>(P, blockIdx.x);               \
  }

// Each wilson_dslash_<precision>.cu instantiates every form and
// reconstruction of one storage format S with its links L (the spinors'
// precision; 16- or 32-bit fixed point beside the packed formats): small
// modules that NVRTC compiles in parallel at the first start.
#define LATSOL_DSLASH_FORMS(prefix, S, L, R)                 \
  LATSOL_DSLASH(prefix, S, L, R, false, false)               \
  LATSOL_DSLASH(prefix##_dag, S, L, R, true, false)          \
  LATSOL_DSLASH(prefix##_xpay, S, L, R, false, true)         \
  LATSOL_DSLASH(prefix##_dag_xpay, S, L, R, true, true)

// The Wilson-clover forms of one storage format S (links L, clover C):
// _inv (A⁻¹ on the hopping term), _inv_xpay (… + x), _dir (A on x, + a D in),
// each also with _dag. wilson_clover_<format>.cu instantiates them.
#define LATSOL_CLOVER_DSLASH(name, S, L, R, dagger, xpay, form, C) \
  extern "C" __global__ void LATSOL_BOUNDS name(const DslashParams P) { kernel_entry(); wilson_dslash<S, L, R, dagger, xpay, form, C>(P, blockIdx.x); }
#define LATSOL_CLOVER_FORMS(prefix, S, L, R, C)                    \
  LATSOL_CLOVER_DSLASH(prefix##_inv, S, L, R, false, false, 1, C)      \
  LATSOL_CLOVER_DSLASH(prefix##_dag_inv, S, L, R, true, false, 1, C)   \
  LATSOL_CLOVER_DSLASH(prefix##_inv_xpay, S, L, R, false, true, 1, C)  \
  LATSOL_CLOVER_DSLASH(prefix##_dag_inv_xpay, S, L, R, true, true, 1, C) \
  LATSOL_CLOVER_DSLASH(prefix##_dir, S, L, R, false, true, 2, C)       \
  LATSOL_CLOVER_DSLASH(prefix##_dag_dir, S, L, R, true, true, 2, C)
// The site-local clover kernel of a format.
#define LATSOL_CLOVER_SITE(name, S, C) \
  extern "C" __global__ void name(const CloverParams P) { kernel_entry(); clover_site<S, C>(P); }

// ---- several right-hand sides in one launch (issue 37, seed 002 §2.1) ----
//
// The same hopping term for up to LATSOL_MAX_RHS fields on the same links
// (and clover term): the kernel arguments carry each right-hand side's
// output, input and xpay blocks, and the grid is the one-field grid times
// the count, right-hand side fastest. Consecutive blocks are then the same
// sites of different fields, in flight together: the links (and clover
// blocks) come from memory once and from L2 for the others, while each
// field's spinors cost what they cost alone. Each field's numbers are those
// of the one-field kernel (the same code on the same values).
#define LATSOL_MAX_RHS 16
#define LATSOL_RHS_BLOCK 128
struct DslashRhsParams {
  DslashParams P;
  u64 out[LATSOL_MAX_RHS];
  u64 in[LATSOL_MAX_RHS];
  u64 x[LATSOL_MAX_RHS];
  int count;
  int group;  // 0: right-hand side fastest; g: g blocks of sites of each field in turn
};
static_assert(sizeof(DslashRhsParams) == 144 + 3 * 8 * LATSOL_MAX_RHS + 8,
              "DslashRhsParams layout changed: update hopping_params.rs");

template <typename S, typename Lk, int R, bool dagger, bool xpay, int clover, typename C>
__device__ __forceinline__ void wilson_dslash_rhs(const DslashRhsParams &M) {
  int r, block;
  if (M.group == 0) {
    r = blockIdx.x % M.count;
    block = blockIdx.x / M.count;
  } else {
    // Groups of `group` site blocks, each group's blocks for every field in turn.
    const int span = M.count * M.group, in_group = blockIdx.x % span;
    r = in_group / M.group;
    block = (blockIdx.x / span) * M.group + in_group % M.group;
  }
  DslashParams P = M.P;
  P.out = M.out[r];
  P.in = M.in[r];
  P.x = M.x[r];
  wilson_dslash<S, Lk, R, dagger, xpay, clover, C>(P, block);
}
// A format may cap the several-field kernels' registers per reconstruct
// (LATSOL_RHS_MIN_BLOCKS_18, _12, _8: resident blocks of LATSOL_RHS_BLOCK
// an SM, defined before this header), as its one-field kernels are capped.
#ifndef LATSOL_RHS_MIN_BLOCKS_18
#define LATSOL_RHS_MIN_BLOCKS_18 1
#endif
#ifndef LATSOL_RHS_MIN_BLOCKS_12
#define LATSOL_RHS_MIN_BLOCKS_12 1
#endif
#ifndef LATSOL_RHS_MIN_BLOCKS_8
#define LATSOL_RHS_MIN_BLOCKS_8 1
#endif
#define LATSOL_RHS_MIN_BLOCKS_OF(R) LATSOL_RHS_MIN_BLOCKS_##R
#define LATSOL_RHS_KERNEL(name, S, L, R, dagger, xpay, form, C)                                       \
  extern "C" __global__ void __launch_bounds__(LATSOL_RHS_BLOCK, LATSOL_RHS_MIN_BLOCKS_OF(R))      \
      name(const DslashRhsParams M) {                                                               \
    kernel_entry();                                                                                 \
    wilson_dslash_rhs<S, L, R, dagger, xpay, form, C>(M);                                           \
  }
/// The several-field forms of one storage format and reconstruct
/// (kernels/wilson_rhs_<format>.cu): the hopping term's four and the clover
/// forms' six, named as the one-field kernels + "_rhs".
#define LATSOL_RHS_FORMS(dslash, clover, S, L, R, C)                                  \
  LATSOL_RHS_KERNEL(dslash##_rhs, S, L, R, false, false, 0, float)                     \
  LATSOL_RHS_KERNEL(dslash##_dag_rhs, S, L, R, true, false, 0, float)                  \
  LATSOL_RHS_KERNEL(dslash##_xpay_rhs, S, L, R, false, true, 0, float)                 \
  LATSOL_RHS_KERNEL(dslash##_dag_xpay_rhs, S, L, R, true, true, 0, float)              \
  LATSOL_RHS_KERNEL(clover##_inv_rhs, S, L, R, false, false, 1, C)                     \
  LATSOL_RHS_KERNEL(clover##_dag_inv_rhs, S, L, R, true, false, 1, C)                  \
  LATSOL_RHS_KERNEL(clover##_inv_xpay_rhs, S, L, R, false, true, 1, C)                 \
  LATSOL_RHS_KERNEL(clover##_dag_inv_xpay_rhs, S, L, R, true, true, 1, C)              \
  LATSOL_RHS_KERNEL(clover##_dir_rhs, S, L, R, false, true, 2, C)                      \
  LATSOL_RHS_KERNEL(clover##_dag_dir_rhs, S, L, R, true, true, 2, C)
