// wilson_dslash_f8.cu: the Wilson hopping term (wilson_dslash.cuh) in quarter (8-bit fixed point),
// reconstruct 18, 12 and 8.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_DSLASH_FORMS(wilson_dslash_f8_r18, signed char, signed char, 18)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_DSLASH_FORMS(wilson_dslash_f8_r12, signed char, signed char, 12)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_DSLASH_FORMS(wilson_dslash_f8_r8, signed char, signed char, 8)
#endif
