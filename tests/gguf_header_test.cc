// GGUF header parsing: a writer in this file builds v1/v2/v3 files byte by
// byte from the format definition (gguf.md), then the parser's view of them
// is compared with the literal values written; malformed variants must give
// the documented error class and name what is wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "amn/ggml_dequant.h"
#include "formats/gguf.h"
#include "tests/gguf_writer.h"

namespace amn::formats {
namespace {

using test::GgufWriter;

// Counts the bytes the parser asks for.
class CountingSource final : public ByteSource {
 public:
  explicit CountingSource(const std::vector<uint8_t>& bytes)
      : inner_(std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), "t.gguf") {}
  uint64_t size() const override { return inner_.size(); }
  Status ReadAt(uint64_t offset, std::span<std::byte> out) override {
    max_end_ = std::max<uint64_t>(max_end_, offset + out.size());
    return inner_.ReadAt(offset, out);
  }
  const std::string& name() const override { return inner_.name(); }
  uint64_t max_end() const { return max_end_; }

 private:
  MemorySource inner_;
  uint64_t max_end_ = 0;
};

Result<GgufHeader> Parse(const std::vector<uint8_t>& bytes, ParseLimits limits = {}) {
  MemorySource source(std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()),
                      "t.gguf");
  return ReadGgufHeader(source, limits);
}

constexpr uint32_t kF32 = 0, kQ4_0 = 2, kQ4_K = 12;

TEST(GgufHeader, ParsesEveryValueTypeAndTensorInfo) {
  GgufWriter w(3);
  w.Header(3, 6);
  w.KvStr("general.architecture", "llama");
  w.KvU32("general.alignment", 64);
  w.Str("f").U32(6);
  const float f = 0.5f;
  w.Raw(&f, 4);
  w.Str("flag").U32(7).Raw("\x01", 1);
  // An array of 20 strings: all parsed, the first 16 kept.
  w.Str("tokens").U32(9).U32(8).U64(20);
  for (int i = 0; i < 20; ++i) w.Str("t" + std::to_string(i));
  // Nested: array of 2 arrays of i64.
  w.Str("nested").U32(9).U32(9).U64(2);
  for (int a = 0; a < 2; ++a) {
    w.U32(11).U64(1);
    const int64_t v = -5 - a;
    w.Raw(&v, 8);
  }
  w.Tensor("a", {32, 2}, kQ4_0, 0);        // 2 blocks of 18 bytes = 36
  w.Tensor("b", {256}, kQ4_K, 64);         // 144 bytes
  w.Tensor("c", {3}, kF32, 256);           // 12 bytes
  w.PadTo(64).Zeros(256 + 12);
  CountingSource source(w.bytes());
  const auto h = ReadGgufHeader(source, {});
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->version, 3u);
  EXPECT_EQ(h->alignment, 64u);
  EXPECT_EQ(h->data_offset % 64, 0u);
  // Header reads go through a 64 KiB read-ahead window, never further.
  EXPECT_LE(source.max_end(), h->data_offset + (64 << 10));
  ASSERT_EQ(h->metadata.size(), 6u);
  EXPECT_EQ(h->Find("general.architecture")->s, "llama");
  EXPECT_EQ(h->Find("f")->f, 0.5);
  EXPECT_TRUE(h->Find("flag")->b);
  const GgufValue* tokens = h->Find("tokens");
  EXPECT_EQ(tokens->count, 20u);
  ASSERT_EQ(tokens->items.size(), GgufValue::kKeptItems);
  EXPECT_EQ(tokens->items[15].s, "t15");
  const GgufValue* nested = h->Find("nested");
  ASSERT_EQ(nested->items.size(), 2u);
  EXPECT_EQ(nested->items[1].items[0].i, -6);
  ASSERT_EQ(h->tensors.size(), 3u);
  EXPECT_EQ(h->tensors[0].bytes, 36u);
  EXPECT_EQ(h->tensors[1].bytes, 144u);
  EXPECT_EQ(h->tensors[1].offset, 64u);
  EXPECT_EQ(h->tensors[2].elements, 3u);
  EXPECT_EQ(h->tensors[0].dims, (std::vector<uint64_t>{32, 2}));
}

// The newer ggml types (ggml.h: NVFP4 = 40, Q1_0 = 41, Q2_0 = 42; blocks of
// 64 / 36, 128 / 18, 64 / 18 bytes per ggml-common.h): sizes from the type
// table; a row that is not whole blocks is refused naming the tensor.
TEST(GgufHeader, NewerTypesSizedByTheirBlocks) {
  GgufWriter w(3);
  w.Header(3, 0);
  w.Tensor("nv", {128, 3}, 40, 0);   // 6 blocks of 36 = 216
  w.Tensor("q1", {256, 2}, 41, 224); // 4 blocks of 18 = 72
  w.Tensor("q2", {64}, 42, 320);     // 1 block of 18
  w.PadTo(32).Zeros(320 + 18);
  const auto h = Parse(w.bytes());
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_EQ(h->tensors.size(), 3u);
  EXPECT_EQ(h->tensors[0].bytes, 216u);
  EXPECT_EQ(h->tensors[1].bytes, 72u);
  EXPECT_EQ(h->tensors[2].bytes, 18u);
  EXPECT_EQ(FindGgmlType(40)->name, "NVFP4");
  EXPECT_EQ(FindGgmlType(41)->name, "Q1_0");
  EXPECT_EQ(FindGgmlType(42)->name, "Q2_0");
  for (const auto& [type, row] : {std::pair{40u, 32u}, std::pair{41u, 64u}, std::pair{42u, 96u}}) {
    GgufWriter b(3);
    b.Header(3, 0);
    b.Tensor("part", {row}, type, 0);
    b.PadTo(32).Zeros(64);
    const auto bad = Parse(b.bytes());
    ASSERT_FALSE(bad.ok()) << type;
    EXPECT_NE(bad.status().message().find("'part'"), std::string::npos) << bad.status().ToString();
  }
}

TEST(GgufHeader, ReadsVersion1WithThirtyTwoBitCounts) {
  GgufWriter w(1);
  w.Header(1, 1).KvStr("general.name", "v1");
  w.Tensor("w", {4}, kF32, 0);
  w.PadTo(32).Zeros(16);
  const auto h = Parse(w.bytes());
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->version, 1u);
  EXPECT_EQ(h->Find("general.name")->s, "v1");
  EXPECT_EQ(h->tensors[0].bytes, 16u);
}

struct Bad {
  const char* what;
  std::vector<uint8_t> bytes;
  StatusCode code;
  const char* fragment;
};

std::vector<Bad> BadFiles() {
  std::vector<Bad> bad;
  auto file = [](auto build) {
    GgufWriter w(3);
    build(w);
    return w.bytes();
  };
  bad.push_back({"bad magic", {'G', 'G', 'U', 'G', 3, 0, 0, 0}, StatusCode::kInvalid, "magic"});
  bad.push_back({"big-endian", {'G', 'G', 'U', 'F', 0, 0, 0, 3}, StatusCode::kUnsupported, "big-endian"});
  bad.push_back({"version 4", file([](GgufWriter& w) { w.U32(0x46554747).U32(4).U64(0).U64(0); }),
                 StatusCode::kUnsupported, "version 4"});
  bad.push_back({"truncated counts", file([](GgufWriter& w) { w.U32(0x46554747).U32(3).U32(0); }),
                 StatusCode::kTruncated, ""});
  bad.push_back({"huge kv count", file([](GgufWriter& w) { w.Header(0, uint64_t{1} << 40); }),
                 StatusCode::kLimitExceeded, ""});
  bad.push_back({"string past end", file([](GgufWriter& w) { w.Header(0, 1).U64(1000).Raw("ab", 2); }),
                 StatusCode::kTruncated, ""});
  bad.push_back({"array count past end",
                 file([](GgufWriter& w) { w.Header(0, 1).Str("k").U32(9).U32(4).U64(uint64_t{1} << 50); }),
                 StatusCode::kTruncated, ""});
  bad.push_back({"deep nesting", file([](GgufWriter& w) {
                   w.Header(0, 1).Str("k").U32(9);
                   for (int i = 0; i < 9; ++i) w.U32(9).U64(1);
                   w.U32(4).U64(0);
                 }),
                 StatusCode::kLimitExceeded, "nested"});
  bad.push_back({"unknown value type", file([](GgufWriter& w) { w.Header(0, 1).Str("k").U32(13).U32(0); }),
                 StatusCode::kInvalid, "value type 13"});
  bad.push_back({"bool 2", file([](GgufWriter& w) { w.Header(0, 1).Str("k").U32(7).Raw("\x02", 1); }),
                 StatusCode::kInvalid, "bool"});
  bad.push_back({"duplicate key", file([](GgufWriter& w) { w.Header(0, 2).KvU32("k", 1).KvU32("k", 2); }),
                 StatusCode::kInvalid, "duplicate key"});
  bad.push_back({"alignment not a power of two",
                 file([](GgufWriter& w) { w.Header(0, 1).KvU32("general.alignment", 48); }),
                 StatusCode::kInvalid, "alignment"});
  auto one_tensor = [&](std::vector<uint64_t> dims, uint32_t type, uint64_t offset, size_t data) {
    return file([=](GgufWriter& w) { w.Header(1, 0).Tensor("w", dims, type, offset).PadTo(32).Zeros(data); });
  };
  bad.push_back({"unknown tensor type", one_tensor({4}, 99, 0, 16), StatusCode::kUnsupported, "'w'"});
  bad.push_back({"five dims", one_tensor({1, 1, 1, 1, 1}, kF32, 0, 4), StatusCode::kInvalid, "'w'"});
  bad.push_back({"dim product overflow", one_tensor({uint64_t{1} << 40, uint64_t{1} << 40}, kF32, 0, 4),
                 StatusCode::kInvalid, "overflows"});
  bad.push_back({"partial block", one_tensor({33}, kQ4_0, 0, 64), StatusCode::kInvalid, "block"});
  bad.push_back({"misaligned offset", one_tensor({4}, kF32, 8, 64), StatusCode::kInvalid, "alignment"});
  bad.push_back({"data past end", one_tensor({64}, kF32, 0, 100), StatusCode::kTruncated, "'w'"});
  bad.push_back({"overlap", file([](GgufWriter& w) {
                   w.Header(2, 0).Tensor("a", {16}, kF32, 0).Tensor("b", {16}, kF32, 32).PadTo(32).Zeros(128);
                 }),
                 StatusCode::kInvalid, "overlaps"});
  bad.push_back({"duplicate tensor", file([](GgufWriter& w) {
                   w.Header(2, 0).Tensor("a", {4}, kF32, 0).Tensor("a", {4}, kF32, 32).PadTo(32).Zeros(64);
                 }),
                 StatusCode::kInvalid, "duplicate tensor"});
  return bad;
}

TEST(GgufHeader, MalformedFilesGiveClearErrors) {
  for (const Bad& b : BadFiles()) {
    const auto h = Parse(b.bytes);
    ASSERT_FALSE(h.ok()) << b.what;
    EXPECT_EQ(h.status().code(), b.code) << b.what << ": " << h.status().ToString();
    const std::string text = h.status().ToString();
    EXPECT_NE(text.find(b.fragment), std::string::npos) << b.what << ": " << text;
    EXPECT_NE(text.find("t.gguf"), std::string::npos) << b.what << ": " << text;
    EXPECT_EQ(text.find('\n'), std::string::npos);
  }
}

TEST(GgufHeader, EveryTruncationIsAnError) {
  GgufWriter w(3);
  w.Header(1, 2).KvStr("general.architecture", "llama").KvU32("x", 7);
  w.Tensor("w", {32}, kQ4_0, 0).PadTo(32).Zeros(18);
  const std::vector<uint8_t> full = w.bytes();
  ASSERT_TRUE(Parse(full).ok());
  for (size_t n = 0; n < full.size(); ++n) {
    const std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<long>(n));
    EXPECT_FALSE(Parse(cut).ok()) << "accepted a file cut at " << n << " bytes";
  }
}

}  // namespace
}  // namespace amn::formats
