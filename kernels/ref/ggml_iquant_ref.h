// Scalar reference for the ggml I-quant family (IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS, IQ3_S, IQ1_S, IQ1_M): ggml-quants.c dequantize_row_iq* as
// written, f32 arithmetic with one rounding per operation in ggml's order
// (the group scale first, then scale · grid byte · ±1, or for IQ1
// scale · (grid byte + delta)), never fused; BF16/F16 outputs round that F32
// with kernels/ref/float_convert_ref.h.
// NaN/Inf: the only NaN operand is the f16 super scale d (quieted when
// widened); every other factor is a finite non-zero number, so a NaN output
// is d's NaN on every CPU, and d = ±Inf gives ±Inf.
#ifndef AMN_KERNELS_REF_GGML_IQUANT_REF_H_
#define AMN_KERNELS_REF_GGML_IQUANT_REF_H_

#include <cstddef>
#include <cstdint>

namespace amn::ref {

// Block bytes for a GGUF type id of this family; 0 for any other id.
size_t IQuantBlockBytes(uint32_t ggml_type);

// One super-block (256 elements) of `ggml_type` at `block` to F32. The type
// must be one IQuantBlockBytes knows.
void DequantIQuantBlock(uint32_t ggml_type, const uint8_t* block, float* out);

// n_blocks consecutive super-blocks to n_blocks * 256 outputs. False (nothing
// written) when the type is not in this family.
bool DequantIQuantToF32(uint32_t ggml_type, const uint8_t* blocks, size_t n_blocks, float* out);
bool DequantIQuantToBf16(uint32_t ggml_type, const uint8_t* blocks, size_t n_blocks,
                         uint16_t* out);
bool DequantIQuantToF16(uint32_t ggml_type, const uint8_t* blocks, size_t n_blocks,
                        uint16_t* out);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_GGML_IQUANT_REF_H_
