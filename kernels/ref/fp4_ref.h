// Scalar reference for the two 4-bit float (E2M1) safetensors schemes
// (amn/fp4_dequant.h): compressed-tensors NVFP4 and gpt-oss MXFP4. Plain
// loops in the canonical libraries' order, never optimised; every Highway
// target must match them bit for bit.
//
// NVFP4 (compressed-tensors `nvfp4-pack-quantized`), after
// compressors/quantized_compressors/fp4_quantized.py
// (NVFP4PackedCompressor.decompress_weight, unpack_fp4_from_uint8) and
// quantization/lifecycle/forward.py (dequantize -> _process_quantization,
// GROUP strategy -> _dequantize):
//   packed u8 [rows][cols/2]: byte k of a row holds element 2k in its LOW
//     nibble and element 2k+1 in its high nibble;
//   scales E4M3FN [rows][cols/16], global_scale F32;
//   e2m1 = kE2M1ToFloat[n & 7] * (n & 8 ? -1.0 : 1.0)   (F32; code 8 = -0.0)
//   q    = f32(scale) / global_scale                      (F32 division)
//   out  = to_out(f32(e2m1) * q)                          (F32 multiply)
// Every step rounds in F32 (the unpacked BF16 values are exact); the BF16
// result is the canonical one, F16/F32 outputs convert the same F32 product.
//
// MXFP4 (gpt-oss checkpoints, transformers integrations/mxfp4.py
// convert_moe_packed_tensors):
//   blocks u8 [rows][groups][16], scales u8 (E8M0) [rows][groups];
//   row r, group g: element 2j is the LOW nibble of byte j, 2j+1 the high
//     one (FP4_VALUES, -0.0 at code 8);
//   out = to_out(f32(FP4_VALUES[n]) * f32(2^(scale - 127)))
// torch.ldexp(x, e) is x * torch.pow(2.0, e), computed in F32 (pow of a
// float scalar and an int32 tensor is F32, and the BF16 x promotes), then
// stored in the BF16 output. 2^(s-127) is exact in F32 for s = 0..254
// (s = 0 is the subnormal 2^-127); s = 255 overflows to +Inf (transformers
// ldexps it: it is not the OCP MX NaN). All finite products are exact in
// F32 and BF16; 6 * 2^127 and 2 * 2^127 overflow to +-Inf.
// transformers returns the gpt-oss expert layout: the last two dimensions
// transposed, [experts][groups*32][rows] (the "transposed" functions).
//
// NaN: one rule for both schemes, what x86 SSE gives with the operands in
// the canonical order (the first NaN operand, quieted; else the default NaN
// 0xFFC00000 for 0 * Inf and 0 / 0), so every target writes the same bits:
//   q: a NaN E4M3 scale (0x7F, 0xFF) keeps its decoded NaN; else a NaN
//      global scale, quieted; else (0 / 0) 0xFFC00000;
//   product: a NaN q keeps its NaN; else (0 * Inf) 0xFFC00000
//      (kernels/ref/fp8_dequant_ref.h ScaledF32Bits: E2M1 is never NaN).
// Outputs may sit at any byte address (stores go through memcpy). No
// buffer may overlap another.
#ifndef AMN_KERNELS_REF_FP4_REF_H_
#define AMN_KERNELS_REF_FP4_REF_H_

#include <cstddef>
#include <cstdint>

namespace amn::ref {

inline constexpr size_t kNvfp4GroupElems = 16;
inline constexpr size_t kMxfp4GroupElems = 32;
inline constexpr size_t kMxfp4GroupBytes = 16;

// The E2M1 value of the low 4 bits of `nibble`, as F32 bits.
uint32_t E2m1ToF32Bits(uint8_t nibble);
// 2^(e - 127) as F32 bits (e = 255: +Inf).
uint32_t E8m0ToF32Bits(uint8_t e);
// q = f32(e4m3 scale) / global_scale with the NaN rule above, as F32 bits.
uint32_t Nvfp4GroupScaleBits(uint8_t e4m3, float global_scale);

// NVFP4: `rows` whole rows of `cols` elements (cols a multiple of 16).
void DequantNvfp4ToF32(const uint8_t* packed, const uint8_t* scales, float global_scale,
                       size_t rows, size_t cols, float* out);
void DequantNvfp4ToBf16(const uint8_t* packed, const uint8_t* scales, float global_scale,
                        size_t rows, size_t cols, uint16_t* out);
void DequantNvfp4ToF16(const uint8_t* packed, const uint8_t* scales, float global_scale,
                       size_t rows, size_t cols, uint16_t* out);

// MXFP4 without the transpose: `rows` rows of groups * 32 elements.
void DequantMxfp4StToF32(const uint8_t* blocks, const uint8_t* scales, size_t rows, size_t groups,
                       float* out);
void DequantMxfp4StToBf16(const uint8_t* blocks, const uint8_t* scales, size_t rows, size_t groups,
                        uint16_t* out);
void DequantMxfp4StToF16(const uint8_t* blocks, const uint8_t* scales, size_t rows, size_t groups,
                       uint16_t* out);

// MXFP4 transposed, one expert: the blocks/scales of a [rows][groups*32]
// matrix, output rows c in [col_begin, col_end) of its transpose
// [groups*32][rows], each `rows` elements, out[(c - col_begin) * rows + r].
void DequantMxfp4StTransposedToF32(const uint8_t* blocks, const uint8_t* scales, size_t rows,
                                 size_t groups, size_t col_begin, size_t col_end, float* out);
void DequantMxfp4StTransposedToBf16(const uint8_t* blocks, const uint8_t* scales, size_t rows,
                                  size_t groups, size_t col_begin, size_t col_end, uint16_t* out);
void DequantMxfp4StTransposedToF16(const uint8_t* blocks, const uint8_t* scales, size_t rows,
                                 size_t groups, size_t col_begin, size_t col_end, uint16_t* out);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_FP4_REF_H_
