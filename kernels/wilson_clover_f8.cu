// wilson_clover_f8.cu: the Wilson-clover hopping term (wilson_dslash.cuh with
// the clover epilogue of clover.cuh) in quarter (8-bit fixed point, clover 8-bit with a norm per chiral block); reconstruct 18, 12 and 8, and
// the site-local clover kernel.
#include "wilson_dslash.cuh"

LATSOL_CLOVER_FORMS(wilson_clover_f8_r18, signed char, signed char, 18, signed char)
LATSOL_CLOVER_FORMS(wilson_clover_f8_r12, signed char, signed char, 12, signed char)
LATSOL_CLOVER_FORMS(wilson_clover_f8_r8, signed char, signed char, 8, signed char)
LATSOL_CLOVER_SITE(clover_site_f8, signed char, signed char)
