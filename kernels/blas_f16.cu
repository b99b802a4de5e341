// blas_f16.cu: the vector algebra (blas.cuh) on half fields: every op and
// reduction, γ5, the conversions to every other format, and the sums of
// half fields into double and single (axpy_many).
// Reductions at most 128 registers (two blocks of 256 per SM): the
// compiler's choice (154 for axpy_norm2_pr, 216 for the widened BiCGstab
// update) left one block per SM; on the H100 this took axpy_norm2_pr from
// 50% to 62% of the copy and the widened update from 74% to 81% (three
// blocks spill and lose: docs/performance.md). Overridable for experiments.
#ifndef LATSOL_RED_MIN_BLOCKS
#define LATSOL_RED_MIN_BLOCKS 2
#endif
#include "blas.cuh"

LATSOL_BLAS_FORMAT(f16, short)
LATSOL_DOMAIN_PROJECT(f16, short)
// x̂ in single beside half fields (the widened partial solution).
LATSOL_REDUCE_ONE(blas_bicgstab_update_wide_f16, short, BicgstabUpdateWide)
extern "C" __global__ void gamma5_f16(const SiteParams P) { kernel_entry(); gamma5_fixed<short>(P); }
LATSOL_CONVERT(f16, short, f64, double)
LATSOL_CONVERT(f16, short, f32, float)
LATSOL_CONVERT(f16, short, f8, signed char)
LATSOL_CONVERT(f16, short, p20, packed20)
LATSOL_CONVERT(f16, short, p30, packed30)
