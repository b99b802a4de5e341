// shim.h: just enough of CUDA for a host C++ compiler to compile core.cuh's
// accessors, so that a test without a GPU can run them
// (src/backend/cuda/emulation.rs). Host semantics equal the device's for
// what they use: IEEE single and double without FMA contraction, and the
// intrinsics below written out.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
using std::fabs;
using std::fmax;
using std::fmin;
using std::hypot;
using std::isfinite;
using std::min;
using std::round;
using std::rint;
#define __device__
#define __forceinline__ inline
#define __noinline__
#define __global__
#define __launch_bounds__(...)
// One thread a block on the host: shared arrays are static (zero before the
// first write), and a barrier has no one to wait for.
#define __shared__ static
inline void __syncthreads() {}
// A kernel run on the host is called once per thread with these set.
struct dim3_ { unsigned x = 0, y = 0, z = 0; };
static dim3_ threadIdx, blockIdx, blockDim, gridDim;
inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v) {
  const unsigned long long old = *p;
  if (v < old) *p = v;
  return old;
}
struct uint4 { unsigned x, y, z, w; };
struct int2 { int x, y; };
struct int4 { int x, y, z, w; };
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct double2 { double x, y; };
struct short2 { short x, y; };
struct short4 { short x, y, z, w; };
struct char2 { signed char x, y; };
struct char4 { signed char x, y, z, w; };
struct uint2 { unsigned x, y; };
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline double2 make_double2(double a, double b) { return {a, b}; }
inline short4 make_short4(short a, short b, short c, short d) { return {a, b, c, d}; }
inline char4 make_char4(signed char a, signed char b, signed char c, signed char d) { return {a, b, c, d}; }
template <typename T> T __ldg(const T *p) { return *p; }
template <typename T> T __ldcs(const T *p) { return *p; }
template <typename T> void __stcs(T *p, T v) { *p = v; }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
  return (unsigned)((((uint64_t)hi << 32) | lo) >> (s & 31));
}
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
// Round-to-nearest single arithmetic (no contraction on the host: see above).
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline double __dmul_rn(double a, double b) { return a * b; }
// Exact for the 16-bit integers the kernels convert.
inline float __int2float_rn(int i) { return (float)i; }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
// Byte k of the result is byte (s >> 4k) & 7 of the eight bytes {y, x}
// (PTX prmt, default mode; the sign-replicating mode is not emulated).
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const uint64_t xy = ((uint64_t)y << 32) | x;
  unsigned r = 0;
  for (int k = 0; k < 4; k++) r |= unsigned((xy >> (8 * ((s >> (4 * k)) & 7))) & 0xff) << (8 * k);
  return r;
}
inline double __longlong_as_double(long long i) { double f; memcpy(&f, &i, 8); return f; }
inline long long __double_as_longlong(double f) { long long i; memcpy(&i, &f, 8); return i; }
inline void sincospi(double x, double *s, double *c) { *s = sin(M_PI * x); *c = cos(M_PI * x); }
inline void sincospif(float x, float *s, float *c) { *s = sinf(float(M_PI) * x); *c = cosf(float(M_PI) * x); }
