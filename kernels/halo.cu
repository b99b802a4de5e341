// halo.cu: the faces of a cut lattice gathered into one buffer (issue 36).
// A field in the device layout (core.cuh) is `rows` rows of `stride`
// elements, a site's element of row j at `j * stride + cb`, then (the half
// Wilson spinor, quarter) one row of f32 norms; a half colour vector is one
// row of 16-byte words, its norm inside. A face is the same layout with the face's
// slots for sites: slot k of block b holds the site `table[start[b] + k]`,
// so the receiving rank reads it with the loaders of core.cuh, as stored,
// in the operator's own precision (src/backend/cuda/halo.rs; the slot order
// is src/comm/faces.rs's, the CPU's, so both backends' faces agree).
#include "core.cuh"

#define LATSOL_PACK_BLOCKS 8

/// Kernel arguments; mirrored by `PackParams` in src/backend/cuda/halo.rs.
struct PackParams {
  u64 src;     // the field's block (a parity block, or the links of one parity and direction)
  u64 dst;     // the buffer the faces go to
  u64 table;   // u32 site of each slot, all blocks in order
  int src_stride;  // sites between the field's rows
  int rows;        // rows of elements
  int norm;        // 1: a row of f32 norms follows the rows (at rows * src_stride elements)
  int blocks;      // faces in the buffer (at most LATSOL_PACK_BLOCKS)
  int start[LATSOL_PACK_BLOCKS + 1];  // first slot of each face; start[blocks]: all slots
  int dst_stride[LATSOL_PACK_BLOCKS]; // slots between a face's rows
  u64 dst_offset[LATSOL_PACK_BLOCKS]; // byte offset of each face in dst
};
static_assert(sizeof(PackParams) == 176, "PackParams layout changed: update halo.rs");

/// One thread a (slot, row): row j of every slot, then the next row, so
/// that consecutive threads read a face's consecutive sites (a layer of
/// most directions is runs of consecutive sites) and write consecutive
/// slots; the norms are the last row.
template <typename E> __device__ __forceinline__ void pack_faces(const PackParams &P) {
  const int total = P.start[P.blocks];
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = t / total, k = t - j * total;
  if (j > P.rows || (j == P.rows && !P.norm)) return;
  int b = 0;
#pragma unroll
  for (int c = 1; c < LATSOL_PACK_BLOCKS; c++)
    if (c < P.blocks && k >= P.start[c]) b = c;
  const int slot = k - P.start[b];
  const int cb = reinterpret_cast<const unsigned *>(P.table)[k];
  const E *src = reinterpret_cast<const E *>(P.src);
  E *dst = reinterpret_cast<E *>(P.dst + P.dst_offset[b]);
  const int ds = P.dst_stride[b];
  if (j < P.rows) {
    dst[j * ds + slot] = src[j * P.src_stride + cb];
  } else {
    const float *sn = reinterpret_cast<const float *>(src + P.rows * P.src_stride);
    float *dn = reinterpret_cast<float *>(dst + P.rows * ds);
    dn[slot] = sn[cb];
  }
}

// By the bytes of an element: 1 (a quarter long link's phase), 2 (char2, a
// half long link's phase), 4 (short2, char4, a packed word), 8 (short4,
// float2), 16 (double2, float4, uint4).
extern "C" __global__ void pack_faces_b1(const PackParams P) { kernel_entry(); pack_faces<unsigned char>(P); }
extern "C" __global__ void pack_faces_b2(const PackParams P) { kernel_entry(); pack_faces<unsigned short>(P); }
extern "C" __global__ void pack_faces_b4(const PackParams P) { kernel_entry(); pack_faces<unsigned>(P); }
extern "C" __global__ void pack_faces_b8(const PackParams P) { kernel_entry(); pack_faces<uint2>(P); }
extern "C" __global__ void pack_faces_b16(const PackParams P) { kernel_entry(); pack_faces<uint4>(P); }
