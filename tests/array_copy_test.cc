// amn::CopyStridedElements and amn::ConvertFloats: strided views against an
// independent per-element index computation, byte swaps and conversions
// against hand-derived bit patterns (PyTorch 1.13 gives the same F64 results:
// torch.tensor([1 + 2**-8 + 2**-40], dtype=torch.float64).to(torch.bfloat16)
// is 0x3F80, the F32-first rounding).
#include "amn/array_copy.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstring>
#include <vector>

namespace amn {
namespace {

// Element i of the row-major order, computed from scratch for each i.
uint64_t StorageIndex(const std::vector<uint64_t>& shape, const std::vector<uint64_t>& strides,
                      uint64_t offset, uint64_t i) {
  uint64_t at = offset;
  for (size_t k = shape.size(); k-- > 0;) {
    at += (i % shape[k]) * strides[k];
    i /= shape[k];
  }
  return at;
}

std::vector<std::byte> Bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

TEST(CopyStrided, FortranOrderTwoByThree) {
  // numpy.array([[1, 2, 3], [4, 5, 6]], order='F') stores 1 4 2 5 3 6.
  const std::vector<uint16_t> storage = {1, 4, 2, 5, 3, 6};
  const std::vector<uint64_t> shape = {2, 3}, strides = {1, 2};
  StridedView view{reinterpret_cast<const std::byte*>(storage.data()), 2, shape, strides, 0};
  std::vector<uint16_t> out(6);
  ASSERT_TRUE(CopyStridedElements(view, 0, 6, false, std::as_writable_bytes(std::span(out))).ok());
  EXPECT_EQ(out, (std::vector<uint16_t>{1, 2, 3, 4, 5, 6}));
  // A piece from the middle: elements 2..4 are 3, 4, 5.
  std::vector<uint16_t> piece(3);
  ASSERT_TRUE(CopyStridedElements(view, 2, 3, false, std::as_writable_bytes(std::span(piece))).ok());
  EXPECT_EQ(piece, (std::vector<uint16_t>{3, 4, 5}));
}

TEST(CopyStrided, SwapsEachElementsBytes) {
  const std::vector<std::byte> big = Bytes({0x3F, 0x80, 0x00, 0x00, 0xC0, 0x00, 0x00, 0x00});
  const std::vector<uint64_t> shape = {2}, strides = {1};
  StridedView view{big.data(), 4, shape, strides, 0};
  std::vector<std::byte> out(8);
  ASSERT_TRUE(CopyStridedElements(view, 0, 2, true, out).ok());
  EXPECT_EQ(out, Bytes({0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0xC0}));  // 1.0f, -2.0f
}

TEST(CopyStrided, ScalarAndOffset) {
  const std::vector<uint8_t> storage = {9, 8, 7};
  StridedView view{reinterpret_cast<const std::byte*>(storage.data()), 1, {}, {}, 2};
  std::byte out{};
  ASSERT_TRUE(CopyStridedElements(view, 0, 1, false, std::span(&out, 1)).ok());
  EXPECT_EQ(out, std::byte{7});
}

TEST(CopyStrided, RejectsBadArguments) {
  const std::vector<uint64_t> shape = {4}, strides = {1};
  std::vector<std::byte> storage(16), out(4);
  StridedView view{storage.data(), 4, shape, strides, 0};
  EXPECT_EQ(CopyStridedElements(view, 0, 2, false, out).code(), StatusCode::kInvalidArgument);
  view.elem_bytes = 3;
  EXPECT_EQ(CopyStridedElements(view, 0, 1, false, out).code(), StatusCode::kInvalidArgument);
}

RC_GTEST_PROP(CopyStrided, MatchesPerElementIndexing, ()) {
  const size_t rank = *rc::gen::inRange<size_t>(1, 5);
  std::vector<uint64_t> shape(rank), strides(rank);
  for (size_t k = 0; k < rank; ++k) {
    shape[k] = *rc::gen::inRange<uint64_t>(1, 6);
    strides[k] = *rc::gen::inRange<uint64_t>(0, 9);  // 0: broadcast, >1: gaps and transposes
  }
  const uint64_t offset = *rc::gen::inRange<uint64_t>(0, 5);
  uint64_t elements = 1, last = offset;
  for (size_t k = 0; k < rank; ++k) {
    elements *= shape[k];
    last += (shape[k] - 1) * strides[k];
  }
  const size_t elem = *rc::gen::element<size_t>(1, 2, 4, 8);
  std::vector<std::byte> storage((last + 1) * elem);
  for (size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<std::byte>(i * 7 + 3);
  const uint64_t first = *rc::gen::inRange<uint64_t>(0, elements);
  const uint64_t count = *rc::gen::inRange<uint64_t>(0, elements - first + 1);
  const bool swap = *rc::gen::arbitrary<bool>();
  StridedView view{storage.data(), elem, shape, strides, offset};
  std::vector<std::byte> out(count * elem);
  RC_ASSERT(CopyStridedElements(view, first, count, swap, out).ok());
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t at = StorageIndex(shape, strides, offset, first + i);
    for (size_t b = 0; b < elem; ++b) {
      RC_ASSERT(out[i * elem + b] == storage[at * elem + (swap ? elem - 1 - b : b)]);
    }
  }
}

std::vector<uint16_t> ToHalves(FloatType to, const std::vector<double>& in) {
  std::vector<uint16_t> out(in.size());
  EXPECT_TRUE(ConvertFloats(FloatType::kF64, std::as_bytes(std::span(in)), to,
                            std::as_writable_bytes(std::span(out)))
                  .ok());
  return out;
}

TEST(ConvertFloats, F64RoundsThroughF32LikePyTorch) {
  const double above_half = 1.0 + 0x1p-8 + 0x1p-40;  // F32 rounds it to the BF16 tie 1 + 2^-8
  EXPECT_EQ(ToHalves(FloatType::kBf16, {above_half, 1.0, -2.0}),
            (std::vector<uint16_t>{0x3F80, 0x3F80, 0xC000}));
  // numpy's direct F64->F16 would give 0x3C01 here; PyTorch (and amn) 0x3C00.
  EXPECT_EQ(ToHalves(FloatType::kF16, {1.0 + 0x1p-11 + 0x1p-40, 65504.0}),
            (std::vector<uint16_t>{0x3C00, 0x7BFF}));
  const std::vector<double> d = {0.1, -0.0, 1e300};
  std::vector<float> f(3);
  ASSERT_TRUE(ConvertFloats(FloatType::kF64, std::as_bytes(std::span(d)), FloatType::kF32,
                            std::as_writable_bytes(std::span(f)))
                  .ok());
  uint32_t bits[3];
  std::memcpy(bits, f.data(), sizeof(bits));
  EXPECT_EQ(bits[0], 0x3DCCCCCDu);  // 0.1 rounded to nearest
  EXPECT_EQ(bits[1], 0x80000000u);  // the sign of zero kept
  EXPECT_EQ(bits[2], 0x7F800000u);  // overflow to +Inf
}

TEST(ConvertFloats, HalvesAndSameType) {
  const std::vector<uint16_t> bf16 = {0x3F80, 0xC040};  // 1.0, -3.0
  std::vector<float> f32(2);
  ASSERT_TRUE(ConvertFloats(FloatType::kBf16, std::as_bytes(std::span(bf16)), FloatType::kF32,
                            std::as_writable_bytes(std::span(f32)))
                  .ok());
  EXPECT_EQ(f32, (std::vector<float>{1.0f, -3.0f}));
  std::vector<uint16_t> same(2);
  ASSERT_TRUE(ConvertFloats(FloatType::kBf16, std::as_bytes(std::span(bf16)), FloatType::kBf16,
                            std::as_writable_bytes(std::span(same)))
                  .ok());
  EXPECT_EQ(same, bf16);
  std::vector<double> wide(2);
  EXPECT_EQ(ConvertFloats(FloatType::kF32, std::as_bytes(std::span(f32)), FloatType::kF64,
                          std::as_writable_bytes(std::span(wide)))
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(ConvertFloats, Fp8Widens) {
  // E4M3 1, -2, 448, 2^-9; E5M2 1, -2, 57344, 2^-16 (bits worked out by hand;
  // E5M2 is the top byte of an F16).
  const std::vector<uint8_t> e4m3 = {0x38, 0xC0, 0x7E, 0x01}, e5m2 = {0x3C, 0xC0, 0x7B, 0x01};
  std::vector<float> f32(4);
  ASSERT_TRUE(ConvertFloats(FloatType::kF8E4m3, std::as_bytes(std::span(e4m3)), FloatType::kF32,
                            std::as_writable_bytes(std::span(f32)))
                  .ok());
  EXPECT_EQ(f32, (std::vector<float>{1.0f, -2.0f, 448.0f, 0x1p-9f}));
  std::vector<uint16_t> half(4);
  ASSERT_TRUE(ConvertFloats(FloatType::kF8E5m2, std::as_bytes(std::span(e5m2)), FloatType::kF16,
                            std::as_writable_bytes(std::span(half)))
                  .ok());
  EXPECT_EQ(half, (std::vector<uint16_t>{0x3C00, 0xC000, 0x7B00, 0x0100}));
  ASSERT_TRUE(ConvertFloats(FloatType::kF8E5m2, std::as_bytes(std::span(e5m2)), FloatType::kBf16,
                            std::as_writable_bytes(std::span(half)))
                  .ok());
  EXPECT_EQ(half, (std::vector<uint16_t>{0x3F80, 0xC000, 0x4760, 0x3780}));
  std::vector<uint8_t> narrow(4);
  EXPECT_EQ(ConvertFloats(FloatType::kF32, std::as_bytes(std::span(f32)), FloatType::kF8E4m3,
                          std::as_writable_bytes(std::span(narrow)))
                .code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace amn
