// staggered_f8.cu: colour-vector fields and staggered links in quarter
// (8-bit fixed point, staggered_dslash.cuh): the hopping term with long
// links in 18, 13 or 9 reals, the vector algebra, the sums of quarter fields
// into double and single, the conversions to the other colour-vector
// formats, and the widened BiCGstab update (x̂ in single).
#include "staggered_blas.cuh"

LATSOL_STAGGERED(staggered_dslash_f8, signed char, 18)
LATSOL_STAGGERED(staggered_dslash_f8_l13, signed char, 13)
LATSOL_STAGGERED(staggered_dslash_f8_l9, signed char, 9)
LATSOL_BLAS_OPS(s8, ColourSite<signed char>)
LATSOL_STAGGERED_AXPY_MANY(s8, ColourSite<signed char>)
LATSOL_CONVERT(s8, ColourSite<signed char>, s64, ColourSite<double>)
LATSOL_CONVERT(s8, ColourSite<signed char>, s32, ColourSite<float>)
LATSOL_CONVERT(s8, ColourSite<signed char>, s16, ColourSite<short>)
LATSOL_REDUCE_ONE(blas_bicgstab_update_wide_s8, ColourSite<signed char>, BicgstabUpdateWide)
