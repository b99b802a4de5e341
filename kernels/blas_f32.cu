// blas_f32.cu: the vector algebra (blas.cuh) on single fields: every op and
// reduction, γ5, the conversions to every other format, and the sums of
// single fields into double and single (axpy_many); the block
// solvers' algebra of blocks of fields (block_blas.cuh).
#include "blas.cuh"
#include "block_blas.cuh"

LATSOL_BLAS_FORMAT(f32, float)
LATSOL_BLOCK_BLAS(f32, float)
LATSOL_DOMAIN_PROJECT(f32, float)
LATSOL_HEAVY_QUARK_SITES(blas_heavy_quark_f32, float)
extern "C" __global__ void gamma5_f32(const SiteParams P) { kernel_entry(); gamma5<float>(P); }
extern "C" __global__ void convert_f32_to_f64(const SiteParams P) { kernel_entry(); convert<false>(P); }
LATSOL_CONVERT(f32, float, f16, short)
LATSOL_CONVERT(f32, float, f8, signed char)
LATSOL_CONVERT(f32, float, p20, packed20)
LATSOL_CONVERT(f32, float, p30, packed30)
