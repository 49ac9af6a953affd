// Scalar reference for the ggml K-quant family (Q2_K … Q8_K, IQ4_XS, TQ1_0,
// TQ2_0): ggml-quants.c dequantize_row_* ported as written, f32 arithmetic
// with one rounding per operation in ggml's order (the per-sub-block factors
// first, then the per-element product and difference), never fused; BF16/F16
// outputs round that F32 with kernels/ref/float_convert_ref.h.
// NaN/Inf: IEEE f32 arithmetic, with NaN results made independent of the CPU
// and of operand order (the legacy family's rule, ggml_legacy_ref.h): a NaN
// result is d's (quiet) NaN when d is NaN, else dmin's when dmin is NaN, else
// ggml::kInvalidNan (±Inf * 0, Inf - Inf: 0xFFC00000, x86's default NaN). d
// is the block's f16 super scale (Q8_K: its f32 one), dmin the f16 min scale
// of Q2_K/Q4_K/Q5_K; the sub-block scales and codes are integers and never
// NaN. F16 signalling NaNs are quieted when widened, Q8_K's f32 one by setting
// the quiet bit. The NaN is a function of the block's d and dmin alone, so
// every NaN element of a block carries the same bits. Finite d and dmin never
// give NaN (f16 scales times 6-bit factors and codes cannot overflow).
#ifndef AMN_KERNELS_REF_GGML_KQUANT_REF_H_
#define AMN_KERNELS_REF_GGML_KQUANT_REF_H_

#include <cstddef>
#include <cstdint>

namespace amn::ref {

// Block bytes for a GGUF type id of this family; 0 for any other id.
size_t KQuantBlockBytes(uint32_t ggml_type);

// One super-block (256 elements) of `ggml_type` at `block` to F32. The type
// must be one KQuantBlockBytes knows.
void DequantKQuantBlock(uint32_t ggml_type, const uint8_t* block, float* out);

// n_blocks consecutive super-blocks to n_blocks * 256 outputs. False (nothing
// written) when the type is not in this family.
bool DequantKQuantToF32(uint32_t ggml_type, const uint8_t* blocks, size_t n_blocks, float* out);
bool DequantKQuantToBf16(uint32_t ggml_type, const uint8_t* blocks, size_t n_blocks,
                         uint16_t* out);
bool DequantKQuantToF16(uint32_t ggml_type, const uint8_t* blocks, size_t n_blocks,
                        uint16_t* out);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_GGML_KQUANT_REF_H_
