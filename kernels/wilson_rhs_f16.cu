// wilson_rhs_f16.cu: the Wilson and Wilson-clover hopping terms of several
// right-hand sides in one launch (wilson_dslash.cuh, LATSOL_RHS_FORMS) in f16;
// reconstruct 18, 12 and 8 (one module each), compiled at the first block solve.
// The register caps of the one-field kernels (wilson_dslash_f16.cu).
#define LATSOL_RHS_MIN_BLOCKS_18 5
#define LATSOL_RHS_MIN_BLOCKS_12 5
#define LATSOL_RHS_MIN_BLOCKS_8 6
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_RHS_FORMS(wilson_dslash_f16_r18, wilson_clover_f16_r18, short, short, 18, short)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_RHS_FORMS(wilson_dslash_f16_r12, wilson_clover_f16_r12, short, short, 12, short)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_RHS_FORMS(wilson_dslash_f16_r8, wilson_clover_f16_r8, short, short, 8, short)
#endif
