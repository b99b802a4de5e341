// staggered_rhs.cu: the improved (and naive) staggered hopping terms of
// several right-hand sides in one launch (staggered_dslash.cuh,
// `staggered_dslash_rhs`; issue 37), every format and long-link storage. A
// module of its own: compiled at the first block application.
#include "staggered_dslash.cuh"

LATSOL_STAGGERED_RHS(staggered_dslash_f64_rhs, double, 18)
LATSOL_STAGGERED_RHS(staggered_dslash_f64_l13_rhs, double, 13)
LATSOL_STAGGERED_RHS(staggered_dslash_f64_l9_rhs, double, 9)
LATSOL_STAGGERED_RHS(staggered_dslash_f32_rhs, float, 18)
LATSOL_STAGGERED_RHS(staggered_dslash_f32_l13_rhs, float, 13)
LATSOL_STAGGERED_RHS(staggered_dslash_f32_l9_rhs, float, 9)
LATSOL_STAGGERED_RHS(staggered_dslash_f16_rhs, short, 18)
LATSOL_STAGGERED_RHS(staggered_dslash_f16_l13_rhs, short, 13)
LATSOL_STAGGERED_RHS(staggered_dslash_f16_l9_rhs, short, 9)
LATSOL_STAGGERED_RHS(staggered_dslash_f8_rhs, signed char, 18)
LATSOL_STAGGERED_RHS(staggered_dslash_f8_l13_rhs, signed char, 13)
LATSOL_STAGGERED_RHS(staggered_dslash_f8_l9_rhs, signed char, 9)
LATSOL_STAGGERED_RHS(staggered_dslash_p20_rhs, packed20, 18)
LATSOL_STAGGERED_RHS(staggered_dslash_p20_l13_rhs, packed20, 13)
LATSOL_STAGGERED_RHS(staggered_dslash_p20_l9_rhs, packed20, 9)
LATSOL_STAGGERED_RHS(staggered_dslash_p30_rhs, packed30, 18)
LATSOL_STAGGERED_RHS(staggered_dslash_p30_l13_rhs, packed30, 13)
LATSOL_STAGGERED_RHS(staggered_dslash_p30_l9_rhs, packed30, 9)
