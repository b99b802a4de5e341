// wilson_dslash_f16_small.cu: the half hopping term's small-volume forms
// (wilson_dslash.cuh): four threads a site (`_split`) and one thread a site
// at the widest register budget (`_wide`), reconstruct 18, 12 and 8. A
// source of their own, so that the modules a solve compiles at its first
// start hold them only where the lattice is small enough for the backend to
// consider them (src/backend/cuda/dslash_forms.rs, `SMALL_VOLUME_SITES`): the two
// forms made the half modules take half again as long to compile.
// The wide forms load the stored words of some forward links before they
// wait for the previous kernel (wilson_dslash.cuh, `links_first`; the split
// forms wait first): reconstruct 12 two (three, as the plain form in
// wilson_dslash_f16.cu, measured the same or a point or two slower at 16^4
// and 20^4), reconstruct 8 all four (16^4 xpay r8 37% -> 38-40% of the
// roofline); not 18 (as the plain form). (Overridable for experiments:
// LATSOL_NVRTC_OPTIONS=-DLATSOL_LINKS_FIRST_12=3.)
#ifndef LATSOL_LINKS_FIRST_12
#define LATSOL_LINKS_FIRST_12 2
#endif
#ifndef LATSOL_LINKS_FIRST_8
#define LATSOL_LINKS_FIRST_8 4
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
