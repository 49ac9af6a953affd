// Scalar bitsandbytes encoders: see bnb_encode_ref.h for the formulas.
#include "kernels/ref/bnb_encode_ref.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "kernels/bnb_encode_tables.h"
#include "kernels/bnb_layout.h"
#include "kernels/ref/bnb_ref.h"

namespace amn::ref {

namespace {

// xn as the CUDA kernel forms it, except that ±0 is never scaled (an
// all-zero block has inv = Inf and 0 * Inf would be NaN).
float Normalise(float x, float inv) { return x == 0.0f ? x : x * inv; }

// csrc/kernels.cu dQuantize<0> on kLanes values side by side: a 7-step
// binary search from pivot 127, then the nearer of the last pivot and its
// bracketing neighbour by comparing with their F32 midpoint; a value exactly
// on the midpoint keeps the pivot. The bracketing values the CUDA code
// carries (lower, upper) are always map[lower_pivot] and map[upper_pivot]
// once its end fix-up has run, so only the pivots are carried, with integer
// masks instead of branches. Why: the steps depend on the data, so as
// branches they were mispredicted, and one search's eight dependent loads
// leave the CPU idle; independent searches side by side overlap
// (docs/performance/encoders.md, "Double quant's nested codes").
template <size_t kLanes>
void QuantizeDynamicLanes(const float* map, const float* x, uint8_t* codes) {
  int pivot[kLanes], upper_pivot[kLanes], lower_pivot[kLanes];
  for (size_t k = 0; k < kLanes; ++k) {
    pivot[k] = 127;
    upper_pivot[k] = 255;
    lower_pivot[k] = 0;
  }
  for (int i = 64; i > 0; i >>= 1) {
    for (size_t k = 0; k < kLanes; ++k) {
      const int above = -static_cast<int>(x[k] > map[pivot[k]]);  // all ones or zero
      lower_pivot[k] = (pivot[k] & above) | (lower_pivot[k] & ~above);
      upper_pivot[k] = (upper_pivot[k] & above) | (pivot[k] & ~above);
      pivot[k] = pivot[k] - i + ((2 * i) & above);
    }
  }
  for (size_t k = 0; k < kLanes; ++k) {
    const float val = map[pivot[k]];
    const int above = -static_cast<int>(x[k] > val);
    const int neighbour = (upper_pivot[k] & above) | (lower_pivot[k] & ~above);
    const float midpoint = (map[neighbour] + val) * 0.5f;
    const int nearer = (above & -static_cast<int>(x[k] > midpoint)) |
                       (~above & -static_cast<int>(x[k] < midpoint));
    codes[k] = static_cast<uint8_t>((neighbour & nearer) | (pivot[k] & ~nearer));
  }
}

}  // namespace

// csrc/kernels.cu dQuantizeNF4, the tree written out.
uint8_t QuantizeNf4Value(float x) {
  const auto& p = bnb::kNf4Pivots;
  if (x > p[7]) {
    if (x > p[11]) {
      if (x > p[13]) return x > p[14] ? 15 : 14;
      return x > p[12] ? 13 : 12;
    }
    if (x > p[9]) return x > p[10] ? 11 : 10;
    return x > p[8] ? 9 : 8;
  }
  if (x > p[3]) {
    if (x > p[5]) return x > p[6] ? 7 : 6;
    return x > p[4] ? 5 : 4;
  }
  if (x > p[1]) return x > p[2] ? 3 : 2;
  return x > p[0] ? 1 : 0;
}

// csrc/kernels.cu dQuantizeFP4, except the sign: the sign bit, not x < 0.
uint8_t QuantizeFp4Value(float x) {
  const uint8_t sign = std::signbit(x) ? 8 : 0;
  const float a = std::fabs(x);
  const auto& p = bnb::kFp4Pivots;
  uint8_t code;
  if (a > p[3]) {
    if (a > p[5]) {
      code = a > p[6] ? 3 : 2;
    } else {
      code = a > p[4] ? 5 : 4;
    }
  } else if (a > p[1]) {
    code = a > p[2] ? 7 : 6;
  } else {
    code = a > p[0] ? 1 : 0;
  }
  return static_cast<uint8_t>(code + sign);
}

uint8_t QuantizeDynamicValue(const float* map, float x) {
  uint8_t code;
  QuantizeDynamicLanes<1>(map, &x, &code);
  return code;
}

void QuantizeDynamicValues(const float* map, const float* x, uint8_t* codes, size_t n) {
  // Eight searches side by side, the rest one by one (Zen 4, QuantizeBnbNested
  // on 4 Mi values, one thread: 14-15 ns a value, against 24-25 one at a
  // time and 40 for the search with branches).
  constexpr size_t kLanes = 8;
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) QuantizeDynamicLanes<kLanes>(map, x + i, codes + i);
  for (; i < n; ++i) QuantizeDynamicLanes<1>(map, x + i, codes + i);
}

std::array<float, 256> BnbDynamicMapRef() {
  std::array<float, 256> out{};
  for (size_t i = 0; i < out.size(); ++i) out[i] = std::bit_cast<float>(bnb::kDynamicMapBits[i]);
  return out;
}

uint64_t QuantizeBnb4Ref(const uint8_t* in, ElemType type, uint64_t n, uint64_t block_size,
                         bool fp4, bool absmax_given, float* absmax, uint8_t* packed,
                         kernels::ErrorSums* errors) {
  const auto& codebook = fp4 ? bnb::kFp4Codebook : bnb::kNf4Codebook;
  for (uint64_t begin = 0, b = 0; begin < n; begin += block_size, ++b) {
    const uint64_t end = std::min(n, begin + block_size);
    if (!absmax_given) {
      float m = 0.0f;
      for (uint64_t i = begin; i < end; ++i) {
        const uint32_t bits = kernels::LoadInputBits(in, type, i);
        if (!kernels::IsFiniteF32Bits(bits)) return i;
        m = std::max(m, std::bit_cast<float>(bits & 0x7FFFFFFFu));
      }
      absmax[b] = m;
    }
    const float inv = 1.0f / absmax[b];
    for (uint64_t i = begin; i < end; ++i) {
      const uint32_t bits = kernels::LoadInputBits(in, type, i);
      if (!kernels::IsFiniteF32Bits(bits)) return i;
      const float x = std::bit_cast<float>(bits);
      const float xn = Normalise(x, inv);
      const uint8_t code = fp4 ? QuantizeFp4Value(xn) : QuantizeNf4Value(xn);
      if (i % 2 == 0) {
        packed[i / 2] = static_cast<uint8_t>(code << 4);
      } else {
        packed[i / 2] = static_cast<uint8_t>(packed[i / 2] | code);
      }
      if (errors != nullptr) {
        // FP4 code 8 decodes to -0.0 (bnb::CodebookBits' sign-of-zero rule).
        const float cb = (code == 8 && fp4) ? -0.0f : codebook[code];
        kernels::AddError(*errors, i, x, cb * absmax[b]);
      }
    }
  }
  return kernels::kAllFinite;
}

void QuantizeBnbNestedRef(const float* absmax, uint64_t nb, uint64_t nested_block_size,
                          uint8_t* codes, float* nested_absmax, float* offset) {
  *offset = BnbNestedOffsetRef(absmax, nb);
  QuantizeBnbNestedBlocksRef(absmax, nb, nested_block_size, *offset, codes, nested_absmax);
}

float BnbNestedOffsetRef(const float* absmax, uint64_t nb) {
  if (nb == 0) return 0.0f;
  double sum = 0.0;
  for (uint64_t i = 0; i < nb; ++i) sum += static_cast<double>(absmax[i]);
  return static_cast<float>(sum / static_cast<double>(nb));
}

void QuantizeBnbNestedBlocksRef(const float* absmax, uint64_t nb, uint64_t nested_block_size,
                                float mean, uint8_t* codes, float* nested_absmax) {
  static const std::array<float, 256> kMap = BnbDynamicMapRef();
  for (uint64_t begin = 0, b = 0; begin < nb; begin += nested_block_size, ++b) {
    const uint64_t end = std::min(nb, begin + nested_block_size);
    float m = 0.0f;
    for (uint64_t i = begin; i < end; ++i) m = std::max(m, std::fabs(absmax[i] - mean));
    nested_absmax[b] = m;
    if (codes == nullptr) continue;
    const float inv = 1.0f / m;
    float xn[64];
    for (uint64_t i = begin; i < end; i += 64) {
      const size_t len = static_cast<size_t>(std::min<uint64_t>(64, end - i));
      for (size_t k = 0; k < len; ++k) xn[k] = Normalise(absmax[i + k] - mean, inv);
      QuantizeDynamicValues(kMap.data(), xn, codes + i, len);
    }
  }
}

uint64_t QuantizeBnbInt8Ref(const uint8_t* in, ElemType type, uint64_t rows, uint64_t cols,
                            bool scb_given, float* scb, int8_t* codes,
                            kernels::ErrorSums* errors) {
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t row0 = r * cols;
    if (!scb_given) {
      float m = 0.0f;
      for (uint64_t c = 0; c < cols; ++c) {
        const uint32_t bits = kernels::LoadInputBits(in, type, row0 + c);
        if (!kernels::IsFiniteF32Bits(bits)) return row0 + c;
        m = std::max(m, std::bit_cast<float>(bits & 0x7FFFFFFFu));
      }
      scb[r] = m;
    }
    const float scale = 127.0f / scb[r];
    for (uint64_t c = 0; c < cols; ++c) {
      const uint64_t i = row0 + c;
      const uint32_t bits = kernels::LoadInputBits(in, type, i);
      if (!kernels::IsFiniteF32Bits(bits)) return i;
      const float x = std::bit_cast<float>(bits);
      int8_t code = 0;
      if (x != 0.0f) {
        // Round half to even (torch.round) of the F32 product, then clamp.
        const float q = std::nearbyint(std::clamp(x * scale, -127.0f, 127.0f));
        code = static_cast<int8_t>(q);
      }
      codes[i] = code;
      if (errors != nullptr) {
        kernels::AddError(*errors, i, x,
                          std::bit_cast<float>(BnbInt8ElementBits(code, std::bit_cast<uint32_t>(scb[r]))));
      }
    }
  }
  return kernels::kAllFinite;
}

}  // namespace amn::ref
