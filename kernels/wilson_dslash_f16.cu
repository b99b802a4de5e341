// wilson_dslash_f16.cu: the Wilson hopping term (wilson_dslash.cuh) in half (16-bit fixed point),
// reconstruct 18, 12 and 8, one thread a site (the small-volume forms are in
// wilson_dslash_f16_small.cu).
// Register budgets (docs/performance.md, "Small volumes"): the compiler's
// choice (119 for reconstruct 12) left too few warps in flight to cover the
// memory latency. Reconstruct 18 and 12 at most 102 (five blocks of 128:
// 96, two waves at 24^4): r18 65% -> 74% of the roofline at 24^4; r12, from
// 80 registers, 70% -> 75% at 24^4, 36% -> 44% at 16^4, 85% -> 86% at
// 32^3x64 (issue 18). Reconstruct 8 at most 80 (three blocks of 256), where
// it measured best (with its four links' words held across the wait, below,
// still without spilling). Overridable for experiments, as in wilson_dslash.cuh.
#ifndef LATSOL_DSLASH_BOUNDS
#define LATSOL_DSLASH_BOUNDS 256, 3
#define LATSOL_DSLASH_BOUNDS_18 128, 5
#define LATSOL_DSLASH_BOUNDS_12 128, 5
#endif
// Reconstruct 12 loads the words of its first three forward links, and
// reconstruct 8 all four, before it waits for the previous kernel
// (wilson_dslash.cuh, `links_first`): 24^4 half r12 75% -> 79% of the
// roofline, r8 48% -> 49%, 20^4 r8 37% -> 41%. Not 18 (two links): it gains
// at 20^4 and 24^4 (76% -> 79%, 84% -> 85%, back to back) but loses at 16^4
// (68% -> 60%) and 32^3x64 (94% -> 93%). (Overridable for experiments:
// LATSOL_NVRTC_OPTIONS=-DLATSOL_LINKS_FIRST_18=2.)
#ifndef LATSOL_LINKS_FIRST_12
#define LATSOL_LINKS_FIRST_12 3
#endif
#ifndef LATSOL_LINKS_FIRST_8
#define LATSOL_LINKS_FIRST_8 4
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
