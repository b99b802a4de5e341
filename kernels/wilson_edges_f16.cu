// wilson_edges_f16.cu: the Wilson and Wilson-clover hopping terms in half (16-bit fixed point)
// on the edge sites of a cut lattice, reading the faces of the other ranks
// (wilson_dslash.cuh, `wilson_dslash_edges`; issue 36). A module of its own:
// compiled only where a lattice is cut.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_EDGE_FORMS(wilson_dslash_f16_r18, short, short, 18)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_f16_r18, short, short, 18, short)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_EDGE_FORMS(wilson_dslash_f16_r12, short, short, 12)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_f16_r12, short, short, 12, short)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_EDGE_FORMS(wilson_dslash_f16_r8, short, short, 8)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_f16_r8, short, short, 8, short)
#endif
