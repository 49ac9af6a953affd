// Scalar reference for the ggml K-quant family, from ggml-quants.c
// dequantize_row_* and ../shared/fixtures/README.md (gguf_reference).
#include "kernels/ref/ggml_kquant_ref.h"

#include <cstring>

#include "kernels/ggml_blocks.h"

#include "kernels/ggml_kquant_blocks.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/superblock_rows.h"

namespace amn::ref {
namespace {

constexpr size_t kQK = kq::kSuperBlockElems;

float F16At(const uint8_t* p) {
  const uint32_t bits = F16ToF32Bits(kq::LoadLe16(p));
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

void Q2K(const uint8_t* b, float* y) {
  using namespace kq::q2k;
  const float d = F16At(b + kD);
  const float dmin = F16At(b + kDmin);
  for (size_t h = 0; h < 2; ++h) {
    for (size_t k = 0; k < 4; ++k) {
      for (size_t half = 0; half < 2; ++half) {
        const uint8_t sc = b[kScales + 8 * h + 2 * k + half];
        const float dl = d * static_cast<float>(sc & 0xF);
        const float ml = dmin * static_cast<float>(sc >> 4);
        for (size_t l = 16 * half; l < 16 * half + 16; ++l) {
          const int q = (b[kQs + 32 * h + l] >> (2 * k)) & 3;
          y[128 * h + 32 * k + l] = dl * static_cast<float>(q) - ml;
        }
      }
    }
  }
}

void Q3K(const uint8_t* b, float* y) {
  using namespace kq::q3k;
  const float d = F16At(b + kD);
  for (size_t h = 0; h < 2; ++h) {
    for (size_t k = 0; k < 4; ++k) {
      for (size_t half = 0; half < 2; ++half) {
        const int s = static_cast<int>(8 * h + 2 * k + half);
        const float dl = d * static_cast<float>(kq::Q3KScale(s, b + kScales));
        for (size_t l = 16 * half; l < 16 * half + 16; ++l) {
          const int lo = (b[kQs + 32 * h + l] >> (2 * k)) & 3;
          const int high = (b[kHmask + l] >> (4 * h + k)) & 1;
          y[128 * h + 32 * k + l] = dl * static_cast<float>(lo - (high ? 0 : 4));
        }
      }
    }
  }
}

// Q4_K (qh == nullptr) and Q5_K.
void Q45K(const uint8_t* b, size_t scales_at, const uint8_t* qh, const uint8_t* qs, float* y) {
  const float d = F16At(b);
  const float dmin = F16At(b + 2);
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    kq::ScaleMinK4(j, b + scales_at, &sc, &m);
    const float dl = d * static_cast<float>(sc);
    const float ml = dmin * static_cast<float>(m);
    const int c = j / 2, t = j % 2;
    for (int l = 0; l < 32; ++l) {
      int q = (qs[32 * c + l] >> (4 * t)) & 0xF;
      if (qh != nullptr) q |= ((qh[l] >> j) & 1) << 4;
      y[32 * j + l] = dl * static_cast<float>(q) - ml;
    }
  }
}

void Q6K(const uint8_t* b, float* y) {
  using namespace kq::q6k;
  const float d = F16At(b + kD);
  for (size_t y_i = 0; y_i < kQK; ++y_i) {
    const size_t h = y_i / 128, k = (y_i / 32) % 4, l = y_i % 32;
    const int lo = (b[kQl + 64 * h + 32 * (k & 1) + l] >> (4 * (k >> 1))) & 15;
    const int hi = (b[kQh + 32 * h + l] >> (2 * k)) & 3;
    const int q = (lo | (hi << 4)) - 32;
    const float dl = d * static_cast<float>(static_cast<int8_t>(b[kScales + y_i / 16]));
    y[y_i] = dl * static_cast<float>(q);
  }
}

void Q8K(const uint8_t* b, float* y) {
  using namespace kq::q8k;
  const float d = kq::LoadLeF32(b + kD);
  for (size_t i = 0; i < kQK; ++i) y[i] = d * static_cast<float>(static_cast<int8_t>(b[kQs + i]));
}

void Iq4Xs(const uint8_t* b, float* y) {
  using namespace kq::iq4xs;
  const float d = F16At(b + kD);
  const uint16_t scales_h = kq::LoadLe16(b + kScalesH);
  for (int j = 0; j < 8; ++j) {
    const int ls = ((b[kScalesL + j / 2] >> (4 * (j % 2))) & 15) | (((scales_h >> (2 * j)) & 3) << 4);
    const float dl = d * static_cast<float>(ls - 32);
    for (int l = 0; l < 32; ++l) {
      const uint8_t byte = b[kQs + 16 * j + (l % 16)];
      const int nib = l < 16 ? (byte & 15) : (byte >> 4);
      y[32 * j + l] = dl * static_cast<float>(kq::kIq4Values[nib]);
    }
  }
}

int Tq1Digit(uint8_t x, int k) {
  static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  const uint8_t q = static_cast<uint8_t>(x * kPow3[k]);
  return (static_cast<uint16_t>(q) * 3) >> 8;
}

void Tq1(const uint8_t* b, float* y) {
  using namespace kq::tq1;
  const float d = F16At(b + kD);
  for (int k = 0; k < 5; ++k) {
    for (int l = 0; l < 32; ++l) y[32 * k + l] = static_cast<float>(Tq1Digit(b[kQs + l], k) - 1) * d;
  }
  for (int k = 0; k < 5; ++k) {
    for (int l = 0; l < 16; ++l) {
      y[160 + 16 * k + l] = static_cast<float>(Tq1Digit(b[kQs + 32 + l], k) - 1) * d;
    }
  }
  for (int k = 0; k < 4; ++k) {
    for (int l = 0; l < 4; ++l) y[240 + 4 * k + l] = static_cast<float>(Tq1Digit(b[kQh + l], k) - 1) * d;
  }
}

void Tq2(const uint8_t* b, float* y) {
  using namespace kq::tq2;
  const float d = F16At(b + kD);
  for (size_t h = 0; h < 2; ++h) {
    for (size_t k = 0; k < 4; ++k) {
      for (size_t l = 0; l < 32; ++l) {
        const int q = (b[kQs + 32 * h + l] >> (2 * k)) & 3;
        y[128 * h + 32 * k + l] = static_cast<float>(q - 1) * d;
      }
    }
  }
}

bool IsNanBits(uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; }
bool IsFiniteBits(uint32_t bits) { return (bits & 0x7F800000u) != 0x7F800000u; }

// Block b's d and dmin as F32 bits (dmin 0 where the type has none).
void ScaleBits(uint32_t type, const uint8_t* b, uint32_t* d, uint32_t* dmin) {
  const auto f16 = [b](size_t at) { return F16ToF32Bits(kq::LoadLe16(b + at)); };
  *dmin = 0;
  switch (type) {
    case 10: *d = f16(kq::q2k::kD); *dmin = f16(kq::q2k::kDmin); break;
    case 11: *d = f16(kq::q3k::kD); break;
    case 12: *d = f16(kq::q4k::kD); *dmin = f16(kq::q4k::kDmin); break;
    case 13: *d = f16(kq::q5k::kD); *dmin = f16(kq::q5k::kDmin); break;
    case 14: *d = f16(kq::q6k::kD); break;
    case 15: *d = kq::LoadLe32(b + kq::q8k::kD); break;
    case 23: *d = f16(kq::iq4xs::kD); break;
    case 34: *d = f16(kq::tq1::kD); break;
    default: *d = f16(kq::tq2::kD); break;
  }
}

// The NaN rule (see the header), applied after the arithmetic so that neither
// the CPU's default NaN nor its choice between two NaN operands shows: every
// NaN result of block b becomes one NaN decided by its d and dmin alone.
// Finite d and dmin give no NaN, so such blocks are left as computed.
void PinNans(uint32_t type, const uint8_t* b, float* y) {
  uint32_t d, dmin;
  ScaleBits(type, b, &d, &dmin);
  if (IsFiniteBits(d) && IsFiniteBits(dmin)) return;
  const uint32_t nan = IsNanBits(d)      ? d | 0x00400000u  // Q8_K's f32 sNaN: quieted
                       : IsNanBits(dmin) ? dmin | 0x00400000u
                                         : ggml::kInvalidNan;
  for (size_t i = 0; i < kQK; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &y[i], sizeof(bits));
    if (IsNanBits(bits)) std::memcpy(&y[i], &nan, sizeof(nan));
  }
}


}  // namespace

size_t KQuantBlockBytes(uint32_t ggml_type) {
  switch (ggml_type) {
    case 10: return kq::q2k::kBytes;
    case 11: return kq::q3k::kBytes;
    case 12: return kq::q4k::kBytes;
    case 13: return kq::q5k::kBytes;
    case 14: return kq::q6k::kBytes;
    case 15: return kq::q8k::kBytes;
    case 23: return kq::iq4xs::kBytes;
    case 34: return kq::tq1::kBytes;
    case 35: return kq::tq2::kBytes;
    default: return 0;
  }
}

void DequantKQuantBlock(uint32_t ggml_type, const uint8_t* b, float* y) {
  switch (ggml_type) {
    case 10: Q2K(b, y); break;
    case 11: Q3K(b, y); break;
    case 12: Q45K(b, kq::q4k::kScales, nullptr, b + kq::q4k::kQs, y); break;
    case 13: Q45K(b, kq::q5k::kScales, b + kq::q5k::kQh, b + kq::q5k::kQs, y); break;
    case 14: Q6K(b, y); break;
    case 15: Q8K(b, y); break;
    case 23: Iq4Xs(b, y); break;
    case 34: Tq1(b, y); break;
    case 35: Tq2(b, y); break;
    default: return;
  }
  PinNans(ggml_type, b, y);
}

bool DequantKQuantToF32(uint32_t type, const uint8_t* blocks, size_t n_blocks, float* out) {
  return SuperBlockRows<false>(KQuantBlockBytes, DequantKQuantBlock, type, blocks, n_blocks, out);
}
bool DequantKQuantToBf16(uint32_t type, const uint8_t* blocks, size_t n_blocks, uint16_t* out) {
  return SuperBlockRows<true>(KQuantBlockBytes, DequantKQuantBlock, type, blocks, n_blocks, out);
}
bool DequantKQuantToF16(uint32_t type, const uint8_t* blocks, size_t n_blocks, uint16_t* out) {
  return SuperBlockRows<false>(KQuantBlockBytes, DequantKQuantBlock, type, blocks, n_blocks, out);
}

}  // namespace amn::ref
