// wilson_rhs_p30.cu: the Wilson and Wilson-clover hopping terms of several
// right-hand sides in one launch (wilson_dslash.cuh, LATSOL_RHS_FORMS) in p30;
// reconstruct 18, 12 and 8 (one module each), compiled at the first block solve.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_RHS_FORMS(wilson_dslash_p30_r18, wilson_clover_p30_r18, packed30, int, 18, float)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_RHS_FORMS(wilson_dslash_p30_r12, wilson_clover_p30_r12, packed30, int, 12, float)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_RHS_FORMS(wilson_dslash_p30_r8, wilson_clover_p30_r8, packed30, int, 8, float)
#endif
