// wilson_clover_f8.cu: the Wilson-clover hopping term (wilson_dslash.cuh with
// the clover epilogue of clover.cuh) in quarter (8-bit fixed point, clover 8-bit with a norm per chiral block); reconstruct 18, 12 and 8, and
// the site-local clover kernel.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_CLOVER_FORMS(wilson_clover_f8_r18, signed char, signed char, 18, signed char)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_CLOVER_FORMS(wilson_clover_f8_r12, signed char, signed char, 12, signed char)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_CLOVER_FORMS(wilson_clover_f8_r8, signed char, signed char, 8, signed char)
#endif
LATSOL_CLOVER_SITE(clover_site_f8, signed char, signed char)
