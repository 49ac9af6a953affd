// Scalar reference for bitsandbytes dequantization (amn/bnb_dequant.h),
// element by element in bitsandbytes' order; never optimised. Every Highway
// target must match it bit for bit.
//
// 4-bit (NF4 / FP4, plain or double quant), from functional.py
// dequantize_4bit and csrc/kernels.cu kDequantizeBlockwise (NF4/FP4 cases):
//   out[e] = Round(cb(nibble(e)) * absmax[e / block_size])
// one f32 multiply, then the output rounding of kernels/ref/float_convert_ref.h
// (bitsandbytes stores the f32 product into the output dtype once). nibble(e)
// is the high nibble of packed[e / 2] for even e, the low one for odd e; cb is
// quant_map with the FP4 sign-of-zero rule and absmax the plain f32 value or
// the double-quant recovery (kernels/bnb_layout.h: CodebookBits, AbsmaxBits).
//
// INT8 (LLM.int8() row-wise), from _ops.py int8_vectorwise_dequant, which
// computes `A * stats.view(-1, 1) * 7.874015718698502e-3`, left to right:
//   out[r][c] = Round((f32(w[r][c]) * SCB[r]) * f32(7.874015718698502e-3))
// two f32 multiplies; the constant is f32(1/127) = 0x3C010204.
//
// NaN: a NaN result of any multiply or add is made independent of the CPU:
// the first operand's NaN quieted, else the second's, else 0xFFC00000 (x86's
// result for `a op b`; bnb::NanOf). Operand order: codebook entry first, then
// absmax; nested code first, then nested absmax; product first, then offset;
// weight first, then SCB; then that product and the constant. Infinities and
// overflow follow IEEE, then the output rule (BF16/F16 overflow to ±Inf).
//
// `out` may start at any byte (stores go through memcpy).
#ifndef AMN_KERNELS_REF_BNB_REF_H_
#define AMN_KERNELS_REF_BNB_REF_H_

#include <cstddef>
#include <cstdint>

#include "kernels/bnb_layout.h"

namespace amn::ref {

// Elements [begin, end) of the 4-bit tensor -> out[0, end - begin).
void DequantBnb4ToF32(const bnb::Bnb4View& t, size_t begin, size_t end, float* out);
void DequantBnb4ToBf16(const bnb::Bnb4View& t, size_t begin, size_t end, uint16_t* out);
void DequantBnb4ToF16(const bnb::Bnb4View& t, size_t begin, size_t end, uint16_t* out);

// F32 bits of element e of the 4-bit tensor (before output rounding).
uint32_t Bnb4ElementBits(const bnb::Bnb4View& t, size_t e);

// rows x cols int8 weights (row-major), scb: f32 LE [rows] -> rows * cols outputs.
void DequantBnbInt8ToF32(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                         float* out);
void DequantBnbInt8ToBf16(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                          uint16_t* out);
void DequantBnbInt8ToF16(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                         uint16_t* out);

// F32 bits of one INT8 element: (w * scb) * f32(1/127) with the NaN rule.
uint32_t BnbInt8ElementBits(int8_t w, uint32_t scb_bits);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_BNB_REF_H_
