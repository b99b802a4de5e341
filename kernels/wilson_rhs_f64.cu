// wilson_rhs_f64.cu: the Wilson and Wilson-clover hopping terms of several
// right-hand sides in one launch (wilson_dslash.cuh, LATSOL_RHS_FORMS) in f64;
// reconstruct 18, 12 and 8 (one module each), compiled at the first block solve.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_RHS_FORMS(wilson_dslash_f64_r18, wilson_clover_f64_r18, double, double, 18, double)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_RHS_FORMS(wilson_dslash_f64_r12, wilson_clover_f64_r12, double, double, 12, double)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_RHS_FORMS(wilson_dslash_f64_r8, wilson_clover_f64_r8, double, double, 8, double)
#endif
