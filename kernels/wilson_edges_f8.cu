// wilson_edges_f8.cu: the Wilson and Wilson-clover hopping terms in quarter (8-bit fixed point)
// on the edge sites of a cut lattice, reading the faces of the other ranks
// (wilson_dslash.cuh, `wilson_dslash_edges`; issue 36). A module of its own:
// compiled only where a lattice is cut.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_EDGE_FORMS(wilson_dslash_f8_r18, signed char, signed char, 18)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_f8_r18, signed char, signed char, 18, signed char)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_EDGE_FORMS(wilson_dslash_f8_r12, signed char, signed char, 12)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_f8_r12, signed char, signed char, 12, signed char)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_EDGE_FORMS(wilson_dslash_f8_r8, signed char, signed char, 8)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_f8_r8, signed char, signed char, 8, signed char)
#endif
