// Scalar reference for the ggml legacy block quants (Q4_0 Q4_1 Q5_0 Q5_1
// Q8_0 Q8_1 IQ4_NL MXFP4, and the newer NVFP4 Q1_0 Q2_0), written from ggml-quants.c dequantize_row_* and
// ../shared/fixtures/README.md: plain loops in ggml's element order, f16
// scales widened exactly, f32 arithmetic with one rounding per operation in
// ggml's order (Q4_1/Q5_1: multiply, then add; never fused). Never
// optimised: every Highway target must match it bit for bit.
// NaN/Inf: IEEE f32 arithmetic, with NaN results made independent of the CPU
// and of operand order: a NaN result is d's (quiet) NaN when d is NaN, else
// m's when m is NaN, else ggml::kInvalidNan (±Inf * 0, Inf - Inf: 0xFFC00000,
// x86's default NaN, as numpy gives there). F16 signalling NaNs are quieted when
// widened. Finite d and m never give NaN.
#ifndef AMN_KERNELS_REF_GGML_LEGACY_REF_H_
#define AMN_KERNELS_REF_GGML_LEGACY_REF_H_

#include <cstddef>
#include <cstdint>

#include "amn/elem_type.h"
#include "amn/ggml_type.h"

namespace amn::ref {

// n_blocks whole blocks -> n_blocks * 32 F32 values; no overlap.
void DequantQ4_0(const uint8_t* blocks, size_t n_blocks, float* out);
void DequantQ4_1(const uint8_t* blocks, size_t n_blocks, float* out);
void DequantQ5_0(const uint8_t* blocks, size_t n_blocks, float* out);
void DequantQ5_1(const uint8_t* blocks, size_t n_blocks, float* out);
void DequantQ8_0(const uint8_t* blocks, size_t n_blocks, float* out);
void DequantQ8_1(const uint8_t* blocks, size_t n_blocks, float* out);
void DequantIq4Nl(const uint8_t* blocks, size_t n_blocks, float* out);
void DequantMxfp4(const uint8_t* blocks, size_t n_blocks, float* out);
// Blocks of 64 (NVFP4, Q2_0) and 128 (Q1_0) elements. Q1_0's -d is a sign
// flip, so a NaN d gives d or d with its sign flipped, as ggml's neg_d does.
void DequantNvfp4Gguf(const uint8_t* blocks, size_t n_blocks, float* out);
void DequantQ1_0(const uint8_t* blocks, size_t n_blocks, float* out);
void DequantQ2_0(const uint8_t* blocks, size_t n_blocks, float* out);

// Bytes and elements of one block of a type of this family; 0 for any other.
size_t GgmlLegacyBlockBytes(GgmlType type);
size_t GgmlLegacyBlockElems(GgmlType type);

// Any type of this family to kF32/kF16/kBf16 (F32 values, then ref::F32BitsToBf16 /
// F32BitsToF16). `out` may start at any byte. False (nothing written) when
// `type` is not a legacy type or out_type is not one of the three.
bool DequantGgmlLegacy(GgmlType type, const uint8_t* blocks, size_t n_blocks, ElemType out_type,
                       void* out);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_GGML_LEGACY_REF_H_
