// blas_p20.cu: the vector algebra (blas.cuh) on packed 20-bit fields: every op and
// reduction, γ5, the conversions to every other format, and the sums of
// packed 20-bit fields into double and single (axpy_many).
#include "blas.cuh"

LATSOL_BLAS_FORMAT(p20, packed20)
LATSOL_DOMAIN_PROJECT(p20, packed20)
// x̂ in single beside packed 20-bit fields (the widened partial solution).
LATSOL_REDUCE_ONE(blas_bicgstab_update_wide_p20, packed20, BicgstabUpdateWide)
extern "C" __global__ void gamma5_p20(const SiteParams P) { kernel_entry(); gamma5_fixed<packed20>(P); }
LATSOL_CONVERT(p20, packed20, f64, double)
LATSOL_CONVERT(p20, packed20, f32, float)
LATSOL_CONVERT(p20, packed20, f16, short)
LATSOL_CONVERT(p20, packed20, f8, signed char)
LATSOL_CONVERT(p20, packed20, p30, packed30)
