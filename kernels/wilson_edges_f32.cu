// wilson_edges_f32.cu: the Wilson and Wilson-clover hopping terms in single
// on the edge sites of a cut lattice, reading the faces of the other ranks
// (wilson_dslash.cuh, `wilson_dslash_edges`; issue 36). A module of its own:
// compiled only where a lattice is cut.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_EDGE_FORMS(wilson_dslash_f32_r18, float, float, 18)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_f32_r18, float, float, 18, float)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_EDGE_FORMS(wilson_dslash_f32_r12, float, float, 12)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_f32_r12, float, float, 12, float)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_EDGE_FORMS(wilson_dslash_f32_r8, float, float, 8)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_f32_r8, float, float, 8, float)
#endif
