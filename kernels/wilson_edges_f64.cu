// wilson_edges_f64.cu: the Wilson and Wilson-clover hopping terms in double
// on the edge sites of a cut lattice, reading the faces of the other ranks
// (wilson_dslash.cuh, `wilson_dslash_edges`; issue 36). A module of its own:
// compiled only where a lattice is cut.
#include "wilson_dslash.cuh"

#if LATSOL_HAS_RECONSTRUCT(18)
LATSOL_EDGE_FORMS(wilson_dslash_f64_r18, double, double, 18)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_f64_r18, double, double, 18, double)
#endif
#if LATSOL_HAS_RECONSTRUCT(12)
LATSOL_EDGE_FORMS(wilson_dslash_f64_r12, double, double, 12)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_f64_r12, double, double, 12, double)
#endif
#if LATSOL_HAS_RECONSTRUCT(8)
LATSOL_EDGE_FORMS(wilson_dslash_f64_r8, double, double, 8)
LATSOL_CLOVER_EDGE_FORMS(wilson_clover_f64_r8, double, double, 8, double)
#endif
