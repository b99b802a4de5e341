// wilson_edges_p20.cu: the Wilson and Wilson-clover hopping terms in the 20-bit packed format
// on the edge sites of a cut lattice, reading the faces of the other ranks
// (wilson_dslash.cuh, `wilson_dslash_edges`; issue 36). A module of its own:
// compiled only where a lattice is cut.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_EDGE_FORMS(wilson_dslash_p20_r18, packed20, short, 18)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_p20_r18, packed20, short, 18, short)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_EDGE_FORMS(wilson_dslash_p20_r12, packed20, short, 12)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_p20_r12, packed20, short, 12, short)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_EDGE_FORMS(wilson_dslash_p20_r8, packed20, short, 8)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_p20_r8, packed20, short, 8, short)
#endif
