// wilson_dslash_f16_small.cu: the half hopping term's small-volume forms
// (wilson_dslash.cuh): four threads a site (`_split`) and one thread a site
// at the widest register budget (`_wide`), reconstruct 18, 12 and 8. A
// source of their own, so that the modules a solve compiles at its first
// start hold them only where the lattice is small enough for the backend to
// consider them (src/backend/cuda/dslash_forms.rs, `SMALL_VOLUME_SITES`): the two
// forms made the half modules take half again as long to compile.
// Reconstruct 12 loads its first two forward links before it waits for
// the previous kernel (wilson_dslash.cuh, `links_first`): 24^4 75% -> 78%
// of the roofline. Not 18 and 8: at their register budgets the two links
// spill (8 to 24 bytes), and r18 measured 68% -> 60% at 16^4.
// (Overridable for experiments: LATSOL_NVRTC_OPTIONS=-DLATSOL_LINKS_FIRST_12=3.)
#ifndef LATSOL_LINKS_FIRST_12
#define LATSOL_LINKS_FIRST_12 2
#endif
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_DSLASH_SPLIT_FORMS(wilson_dslash_f16_r18, short, short, 18)
LATSOL_DSLASH_WIDE_FORMS(wilson_dslash_f16_r18, short, short, 18)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_DSLASH_SPLIT_FORMS(wilson_dslash_f16_r12, short, short, 12)
LATSOL_DSLASH_WIDE_FORMS(wilson_dslash_f16_r12, short, short, 12)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_DSLASH_SPLIT_FORMS(wilson_dslash_f16_r8, short, short, 8)
LATSOL_DSLASH_WIDE_FORMS(wilson_dslash_f16_r8, short, short, 8)
#endif
