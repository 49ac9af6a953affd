// safetensors header parsing (formats/safetensors_header.h): the reference
// fixtures field by field against their expected.json (values checked with
// safetensors.safe_open), hand-built good files, and one test per rule of
// the header contract on hostile input. Also the dtype table and the byte
// sources the parser reads through.
#include "formats/safetensors_header.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/byte_source.h"
#include "formats/dtype.h"
#include "tests/fixtures.h"

namespace amn::formats {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr char kName[] = "test.safetensors";

// u64 LE length, the JSON, then `data_bytes` bytes of data (0x5a).
std::vector<std::byte> MakeFile(std::string_view json, size_t data_bytes = 0) {
  std::vector<std::byte> file(8 + json.size() + data_bytes, std::byte{0x5a});
  const uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) file[i] = static_cast<std::byte>(n >> (8 * i) & 0xff);
  std::memcpy(file.data() + 8, json.data(), json.size());
  return file;
}

Result<SafetensorsHeader> Parse(const std::vector<std::byte>& file,
                                const ParseLimits& limits = {}) {
  MemorySource source(file, kName);
  return ReadSafetensorsHeader(source, limits);
}

Result<SafetensorsHeader> ParseJson(std::string_view json, size_t data_bytes = 0,
                                    const ParseLimits& limits = {}) {
  return Parse(MakeFile(json, data_bytes), limits);
}

// The error is `code`, names the file, is one line, and names `tensor`
// (when given) both as Status::tensor() and in ToString().
void ExpectError(const Result<SafetensorsHeader>& result, StatusCode code,
                 const std::string& tensor = "") {
  ASSERT_FALSE(result.ok());
  const Status& status = result.status();
  EXPECT_EQ(status.code(), code) << status.ToString();
  const std::string text = status.ToString();
  EXPECT_NE(text.find(kName), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  EXPECT_TRUE(status.byte_offset().has_value()) << text;
  if (!tensor.empty()) {
    EXPECT_EQ(status.tensor(), tensor) << text;
    EXPECT_NE(text.find("tensor '" + tensor + "'"), std::string::npos) << text;
  }
}

// The error's byte offset is in the JSON, on or just after `token`
// (the first occurrence at or after `from`).
void ExpectOffsetAtToken(const Result<SafetensorsHeader>& result, std::string_view json,
                         std::string_view token, size_t from = 0) {
  ASSERT_FALSE(result.ok());
  const size_t at = json.find(token, from);
  ASSERT_NE(at, std::string_view::npos);
  ASSERT_TRUE(result.status().byte_offset().has_value());
  const uint64_t offset = *result.status().byte_offset();
  EXPECT_GE(offset, 8 + at) << result.status().ToString();
  EXPECT_LE(offset, 8 + at + token.size()) << result.status().ToString();
}

// ---------------------------------------------------------------------------
// The reference fixtures.

TEST(SafetensorsFixtures, MatchExpectedJsonFieldByField) {
  const auto files = test::FixtureFiles("safetensors_reference", ".safetensors");
  AMN_SKIP_WITHOUT_FIXTURES(files, "safetensors_reference");
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    fs::path expected_path = path;
    expected_path.replace_extension(".expected.json");
    ASSERT_TRUE(fs::exists(expected_path));
    std::ifstream expected_in(expected_path);
    const Json expected = Json::parse(expected_in);

    auto source = FileSource::Open(path);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    const auto header = ReadSafetensorsHeader(**source, ParseLimits{});
    ASSERT_TRUE(header.ok()) << header.status().ToString();

    const uint64_t n = expected.at("header_size").get<uint64_t>();
    EXPECT_EQ(header->json_bytes, n);
    EXPECT_EQ(header->data_offset, 8 + n);
    EXPECT_EQ(header->data_bytes, fs::file_size(path) - 8 - n);

    std::map<std::string, std::string> metadata;
    for (const auto& [key, value] : expected.at("metadata").items())
      metadata[key] = value.get<std::string>();
    EXPECT_EQ(header->metadata, metadata);

    // expected.json lists tensors by name; the header keeps data order.
    const Json& tensors = expected.at("tensors");
    ASSERT_EQ(header->tensors.size(), tensors.size());
    for (size_t i = 1; i < header->tensors.size(); ++i) {
      EXPECT_LE(header->tensors[i - 1].data_end, header->tensors[i].data_begin);
    }
    for (const Json& want : tensors) {
      const std::string name = want.at("name").get<std::string>();
      SCOPED_TRACE(name);
      const auto it = std::find_if(header->tensors.begin(), header->tensors.end(),
                                   [&](const TensorEntry& t) { return t.name == name; });
      ASSERT_NE(it, header->tensors.end());
      EXPECT_EQ(DtypeName(it->dtype), want.at("dtype").get<std::string>());
      const auto shape = want.at("shape").get<std::vector<uint64_t>>();
      EXPECT_EQ(it->shape, shape);
      uint64_t elements = 1;
      for (const uint64_t dim : shape) elements *= dim;
      EXPECT_EQ(it->elements, elements);
      EXPECT_EQ(it->data_begin, want.at("data_offsets").at(0).get<uint64_t>());
      EXPECT_EQ(it->data_end, want.at("data_offsets").at(1).get<uint64_t>());
    }
  }
}

// A ByteSource that records what the parser reads.
class CountingSource final : public ByteSource {
 public:
  explicit CountingSource(ByteSource& inner) : inner_(inner) {}
  uint64_t size() const override { return inner_.size(); }
  Status ReadAt(uint64_t offset, std::span<std::byte> out) override {
    bytes_read += out.size();
    furthest = std::max<uint64_t>(furthest, offset + out.size());
    return inner_.ReadAt(offset, out);
  }
  const std::string& name() const override { return inner_.name(); }
  uint64_t bytes_read = 0;
  uint64_t furthest = 0;

 private:
  ByteSource& inner_;
};

TEST(SafetensorsFixtures, ReadExactlyTheHeaderBytes) {
  const auto files = test::FixtureFiles("safetensors_reference", ".safetensors");
  AMN_SKIP_WITHOUT_FIXTURES(files, "safetensors_reference");
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    auto file = FileSource::Open(path);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    CountingSource counting(**file);
    const auto header = ReadSafetensorsHeader(counting, ParseLimits{});
    ASSERT_TRUE(header.ok()) << header.status().ToString();
    EXPECT_EQ(counting.bytes_read, 8 + header->json_bytes);
    EXPECT_EQ(counting.furthest, 8 + header->json_bytes);
    EXPECT_LT(counting.furthest, fs::file_size(path));
  }
}

TEST(SafetensorsFixtures, MemoryFileAndMapAgree) {
  const auto files = test::FixtureFiles("safetensors_reference", ".safetensors");
  AMN_SKIP_WITHOUT_FIXTURES(files, "safetensors_reference");
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    const std::vector<uint8_t> bytes = test::ReadBytes(path);
    auto mapped = MappedFile::Open(path);
    ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
    ASSERT_EQ(mapped->bytes().size(), bytes.size());
    EXPECT_EQ(std::memcmp(mapped->bytes().data(), bytes.data(), bytes.size()), 0);
    MemorySource memory(mapped->bytes(), path.string());
    auto file = FileSource::Open(path);
    ASSERT_TRUE(file.ok());
    const auto from_memory = ReadSafetensorsHeader(memory, ParseLimits{});
    const auto from_file = ReadSafetensorsHeader(**file, ParseLimits{});
    ASSERT_TRUE(from_memory.ok() && from_file.ok());
    ASSERT_EQ(from_memory->tensors.size(), from_file->tensors.size());
    for (size_t i = 0; i < from_file->tensors.size(); ++i) {
      EXPECT_EQ(from_memory->tensors[i].name, from_file->tensors[i].name);
      EXPECT_EQ(from_memory->tensors[i].data_begin, from_file->tensors[i].data_begin);
    }
  }
}

// ---------------------------------------------------------------------------
// Hand-built good files.

TEST(SafetensorsHeader, ScalarZeroSizeAndMetadata) {
  // Data: "s" [0,4), "z" [4,4) (zero-size), "v" [4,10).
  const std::string json = R"({"v":{"dtype":"I16","shape":[3],"data_offsets":[4,10]},)"
                           R"("__metadata__":{"format":"pt","note":""},)"
                           R"("z":{"dtype":"BF16","shape":[0,4],"data_offsets":[4,4]},)"
                           R"("s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})";
  const auto header = ParseJson(json, 10);
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_EQ(header->json_bytes, json.size());
  EXPECT_EQ(header->data_offset, 8 + json.size());
  EXPECT_EQ(header->data_bytes, 10u);
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"note", ""}};
  EXPECT_EQ(header->metadata, metadata);
  ASSERT_EQ(header->tensors.size(), 3u);
  const TensorEntry& s = header->tensors[0];
  EXPECT_EQ(s.name, "s");
  EXPECT_EQ(s.dtype, Dtype::kF32);
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.elements, 1u);
  EXPECT_EQ(s.bytes(), 4u);
  const TensorEntry& z = header->tensors[1];
  EXPECT_EQ(z.name, "z");
  EXPECT_EQ(z.dtype, Dtype::kBf16);
  EXPECT_EQ(z.shape, (std::vector<uint64_t>{0, 4}));
  EXPECT_EQ(z.elements, 0u);
  EXPECT_EQ(z.data_begin, 4u);
  EXPECT_EQ(z.bytes(), 0u);
  const TensorEntry& v = header->tensors[2];
  EXPECT_EQ(v.name, "v");
  EXPECT_EQ(v.dtype, Dtype::kI16);
  EXPECT_EQ(v.elements, 3u);
  EXPECT_EQ(v.data_begin, 4u);
  EXPECT_EQ(v.data_end, 10u);
}

TEST(SafetensorsHeader, EmptyHeaderAndPadding) {
  const auto empty = ParseJson("{}");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->tensors.empty());
  EXPECT_TRUE(empty->metadata.empty());
  EXPECT_EQ(empty->data_bytes, 0u);

  // Right-padded with spaces as the Python writers do, and JSON whitespace.
  const auto padded = ParseJson(
      " {\n\t\"a\" : {\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]}\r\n}     ", 2);
  ASSERT_TRUE(padded.ok()) << padded.status().ToString();
  ASSERT_EQ(padded->tensors.size(), 1u);
  EXPECT_EQ(padded->tensors[0].dtype, Dtype::kU8);
}

TEST(SafetensorsHeader, ZeroDimensionMakesAnyShapeEmpty) {
  // 2^62 * 4 would overflow, but the 0 makes the tensor empty.
  const auto header =
      ParseJson(R"({"e":{"dtype":"F64","shape":[4611686018427387904,4,0],"data_offsets":[0,0]}})");
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_EQ(header->tensors[0].elements, 0u);
  const auto max_dim =
      ParseJson(R"({"e":{"dtype":"U8","shape":[0,18446744073709551615],"data_offsets":[0,0]}})");
  ASSERT_TRUE(max_dim.ok()) << max_dim.status().ToString();
  EXPECT_EQ(max_dim->tensors[0].shape[1], std::numeric_limits<uint64_t>::max());
}

TEST(SafetensorsHeader, EveryDtypeSize) {
  const std::vector<std::pair<std::string, size_t>> dtypes = {
      {"F64", 8},  {"F32", 4},     {"F16", 2},     {"BF16", 2},   {"I64", 8}, {"I32", 4},
      {"I16", 2},  {"I8", 1},      {"U64", 8},     {"U32", 4},    {"U16", 2}, {"U8", 1},
      {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1}};
  for (const auto& [name, size] : dtypes) {
    SCOPED_TRACE(name);
    const std::string json = R"({"t":{"dtype":")" + name + R"(","shape":[3],"data_offsets":[0,)" +
                             std::to_string(3 * size) + "]}}";
    const auto header = ParseJson(json, 3 * size);
    ASSERT_TRUE(header.ok()) << header.status().ToString();
    EXPECT_EQ(DtypeName(header->tensors[0].dtype), name);
  }
}

// ---------------------------------------------------------------------------
// The length field.

TEST(SafetensorsHeaderErrors, FileShorterThanLengthField) {
  for (size_t size : {0, 1, 7}) {
    SCOPED_TRACE(size);
    const std::vector<std::byte> file(size, std::byte{0});
    const auto result = Parse(file);
    ExpectError(result, StatusCode::kTruncated);
    EXPECT_EQ(result.status().byte_offset(), 0u);
  }
}

TEST(SafetensorsHeaderErrors, LengthPastEndOfFile) {
  std::vector<std::byte> file = MakeFile("{}");
  file[0] = std::byte{3};  // N = 3, but only 2 bytes follow
  ExpectError(Parse(file), StatusCode::kTruncated);
  file[0] = std::byte{0};
  file[7] = std::byte{0x01};  // N = 2^56: refused by the limit before any read
  ExpectError(Parse(file), StatusCode::kLimitExceeded);
}

TEST(SafetensorsHeaderErrors, LengthOverLimit) {
  ParseLimits limits;
  limits.max_header_bytes = 16;
  const std::string json = R"({"__metadata__":{"a":"b"}})";  // 26 bytes
  ExpectError(ParseJson(json, 0, limits), StatusCode::kLimitExceeded);
  limits.max_header_bytes = json.size();
  EXPECT_TRUE(ParseJson(json, 0, limits).ok());

  // N = 2^64 - 1: over the built-in limit, and 8 + N must not wrap around.
  std::vector<std::byte> file = MakeFile("{}");
  for (int i = 0; i < 8; ++i) file[i] = std::byte{0xff};
  ExpectError(Parse(file), StatusCode::kLimitExceeded);
  // A caller cannot raise a limit above the built-in cap.
  limits.max_header_bytes = std::numeric_limits<uint64_t>::max();
  ExpectError(Parse(file, limits), StatusCode::kLimitExceeded);
}

TEST(SafetensorsHeaderErrors, DataSectionOverTotalLimit) {
  ParseLimits limits;
  limits.max_total_bytes = 4;
  ExpectError(ParseJson(R"({"a":{"dtype":"U8","shape":[5],"data_offsets":[0,5]}})", 5, limits),
              StatusCode::kLimitExceeded);
}

// ---------------------------------------------------------------------------
// JSON syntax and top-level shape.

TEST(SafetensorsHeaderErrors, InvalidJson) {
  for (const std::string json :
       {R"({"a":)", R"({"a" 1})", "{,}", "{} x", "{}}", R"({'a':1})", R"({"a":{"dtype":"U8",}})",
        "/* c */ {}", R"({"a\u":1})", "{\"\xff\":1}", "{\"a\x01\":1}", "", "   "}) {
    SCOPED_TRACE(json);
    const auto result = ParseJson(json);
    ExpectError(result, StatusCode::kInvalid);
    if (!result.ok() && result.status().byte_offset()) {
      EXPECT_GE(*result.status().byte_offset(), 8u);
      EXPECT_LE(*result.status().byte_offset(), 8 + json.size());
    }
  }
}

TEST(SafetensorsHeaderErrors, InvalidJsonOffsetPointsAtTheError) {
  const std::string json = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]} "b":1})";
  const auto result = ParseJson(json, 1);
  ExpectError(result, StatusCode::kInvalid);
  ExpectOffsetAtToken(result, json, "\"b\"");
}

TEST(SafetensorsHeaderErrors, NulByteAndByteOrderMark) {
  // nlohmann would stop at the NUL and never see the garbage after it.
  const std::string with_nul("{}\0garbage", 10);
  const auto nul = ParseJson(with_nul);
  ExpectError(nul, StatusCode::kInvalid);
  EXPECT_EQ(nul.status().byte_offset(), 8u + 2u);
  ExpectError(ParseJson("\xEF\xBB\xBF{}"), StatusCode::kInvalid);
}

TEST(SafetensorsHeaderErrors, NotAnObject) {
  for (const std::string json : {"[]", "5", R"("x")", "null", "true", "1.5", "-1"}) {
    SCOPED_TRACE(json);
    ExpectError(ParseJson(json), StatusCode::kInvalid);
  }
}

TEST(SafetensorsHeaderErrors, TensorEntryNotAnObject) {
  ExpectError(ParseJson(R"({"w":[1,2]})"), StatusCode::kInvalid, "w");
  ExpectError(ParseJson(R"({"w":"F32"})"), StatusCode::kInvalid, "w");
}

// ---------------------------------------------------------------------------
// Tensor fields.

TEST(SafetensorsHeaderErrors, UnknownDtype) {
  for (const std::string dtype : {"F4", "f32", "FLOAT", "", "F8_E4M3FN"}) {
    SCOPED_TRACE(dtype);
    const std::string json =
        R"({"w":{"dtype":")" + dtype + R"(","shape":[1],"data_offsets":[0,1]}})";
    const auto result = ParseJson(json, 1);
    ExpectError(result, StatusCode::kUnsupported, "w");
    ExpectOffsetAtToken(result, json, "\"" + dtype + "\"", json.find("dtype") + 6);
  }
  ExpectError(ParseJson(R"({"w":{"dtype":4,"shape":[1],"data_offsets":[0,4]}})", 4),
              StatusCode::kInvalid, "w");
}

TEST(SafetensorsHeaderErrors, ShapeValuesMustBeNonNegativeIntegers) {
  for (const std::string dim : {"2.0", "2e0", "-1", "-0", "18446744073709551616", "1e30", "true",
                                "null", "\"2\"", "[2]", "{}"}) {
    SCOPED_TRACE(dim);
    const std::string json =
        R"({"w":{"dtype":"U8","shape":[)" + dim + R"(],"data_offsets":[0,2]}})";
    const auto result = ParseJson(json, 2);
    ExpectError(result, StatusCode::kInvalid, "w");
    ExpectOffsetAtToken(result, json, dim, json.find("shape"));
  }
  ExpectError(ParseJson(R"({"w":{"dtype":"U8","shape":2,"data_offsets":[0,2]}})", 2),
              StatusCode::kInvalid, "w");
}

TEST(SafetensorsHeaderErrors, ShapeProductOverflow) {
  // 2^32 * 2^32 = 2^64.
  ExpectError(
      ParseJson(R"({"w":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}})"),
      StatusCode::kInvalid, "w");
  // 2^62 elements fit, 2^62 * 4 bytes do not.
  ExpectError(
      ParseJson(R"({"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})"),
      StatusCode::kInvalid, "w");
}

TEST(SafetensorsHeaderErrors, DataOffsetsShape) {
  for (const std::string offsets : {"[0]", "[0,4,8]", "[]", "[0,4.0]", "[-4,0]", "4", "[0,\"4\"]",
                                    "[0,18446744073709551616]"}) {
    SCOPED_TRACE(offsets);
    const std::string json = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":)" + offsets + "}}";
    ExpectError(ParseJson(json, 4), StatusCode::kInvalid, "w");
  }
}

TEST(SafetensorsHeaderErrors, DataOffsetsOutOfRange) {
  const auto result = ParseJson(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4);
  ExpectError(result, StatusCode::kTruncated, "w");
  ExpectError(ParseJson(R"({"w":{"dtype":"U8","shape":[0],"data_offsets":[9,9]}})", 4),
              StatusCode::kTruncated, "w");
  // end near 2^64: the range check must not wrap.
  ExpectError(ParseJson(R"({"w":{"dtype":"U8","shape":[2],)"
                        R"("data_offsets":[18446744073709551614,18446744073709551615]}})"),
              StatusCode::kInvalid, "w");
  ExpectError(ParseJson(R"({"w":{"dtype":"U8","shape":[1],)"
                        R"("data_offsets":[18446744073709551614,18446744073709551615]}})"),
              StatusCode::kTruncated, "w");
}

TEST(SafetensorsHeaderErrors, BeginAfterEnd) {
  ExpectError(ParseJson(R"({"w":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}})", 4),
              StatusCode::kInvalid, "w");
}

TEST(SafetensorsHeaderErrors, SizeMismatch) {
  // 3 x F16 = 6 bytes, offsets hold 8.
  const auto result = ParseJson(R"({"w":{"dtype":"F16","shape":[3],"data_offsets":[0,8]}})", 8);
  ExpectError(result, StatusCode::kInvalid, "w");
  EXPECT_NE(result.status().message().find("6"), std::string::npos) << result.status().ToString();
}

TEST(SafetensorsHeaderErrors, OverlappingTensors) {
  const std::string json = R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                           R"("b":{"dtype":"U8","shape":[8],"data_offsets":[4,12]}})";
  const auto result = ParseJson(json, 12);
  ExpectError(result, StatusCode::kInvalid, "b");
  EXPECT_EQ(result.status().byte_offset(), 8 + json.size() + 4);
  EXPECT_NE(result.status().message().find("'a'"), std::string::npos) << result.status().ToString();
  // A zero-size tensor inside another one also overlaps it.
  ExpectError(ParseJson(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                        R"("e":{"dtype":"U8","shape":[0],"data_offsets":[3,3]}})",
                        8),
              StatusCode::kInvalid, "e");
  // The same range twice.
  ExpectError(ParseJson(R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                        R"("b":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}})",
                        8),
              StatusCode::kInvalid, "b");
}

TEST(SafetensorsHeaderErrors, HoleBetweenTensors) {
  const std::string json = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                           R"("b":{"dtype":"U8","shape":[4],"data_offsets":[8,12]}})";
  const auto result = ParseJson(json, 12);
  ExpectError(result, StatusCode::kInvalid, "b");
  EXPECT_EQ(result.status().byte_offset(), 8 + json.size() + 4);
  // A hole before the first tensor.
  const std::string late = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})";
  const auto late_result = ParseJson(late, 6);
  ExpectError(late_result, StatusCode::kInvalid, "a");
  EXPECT_EQ(late_result.status().byte_offset(), 8 + late.size());
}

TEST(SafetensorsHeaderErrors, TrailingBytesAfterLastTensor) {
  const std::string json = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})";
  const auto result = ParseJson(json, 5);
  ExpectError(result, StatusCode::kInvalid, "a");
  EXPECT_EQ(result.status().byte_offset(), 8 + json.size() + 4);
  ExpectError(ParseJson("{}", 1), StatusCode::kInvalid);
}

TEST(SafetensorsHeaderErrors, ExtraAndMissingKeys) {
  const std::string extra = R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"layout":"x"}})";
  const auto result = ParseJson(extra, 1);
  ExpectError(result, StatusCode::kInvalid, "w");
  ExpectOffsetAtToken(result, extra, "\"layout\"");
  ExpectError(ParseJson(R"({"w":{"dtype":"U8","shape":[1]}})", 1), StatusCode::kInvalid, "w");
  ExpectError(ParseJson(R"({"w":{"shape":[1],"data_offsets":[0,1]}})", 1), StatusCode::kInvalid,
              "w");
  ExpectError(ParseJson(R"({"w":{"dtype":"U8","data_offsets":[0,1]}})", 1), StatusCode::kInvalid,
              "w");
  ExpectError(ParseJson(R"({"w":{}})"), StatusCode::kInvalid, "w");
}

TEST(SafetensorsHeaderErrors, DuplicateTensorNames) {
  const std::string json = R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                           R"("w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
  const auto result = ParseJson(json, 2);
  ExpectError(result, StatusCode::kInvalid, "w");
  ExpectOffsetAtToken(result, json, "\"w\"", 2);  // the second "w"
}

TEST(SafetensorsHeaderErrors, DuplicateFieldsAndMetadata) {
  ExpectError(ParseJson(R"({"w":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1),
              StatusCode::kInvalid, "w");
  ExpectError(ParseJson(R"({"w":{"dtype":"U8","shape":[1],"shape":[1],"data_offsets":[0,1]}})", 1),
              StatusCode::kInvalid, "w");
  ExpectError(ParseJson(R"({"__metadata__":{},"__metadata__":{}})"), StatusCode::kInvalid);
  ExpectError(ParseJson(R"({"__metadata__":{"a":"1","a":"2"}})"), StatusCode::kInvalid);
}

TEST(SafetensorsHeaderErrors, NonStringMetadata) {
  for (const std::string value : {"1", "1.5", "true", "null", "[]", R"({"x":"y"})", R"(["a"])"}) {
    SCOPED_TRACE(value);
    const std::string json = R"({"__metadata__":{"k":)" + value + "}}";
    const auto result = ParseJson(json);
    ExpectError(result, StatusCode::kInvalid);
    EXPECT_NE(result.status().message().find("\"k\""), std::string::npos)
        << result.status().ToString();
  }
  for (const std::string metadata : {"[]", "\"x\"", "null", "1"}) {
    SCOPED_TRACE(metadata);
    ExpectError(ParseJson(R"({"__metadata__":)" + metadata + "}"), StatusCode::kInvalid);
  }
}

TEST(SafetensorsHeaderErrors, TooManyTensors) {
  ParseLimits limits;
  limits.max_item_count = 2;
  const std::string two = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                          R"("b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
  EXPECT_TRUE(ParseJson(two, 2, limits).ok());
  const std::string three = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                            R"("b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},)"
                            R"("c":{"dtype":"U8","shape":[1],"data_offsets":[2,3]}})";
  const auto result = ParseJson(three, 3, limits);
  ExpectError(result, StatusCode::kLimitExceeded);
  ExpectOffsetAtToken(result, three, "\"c\"");
  // Metadata entries and shape ranks count against the same limit.
  ExpectError(ParseJson(R"({"__metadata__":{"a":"1","b":"2","c":"3"}})", 0, limits),
              StatusCode::kLimitExceeded);
  ExpectError(ParseJson(R"({"w":{"dtype":"U8","shape":[1,1,1],"data_offsets":[0,1]}})", 1, limits),
              StatusCode::kLimitExceeded, "w");
}

TEST(SafetensorsHeaderErrors, DeepNestingStopsAtTheFirstLevel) {
  // 100,000 nested arrays: refused when the first one opens, without recursion.
  const std::string json =
      R"({"__metadata__":{"k":)" + std::string(100000, '[') + std::string(100000, ']') + "}}";
  ExpectError(ParseJson(json), StatusCode::kInvalid);
}

TEST(SafetensorsHeaderErrors, ControlCharactersStayOutOfTheMessage) {
  // A tensor name with a newline and an escape: the message stays one line.
  const std::string json = R"({"a\nb\u001b":{"dtype":"X","shape":[1],"data_offsets":[0,1]}})";
  const auto result = ParseJson(json, 1);
  ExpectError(result, StatusCode::kUnsupported, "a\\x0ab\\x1b");
}

// ---------------------------------------------------------------------------
// Dtypes and byte sources.

TEST(Dtype, NamesRoundTrip) {
  for (int i = 0; i <= static_cast<int>(Dtype::kF8E8m0); ++i) {
    const auto dtype = static_cast<Dtype>(i);
    EXPECT_EQ(DtypeFromName(DtypeName(dtype)), dtype);
  }
  EXPECT_EQ(DtypeFromName("bf16"), std::nullopt);
  EXPECT_EQ(DtypeFromName("F32 "), std::nullopt);
  EXPECT_TRUE(IsFloat(Dtype::kBf16));
  EXPECT_TRUE(IsFloat(Dtype::kF64));
  EXPECT_FALSE(IsFloat(Dtype::kF8E4m3));
  EXPECT_FALSE(IsFloat(Dtype::kI32));
  EXPECT_EQ(DtypeBytes(Dtype::kF8E8m0), 1u);
  EXPECT_EQ(DtypeBytes(Dtype::kU64), 8u);
}

TEST(MessageSafe, EscapesAndCuts) {
  EXPECT_EQ(MessageSafe("plain.name"), "plain.name");
  EXPECT_EQ(MessageSafe(std::string("a\n\x7f\0b", 5)), "a\\x0a\\x7f\\x00b");
  EXPECT_EQ(MessageSafe("abcdef", 3), "abc...");
}

TEST(MemorySource, BoundsChecked) {
  const std::vector<std::byte> bytes(10, std::byte{7});
  MemorySource source(bytes);
  EXPECT_EQ(source.name(), "<memory>");
  std::vector<std::byte> out(4);
  EXPECT_TRUE(source.ReadAt(6, out).ok());
  EXPECT_EQ(out[3], std::byte{7});
  EXPECT_TRUE(source.ReadAt(10, std::span<std::byte>()).ok());
  const Status past = source.ReadAt(7, out);
  EXPECT_EQ(past.code(), StatusCode::kTruncated);
  EXPECT_EQ(past.byte_offset(), 7u);
  EXPECT_EQ(source.ReadAt(std::numeric_limits<uint64_t>::max(), out).code(),
            StatusCode::kTruncated);
}

// A file under the system temp directory, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(std::string_view contents) {
    std::string pattern = (fs::temp_directory_path() / "amn_byte_source_XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    EXPECT_GE(fd, 0);
    if (!contents.empty()) {
      EXPECT_EQ(::write(fd, contents.data(), contents.size()),
                static_cast<ssize_t>(contents.size()));
    }
    ::close(fd);
    path_ = pattern;
  }
  ~TempFile() { fs::remove(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(FileSource, ReadsAndBoundsChecks) {
  TempFile file("0123456789");
  auto source = FileSource::Open(file.path());
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->size(), 10u);
  EXPECT_EQ((*source)->name(), file.path().string());
  std::string out(3, '\0');
  ASSERT_TRUE((*source)->ReadAt(7, std::as_writable_bytes(std::span(out))).ok());
  EXPECT_EQ(out, "789");
  const Status past = (*source)->ReadAt(8, std::as_writable_bytes(std::span(out)));
  EXPECT_EQ(past.code(), StatusCode::kTruncated);
  EXPECT_NE(past.message().find(file.path().string()), std::string::npos);
}

TEST(FileSource, RefusesMissingFilesAndDirectories) {
  const auto missing = FileSource::Open(fs::temp_directory_path() / "amn_no_such_file_here");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIo);
  const auto dir = FileSource::Open(fs::temp_directory_path());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), StatusCode::kInvalidArgument);
}

TEST(MappedFile, MapsFilesIncludingEmptyOnes) {
  TempFile empty("");
  auto mapped_empty = MappedFile::Open(empty.path());
  ASSERT_TRUE(mapped_empty.ok()) << mapped_empty.status().ToString();
  EXPECT_TRUE(mapped_empty->bytes().empty());
  EXPECT_EQ(mapped_empty->path(), empty.path());

  TempFile file("abc");
  auto mapped = MappedFile::Open(file.path());
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  ASSERT_EQ(mapped->bytes().size(), 3u);
  EXPECT_EQ(mapped->bytes()[2], std::byte{'c'});

  // Moves hand the mapping over; the source is left empty.
  MappedFile moved = std::move(*mapped);
  EXPECT_EQ(moved.bytes().size(), 3u);
  EXPECT_TRUE(mapped->bytes().empty());
  moved = std::move(*mapped_empty);
  EXPECT_TRUE(moved.bytes().empty());

  EXPECT_EQ(MappedFile::Open(fs::temp_directory_path()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(MappedFile::Open(fs::temp_directory_path() / "amn_no_such_file_here").status().code(),
            StatusCode::kIo);
}

}  // namespace
}  // namespace amn::formats
