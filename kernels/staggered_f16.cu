// staggered_f16.cu: colour-vector fields and staggered links in half (16-bit
// fixed point, staggered_dslash.cuh): the hopping term with long links in
// 18, 13 or 9 reals, the vector algebra, the sums of half fields into double
// and single, the conversions to the other colour-vector formats, and the
// widened BiCGstab update (x̂ in single).
#include "staggered_blas.cuh"

LATSOL_STAGGERED(staggered_dslash_f16, short, 18)
LATSOL_STAGGERED(staggered_dslash_f16_l13, short, 13)
LATSOL_STAGGERED(staggered_dslash_f16_l9, short, 9)
LATSOL_BLAS_OPS(s16, ColourSite<short>)
LATSOL_STAGGERED_AXPY_MANY(s16, ColourSite<short>)
LATSOL_CONVERT(s16, ColourSite<short>, s64, ColourSite<double>)
LATSOL_CONVERT(s16, ColourSite<short>, s32, ColourSite<float>)
LATSOL_CONVERT(s16, ColourSite<short>, s8, ColourSite<signed char>)
LATSOL_REDUCE_ONE(blas_bicgstab_update_wide_s16, ColourSite<short>, BicgstabUpdateWide)
