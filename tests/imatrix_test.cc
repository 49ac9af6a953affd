// formats/imatrix.h: llama.cpp's legacy imatrix file, built here field by
// field as tools/imatrix/imatrix.cpp save_imatrix_legacy writes it
// (n_entries; per entry name length, name, ncall, nval, values; then
// last_call and the dataset name), read back exactly; every truncation,
// negative count, oversized declaration and trailing garbage refused with
// the file name and the byte offset.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <span>
#include <vector>

#include "formats/byte_source.h"
#include "formats/imatrix.h"
#include "tests/gguf_writer.h"

namespace amn::test {
namespace {

struct DatWriter {
  std::vector<uint8_t> bytes;
  void I32(int32_t v) {
    const uint32_t u = static_cast<uint32_t>(v);
    for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(u >> (8 * i)));
  }
  void F32(float v) { I32(static_cast<int32_t>(std::bit_cast<uint32_t>(v))); }
  void Str(const std::string& s) { bytes.insert(bytes.end(), s.begin(), s.end()); }
  void Entry(const std::string& name, int32_t ncall, const std::vector<float>& values) {
    I32(static_cast<int32_t>(name.size()));
    Str(name);
    I32(ncall);
    I32(static_cast<int32_t>(values.size()));
    for (float v : values) F32(v);
  }
};

// Two entries in sorted name order (as the writer sorts them) and the trailer.
DatWriter TwoEntries(bool trailer) {
  DatWriter w;
  w.I32(2);
  w.Entry("blk.0.attn_q.weight", 10, {1.5f, 0.25f, 3.0f, 1e-30f});
  w.Entry("blk.0.ffn_down.weight", 7, {2.0f, 0.0f});
  if (trailer) {
    w.I32(42);
    w.I32(9);
    w.Str("wiki.text");
  }
  return w;
}

TEST(ImatrixDat, ReadsWhatTheWriterWrites) {
  for (bool trailer : {true, false}) {
    const DatWriter w = TwoEntries(trailer);
    const Result<ImatrixDat> r = ParseImatrixDat(w.bytes, "a.dat");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->entries.size(), 2u);
    EXPECT_EQ(r->entries[0].name, "blk.0.attn_q.weight");
    EXPECT_EQ(r->entries[0].ncall, 10);
    ASSERT_EQ(r->entries[0].values.size(), 4u);
    EXPECT_EQ(std::bit_cast<uint32_t>(r->entries[0].values[3]), std::bit_cast<uint32_t>(1e-30f));
    EXPECT_EQ(r->entries[0].values[0], 1.5f);
    EXPECT_EQ(r->entries[1].name, "blk.0.ffn_down.weight");
    EXPECT_EQ(r->entries[1].ncall, 7);
    EXPECT_EQ(r->entries[1].values, (std::vector<float>{2.0f, 0.0f}));
    EXPECT_EQ(r->has_trailer, trailer);
    EXPECT_EQ(r->last_call, trailer ? 42 : 0);
    EXPECT_EQ(r->dataset, trailer ? "wiki.text" : "");
  }
}

TEST(ImatrixDat, EmptyFileOfZeroEntriesAndAnEmptyEntry) {
  DatWriter w;
  w.I32(1);
  w.Entry("x", 0, {});
  const Result<ImatrixDat> r = ParseImatrixDat(w.bytes, "e.dat");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->entries[0].values.empty());
  DatWriter z;
  z.I32(0);
  EXPECT_TRUE(ParseImatrixDat(z.bytes, "z.dat").ok());
}

// Every prefix of a valid file, except the two complete ones (with and
// without the trailer), is refused; the message names the file and the
// offset is inside the file.
TEST(ImatrixDat, EveryTruncationIsRefused) {
  const DatWriter w = TwoEntries(true);
  const size_t without_trailer = TwoEntries(false).bytes.size();
  for (size_t n = 0; n < w.bytes.size(); ++n) {
    const std::vector<uint8_t> cut(w.bytes.begin(), w.bytes.begin() + static_cast<long>(n));
    const Result<ImatrixDat> r = ParseImatrixDat(cut, "cut.dat");
    if (n == without_trailer) {
      EXPECT_TRUE(r.ok()) << n;
      continue;
    }
    ASSERT_FALSE(r.ok()) << "prefix of " << n << " bytes";
    EXPECT_EQ(r.status().code(), StatusCode::kTruncated) << n << ": " << r.status().ToString();
    ASSERT_TRUE(r.status().byte_offset().has_value()) << n;
    EXPECT_LE(*r.status().byte_offset(), n);
    EXPECT_NE(r.status().message().find("cut.dat"), std::string::npos);
  }
}

TEST(ImatrixDat, BadDeclarationsAreRefusedWithTheirOffset) {
  {
    DatWriter w;  // negative entry count
    w.I32(-1);
    const auto r = ParseImatrixDat(w.bytes, "n.dat");
    EXPECT_EQ(r.status().code(), StatusCode::kInvalid);
    EXPECT_EQ(r.status().byte_offset(), 0u);
  }
  {
    DatWriter w;  // more entries than the file can hold: refused up front
    w.I32(1000000);
    w.I32(0);
    const auto r = ParseImatrixDat(w.bytes, "m.dat");
    EXPECT_EQ(r.status().code(), StatusCode::kTruncated);
    EXPECT_EQ(r.status().byte_offset(), 0u);
  }
  {
    DatWriter w;  // over the entry limit
    w.I32(kImatrixMaxEntries + 1);
    EXPECT_EQ(ParseImatrixDat(w.bytes, "l.dat").status().code(), StatusCode::kLimitExceeded);
  }
  {
    DatWriter w;  // a huge name length
    w.I32(1);
    w.I32(0x7fffffff);
    w.bytes.resize(w.bytes.size() + 16, 0);  // room for one entry's fields
    const auto r = ParseImatrixDat(w.bytes, "h.dat");
    EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded);
    EXPECT_EQ(r.status().byte_offset(), 4u);
  }
  {
    DatWriter w;  // a negative value count at offset 4 + 4 + 1 + 4
    w.I32(1);
    w.I32(1);
    w.Str("a");
    w.I32(3);
    w.I32(-5);
    const auto r = ParseImatrixDat(w.bytes, "v.dat");
    EXPECT_EQ(r.status().code(), StatusCode::kInvalid);
    EXPECT_EQ(r.status().byte_offset(), 13u);
  }
  {
    DatWriter w;  // a value count past the end: the tensor is named
    w.I32(1);
    w.Entry("t", 1, {1.0f});
    w.bytes[13] = 200;
    const auto r = ParseImatrixDat(w.bytes, "t.dat");
    EXPECT_EQ(r.status().code(), StatusCode::kTruncated);
    EXPECT_EQ(r.status().tensor(), "t");
    EXPECT_EQ(r.status().byte_offset(), 17u);
  }
  {
    DatWriter w = TwoEntries(true);  // bytes after the trailer
    w.bytes.push_back(0);
    const auto r = ParseImatrixDat(w.bytes, "g.dat");
    EXPECT_EQ(r.status().code(), StatusCode::kInvalid);
    EXPECT_EQ(r.status().byte_offset(), w.bytes.size() - 1);
  }
}

// A GGUF imatrix as save_imatrix lays it out: general.type, chunk count and
// size, then per weight <name>.in_sum2 [cols, n_mat] and <name>.counts
// [1, n_mat], F32, data aligned to 32.
std::vector<uint8_t> ImatrixGgufBytes(uint32_t counts_type, uint64_t n_counts,
                                      bool with_counts = true) {
  GgufWriter w;
  w.Header(with_counts ? 2 : 1, 3);
  w.KvStr("general.type", "imatrix");
  w.KvU32("imatrix.chunk_count", 12);
  w.KvU32("imatrix.chunk_size", 512);
  w.Tensor("blk.0.ffn_down.weight.in_sum2", {3, 2}, 0, 0);
  if (with_counts) w.Tensor("blk.0.ffn_down.weight.counts", {1, n_counts}, counts_type, 32);
  w.PadTo(32);
  const float sums[6] = {1.0f, 2.5f, 0.0f, 4.0f, 1e-20f, 7.0f};
  w.Raw(sums, sizeof(sums));
  w.PadTo(32);
  if (with_counts) {
    const float counts[2] = {10.0f, 3.0f};
    w.Raw(counts, 4 * n_counts);
  }
  return w.bytes();
}

Result<ImatrixGguf> ReadGgufBytes(const std::vector<uint8_t>& b) {
  formats::MemorySource src(std::as_bytes(std::span(b)), "m.gguf");
  return ReadImatrixGguf(src, ParseLimits());
}

TEST(ImatrixGguf, ReadsSumsAndCounts) {
  const Result<ImatrixGguf> r = ReadGgufBytes(ImatrixGgufBytes(0, 2));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->chunk_count, 12u);
  EXPECT_EQ(r->chunk_size, 512u);
  ASSERT_EQ(r->entries.size(), 1u);
  const ImatrixGgufEntry& e = r->entries[0];
  EXPECT_EQ(e.name, "blk.0.ffn_down.weight");
  EXPECT_EQ(e.cols, 3u);
  EXPECT_EQ(e.n_mat, 2u);
  EXPECT_EQ(e.in_sum2, (std::vector<float>{1.0f, 2.5f, 0.0f, 4.0f, 1e-20f, 7.0f}));
  EXPECT_EQ(e.counts, (std::vector<float>{10.0f, 3.0f}));
}

TEST(ImatrixGguf, ImportanceValuesAsLlamaQuantizeComputesThem) {
  const Result<ImatrixGguf> r = ReadGgufBytes(ImatrixGgufBytes(0, 2));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ImportanceValues(r->entries[0]),
            (std::vector<float>{1.0f / 10.0f, 2.5f / 10.0f, 0.0f, 4.0f / 3.0f, 1e-20f / 3.0f,
                                7.0f / 3.0f}));
  ImatrixGgufEntry unused = r->entries[0];
  unused.counts[1] = 0.0f;  // an expert that saw no input
  const std::vector<float> v = ImportanceValues(unused);
  EXPECT_EQ(std::vector<float>(v.begin() + 3, v.end()), (std::vector<float>{1.0f, 1.0f, 1.0f}));
}

TEST(ImatrixDat, ImportanceValuesDivideByNcall) {
  const Result<ImatrixDat> r = ParseImatrixDat(TwoEntries(true).bytes, "a.dat");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ImportanceValues(r->entries[1]), (std::vector<float>{2.0f / 7.0f, 0.0f}));
  ImatrixEntry no_calls = r->entries[1];
  no_calls.ncall = 0;
  EXPECT_EQ(ImportanceValues(no_calls), no_calls.values);
}

TEST(ImatrixGguf, RefusesMismatchedTensors) {
  const auto missing = ReadGgufBytes(ImatrixGgufBytes(0, 2, false));
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(missing.status().tensor(), "blk.0.ffn_down.weight.in_sum2");
  const auto wrong_count = ReadGgufBytes(ImatrixGgufBytes(0, 1));
  EXPECT_EQ(wrong_count.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(wrong_count.status().tensor(), "blk.0.ffn_down.weight.counts");
  const auto not_f32 = ReadGgufBytes(ImatrixGgufBytes(1, 2));  // F16 counts
  EXPECT_EQ(not_f32.status().code(), StatusCode::kInvalid);
  EXPECT_NE(not_f32.status().message().find("m.gguf"), std::string::npos);
  std::vector<uint8_t> cut = ImatrixGgufBytes(0, 2);
  cut.resize(cut.size() - 1);
  EXPECT_FALSE(ReadGgufBytes(cut).ok());
}

}  // namespace
}  // namespace amn::test
