// wilson_clover_f64.cu: the Wilson-clover hopping term (wilson_dslash.cuh with
// the clover epilogue of clover.cuh) in double; reconstruct 18, 12 and 8, and
// the site-local clover kernel.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_CLOVER_FORMS(wilson_clover_f64_r18, double, double, 18, double)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_CLOVER_FORMS(wilson_clover_f64_r12, double, double, 12, double)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_CLOVER_FORMS(wilson_clover_f64_r8, double, double, 8, double)
#endif
LATSOL_CLOVER_SITE(clover_site_f64, double, double)
