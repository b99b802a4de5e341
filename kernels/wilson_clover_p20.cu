// wilson_clover_p20.cu: the Wilson-clover hopping term (wilson_dslash.cuh with
// the clover epilogue of clover.cuh) on packed 20-bit spinors with 16-bit links and clover; reconstruct 18, 12 and 8, and
// the site-local clover kernel.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_CLOVER_FORMS(wilson_clover_p20_r18, packed20, short, 18, short)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_CLOVER_FORMS(wilson_clover_p20_r12, packed20, short, 12, short)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_CLOVER_FORMS(wilson_clover_p20_r8, packed20, short, 8, short)
#endif
LATSOL_CLOVER_SITE(clover_site_p20, packed20, short)
