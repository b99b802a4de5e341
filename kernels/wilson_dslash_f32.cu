// wilson_dslash_f32.cu: the Wilson hopping term (wilson_dslash.cuh) in single,
// reconstruct 18, 12 and 8.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_DSLASH_FORMS(wilson_dslash_f32_r18, float, float, 18)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_DSLASH_FORMS(wilson_dslash_f32_r12, float, float, 12)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_DSLASH_FORMS(wilson_dslash_f32_r8, float, float, 8)
#endif
