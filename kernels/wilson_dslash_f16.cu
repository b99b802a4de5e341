// wilson_dslash_f16.cu: the Wilson hopping term (wilson_dslash.cuh) in half (16-bit fixed point),
// reconstruct 18, 12 and 8.
// At most 80 registers (three blocks of 256 per SM): the compiler's choice
// (119 for reconstruct 12) left too few warps in flight to cover the memory
// latency; 80 measured best on the H100 (docs/performance.md). Reconstruct
// 18 at most 102 (five blocks of 128): 65% -> 74% of the roofline at 24^4,
// 35% -> 41% at 16^4, 83% -> 87% at 32^3x64 (issue 18). Overridable for
// experiments, as in wilson_dslash.cuh.
#ifndef LATSOL_DSLASH_BOUNDS
#define LATSOL_DSLASH_BOUNDS 256, 3
#define LATSOL_DSLASH_BOUNDS_18 128, 5
#endif
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_DSLASH_FORMS(wilson_dslash_f16_r18, short, short, 18)
LATSOL_DSLASH_SPLIT_FORMS(wilson_dslash_f16_r18, short, short, 18)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_DSLASH_FORMS(wilson_dslash_f16_r12, short, short, 12)
LATSOL_DSLASH_SPLIT_FORMS(wilson_dslash_f16_r12, short, short, 12)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_DSLASH_FORMS(wilson_dslash_f16_r8, short, short, 8)
LATSOL_DSLASH_SPLIT_FORMS(wilson_dslash_f16_r8, short, short, 8)
#endif
