// staggered_dslash.cu: the staggered hopping term (staggered_dslash.cuh) in
// double and single, fat links in 18 reals and long links in 18, 13 or 9;
// the double <-> single conversions of colour-vector fields, those to half
// and quarter, and the sums of double and single fields into double and
// single (staggered_blas.cuh); MILC's heavy-quark residual of double and
// single colour vectors.
#include "staggered_blas.cuh"

LATSOL_STAGGERED(staggered_dslash_f64, double, 18)
LATSOL_STAGGERED(staggered_dslash_f64_l13, double, 13)
LATSOL_STAGGERED(staggered_dslash_f64_l9, double, 9)
LATSOL_STAGGERED(staggered_dslash_f32, float, 18)
LATSOL_STAGGERED(staggered_dslash_f32_l13, float, 13)
LATSOL_STAGGERED(staggered_dslash_f32_l9, float, 9)

extern "C" __global__ void staggered_convert_f64_to_f32(ConvertParams P) {
  kernel_entry();
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < P.n) reinterpret_cast<float *>(P.dst)[i] = float(reinterpret_cast<const double *>(P.src)[i]);
}
extern "C" __global__ void staggered_convert_f32_to_f64(ConvertParams P) {
  kernel_entry();
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < P.n) reinterpret_cast<double *>(P.dst)[i] = double(reinterpret_cast<const float *>(P.src)[i]);
}

LATSOL_HEAVY_QUARK(blas_heavy_quark_s64, double)
LATSOL_HEAVY_QUARK(blas_heavy_quark_s32, float)

LATSOL_STAGGERED_AXPY_MANY(s64, ColourSite<double>)
LATSOL_STAGGERED_AXPY_MANY(s32, ColourSite<float>)
LATSOL_CONVERT(s64, ColourSite<double>, s16, ColourSite<short>)
LATSOL_CONVERT(s64, ColourSite<double>, s8, ColourSite<signed char>)
LATSOL_CONVERT(s32, ColourSite<float>, s16, ColourSite<short>)
LATSOL_CONVERT(s32, ColourSite<float>, s8, ColourSite<signed char>)
