// blas_f8.cu: the vector algebra (blas.cuh) on quarter fields: every op and
// reduction, γ5, the conversions to every other format, and the sums of
// quarter fields into double and single (axpy_many).
#include "blas.cuh"

LATSOL_BLAS_FORMAT(f8, signed char)
LATSOL_DOMAIN_PROJECT(f8, signed char)
// x̂ in single beside quarter fields (the widened partial solution).
LATSOL_REDUCE_ONE(blas_bicgstab_update_wide_f8, signed char, BicgstabUpdateWide)
extern "C" __global__ void gamma5_f8(const SiteParams P) { kernel_entry(); gamma5_fixed<signed char>(P); }
LATSOL_CONVERT(f8, signed char, f64, double)
LATSOL_CONVERT(f8, signed char, f32, float)
LATSOL_CONVERT(f8, signed char, f16, short)
LATSOL_CONVERT(f8, signed char, p20, packed20)
LATSOL_CONVERT(f8, signed char, p30, packed30)
