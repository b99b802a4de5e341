// wilson_dslash_f16.cu: the Wilson hopping term (wilson_dslash.cuh) in half (16-bit fixed point),
// reconstruct 18, 12 and 8, one thread a site (the small-volume forms are in
// wilson_dslash_f16_small.cu).
// Register budgets (docs/performance.md, "Small volumes"): the compiler's
// choice (119 for reconstruct 12) left too few warps in flight to cover the
// memory latency. Reconstruct 18 and 12 at most 102 (five blocks of 128:
// 96, two waves at 24^4): r18 65% -> 74% of the roofline at 24^4; r12, from
// 80 registers, 70% -> 75% at 24^4, 36% -> 44% at 16^4, 85% -> 86% at
// 32^3x64 (issue 18). Reconstruct 8 at most 80 (three blocks of 256), where
// it measured best. Overridable for experiments, as in wilson_dslash.cuh.
#ifndef LATSOL_DSLASH_BOUNDS
#define LATSOL_DSLASH_BOUNDS 256, 3
#define LATSOL_DSLASH_BOUNDS_18 128, 5
#define LATSOL_DSLASH_BOUNDS_12 128, 5
#endif
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
LATSOL_DSLASH_FORMS(wilson_dslash_f16_r18, short, short, 18)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_DSLASH_FORMS(wilson_dslash_f16_r12, short, short, 12)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_DSLASH_FORMS(wilson_dslash_f16_r8, short, short, 8)
#endif
