// compressed-tensors pack-quantized int4/int8 dequantization
// (amn::DequantPackedInt) on every supported target. Expected values come
// from a loop in this file written from compressed-tensors' own code
// (pack_quantized.py pack_to_int32 to build the tensors from signed values;
// forward.py _dequantize: x_q.to(scale.dtype) - zero_point.to(scale.dtype),
// then * scale, in the scale dtype) for int4 and int8, channel, group and
// tensor strategies, symmetric and asymmetric layers and padded last words;
// a hand-derived case where rounding in BF16 first differs from one
// rounding to the output; random layers against the scalar reference (all
// scale and output types, special scales, misaligned buffers with canaries,
// row sub-ranges); a RapidCheck property; the registry rows; the checked
// API's errors.
#include "amn/packed_int_dequant.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "amn/kernel_registry.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/packed_int_ref.h"
#include "tests/kernel_check.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

constexpr std::array kOutTypes = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};
constexpr std::array kScaleTypes = {ElemType::kF32, ElemType::kBf16, ElemType::kF16};

// A layer built from signed values, as compressed-tensors stores it.
struct CtData {
  size_t rows = 0, cols = 0, group_size = 0;
  uint32_t bits = 4;
  bool tensor_scale = false;
  bool zero_i8 = false;  // zero points stored unpacked as I8 (before 0.10)
  ElemType scale_type = ElemType::kBf16;
  std::vector<int8_t> q;        // [rows][cols]
  std::vector<int8_t> zero;     // [rows][groups], empty: symmetric
  std::vector<uint32_t> scale;  // raw scale bits (u16 for BF16/F16), [rows][groups] or [1]
  std::vector<uint8_t> packed, scale_bytes, zero_packed;
  size_t groups() const { return cols / group_size; }
};

// pack_to_int32: value + 2^(bits-1) as unsigned, rows zero-padded to whole
// words, element k of a word at bits k*bits (packed_dim 1); packed_dim 0
// packs the columns of the transposed matrix.
std::vector<uint8_t> PackToInt32(const std::vector<int8_t>& v, size_t rows, size_t cols,
                                 uint32_t bits, int packed_dim) {
  const size_t pf = 32 / bits;
  const size_t r_n = packed_dim == 1 ? rows : cols;  // rows of the (transposed) matrix
  const size_t c_n = packed_dim == 1 ? cols : rows;
  const size_t words = (c_n + pf - 1) / pf;
  std::vector<uint32_t> packed(r_n * words, 0);
  for (size_t r = 0; r < r_n; ++r) {
    for (size_t c = 0; c < c_n; ++c) {
      const int8_t value = packed_dim == 1 ? v[r * cols + c] : v[c * cols + r];
      const uint32_t u = static_cast<uint8_t>(value + (1 << (bits - 1)));
      packed[r * words + c / pf] |= u << (bits * (c % pf));
    }
  }
  std::vector<uint32_t> stored = packed;
  if (packed_dim == 0) {  // transpose back: [words][cols]
    stored.assign(words * r_n, 0);
    for (size_t r = 0; r < r_n; ++r) {
      for (size_t w = 0; w < words; ++w) stored[w * r_n + r] = packed[r * words + w];
    }
  }
  return AsBytes(stored);
}

void Finish(CtData& d) {
  d.packed = PackToInt32(d.q, d.rows, d.cols, d.bits, 1);
  d.zero_packed = d.zero.empty() ? std::vector<uint8_t>{}
                 : d.zero_i8     ? AsBytes(d.zero)
                                 : PackToInt32(d.zero, d.rows, d.groups(), d.bits, 0);
  d.scale_bytes.clear();
  for (uint32_t s : d.scale) {
    for (size_t b = 0; b < ElemTypeBytes(d.scale_type); ++b) {
      d.scale_bytes.push_back(static_cast<uint8_t>(s >> (8 * b)));
    }
  }
}

// Scale bits of the scale type from an F32 value (exact for the values used).
uint32_t ScaleBitsOf(float value, ElemType type) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if (type == ElemType::kF32) return bits;
  if (type == ElemType::kBf16) return bits >> 16;  // truncation: any BF16 is fine
  return ref::F32BitsToF16(bits);
}

float ScaleValue(uint32_t raw, ElemType type) {
  if (type == ElemType::kF32) return std::bit_cast<float>(raw);
  if (type == ElemType::kBf16) return std::bit_cast<float>(raw << 16);
  return std::bit_cast<float>(ref::F16ToF32Bits(static_cast<uint16_t>(raw)));
}

// BF16 round to nearest even on F32 bits (fixtures/README.md), finite values.
uint16_t Bf16Rne(uint32_t bits) { return static_cast<uint16_t>((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16); }

// compressed-tensors' _dequantize for one element, for finite scales: the
// scale-dtype result as F32 bits. q, z and their difference are exact in
// every scale dtype, and so is the product in F32 (checked in double), so
// PyTorch's scale-dtype multiply is that product rounded once.
uint32_t CanonicalValueBits(int q, int z, uint32_t raw_scale, ElemType type) {
  const float scale = ScaleValue(raw_scale, type);
  const float diff = static_cast<float>(q) - static_cast<float>(z);
  const float product = diff * scale;
  if (type != ElemType::kF32) {
    EXPECT_EQ(static_cast<double>(product), static_cast<double>(diff) * scale) << "not exact";
  }
  const uint32_t bits = std::bit_cast<uint32_t>(product);
  if (type == ElemType::kBf16) return static_cast<uint32_t>(Bf16Rne(bits)) << 16;
  if (type == ElemType::kF16) return ref::F16ToF32Bits(ref::F32BitsToF16(bits));
  return bits;
}

uint32_t OutBits(uint32_t value_bits, ElemType out) {
  if (out == ElemType::kF32) return value_bits;
  if (out == ElemType::kBf16) return Bf16Rne(value_bits);
  return ref::F32BitsToF16(value_bits);
}

std::vector<uint8_t> CanonicalOut(const CtData& d, size_t rb, size_t re, ElemType out) {
  std::vector<uint8_t> bytes;
  for (size_t r = rb; r < re; ++r) {
    for (size_t c = 0; c < d.cols; ++c) {
      const size_t g = c / d.group_size;
      const int z = d.zero.empty() ? 0 : d.zero[r * d.groups() + g];
      const uint32_t raw = d.scale[d.tensor_scale ? 0 : r * d.groups() + g];
      const uint32_t bits = OutBits(CanonicalValueBits(d.q[r * d.cols + c], z, raw, d.scale_type), out);
      for (size_t b = 0; b < ElemTypeBytes(out); ++b) bytes.push_back(static_cast<uint8_t>(bits >> (8 * b)));
    }
  }
  return bytes;
}

std::span<const std::byte> AsSpan(const uint8_t* p, size_t n) {
  return {reinterpret_cast<const std::byte*>(p), n};
}

PackedIntLayer LayerOf(const CtData& d, const uint8_t* packed, const uint8_t* scale,
                       const uint8_t* zero) {
  PackedIntLayer layer;
  layer.rows = d.rows;
  layer.cols = d.cols;
  layer.num_bits = d.bits;
  layer.group_size = d.group_size;
  layer.tensor_scale = d.tensor_scale;
  layer.scale_type = d.scale_type;
  layer.weight_packed = AsSpan(packed, d.packed.size());
  layer.weight_scale = AsSpan(scale, d.scale_bytes.size());
  layer.weight_zero_point = AsSpan(zero, d.zero_packed.size());
  layer.zero_point_i8 = d.zero_i8;
  return layer;
}

std::vector<uint8_t> RunCt(const CtData& d, size_t rb, size_t re, ElemType out_type,
                           size_t offset = 0, size_t out_offset = 0) {
  PlacedBuffer packed(d.packed.size(), offset, 0);
  PlacedBuffer scale(d.scale_bytes.size(), offset + 1, 0);
  PlacedBuffer zero(d.zero_packed.size(), offset + 3, 0);
  std::memcpy(packed.data(), d.packed.data(), d.packed.size());
  std::memcpy(scale.data(), d.scale_bytes.data(), d.scale_bytes.size());
  if (!d.zero_packed.empty()) std::memcpy(zero.data(), d.zero_packed.data(), d.zero_packed.size());
  const size_t out_bytes = (re - rb) * d.cols * ElemTypeBytes(out_type);
  PlacedBuffer out(out_bytes, out_offset, 0x5A);
  const Status status = DequantPackedInt(LayerOf(d, packed.data(), scale.data(), zero.data()), rb,
                                         re, out_type,
                                         {reinterpret_cast<std::byte*>(out.data()), out_bytes});
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE(out.CanaryIntact()) << "output overrun";
  return std::vector<uint8_t>(out.data(), out.data() + out_bytes);
}

std::vector<uint8_t> ReferenceCt(const CtData& d, size_t rb, size_t re, ElemType out_type) {
  ref::PackedIntMatrix m;
  m.weight_packed = d.packed.data();
  m.scales = d.scale_bytes.data();
  m.zero_points = d.zero_packed.empty() ? nullptr : d.zero_packed.data();
  m.zero_points_i8 = d.zero_i8;
  m.scale_type = d.scale_type;
  m.rows = d.rows;
  m.cols = d.cols;
  m.group_size = d.group_size;
  m.bits = d.bits;
  m.tensor_scale = d.tensor_scale;
  std::vector<uint8_t> out((re - rb) * d.cols * ElemTypeBytes(out_type) + 4);
  ref::DequantPackedIntRows(m, rb, re, out_type, out.data());
  out.resize(out.size() - 4);
  return out;
}

std::string Describe(const CtData& d, size_t rb, size_t re, ElemType out) {
  return "int" + std::to_string(d.bits) + " " + std::to_string(d.rows) + "x" +
         std::to_string(d.cols) + " gs=" + std::to_string(d.group_size) +
         (d.tensor_scale ? " tensor" : "") + (d.zero.empty() ? " sym" : " asym") +
         (d.zero_i8 ? " i8-zeros" : "") +
         " scale=" + std::string(ElemTypeName(d.scale_type)) +
         " out=" + std::string(ElemTypeName(out)) + " rows=[" + std::to_string(rb) + "," +
         std::to_string(re) + ")";
}

// A random layer: every signed code value, zeros, and scales from `values`.
CtData RandomLayer(size_t rows, size_t cols, size_t gs, uint32_t bits, bool asym, bool tensor,
                   ElemType scale_type, uint32_t seed, const std::vector<float>& values) {
  CtData d;
  d.rows = rows;
  d.cols = cols;
  d.group_size = gs;
  d.bits = bits;
  d.tensor_scale = tensor;
  d.scale_type = scale_type;
  const auto noise = PseudoRandomBytes(rows * cols + rows * (cols / gs) + 1, seed);
  const int lo = -(1 << (bits - 1));
  const int span = 1 << bits;
  for (size_t i = 0; i < rows * cols; ++i) d.q.push_back(static_cast<int8_t>(lo + noise[i] % span));
  if (asym) {
    for (size_t i = 0; i < rows * (cols / gs); ++i) {
      d.zero.push_back(static_cast<int8_t>(lo + noise[rows * cols + i] % span));
    }
  }
  const size_t n_scales = tensor ? 1 : rows * (cols / gs);
  for (size_t i = 0; i < n_scales; ++i) {
    d.scale.push_back(ScaleBitsOf(values[(i * 7 + seed) % values.size()], scale_type));
  }
  Finish(d);
  return d;
}

std::vector<float> RealisticScales() {
  return {0.0123f, -0.002f, 0.0456f, 1.0f, 0.5f, 3.0e-3f, -0.017f, 0.031f, 7.5e-4f, 1.0f / 3,
          0.1f,    250.0f, 1e-6f};
}

std::vector<float> SpecialScales() {
  return {1.0f,
          0.0f,
          -0.0f,
          std::bit_cast<float>(0x7F800000u),
          std::bit_cast<float>(0xFF800000u),
          std::bit_cast<float>(0x7FC00000u),
          std::bit_cast<float>(0xFFC12345u),
          std::bit_cast<float>(0x7F812345u),
          65504.0f,
          3.0e38f,
          1e-40f,
          0x1p-24f,
          0x1p-14f,
          -3.0e-5f};
}

class PackedIntTest : public PerTarget {};

TEST_P(PackedIntTest, ProbeReportsForcedTarget) { EXPECT_EQ(PackedIntTarget(), GetParam()); }

// The canonical formula on every layout: int4/int8, channel/group/tensor,
// symmetric/asymmetric, padded last words (cols not a multiple of 32/bits)
// and a zero-point word column padded in rows (rows not a multiple of it).
TEST_P(PackedIntTest, CanonicalFormulaEveryLayout) {
  struct Shape {
    uint32_t bits;
    size_t rows, cols, gs;
    bool asym, tensor;
  };
  const Shape shapes[] = {
      {4, 11, 20, 20, false, false}, {4, 11, 20, 20, true, false}, {4, 11, 20, 10, false, false},
      {4, 11, 20, 5, true, false},   {4, 3, 64, 32, true, false},  {4, 9, 20, 20, false, true},
      {8, 7, 10, 10, false, false},  {8, 7, 10, 10, true, false},  {8, 7, 10, 5, true, false},
      {8, 5, 36, 12, false, false},  {8, 6, 9, 9, false, true},    {4, 17, 136, 8, true, false}};
  uint32_t seed = 3;
  for (const Shape& s : shapes) {
    for (ElemType scale_type : kScaleTypes) {
      const CtData d = RandomLayer(s.rows, s.cols, s.gs, s.bits, s.asym, s.tensor, scale_type,
                                   ++seed, RealisticScales());
      for (ElemType out : kOutTypes) {
        EXPECT_TRUE(SameBytes(RunCt(d, 0, d.rows, out, seed % 5, seed % 3),
                              CanonicalOut(d, 0, d.rows, out), ElemTypeBytes(out),
                              Describe(d, 0, d.rows, out)));
        EXPECT_TRUE(SameBytes(RunCt(d, 1, d.rows - 1, out), CanonicalOut(d, 1, d.rows - 1, out),
                              ElemTypeBytes(out), Describe(d, 1, d.rows - 1, out)));
      }
    }
  }
}

// Rounding in the scale dtype first: BF16 scale 1 + 2^-7 (0x3F81) times
// q = 3 is exactly 3.0234375, which BF16 (8 significant bits) rounds to even,
// 3.03125. F16 output is then 0x4210; one F32 -> F16 rounding of the exact
// product would keep 3.0234375 (0x420C).
TEST_P(PackedIntTest, ScaleDtypeRoundingHandDerived) {
  for (uint32_t bits : {4u, 8u}) {
    CtData d;
    d.rows = 1;
    d.cols = 2;
    d.group_size = 2;
    d.bits = bits;
    d.scale_type = ElemType::kBf16;
    d.q = {3, -3};
    d.scale = {0x3F81};
    Finish(d);
    const auto f16 = RunCt(d, 0, 1, ElemType::kF16);
    EXPECT_EQ(f16[0] | f16[1] << 8, 0x4210);
    EXPECT_EQ(f16[2] | f16[3] << 8, 0xC210);
    EXPECT_NE(ref::F32BitsToF16(std::bit_cast<uint32_t>(3.0234375f)), 0x4210u);
    const auto f32 = RunCt(d, 0, 1, ElemType::kF32);
    float value;
    std::memcpy(&value, f32.data(), 4);
    EXPECT_EQ(value, 3.03125f);
    const auto bf16 = RunCt(d, 0, 1, ElemType::kBf16);
    EXPECT_EQ(bf16[0] | bf16[1] << 8, 0x4042);
  }
}

// Hand-packed words: int4 row 0x76543210 is u = 0..7 (q = -8..-1), LSB
// first; int8 word 0x04030201 is u = 1..4 (q = -127..-124); an asymmetric
// zero word column for two int4 rows.
TEST_P(PackedIntTest, PackingHandDerived) {
  {
    CtData d;
    d.rows = 1;
    d.cols = 8;
    d.group_size = 8;
    d.bits = 4;
    d.scale_type = ElemType::kF32;
    d.packed = AsBytes(std::vector<uint32_t>{0x76543210u});
    d.scale_bytes = AsBytes(std::vector<float>{1.0f});
    const auto out = RunCt(d, 0, 1, ElemType::kF32);
    for (int c = 0; c < 8; ++c) {
      float v;
      std::memcpy(&v, out.data() + 4 * c, 4);
      EXPECT_EQ(v, static_cast<float>(c - 8)) << c;
    }
  }
  {
    CtData d;
    d.rows = 1;
    d.cols = 3;  // one padded byte
    d.group_size = 3;
    d.bits = 8;
    d.scale_type = ElemType::kF32;
    d.packed = AsBytes(std::vector<uint32_t>{0xFF030201u});
    d.scale_bytes = AsBytes(std::vector<float>{2.0f});
    const auto out = RunCt(d, 0, 1, ElemType::kF32);
    for (int c = 0; c < 3; ++c) {
      float v;
      std::memcpy(&v, out.data() + 4 * c, 4);
      EXPECT_EQ(v, static_cast<float>((c + 1 - 128) * 2)) << c;
    }
  }
  {
    // Two int4 rows, one group each of 8; zero word 0x000000A5: row 0's
    // zero is u = 5, row 1's u = 10; codes u = 9 everywhere.
    CtData d;
    d.rows = 2;
    d.cols = 8;
    d.group_size = 8;
    d.bits = 4;
    d.scale_type = ElemType::kF32;
    d.packed = AsBytes(std::vector<uint32_t>{0x99999999u, 0x99999999u});
    d.scale_bytes = AsBytes(std::vector<float>{1.0f, 0.25f});
    d.zero_packed = AsBytes(std::vector<uint32_t>{0x000000A5u});
    const auto out = RunCt(d, 0, 2, ElemType::kF32);
    float v0, v1;
    std::memcpy(&v0, out.data(), 4);
    std::memcpy(&v1, out.data() + 4 * 8, 4);
    EXPECT_EQ(v0, 4.0f);    // 9 - 5
    EXPECT_EQ(v1, -0.25f);  // (9 - 10) * 0.25
  }
}

// Zero points as compressed-tensors < 0.10 stored them: I8 [rows, groups],
// signed and unpacked, including values outside the int4 code range.
TEST_P(PackedIntTest, UnpackedI8ZeroPoints) {
  uint32_t seed = 40;
  for (uint32_t bits : {4u, 8u}) {
    for (size_t gs : {32u, 7u, 64u}) {
      for (ElemType scale_type : kScaleTypes) {
        CtData d = RandomLayer(6, gs == 7 ? 63 : 64, gs, bits, true, false, scale_type,
                               ++seed, RealisticScales());
        d.zero_i8 = true;
        const auto extra = PseudoRandomBytes(d.zero.size(), seed);
        for (size_t i = 0; i < d.zero.size(); ++i) d.zero[i] = static_cast<int8_t>(extra[i]);
        Finish(d);
        for (ElemType out : kOutTypes) {
          EXPECT_TRUE(SameBytes(RunCt(d, 0, d.rows, out, 3, 1), CanonicalOut(d, 0, d.rows, out),
                                ElemTypeBytes(out), Describe(d, 0, d.rows, out)));
          EXPECT_TRUE(SameBytes(RunCt(d, 0, d.rows, out), ReferenceCt(d, 0, d.rows, out),
                                ElemTypeBytes(out), Describe(d, 0, d.rows, out)));
        }
      }
    }
  }
}

TEST_P(PackedIntTest, RandomLayersMatchReference) {
  struct Shape {
    uint32_t bits;
    size_t rows, cols, gs;
    bool asym, tensor;
  };
  const Shape shapes[] = {{4, 1, 1, 1, false, false},     {4, 3, 7, 7, true, false},
                          {4, 9, 64, 16, true, false},    {4, 17, 300, 100, true, false},
                          {4, 5, 1000, 8, false, false},  {4, 4, 2048, 128, true, false},
                          {8, 1, 1, 1, true, false},      {8, 6, 33, 11, true, false},
                          {8, 5, 520, 520, false, false}, {8, 3, 256, 32, true, false},
                          {4, 8, 96, 96, false, true},    {8, 4, 77, 77, false, true},
                          {4, 2, 1030, 1, true, false},   {8, 3, 2050, 2, false, false},
                          // int4 byte tables (x86): 64-code chunks on AVX-512,
                          // 32-code ones elsewhere; groups of 32 but not 64
                          // take the lane permutes on AVX-512.
                          {4, 5, 192, 64, true, false},   {4, 3, 160, 32, false, false}};
  uint32_t seed = 100;
  for (const Shape& s : shapes) {
    for (ElemType scale_type : kScaleTypes) {
      for (bool special : {false, true}) {
        const CtData d = RandomLayer(s.rows, s.cols, s.gs, s.bits, s.asym, s.tensor, scale_type,
                                     ++seed, special ? SpecialScales() : RealisticScales());
        for (ElemType out : kOutTypes) {
          const size_t rb = d.rows > 2 ? 1 : 0;
          EXPECT_TRUE(SameBytes(RunCt(d, rb, d.rows, out, seed % 7, seed % 5),
                                ReferenceCt(d, rb, d.rows, out), ElemTypeBytes(out),
                                Describe(d, rb, d.rows, out)));
        }
      }
    }
  }
}

// Raw scale bits of `type` around the F16 in-range bounds for a group
// whose differences reach max_diff in magnitude: ±2^-14 (in) and the next
// value below it in the type (out: F16-subnormal results), 1.5 * 2^-15
// (out), ±0, the values within 3 steps of the type's rounding of
// 65536 / max_diff and within 2 of 65280 / max_diff (the BF16 bound), both
// signs, and a realistic scale.
std::vector<uint32_t> F16InRangeBoundaryRaws(ElemType type, float max_diff) {
  const uint32_t sign = type == ElemType::kF32 ? 0x80000000u : 0x8000u;
  std::vector<uint32_t> magnitudes = {ScaleBitsOf(0x1p-14f, type), ScaleBitsOf(0x1p-14f, type) - 1,
                                      ScaleBitsOf(0x1.8p-15f, type), 0u,
                                      ScaleBitsOf(0.0123f, type)};
  const uint32_t top = ScaleBitsOf(65536.0f / max_diff, type);
  for (uint32_t k = top - 3; k <= top + 3; ++k) magnitudes.push_back(k);
  const uint32_t bf16_top = ScaleBitsOf(65280.0f / max_diff, type);
  for (uint32_t k = bf16_top - 2; k <= bf16_top + 2; ++k) magnitudes.push_back(k);
  std::vector<uint32_t> raws;
  for (uint32_t m : magnitudes) {
    raws.push_back(m);
    raws.push_back(m | sign);
  }
  return raws;
}

// int8 groups on both sides of PackedIntF16InRange (kernels/packed_int-inl.h),
// whose F16 outputs take the integer rounding on SSE4/SSSE3: every code in
// every group, zero points giving |u - zero| up to 255, 128 and 178
// (symmetric: 128), and per group the scales of F16InRangeBoundaryRaws, as
// F32, F16 and BF16 scales, all three outputs, against the reference. Rows
// of 256 columns in one group, and of 260 in groups of 130 (a chunk across
// the group boundary and a tail take the general path).
TEST_P(PackedIntTest, F16InRangeBoundaryScales) {
  constexpr std::array<int8_t, 5> kZeros = {-128, 127, 0, -1, 50};
  for (ElemType scale_type : kScaleTypes) {
    for (const size_t gs : {size_t{256}, size_t{130}}) {
      for (const bool asym : {true, false}) {
        CtData d;
        d.bits = 8;
        d.cols = gs == 256 ? 256 : 260;
        d.group_size = gs;
        d.scale_type = scale_type;
        for (size_t zi = 0; zi < (asym ? kZeros.size() : 1); ++zi) {
          const int uz = asym ? kZeros[zi] + 128 : 128;
          const auto raws =
              F16InRangeBoundaryRaws(scale_type, static_cast<float>(std::max(uz, 255 - uz)));
          for (uint32_t raw : raws) {
            const size_t r = d.rows++;
            for (size_t c = 0; c < d.cols; ++c) {
              d.q.push_back(static_cast<int8_t>(static_cast<uint8_t>(c + 5 * r)));
            }
            for (size_t g = 0; g < d.groups(); ++g) {
              if (asym) d.zero.push_back(kZeros[zi]);
              d.scale.push_back(raw);
            }
          }
        }
        Finish(d);
        for (ElemType out : kOutTypes) {
          EXPECT_TRUE(SameBytes(RunCt(d, 0, d.rows, out, 1, 2), ReferenceCt(d, 0, d.rows, out),
                                ElemTypeBytes(out), Describe(d, 0, d.rows, out)));
        }
      }
    }
  }
}

// Every finite BF16 scale times every difference an int8 layer can make
// (-255..255: codes 0..255 against the i8 zero points -128 and 127), all
// three outputs, against the reference's rounding (ref::RoundToScaleType of
// the F32 product, then the output's): about 33 M cases per output. The
// kernels round diff * scale to BF16 by a floating-point split for scales
// whose exponent field is at most 230 (packed_int-inl.h, Bf16SplitSafe) and
// integer arithmetic above; this covers both sides of that bound, ties and
// subnormal products. One batch per scale high byte (256 scales, two rows
// each, per channel); under emulation one batch in 17.
TEST_P(PackedIntTest, Bf16SplitRoundingExhaustive) {
  constexpr size_t kCols = 256;
  for (uint32_t high = 0; high < 256; ++high) {
    if (!RunCase(high, 17)) continue;
    CtData d;
    d.cols = kCols;
    d.group_size = kCols;
    d.bits = 8;
    d.zero_i8 = true;
    d.scale_type = ElemType::kBf16;
    for (uint32_t low = 0; low < 256; ++low) {
      const uint32_t raw = high << 8 | low;
      if ((raw & 0x7F80) == 0x7F80) continue;  // Inf, NaN
      for (int8_t zero : {int8_t{-128}, int8_t{127}}) {
        d.scale.push_back(raw);
        d.zero.push_back(zero);
        for (size_t c = 0; c < kCols; ++c) d.q.push_back(static_cast<int8_t>(c - 128));
        ++d.rows;
      }
    }
    if (d.rows == 0) continue;
    Finish(d);
    for (ElemType out : kOutTypes) {
      std::vector<uint8_t> want;
      want.reserve(d.rows * kCols * ElemTypeBytes(out));
      for (size_t r = 0; r < d.rows; ++r) {
        const float scale = ScaleValue(d.scale[r], ElemType::kBf16);
        for (size_t c = 0; c < kCols; ++c) {
          const float diff = static_cast<float>(d.q[r * kCols + c] - d.zero[r]);
          const uint32_t value =
              ref::RoundToScaleType(std::bit_cast<uint32_t>(diff * scale), ElemType::kBf16);
          const uint32_t bits = OutBits(value, out);
          for (size_t b = 0; b < ElemTypeBytes(out); ++b) {
            want.push_back(static_cast<uint8_t>(bits >> (8 * b)));
          }
        }
      }
      ASSERT_TRUE(SameBytes(RunCt(d, 0, d.rows, out), want, ElemTypeBytes(out),
                            "scales 0x" + std::to_string(high) + "xx (decimal high byte), out=" +
                                std::string(ElemTypeName(out))));
    }
  }
}

TEST_P(PackedIntTest, PropertyMatchesReference) {
  const bool ok = rc::check("DequantPackedInt matches the reference", [] {
    const uint32_t bits = *rc::gen::element(4u, 8u);
    const size_t rows = *rc::gen::inRange<size_t>(1, 20);
    const size_t groups = *rc::gen::inRange<size_t>(1, 6);
    const size_t gs = *rc::gen::inRange<size_t>(1, 80);
    const bool tensor = *rc::gen::arbitrary<bool>();
    const bool asym = !tensor && *rc::gen::arbitrary<bool>();
    const auto scale_type = *rc::gen::elementOf(kScaleTypes);
    const auto out_type = *rc::gen::elementOf(kOutTypes);
    const auto seed = *rc::gen::arbitrary<uint32_t>();
    const bool special = *rc::gen::arbitrary<bool>();
    const CtData d = RandomLayer(rows, groups * gs, gs, bits, asym, tensor, scale_type, seed,
                                 special ? SpecialScales() : RealisticScales());
    const size_t rb = *rc::gen::inRange<size_t>(0, rows + 1);
    const size_t re = *rc::gen::inRange<size_t>(rb, rows + 1);
    const size_t offset = *rc::gen::inRange<size_t>(0, 64);
    RC_ASSERT(SameBytes(RunCt(d, rb, re, out_type, offset, (offset * 5) % 64),
                        ReferenceCt(d, rb, re, out_type), ElemTypeBytes(out_type),
                        Describe(d, rb, re, out_type)));
  });
  EXPECT_TRUE(ok);
}

TEST_P(PackedIntTest, RegistryEntriesMatchReference) {
  size_t entries = 0;
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.family != "packed_int") continue;
    ++entries;
    EXPECT_EQ(kernel.probe(), GetParam());
    for (size_t blocks : {0, 1, 2, 7, 8, 9, 17}) {
      const std::vector<uint8_t> input =
          PseudoRandomBytes(blocks * kernel.in_block_bytes, static_cast<uint32_t>(blocks + 9));
      EXPECT_TRUE(MatchesReference(kernel, input, blocks % 3, blocks % 5))
          << kernel.name << " blocks=" << blocks;
    }
  }
  EXPECT_EQ(entries, 6u);
}

TEST_P(PackedIntTest, CheckedApiRejectsBadCalls) {
  const CtData good = RandomLayer(9, 24, 8, 4, true, false, ElemType::kBf16, 5, RealisticScales());
  std::vector<std::byte> out(9 * 24 * 4, std::byte{0x5A});
  const auto untouched = [&out] {
    for (std::byte b : out) {
      if (b != std::byte{0x5A}) return false;
    }
    return true;
  };
  const PackedIntLayer base =
      LayerOf(good, good.packed.data(), good.scale_bytes.data(), good.zero_packed.data());
  auto with = [&base](auto edit) {
    PackedIntLayer l = base;
    edit(l);
    return l;
  };
  struct Bad {
    const char* what;
    PackedIntLayer layer;
    uint64_t rb, re;
    ElemType out_type;
    size_t out_bytes;
  };
  const size_t full = 9 * 24 * 2;
  const std::vector<Bad> bad = {
      {"bits 2", with([](PackedIntLayer& l) { l.num_bits = 2; }), 0, 1, ElemType::kBf16, full},
      {"bits 0", with([](PackedIntLayer& l) { l.num_bits = 0; }), 0, 1, ElemType::kBf16, full},
      {"rows 0", with([](PackedIntLayer& l) { l.rows = 0; }), 0, 0, ElemType::kBf16, full},
      {"cols 0", with([](PackedIntLayer& l) { l.cols = 0; }), 0, 1, ElemType::kBf16, full},
      {"group 0", with([](PackedIntLayer& l) { l.group_size = 0; }), 0, 1, ElemType::kBf16, full},
      {"group 7", with([](PackedIntLayer& l) { l.group_size = 7; }), 0, 1, ElemType::kBf16, full},
      {"group 12 (scales)", with([](PackedIntLayer& l) { l.group_size = 12; }), 0, 1,
       ElemType::kBf16, full},
      {"scale e4m3", with([](PackedIntLayer& l) { l.scale_type = ElemType::kF8E4m3; }), 0, 1,
       ElemType::kBf16, full},
      {"scale f32 (size)", with([](PackedIntLayer& l) { l.scale_type = ElemType::kF32; }), 0, 1,
       ElemType::kBf16, full},
      {"packed short", with([](PackedIntLayer& l) { l.weight_packed = l.weight_packed.first(100); }),
       0, 1, ElemType::kBf16, full},
      {"scale short", with([](PackedIntLayer& l) { l.weight_scale = l.weight_scale.first(52); }), 0,
       1, ElemType::kBf16, full},
      {"zero short", with([](PackedIntLayer& l) {
         l.weight_zero_point = l.weight_zero_point.first(12);
       }),
       0, 1, ElemType::kBf16, full},
      {"tensor scale with zero", with([](PackedIntLayer& l) {
         l.tensor_scale = true;
         l.weight_scale = l.weight_scale.first(2);
       }),
       0, 1, ElemType::kBf16, full},
      {"int8 sizes", with([](PackedIntLayer& l) { l.num_bits = 8; }), 0, 1, ElemType::kBf16, full},
      {"i8 zero size", with([](PackedIntLayer& l) { l.zero_point_i8 = true; }), 0, 1,
       ElemType::kBf16, full},
      {"out e4m3", base, 0, 1, ElemType::kF8E4m3, full},
      {"rows past end", base, 0, 10, ElemType::kBf16, full + 100},
      {"rows reversed", base, 2, 1, ElemType::kBf16, full},
      {"short output", base, 0, 2, ElemType::kBf16, 95},
      {"short f32 output", base, 8, 9, ElemType::kF32, 95},
  };
  for (const Bad& b : bad) {
    const Status status = DequantPackedInt(b.layer, b.rb, b.re, b.out_type, {out.data(), b.out_bytes});
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << b.what;
    EXPECT_FALSE(status.message().empty()) << b.what;
    EXPECT_TRUE(untouched()) << b.what;
  }
  EXPECT_TRUE(DequantPackedInt(base, 9, 9, ElemType::kBf16, {out.data(), 0}).ok());
  EXPECT_TRUE(DequantPackedInt(base, 8, 9, ElemType::kF32, {out.data(), 96}).ok());
}

AMN_INSTANTIATE_PER_TARGET(PackedIntTest);

}  // namespace
}  // namespace amn::test
