// bitsandbytes 4-bit (NF4/FP4, plain and double quant) and LLM.int8() layouts:
// the raw, already validated views the kernels and the reference read, the
// codebooks bitsandbytes defines, and the scalar NaN rule they share. No
// Highway. Source: bitsandbytes functional.py (get_4bit_type,
// dequantize_4bit, dequantize_blockwise), csrc/kernels.cu
// (kDequantizeBlockwise, nf4/fp4_dequantization_lut), _ops.py
// (int8_vectorwise_dequant).
#ifndef AMN_KERNELS_BNB_LAYOUT_H_
#define AMN_KERNELS_BNB_LAYOUT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace amn::bnb {

// A 4-bit tensor of n elements, flat. Every pointer is unaligned bytes of a
// little-endian file; the caller (dispatch/bnb.cc) has checked every size.
//   packed:        ceil(n / 2) bytes; element 2k is byte k >> 4, 2k+1 byte k & 15
//   quant_map:     16 f32, the codebook stored with the weight
//   absmax:        plain: f32 [nb]; double quant: u8 [nb]; nb = ceil(n / block_size)
//   nested_absmax: f32 [ceil(nb / nested_block_size)]   (double quant only)
//   nested_quant_map: f32 [256]                          (double quant only)
struct Bnb4View {
  const uint8_t* packed = nullptr;
  const uint8_t* quant_map = nullptr;
  const uint8_t* absmax = nullptr;
  size_t block_size = 64;  // even, >= 2
  bool double_quant = false;
  const uint8_t* nested_absmax = nullptr;
  const uint8_t* nested_quant_map = nullptr;
  size_t nested_block_size = 256;   // >= 1
  uint32_t nested_offset_bits = 0;  // f32 bits
};

inline constexpr size_t kCodebookSize = 16;
inline constexpr size_t kNestedCodebookSize = 256;

// The NaN an invalid operation (0 * Inf, Inf - Inf) gives here, whatever the
// CPU's default NaN: x86's.
inline constexpr uint32_t kInvalidNan = 0xFFC00000u;
inline constexpr uint32_t kQuietBit = 0x00400000u;

// f32(7.874015718698502e-3): the literal int8_vectorwise_dequant multiplies
// by, rounded to f32 as PyTorch does for a Python scalar times an f32 tensor
// (it is also f32(1 / 127)).
inline constexpr uint32_t kInv127Bits = 0x3C010204u;

inline uint32_t LoadLe32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

inline bool IsNanBits(uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; }
inline bool IsFiniteBits(uint32_t bits) { return (bits & 0x7F800000u) != 0x7F800000u; }

inline float FromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
inline uint32_t ToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

// The NaN of a NaN result of `a op b`, independent of the CPU (x86 returns
// its first NaN operand quieted, Arm prefers a signalling one and has another
// default NaN): a's NaN quieted, else b's quieted, else kInvalidNan.
inline uint32_t NanOf(uint32_t a, uint32_t b) {
  if (IsNanBits(a)) return a | kQuietBit;
  if (IsNanBits(b)) return b | kQuietBit;
  return kInvalidNan;
}

// One f32 multiply / add (never fused: -ffp-contract=off) with that NaN rule.
inline uint32_t MulBits(uint32_t a, uint32_t b) {
  const uint32_t r = ToBits(FromBits(a) * FromBits(b));
  return IsNanBits(r) ? NanOf(a, b) : r;
}
inline uint32_t AddBits(uint32_t a, uint32_t b) {
  const uint32_t r = ToBits(FromBits(a) + FromBits(b));
  return IsNanBits(r) ? NanOf(a, b) : r;
}

// Codebook entry `nibble` with the FP4 sign-of-zero rule: bitsandbytes'
// CUDA kernel decodes FP4 as lut[nib & 7] * (1 - 2 * (nib >> 3)), so nibble 8
// is -0.0 although the stored quant_map holds +0.0 there (get_4bit_type
// builds it from the Python int -0). An entry of bits 0 at an index with bit
// 3 set is therefore -0.0. NF4's entry 8 is 0.0796, so this never fires there.
inline uint32_t CodebookBits(const uint8_t* quant_map, unsigned nibble) {
  const uint32_t bits = LoadLe32(quant_map + 4 * nibble);
  return (bits == 0 && (nibble & 8) != 0) ? 0x80000000u : bits;
}

// Block b's absmax as f32 bits. Double quant recovers it as bitsandbytes'
// dequantize_4bit does: dequantize_blockwise (code[u8] * absmax2[b / 256] in
// kDequantizeBlockwise<float, General8bit>), then `absmax += offset`: two
// separate f32 operations.
inline uint32_t AbsmaxBits(const Bnb4View& t, size_t block) {
  if (!t.double_quant) return LoadLe32(t.absmax + 4 * block);
  const uint32_t code = LoadLe32(t.nested_quant_map + 4 * size_t{t.absmax[block]});
  const uint32_t scale = LoadLe32(t.nested_absmax + 4 * (block / t.nested_block_size));
  return AddBits(MulBits(code, scale), t.nested_offset_bits);
}

// The codebooks as bitsandbytes writes them (for the registry's synthetic
// tensors): NF4 from csrc/kernels.cu nf4_dequantization_lut, FP4 from
// get_4bit_type("fp4") (the values / 12, with +0.0 at index 8).
inline constexpr std::array<float, kCodebookSize> kNf4Codebook = {-1.0f,
                                                                  -0.6961928009986877f,
                                                                  -0.5250730514526367f,
                                                                  -0.39491748809814453f,
                                                                  -0.28444138169288635f,
                                                                  -0.18477343022823334f,
                                                                  -0.09105003625154495f,
                                                                  0.0f,
                                                                  0.07958029955625534f,
                                                                  0.16093020141124725f,
                                                                  0.24611230194568634f,
                                                                  0.33791524171829224f,
                                                                  0.44070982933044434f,
                                                                  0.5626170039176941f,
                                                                  0.7229568362236023f,
                                                                  1.0f};
inline constexpr std::array<float, kCodebookSize> kFp4Codebook = {
    0.0f, 0.0625f / 12,  8.0f / 12,  12.0f / 12,  4.0f / 12,  6.0f / 12,  2.0f / 12,  3.0f / 12,
    0.0f, -0.0625f / 12, -8.0f / 12, -12.0f / 12, -4.0f / 12, -6.0f / 12, -2.0f / 12, -3.0f / 12};

}  // namespace amn::bnb

#endif  // AMN_KERNELS_BNB_LAYOUT_H_
