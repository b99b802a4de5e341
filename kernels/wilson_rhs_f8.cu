// wilson_rhs_f8.cu: the Wilson and Wilson-clover hopping terms of several
// right-hand sides in one launch (wilson_dslash.cuh, LATSOL_RHS_FORMS) in f8;
// reconstruct 18, 12 and 8 (one module each), compiled at the first block solve.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_RHS_FORMS(wilson_dslash_f8_r18, wilson_clover_f8_r18, signed char, signed char, 18, signed char)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_RHS_FORMS(wilson_dslash_f8_r12, wilson_clover_f8_r12, signed char, signed char, 12, signed char)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_RHS_FORMS(wilson_dslash_f8_r8, wilson_clover_f8_r8, signed char, signed char, 8, signed char)
#endif
