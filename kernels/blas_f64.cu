// blas_f64.cu: the vector algebra (blas.cuh) on double fields: every op and
// reduction, γ5, the conversions to every other format, and the sums of
// double fields into double and single (axpy_many); the block
// solvers' algebra of blocks of fields (block_blas.cuh).
#include "blas.cuh"
#include "block_blas.cuh"

LATSOL_BLAS_FORMAT(f64, double)
LATSOL_BLOCK_BLAS(f64, double)
LATSOL_DOMAIN_PROJECT(f64, double)
LATSOL_HEAVY_QUARK_SITES(blas_heavy_quark_f64, double)
extern "C" __global__ void gamma5_f64(const SiteParams P) { kernel_entry(); gamma5<double>(P); }
extern "C" __global__ void convert_f64_to_f32(const SiteParams P) { kernel_entry(); convert<true>(P); }
LATSOL_CONVERT(f64, double, f16, short)
LATSOL_CONVERT(f64, double, f8, signed char)
LATSOL_CONVERT(f64, double, p20, packed20)
LATSOL_CONVERT(f64, double, p30, packed30)
