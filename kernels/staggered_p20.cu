// staggered_p20.cu: colour-vector fields in the packed 20-bit format of seed
// clark2022 (§4, Listing 2: six 20-bit integers and one shared exponent in
// 16 bytes) beside 16-bit fixed-point links (staggered_dslash.cuh): the
// hopping term with long links in 18, 13 or 9 reals, the vector algebra, the
// widened BiCGstab update (x̂ in single), the sums of 20-bit fields into
// double and single, and the conversions to and from every colour-vector
// format.
#include "staggered_blas.cuh"

LATSOL_STAGGERED(staggered_dslash_p20, packed20, 18)
LATSOL_STAGGERED(staggered_dslash_p20_l13, packed20, 13)
LATSOL_STAGGERED(staggered_dslash_p20_l9, packed20, 9)
LATSOL_STAGGERED_PACKED_BLAS(sp20, packed20)
// x̂ in single beside 20-bit fields (the widened partial solution).
LATSOL_REDUCE_ONE(blas_bicgstab_update_wide_sp20, ColourSite<packed20>, BicgstabUpdateWide)
LATSOL_CONVERT(sp20, ColourSite<packed20>, sp30, ColourSite<packed30>)
