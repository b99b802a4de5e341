// wilson_clover_p30.cu: the Wilson-clover hopping term (wilson_dslash.cuh with
// the clover epilogue of clover.cuh) on packed 30-bit spinors with 32-bit links and a single-precision clover; reconstruct 18, 12 and 8, and
// the site-local clover kernel.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_CLOVER_FORMS(wilson_clover_p30_r18, packed30, int, 18, float)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_CLOVER_FORMS(wilson_clover_p30_r12, packed30, int, 12, float)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_CLOVER_FORMS(wilson_clover_p30_r8, packed30, int, 8, float)
#endif
LATSOL_CLOVER_SITE(clover_site_p30, packed30, float)
