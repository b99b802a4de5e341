// staggered_p30.cu: colour-vector fields in the packed 30-bit format of seed
// clark2022 (§4, Listing 3: six 30-bit integers and one shared exponent in
// 24 bytes, single's size) beside 32-bit fixed-point links, arithmetic in
// double (staggered_dslash.cuh): the hopping term with long links in 18, 13
// or 9 reals, the vector algebra, the sums of 30-bit fields into double and
// single, and the conversions to and from every colour-vector format.
#include "staggered_blas.cuh"

LATSOL_STAGGERED(staggered_dslash_p30, packed30, 18)
LATSOL_STAGGERED(staggered_dslash_p30_l13, packed30, 13)
LATSOL_STAGGERED(staggered_dslash_p30_l9, packed30, 9)
LATSOL_STAGGERED_PACKED_BLAS(sp30, packed30)
LATSOL_CONVERT(sp30, ColourSite<packed30>, sp20, ColourSite<packed20>)
