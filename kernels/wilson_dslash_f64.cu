// wilson_dslash_f64.cu: the Wilson hopping term (wilson_dslash.cuh) in double,
// reconstruct 18, 12 and 8.
#include "wilson_dslash.cuh"

LATSOL_DSLASH_FORMS(wilson_dslash_f64_r18, double, double, 18)
LATSOL_DSLASH_FORMS(wilson_dslash_f64_r12, double, double, 12)
LATSOL_DSLASH_FORMS(wilson_dslash_f64_r8, double, double, 8)
