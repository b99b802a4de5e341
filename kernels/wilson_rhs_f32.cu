// wilson_rhs_f32.cu: the Wilson and Wilson-clover hopping terms of several
// right-hand sides in one launch (wilson_dslash.cuh, LATSOL_RHS_FORMS) in f32;
// reconstruct 18, 12 and 8 (one module each), compiled at the first block solve.
// The register caps of the one-field kernels (wilson_dslash_f32.cu).
#define LATSOL_RHS_MIN_BLOCKS_18 4
#define LATSOL_RHS_MIN_BLOCKS_12 4
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_RHS_FORMS(wilson_dslash_f32_r18, wilson_clover_f32_r18, float, float, 18, float)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_RHS_FORMS(wilson_dslash_f32_r12, wilson_clover_f32_r12, float, float, 12, float)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_RHS_FORMS(wilson_dslash_f32_r8, wilson_clover_f32_r8, float, float, 8, float)
#endif
