// staggered_edges.cu: the improved (and naive) staggered hopping terms on the
// edge sites of a cut lattice, reading the faces of the other ranks
// (staggered_dslash.cuh, `staggered_edges_body`; issue 36), every format and
// long-link storage. A module of its own: compiled only where a lattice is cut.
#include "staggered_dslash.cuh"

LATSOL_STAGGERED_EDGES(staggered_dslash_f64_edges, double, 18)
LATSOL_STAGGERED_EDGES(staggered_dslash_f64_l13_edges, double, 13)
LATSOL_STAGGERED_EDGES(staggered_dslash_f64_l9_edges, double, 9)
LATSOL_STAGGERED_EDGES(staggered_dslash_f32_edges, float, 18)
LATSOL_STAGGERED_EDGES(staggered_dslash_f32_l13_edges, float, 13)
LATSOL_STAGGERED_EDGES(staggered_dslash_f32_l9_edges, float, 9)
LATSOL_STAGGERED_EDGES(staggered_dslash_f16_edges, short, 18)
LATSOL_STAGGERED_EDGES(staggered_dslash_f16_l13_edges, short, 13)
LATSOL_STAGGERED_EDGES(staggered_dslash_f16_l9_edges, short, 9)
LATSOL_STAGGERED_EDGES(staggered_dslash_f8_edges, signed char, 18)
LATSOL_STAGGERED_EDGES(staggered_dslash_f8_l13_edges, signed char, 13)
LATSOL_STAGGERED_EDGES(staggered_dslash_f8_l9_edges, signed char, 9)
LATSOL_STAGGERED_EDGES(staggered_dslash_p20_edges, packed20, 18)
LATSOL_STAGGERED_EDGES(staggered_dslash_p20_l13_edges, packed20, 13)
LATSOL_STAGGERED_EDGES(staggered_dslash_p20_l9_edges, packed20, 9)
LATSOL_STAGGERED_EDGES(staggered_dslash_p30_edges, packed30, 18)
LATSOL_STAGGERED_EDGES(staggered_dslash_p30_l13_edges, packed30, 13)
LATSOL_STAGGERED_EDGES(staggered_dslash_p30_l9_edges, packed30, 9)
