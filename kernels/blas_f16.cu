// blas_f16.cu: the vector algebra (blas.cuh) on half fields: every op and
// reduction, γ5, the conversions to every other format, and the sums of
// half fields into double and single (axpy_many).
#include "blas.cuh"

LATSOL_BLAS_FORMAT(f16, short)
// x̂ in single beside half fields (the widened partial solution).
LATSOL_REDUCE_ONE(blas_bicgstab_update_wide_f16, short, BicgstabUpdateWide)
extern "C" __global__ void gamma5_f16(const SiteParams P) { gamma5_fixed<short>(P); }
LATSOL_CONVERT(f16, short, f64, double)
LATSOL_CONVERT(f16, short, f32, float)
LATSOL_CONVERT(f16, short, f8, signed char)
LATSOL_CONVERT(f16, short, p20, packed20)
LATSOL_CONVERT(f16, short, p30, packed30)
