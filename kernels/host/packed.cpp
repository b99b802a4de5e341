// packed.cpp: core.cuh's PackedSpinorSoA run on the host (shim.h), for
// src/backend/cuda/emulation.rs to compare with src/format/packed.rs.
// Usage: packed B R N. Stores N sites of 24 reals (edge cases among random
// ones) with arithmetic R (0: double, as blas.cu; 1: float, as the 20-bit
// hopping term), then prints per site: the inputs (f64 bits), the site's
// words in the CPU's order, the loaded values (as blas.cu loads them) and
// the two spin pairs loaded apart (as a temporal hop loads them), in hex.
// Usage: packed fixed. Checks core.cuh's exact fixed-point conversions
// (Fixed<short>, Fixed<signed char>, round_biased) against the conversion
// instructions' semantics they replace, for every 16- and 8-bit integer and
// for rounding ties, and the half and quarter site store and load against
// the formulas of the conversion-instruction version, bit for bit (a zero
// rounded from a negative number aside: it stays +0, as numbers equal); prints
// "fixed: N checks" and exits non-zero at the first mismatch.
#include "shim.h"
#include "../core.cuh"
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

static void hx(double v) {
  uint64_t u;
  memcpy(&u, &v, 8);
  printf("%016llx ", (unsigned long long)u);
}

template <int B, typename R> void run(int n) {
  typedef PackedSpinorSoA<B> A;
  typedef typename A::Vec Vec;
  const int stride = n + 3;  // padding, as on the device
  std::vector<Vec> mem((size_t)A::vecs * stride);
  memset(mem.data(), 0, mem.size() * sizeof(Vec));
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g;
  const double M = A::MAX;
  std::vector<double> in((size_t)n * 24);
  for (int i = 0; i < n; i++) {
    const double mag = std::pow(10.0, double(int(rng() % 60)) - 30.0);
    for (int k = 0; k < 24; k++) {
      double v = g(rng) * mag;
      switch (i % 10) {
        case 1: v = 0; break;                                      // zero site
        case 2: v = k == 5 ? 1e-40 : 0; break;                     // underflow
        case 3: if (k == 7) v = NAN; break;                        // NaN component
        case 4: v = std::ldexp(k == 3 ? 1.0 : 0.25, int(rng() % 20) - 10) * ((k & 1) ? -1 : 1); break;
        case 5: v = (k % 3 - 1) * std::ldexp(M, -7); break;        // max/M a power of two
        case 6: v = double(int(rng() % 2001) - 1000) + 0.5; break; // ties
        case 7: if (sizeof(R) == 8) v = g(rng) * 1e45; break;      // exponent clamped
        case 8: v = g(rng) * std::ldexp(M, -126) * (0.25 + (i % 7) * 0.25); break;  // underflow edge
        case 9: if (k == 0) v = INFINITY; break;
      }
      if (sizeof(R) == 4) v = double(float(v));
      in[(size_t)i * 24 + k] = v;
    }
    cplx<R> z[12];
    for (int c = 0; c < 12; c++) z[c] = mk(R(in[(size_t)i * 24 + 2 * c]), R(in[(size_t)i * 24 + 2 * c + 1]));
    A::template store<R>(mem.data(), stride, i, z);
  }
  const unsigned *w = reinterpret_cast<const unsigned *>(mem.data());
  constexpr int per = A::P::per_vec;
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < 24; k++) hx(in[(size_t)i * 24 + k]);
    printf("| ");
    for (int j = 0; j < A::vecs; j++)
      for (int q = 0; q < per; q++) printf("%08x ", w[((size_t)j * stride + i) * per + q]);
    printf("| ");
    cplx<typename A::Item> a[12];
    cplx<typename A::F> lo[6], hi[6];
    A::template load<0, 12, false>(mem.data(), stride, i, a);
    A::template load<0, 6, true>(mem.data(), stride, i, lo);
    A::template load<6, 6, false>(mem.data(), stride, i, hi);
    for (int c = 0; c < 12; c++) { hx(a[c].re); hx(a[c].im); }
    printf("| ");
    for (int c = 0; c < 6; c++) { hx(lo[c].re); hx(lo[c].im); }
    for (int c = 0; c < 6; c++) { hx(hi[c].re); hx(hi[c].im); }
    printf("\n");
  }
}

static long long checks = 0;
static void expect(bool ok, const char *what, double a, double b) {
  checks++;
  if (!ok) {
    printf("mismatch: %s: %.17g against %.17g\n", what, a, b);
    exit(1);
  }
}
static bool same(float a, float b) { return __float_as_uint(a) == __float_as_uint(b); }

// The half or quarter store and load of one site as the conversion
// instructions did them: rint(z · MAX / n) stored, (norm / MAX) · v loaded.
template <typename T> void site_round_trip(std::mt19937_64 &rng, int n) {
  typedef FixedSpinorSoA<T> A;
  typedef typename A::Vec Vec;
  const float MAX = Fixed<T>::MAX;
  const int stride = n + 1;
  std::vector<unsigned char> mem((size_t)stride * A::site_bytes + 64);
  Vec *p = reinterpret_cast<Vec *>(mem.data());
  std::normal_distribution<float> g;
  for (int i = 0; i < n; i++) {
    cplx<float> z[12], orig[12];
    for (int c = 0; c < 12; c++) {
      z[c] = mk(g(rng), g(rng));
      if (i % 3 == 1) z[c] = mk(float(int(rng() % 64) - 32) * 0.5f, 0.25f);  // ties after scaling
      orig[c] = z[c];
    }
    A::template store<float>(p, stride, i, z);
    float m = 0;
    for (int c = 0; c < 12; c++) m = fmax(m, fmax(fabs(orig[c].re), fabs(orig[c].im)));
    const float nm = site_norm(m), sc = MAX / nm, back = nm / MAX;
    expect(same(A::norms(p, stride)[i], nm), "stored norm", A::norms(p, stride)[i], nm);
    cplx<float> loaded[12];
    A::template load<0, 12, false>(p, stride, i, loaded);
    const float s = nm * (1.0f / MAX);
    for (int j = 0; j < 6; j++) {
      const Vec v = p[j * stride + i];
      const T got[4] = {v.x, v.y, v.z, v.w};
      const float want[4] = {orig[2 * j].re, orig[2 * j].im, orig[2 * j + 1].re, orig[2 * j + 1].im};
      const float as_stored[4] = {z[2 * j].re, z[2 * j].im, z[2 * j + 1].re, z[2 * j + 1].im};
      const float as_loaded[4] = {loaded[2 * j].re, loaded[2 * j].im, loaded[2 * j + 1].re, loaded[2 * j + 1].im};
      for (int k = 0; k < 4; k++) {
        const float r = rintf(want[k] * sc);
        expect(float(got[k]) == r, "stored integer", got[k], r);
        expect(as_stored[k] == r * back, "value as stored", as_stored[k], r * back);
        expect(same(as_loaded[k], s * float(got[k])), "loaded value", as_loaded[k], s * float(got[k]));
      }
    }
  }
}

static int fixed_checks() {
  // Every 16-bit integer, in either half of a word.
  for (int v = -32768; v < 32768; v++) {
    const unsigned u = (unsigned short)v, w = (u << 16) | (u ^ 0x5a5a);
    float f[2];
    Fixed<short>::to_float(w, f);
    expect(same(f[1], float(v)), "short high half", f[1], v);
    expect(same(f[0], float(short(u ^ 0x5a5a))), "short low half", f[0], short(u ^ 0x5a5a));
    // The links' conversion (I2F of each half) gives the same bits.
    float g[2];
    NarrowLinkElem<short>::cvt(w, g);
    expect(same(g[0], f[0]) && same(g[1], f[1]), "link word", g[1], v);
  }
  // Every 8-bit integer in every byte.
  for (int v = -128; v < 128; v++) {
    for (int b = 0; b < 4; b++) {
      const unsigned w = (0x13579bdfu & ~(0xffu << (8 * b))) | ((unsigned)(unsigned char)v << (8 * b));
      float f[4];
      Fixed<signed char>::to_float(w, f);
      for (int k = 0; k < 4; k++)
        expect(same(f[k], float((signed char)(w >> (8 * k)))), "char byte", f[k], (signed char)(w >> (8 * k)));
    }
    float f2[2];
    Fixed<signed char>::to_float((unsigned short)((unsigned char)v << 8 | 0x81), f2);
    expect(same(f2[1], float(v)) && same(f2[0], -127.0f), "char2", f2[1], v);
  }
  // Rounding: ties (to even, as rint), near ties and random values.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> u(-32767.0f, 32767.0f);
  for (int i = -65534; i <= 65534; i++) {
    const float ps[4] = {i * 0.5f, std::nextafter(i * 0.5f, 1e9f), std::nextafter(i * 0.5f, -1e9f), u(rng)};
    for (float p : ps) {
      if (fabs(p) > 32767.0f) continue;
      const unsigned t = round_biased(p);
      // Equal as numbers: rint keeps the sign of a zero, the bias does not
      // (the stored integer is 0 either way).
      expect(unbias(t) == rintf(p), "rounding", unbias(t), rintf(p));
      expect(short(t) == short(rintf(p)), "rounded bits", short(t), rintf(p));
    }
  }
  const short4 s4 = Fixed<short>::pack4(round_biased(-32767.0f), round_biased(2.5f), round_biased(-0.5f), round_biased(32767.0f));
  expect(s4.x == -32767 && s4.y == 2 && s4.z == 0 && s4.w == 32767, "pack4 short", s4.y, 2);
  const char4 c4 = Fixed<signed char>::pack4(round_biased(-127.0f), round_biased(3.5f), round_biased(-1.0f), round_biased(127.0f));
  expect(c4.x == -127 && c4.y == 4 && c4.z == -1 && c4.w == 127, "pack4 char", c4.y, 4);
  site_round_trip<short>(rng, 500);
  site_round_trip<signed char>(rng, 500);
  printf("fixed: %lld checks\n", checks);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && std::string(argv[1]) == "fixed") return fixed_checks();
  if (argc != 4) return 2;
  const int b = atoi(argv[1]), r = atoi(argv[2]), n = atoi(argv[3]);
  if (b == 20 && r == 0) run<20, double>(n);
  else if (b == 20 && r == 1) run<20, float>(n);
  else if (b == 30 && r == 0) run<30, double>(n);
  else if (b == 30 && r == 1) run<30, float>(n);
  else return 2;
  return 0;
}
