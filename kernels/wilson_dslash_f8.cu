// wilson_dslash_f8.cu: the Wilson hopping term (wilson_dslash.cuh) in quarter (8-bit fixed point),
// reconstruct 18, 12 and 8.
#include "wilson_dslash.cuh"

LATSOL_DSLASH_FORMS(wilson_dslash_f8_r18, signed char, signed char, 18)
LATSOL_DSLASH_FORMS(wilson_dslash_f8_r12, signed char, signed char, 12)
LATSOL_DSLASH_FORMS(wilson_dslash_f8_r8, signed char, signed char, 8)
