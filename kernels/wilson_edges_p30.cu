// wilson_edges_p30.cu: the Wilson and Wilson-clover hopping terms in the 30-bit packed format
// on the edge sites of a cut lattice, reading the faces of the other ranks
// (wilson_dslash.cuh, `wilson_dslash_edges`; issue 36). A module of its own:
// compiled only where a lattice is cut.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_EDGE_FORMS(wilson_dslash_p30_r18, packed30, int, 18)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_p30_r18, packed30, int, 18, float)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_EDGE_FORMS(wilson_dslash_p30_r12, packed30, int, 12)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_p30_r12, packed30, int, 12, float)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_EDGE_FORMS(wilson_dslash_p30_r8, packed30, int, 8)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_p30_r8, packed30, int, 8, float)
#endif
