// wilson_clover_f16.cu: the Wilson-clover hopping term (wilson_dslash.cuh with
// the clover epilogue of clover.cuh) in half (16-bit fixed point, clover 16-bit with a norm per chiral block); reconstruct 18, 12 and 8, and
// the site-local clover kernel.
// As wilson_dslash_f16.cu: at most 80 registers (three blocks of 256 per SM).
#ifndef LATSOL_DSLASH_BOUNDS
#define LATSOL_DSLASH_BOUNDS 256, 3
#endif
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_CLOVER_FORMS(wilson_clover_f16_r18, short, short, 18, short)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_CLOVER_FORMS(wilson_clover_f16_r12, short, short, 12, short)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_CLOVER_FORMS(wilson_clover_f16_r8, short, short, 8, short)
#endif
LATSOL_CLOVER_SITE(clover_site_f16, short, short)
