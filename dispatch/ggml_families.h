// Internal: the per-family entry points behind amn::DequantGgml. Each returns
// false when `type` is not one of its family's types (then the next family
// is asked); arguments are already checked: n_blocks whole blocks in, n_blocks
// * block_elems elements of out_type (kF32/kF16/kBf16) out, no overlap.
#ifndef AMN_DISPATCH_GGML_FAMILIES_H_
#define AMN_DISPATCH_GGML_FAMILIES_H_

#include <cstddef>
#include <cstdint>

#include "amn/ggml_dequant.h"

namespace amn::internal {

// dispatch/ggml_legacy.cc: 32-element blocks (Q4_0 … Q8_1, IQ4_NL, MXFP4).
bool DequantGgmlLegacy(GgmlType type, const uint8_t* blocks, size_t n_blocks, ElemType out_type,
                       void* out);
// dispatch/ggml_kquant.cc: 256-element super-blocks (K-quants, IQ4_XS, TQ*).
bool DequantGgmlKQuant(GgmlType type, const uint8_t* blocks, size_t n_blocks, ElemType out_type,
                       void* out);
// dispatch/ggml_iquant.cc: 256-element lattice super-blocks (IQ1_*, IQ2_*,
// IQ3_*).
bool DequantGgmlIQuant(GgmlType type, const uint8_t* blocks, size_t n_blocks, ElemType out_type,
                       void* out);

}  // namespace amn::internal

#endif  // AMN_DISPATCH_GGML_FAMILIES_H_
