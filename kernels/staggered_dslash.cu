// staggered_dslash.cu: the staggered hopping term (staggered_dslash.cuh) in
// double and single, fat links in 18 reals and long links in 18, 13 or 9,
// and the flat double <-> single conversions of colour-vector fields.
#include "staggered_dslash.cuh"

#define LATSOL_STAGGERED(name, R, LR) \
  extern "C" __global__ void name(StaggeredParams P) { staggered_dslash_body<R, LR>(P); }
LATSOL_STAGGERED(staggered_dslash_f64, double, 18)
LATSOL_STAGGERED(staggered_dslash_f64_l13, double, 13)
LATSOL_STAGGERED(staggered_dslash_f64_l9, double, 9)
LATSOL_STAGGERED(staggered_dslash_f32, float, 18)
LATSOL_STAGGERED(staggered_dslash_f32_l13, float, 13)
LATSOL_STAGGERED(staggered_dslash_f32_l9, float, 9)

extern "C" __global__ void staggered_convert_f64_to_f32(ConvertParams P) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < P.n) reinterpret_cast<float *>(P.dst)[i] = float(reinterpret_cast<const double *>(P.src)[i]);
}
extern "C" __global__ void staggered_convert_f32_to_f64(ConvertParams P) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < P.n) reinterpret_cast<double *>(P.dst)[i] = double(reinterpret_cast<const float *>(P.src)[i]);
}
