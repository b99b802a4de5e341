// wilson_dslash_p30.cu: the Wilson hopping term (wilson_dslash.cuh) on packed
// 30-bit spinors (core.cuh, seed clark2022 §4) with 32-bit fixed-point links,
// arithmetic in double as in the seed; reconstruct 18, 12 and 8.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_DSLASH_FORMS(wilson_dslash_p30_r18, packed30, int, 18)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_DSLASH_FORMS(wilson_dslash_p30_r12, packed30, int, 12)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_DSLASH_FORMS(wilson_dslash_p30_r8, packed30, int, 8)
#endif
