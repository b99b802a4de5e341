// wilson_clover_f32.cu: the Wilson-clover hopping term (wilson_dslash.cuh with
// the clover epilogue of clover.cuh) in single; reconstruct 18, 12 and 8, and
// the site-local clover kernel.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_CLOVER_FORMS(wilson_clover_f32_r18, float, float, 18, float)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_CLOVER_FORMS(wilson_clover_f32_r12, float, float, 12, float)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_CLOVER_FORMS(wilson_clover_f32_r8, float, float, 8, float)
#endif
LATSOL_CLOVER_SITE(clover_site_f32, float, float)
