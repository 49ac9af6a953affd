// Scalar reference for the ggml I-quant family, from ggml-quants.c
// dequantize_row_iq* and ../shared/fixtures/README.md (gguf_reference).
#include "kernels/ref/ggml_iquant_ref.h"

#include <cstring>

#include "kernels/ggml_iq_blocks.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/superblock_rows.h"

namespace amn::ref {
namespace {

using iq::kQK;

float F16Value(uint16_t bits) {
  const uint32_t f32 = F16ToF32Bits(bits);
  float f;
  std::memcpy(&f, &f32, sizeof(f));
  return f;
}
float F16At(const uint8_t* p) { return F16Value(kq::LoadLe16(p)); }

uint8_t GridByte(uint64_t entry, int j) { return static_cast<uint8_t>(entry >> (8 * j)); }

// Eight outputs db · grid byte j · (±1 from sign bit j). The product by -1 is
// written as a negation that skips NaN: IEEE multiplication returns the NaN
// operand unchanged (as numpy's and ggml's do on x86 and Arm), while
// compilers may fold x * -1.0f into a sign flip.
void SignedGroup(float db, uint64_t grid, unsigned signs, float* y) {
  for (int j = 0; j < 8; ++j) {
    const float v = db * static_cast<float>(GridByte(grid, j));
    y[j] = (signs >> j) & 1 && v == v ? -v : v;
  }
}

// Two IQ3 grid entries (4 bytes each) as one 8-byte group.
uint64_t Pair(uint32_t lo, uint32_t hi) { return lo | static_cast<uint64_t>(hi) << 32; }

void Iq2Xxs(const uint8_t* b, float* y) {
  using namespace iq::iq2xxs;
  const float d = F16At(b + kD);
  for (int g = 0; g < 8; ++g) {
    const uint32_t aux0 = kq::LoadLe32(b + kQs + 8 * g);
    const uint32_t aux1 = kq::LoadLe32(b + kQs + 8 * g + 4);
    const float db = d * (0.5f + static_cast<float>(aux1 >> 28)) * 0.25f;
    for (int k = 0; k < 4; ++k) {
      SignedGroup(db, iq::kIq2XxsGrid[(aux0 >> (8 * k)) & 0xff],
                  iq::KSigns((aux1 >> (7 * k)) & 127), y + 32 * g + 8 * k);
    }
  }
}

void Iq2Xs(const uint8_t* b, float* y) {
  using namespace iq::iq2xs;
  const float d = F16At(b + kD);
  for (int t = 0; t < 16; ++t) {
    const int s = (b[kScales + t / 2] >> (4 * (t % 2))) & 15;
    const float db = d * (0.5f + static_cast<float>(s)) * 0.25f;
    for (int u = 0; u < 2; ++u) {
      const uint16_t q = kq::LoadLe16(b + kQs + 2 * (2 * t + u));
      SignedGroup(db, iq::kIq2XsGrid[q & 511], iq::KSigns(q >> 9), y + 16 * t + 8 * u);
    }
  }
}

void Iq2S(const uint8_t* b, float* y) {
  using namespace iq::iq2s;
  const float d = F16At(b + kD);
  for (int g = 0; g < 32; ++g) {
    const int t = g / 2;
    const int s = (b[kScales + t / 2] >> (4 * (t % 2))) & 15;
    const float db = d * (0.5f + static_cast<float>(s)) * 0.25f;
    const unsigned idx = b[kQs + g] | ((b[kQh + g / 4] >> (2 * (g % 4))) & 3u) << 8;
    SignedGroup(db, iq::kIq2SGrid[idx], b[kSigns + g], y + 8 * g);
  }
}

void Iq3Xxs(const uint8_t* b, float* y) {
  using namespace iq::iq3xxs;
  const float d = F16At(b + kD);
  for (int g = 0; g < 8; ++g) {
    const uint32_t aux = kq::LoadLe32(b + kSignsScales + 4 * g);
    const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f;
    for (int k = 0; k < 4; ++k) {
      const uint8_t* qs = b + kQs + 8 * g + 2 * k;
      SignedGroup(db, Pair(iq::kIq3XxsGrid[qs[0]], iq::kIq3XxsGrid[qs[1]]),
                  iq::KSigns((aux >> (7 * k)) & 127), y + 32 * g + 8 * k);
    }
  }
}

void Iq3S(const uint8_t* b, float* y) {
  using namespace iq::iq3s;
  const float d = F16At(b + kD);
  const auto index = [b](int i) {
    return b[kQs + i] | ((b[kQh + i / 8] >> (i % 8)) & 1u) << 8;
  };
  for (int g = 0; g < 32; ++g) {
    const int s = (b[kScales + g / 8] >> (4 * ((g / 4) % 2))) & 15;
    const float db = d * static_cast<float>(1 + 2 * s);
    SignedGroup(db, Pair(iq::kIq3SGrid[index(2 * g)], iq::kIq3SGrid[index(2 * g + 1)]),
                b[kSigns + g], y + 8 * g);
  }
}

// Eight outputs dl · (grid byte j + delta), the byte read as int8.
void DeltaGroup(float dl, uint64_t grid, float delta, float* y) {
  for (int j = 0; j < 8; ++j) {
    y[j] = dl * (static_cast<float>(static_cast<int8_t>(GridByte(grid, j))) + delta);
  }
}

void Iq1S(const uint8_t* b, float* y) {
  using namespace iq::iq1s;
  const float d = F16At(b + kD);
  for (int sub = 0; sub < 8; ++sub) {
    const uint16_t qh = kq::LoadLe16(b + kQh + 2 * sub);
    const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
    const float delta = qh & 0x8000 ? -iq::kIq1Delta : iq::kIq1Delta;
    for (int k = 0; k < 4; ++k) {
      const unsigned idx = b[kQs + 4 * sub + k] | ((qh >> (3 * k)) & 7u) << 8;
      DeltaGroup(dl, iq::kIq1SGrid[idx], delta, y + 32 * sub + 8 * k);
    }
  }
}

void Iq1M(const uint8_t* b, float* y) {
  using namespace iq::iq1m;
  const float d = F16Value(iq::Iq1MScaleBits(b));
  for (int t = 0; t < 16; ++t) {
    const uint16_t sc = kq::LoadLe16(b + kScales + 2 * (t / 4));
    const float dl = d * static_cast<float>(2 * ((sc >> (3 * (t % 4))) & 7) + 1);
    for (int u = 0; u < 2; ++u) {
      const int g = 2 * t + u;
      const unsigned n = (b[kQh + g / 2] >> (4 * (g % 2))) & 15u;
      const float delta = n & 8 ? -iq::kIq1Delta : iq::kIq1Delta;
      DeltaGroup(dl, iq::kIq1SGrid[b[kQs + g] | (n & 7) << 8], delta, y + 8 * g);
    }
  }
}


}  // namespace

size_t IQuantBlockBytes(uint32_t ggml_type) {
  switch (ggml_type) {
    case iq::kIq2XxsId: return iq::iq2xxs::kBytes;
    case iq::kIq2XsId: return iq::iq2xs::kBytes;
    case iq::kIq2SId: return iq::iq2s::kBytes;
    case iq::kIq3XxsId: return iq::iq3xxs::kBytes;
    case iq::kIq3SId: return iq::iq3s::kBytes;
    case iq::kIq1SId: return iq::iq1s::kBytes;
    case iq::kIq1MId: return iq::iq1m::kBytes;
    default: return 0;
  }
}

void DequantIQuantBlock(uint32_t ggml_type, const uint8_t* b, float* y) {
  switch (ggml_type) {
    case iq::kIq2XxsId: Iq2Xxs(b, y); break;
    case iq::kIq2XsId: Iq2Xs(b, y); break;
    case iq::kIq2SId: Iq2S(b, y); break;
    case iq::kIq3XxsId: Iq3Xxs(b, y); break;
    case iq::kIq3SId: Iq3S(b, y); break;
    case iq::kIq1SId: Iq1S(b, y); break;
    case iq::kIq1MId: Iq1M(b, y); break;
    default: break;
  }
}

bool DequantIQuantToF32(uint32_t type, const uint8_t* blocks, size_t n_blocks, float* out) {
  return SuperBlockRows<false>(IQuantBlockBytes, DequantIQuantBlock, type, blocks, n_blocks, out);
}
bool DequantIQuantToBf16(uint32_t type, const uint8_t* blocks, size_t n_blocks, uint16_t* out) {
  return SuperBlockRows<true>(IQuantBlockBytes, DequantIQuantBlock, type, blocks, n_blocks, out);
}
bool DequantIQuantToF16(uint32_t type, const uint8_t* blocks, size_t n_blocks, uint16_t* out) {
  return SuperBlockRows<false>(IQuantBlockBytes, DequantIQuantBlock, type, blocks, n_blocks, out);
}

}  // namespace amn::ref
