// Scalar reference for bitsandbytes NF4/FP4/double-quant and INT8
// dequantization: the formulas of kernels/ref/bnb_ref.h, one element at a
// time, then kernels/ref/float_convert_ref's output rounding.
#include "kernels/ref/bnb_ref.h"

#include <cstring>

#include "kernels/ref/float_convert_ref.h"

namespace amn::ref {
namespace {

uint32_t F32Identity(uint32_t bits) { return bits; }

template <typename TBits, auto kEncode>
void Bnb4Rows(const bnb::Bnb4View& t, size_t begin, size_t end, void* out) {
  auto* out_bytes = static_cast<unsigned char*>(out);
  for (size_t e = begin; e < end; ++e) {
    const TBits encoded = static_cast<TBits>(kEncode(Bnb4ElementBits(t, e)));
    std::memcpy(out_bytes + (e - begin) * sizeof(TBits), &encoded, sizeof(encoded));
  }
}

template <typename TBits, auto kEncode>
void Int8Rows(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols, void* out) {
  auto* out_bytes = static_cast<unsigned char*>(out);
  for (size_t r = 0; r < rows; ++r) {
    const uint32_t scale = bnb::LoadLe32(scb + 4 * r);
    for (size_t c = 0; c < cols; ++c) {
      const size_t i = r * cols + c;
      const TBits encoded =
          static_cast<TBits>(kEncode(BnbInt8ElementBits(static_cast<int8_t>(weight[i]), scale)));
      std::memcpy(out_bytes + i * sizeof(TBits), &encoded, sizeof(encoded));
    }
  }
}

}  // namespace

uint32_t Bnb4ElementBits(const bnb::Bnb4View& t, size_t e) {
  const uint8_t byte = t.packed[e / 2];
  const unsigned nibble = (e % 2 == 0) ? byte >> 4 : byte & 15u;
  return bnb::MulBits(bnb::CodebookBits(t.quant_map, nibble), bnb::AbsmaxBits(t, e / t.block_size));
}

uint32_t BnbInt8ElementBits(int8_t w, uint32_t scb_bits) {
  const uint32_t weight_bits = bnb::ToBits(static_cast<float>(w));  // exact
  return bnb::MulBits(bnb::MulBits(weight_bits, scb_bits), bnb::kInv127Bits);
}

void DequantBnb4ToF32(const bnb::Bnb4View& t, size_t begin, size_t end, float* out) {
  Bnb4Rows<uint32_t, F32Identity>(t, begin, end, out);
}
void DequantBnb4ToBf16(const bnb::Bnb4View& t, size_t begin, size_t end, uint16_t* out) {
  Bnb4Rows<uint16_t, F32BitsToBf16>(t, begin, end, out);
}
void DequantBnb4ToF16(const bnb::Bnb4View& t, size_t begin, size_t end, uint16_t* out) {
  Bnb4Rows<uint16_t, F32BitsToF16>(t, begin, end, out);
}

void DequantBnbInt8ToF32(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                         float* out) {
  Int8Rows<uint32_t, F32Identity>(weight, scb, rows, cols, out);
}
void DequantBnbInt8ToBf16(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                          uint16_t* out) {
  Int8Rows<uint16_t, F32BitsToBf16>(weight, scb, rows, cols, out);
}
void DequantBnbInt8ToF16(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                         uint16_t* out) {
  Int8Rows<uint16_t, F32BitsToF16>(weight, scb, rows, cols, out);
}

}  // namespace amn::ref
