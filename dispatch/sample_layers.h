// Internal: the real-shaped layers that the GPTQ, AWQ and gpt-oss MXFP4
// registry samples (dispatch/kernel_samples.h) decode at streaming sizes.
// Their cache-resident samples are narrow layers (64 or 512 output
// features, one group), which suits the fuzzer and the per-target tests
// but not issue 18's streaming shape: a transposing kernel's memory access
// depends on the layer's width, its groups and how `amn remember` splits it
// into calls. So a sample of a whole number of kLayerSlabElems decodes a
// layer of kLayerOutFeatures outputs (Llama-7B's down_proj at 4096 x 11008)
// in groups of kLayerGroupSize, one remember-sized call at a time, and the
// MXFP4 sample of at least one gpt-oss expert decodes whole experts.
#ifndef AMN_DISPATCH_SAMPLE_LAYERS_H_
#define AMN_DISPATCH_SAMPLE_LAYERS_H_

#include <cstddef>
#include <cstdint>

#include "amn/elem_type.h"

namespace amn::internal {

inline constexpr size_t kLayerOutFeatures = 4096;
inline constexpr size_t kLayerGroupSize = 128;
inline constexpr size_t kLayerSlabElems = kLayerOutFeatures * kLayerGroupSize;  // 2^19

// Whether the GPTQ/AWQ samples decode the real-shaped layer for n_elems.
constexpr bool IsLayerSized(size_t n_elems) {
  return n_elems != 0 && n_elems % kLayerSlabElems == 0;
}

// gpt-oss's gate_up_proj expert: 5760 rows of 90 MXFP4 groups (2880 inputs).
inline constexpr size_t kGptOssExpertRows = 5760;
inline constexpr size_t kGptOssExpertGroups = 90;
inline constexpr size_t kGptOssExpertElems = kGptOssExpertRows * kGptOssExpertGroups * 32;

// Output rows of row_elems elements per decode call, as `amn remember`
// splits a packed tensor at its default chunk size (PackedChunkRows,
// dispatch/packed_chunk_rows.h: the engine's own rule).
size_t RememberCallRows(size_t row_elems, ElemType out_type);

// Side tables of the real-shaped layers, built on first use and kept for
// the process (one per shape; safe to call from several threads):
// F16 scales [groups][n] (positive, 2^-9 .. 2^-5 like a GPTQ/AWQ layer's,
// varied mantissas by column); zero-point bytes [groups][row_bytes] (any
// bytes are valid packed zeros); gpt-oss E8M0 scales [rows][groups] in
// 116..124, as perf/mxfp4_model.py writes them. Every group's scales and
// zeros are alike (the values do not change the work), so the GEMM-layout
// sample of whole slabs, sliced at slab boundaries, is the same rows of the
// same tensor (perf/kernel_scaling slices it among threads).
const uint8_t* LayerF16Scales(size_t groups, size_t n);
const uint8_t* LayerZeroBytes(size_t groups, size_t row_bytes);
const uint8_t* GptOssExpertScales();
// An act-order g_idx for k inputs in groups of group_size (int32 LE):
// entry i is perm(i) / group_size for the fixed permutation
// perm(i) = i * p mod k (p odd and coprime to k), as GPTQ's desc_act
// reorders the inputs; built once per (k, group_size), like the tables.
// Null for k = 0.
const uint8_t* LayerActOrderGIdx(size_t k, size_t group_size);

}  // namespace amn::internal

#endif  // AMN_DISPATCH_SAMPLE_LAYERS_H_
