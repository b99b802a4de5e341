// wilson_dslash_f64.cu: the Wilson hopping term (wilson_dslash.cuh) in double,
// reconstruct 18, 12 and 8.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_DSLASH_FORMS(wilson_dslash_f64_r18, double, double, 18)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_DSLASH_FORMS(wilson_dslash_f64_r12, double, double, 12)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_DSLASH_FORMS(wilson_dslash_f64_r8, double, double, 8)
#endif
