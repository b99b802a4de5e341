// staggered_dslash.cu: the staggered hopping term (staggered_dslash.cuh) in
// double and single, links in 18 reals, and the flat double <-> single
// conversions of colour-vector fields.
#include "staggered_dslash.cuh"

extern "C" __global__ void staggered_dslash_f64(StaggeredParams P) { staggered_dslash_body<double>(P); }
extern "C" __global__ void staggered_dslash_f32(StaggeredParams P) { staggered_dslash_body<float>(P); }

extern "C" __global__ void staggered_convert_f64_to_f32(ConvertParams P) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < P.n) reinterpret_cast<float *>(P.dst)[i] = float(reinterpret_cast<const double *>(P.src)[i]);
}
extern "C" __global__ void staggered_convert_f32_to_f64(ConvertParams P) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < P.n) reinterpret_cast<double *>(P.dst)[i] = double(reinterpret_cast<const float *>(P.src)[i]);
}
