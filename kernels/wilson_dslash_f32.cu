// wilson_dslash_f32.cu: the Wilson hopping term (wilson_dslash.cuh) in single,
// reconstruct 18, 12 and 8.
// Reconstruct 18 and 12 at most 128 registers (four blocks of 128 per SM):
// at 24^4 85% -> 89% (r18) and 83% -> 86% (r12) of the roofline against the
// compiler's choice (issue 18, docs/performance.md). Reconstruct 8: the
// compiler's choice. Overridable for experiments, as in wilson_dslash.cuh.
#ifndef LATSOL_DSLASH_BOUNDS
#define LATSOL_DSLASH_BOUNDS_18 128, 4
#define LATSOL_DSLASH_BOUNDS_12 128, 4
#endif
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_DSLASH_FORMS(wilson_dslash_f32_r18, float, float, 18)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_DSLASH_FORMS(wilson_dslash_f32_r12, float, float, 12)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_DSLASH_FORMS(wilson_dslash_f32_r8, float, float, 8)
#endif
