// wilson_rhs_p20.cu: the Wilson and Wilson-clover hopping terms of several
// right-hand sides in one launch (wilson_dslash.cuh, LATSOL_RHS_FORMS) in p20;
// reconstruct 18, 12 and 8 (one module each), compiled at the first block solve.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_RHS_FORMS(wilson_dslash_p20_r18, wilson_clover_p20_r18, packed20, short, 18, short)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_RHS_FORMS(wilson_dslash_p20_r12, wilson_clover_p20_r12, packed20, short, 12, short)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_RHS_FORMS(wilson_dslash_p20_r8, wilson_clover_p20_r8, packed20, short, 8, short)
#endif
