// blas_p30.cu: the vector algebra (blas.cuh) on packed 30-bit fields: every op and
// reduction, γ5, the conversions to every other format, and the sums of
// packed 30-bit fields into double and single (axpy_many).
#include "blas.cuh"

LATSOL_BLAS_FORMAT(p30, packed30)
LATSOL_DOMAIN_PROJECT(p30, packed30)
extern "C" __global__ void gamma5_p30(const SiteParams P) { kernel_entry(); gamma5_fixed<packed30>(P); }
LATSOL_CONVERT(p30, packed30, f64, double)
LATSOL_CONVERT(p30, packed30, f32, float)
LATSOL_CONVERT(p30, packed30, f16, short)
LATSOL_CONVERT(p30, packed30, f8, signed char)
LATSOL_CONVERT(p30, packed30, p20, packed20)
