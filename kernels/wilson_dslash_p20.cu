// wilson_dslash_p20.cu: the Wilson hopping term (wilson_dslash.cuh) on packed
// 20-bit spinors (core.cuh, seed clark2022 §4) with 16-bit fixed-point links
// (as half), arithmetic in single; reconstruct 18, 12 and 8.
// Launch bounds left to the compiler (half's 256, 3 was measured on the
// H100; the packed formats have not been measured yet).
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_DSLASH_FORMS(wilson_dslash_p20_r18, packed20, short, 18)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_DSLASH_FORMS(wilson_dslash_p20_r12, packed20, short, 12)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_DSLASH_FORMS(wilson_dslash_p20_r8, packed20, short, 8)
#endif
