// NPY / NPZ parsing. Three anchors: files numpy writes at test time
// (tests/npy_cases.py, with numpy's own row-major little-endian bytes for
// each array, gathered here through the parsed strides and byte order), the
// Gemma Scope NPZ fixture with its independent reference, and headers built
// byte by byte from the NPY format description, valid and malformed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/npy.h"
#include "tests/array_view_bytes.h"
#include "tests/fixtures.h"

namespace amn::formats {
namespace {

namespace fs = std::filesystem;
using test::ReadBytes;

std::span<const std::byte> AsBytes(const std::vector<uint8_t>& bytes) {
  return std::as_bytes(std::span(bytes));
}

Result<ArrayFile> ParseNpyBytes(const std::vector<uint8_t>& bytes, ParseLimits limits = {}) {
  MemorySource source(AsBytes(bytes), "t.npy");
  return ReadNpy(source, "t", limits);
}

// ---- Files written by numpy --------------------------------------------

class NumpyWritten : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::path(::testing::TempDir()) / ("amn_npy_cases_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) return;
    has_numpy_ = true;
    const std::string command = "/usr/bin/python3 '" + std::string(AMN_PROJECT_ROOT) +
                                "/tests/npy_cases.py' '" + dir_.string() + "'";
    script_ok_ = std::system(command.c_str()) == 0;
    if (script_ok_) {
      std::ifstream in(dir_ / "manifest.json");
      manifest_ = nlohmann::json::parse(in);
    }
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  void SetUp() override {
    if (!has_numpy_) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
    ASSERT_TRUE(script_ok_) << "tests/npy_cases.py failed";
  }

  // Compares a parsed array with a manifest entry: dtype, shape, byte
  // order, and every element's bytes against numpy's.
  static void ExpectMatches(const ArrayEntry& entry, const nlohmann::json& want,
                            const std::vector<uint8_t>& member) {
    SCOPED_TRACE(want["name"].get<std::string>());
    EXPECT_EQ(entry.name, want["name"].get<std::string>());
    EXPECT_EQ(DtypeName(entry.dtype), want["dtype"].get<std::string>());
    EXPECT_EQ(entry.shape, want["shape"].get<std::vector<uint64_t>>());
    EXPECT_EQ(entry.big_endian, want["big_endian"].get<bool>());
    if (want["fortran"].get<bool>()) {
      // Column-major: the first index steps by one element.
      uint64_t expected = 1;
      for (size_t k = 0; k < entry.shape.size(); ++k) {
        EXPECT_EQ(entry.strides[k], expected) << "dimension " << k;
        expected *= entry.shape[k];
      }
      EXPECT_FALSE(entry.contiguous());
    } else {
      EXPECT_TRUE(entry.contiguous());
    }
    EXPECT_EQ(test::RowMajorLeBytes(entry, member), ReadBytes(dir_ / want["expected"].get<std::string>()));
  }

  static inline fs::path dir_;
  static inline bool has_numpy_ = false;
  static inline bool script_ok_ = false;
  static inline nlohmann::json manifest_;
};

TEST_F(NumpyWritten, NpyFilesOfEveryKind) {
  ASSERT_GE(manifest_["npy"].size(), 30u);
  for (const auto& want : manifest_["npy"]) {
    const fs::path path = dir_ / want["file"].get<std::string>();
    SCOPED_TRACE(path.string());
    auto source = FileSource::Open(path);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    const auto file = ReadNpy(**source, want["name"].get<std::string>(), {});
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_EQ(file->format, "npy");
    ASSERT_EQ(file->members.size(), 1u);
    ASSERT_EQ(file->arrays.size(), 1u);
    EXPECT_EQ(file->members[0].bytes, fs::file_size(path));
    EXPECT_FALSE(file->members[0].deflated);
    const std::vector<uint8_t> bytes = ReadBytes(path);
    // The header the parser reports has the version numpy wrote.
    const auto header = ParseNpyHeader(AsBytes(bytes), path.string(), {});
    ASSERT_TRUE(header.ok()) << header.status().ToString();
    EXPECT_EQ(header->major, want["major"].get<int>());
    EXPECT_EQ(header->data_offset, file->arrays[0].data_offset);
    ExpectMatches(file->arrays[0], want, bytes);
  }
}

// The member's whole uncompressed data: in place for a stored member (so
// file_offset is checked too), inflated by the archive otherwise.
std::vector<uint8_t> MemberData(ZipArchive& archive, const ArrayMember& member,
                                const std::vector<uint8_t>& file_bytes) {
  if (!member.deflated) {
    EXPECT_LE(member.file_offset + member.bytes, file_bytes.size());
    return std::vector<uint8_t>(file_bytes.begin() + member.file_offset,
                                file_bytes.begin() + member.file_offset + member.bytes);
  }
  const ZipEntry* entry = archive.Find(member.name);
  EXPECT_NE(entry, nullptr) << member.name;
  if (entry == nullptr) return {};
  EXPECT_EQ(entry->index, member.zip_index);
  const auto data = archive.ReadEntry(*entry, member.bytes);
  EXPECT_TRUE(data.ok()) << data.status().ToString();
  if (!data.ok()) return {};
  return std::vector<uint8_t>(data->begin(), data->end());
}

TEST_F(NumpyWritten, SavezAndSavezCompressed) {
  ASSERT_EQ(manifest_["npz"].size(), 2u);
  for (const auto& archive_want : manifest_["npz"]) {
    const fs::path path = dir_ / archive_want["file"].get<std::string>();
    SCOPED_TRACE(path.string());
    const bool compressed = path.stem() == "deflated";
    auto archive = ZipArchive::OpenFile(path, {});
    ASSERT_TRUE(archive.ok()) << archive.status().ToString();
    const auto file = ReadNpz(**archive, {});
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_EQ(file->format, "npz");
    const auto& wants = archive_want["arrays"];
    ASSERT_EQ(file->arrays.size(), wants.size());
    ASSERT_EQ(file->members.size(), wants.size());
    const std::vector<uint8_t> file_bytes = ReadBytes(path);
    for (size_t i = 0; i < wants.size(); ++i) {  // archive order is savez's order
      const ArrayEntry& entry = file->arrays[i];
      ASSERT_LT(entry.member, file->members.size());
      const ArrayMember& member = file->members[entry.member];
      EXPECT_EQ(member.name, wants[i]["name"].get<std::string>() + ".npy");
      EXPECT_EQ(member.deflated, compressed);
      ExpectMatches(entry, wants[i], MemberData(**archive, member, file_bytes));
    }
  }
}

// The enumerator names npy_cases.py writes.
StatusCode CodeNamed(const std::string& name) {
  if (name == "kTruncated") return StatusCode::kTruncated;
  if (name == "kInvalid") return StatusCode::kInvalid;
  if (name == "kUnsupported") return StatusCode::kUnsupported;
  if (name == "kLimitExceeded") return StatusCode::kLimitExceeded;
  ADD_FAILURE() << "unknown status code " << name;
  return StatusCode::kOk;
}

TEST_F(NumpyWritten, MalformedArchivesGiveTheirStatusCode) {
  ASSERT_GE(manifest_["bad_npz"].size(), 18u);
  for (const auto& want : manifest_["bad_npz"]) {
    const fs::path path = dir_ / want["file"].get<std::string>();
    SCOPED_TRACE(path.string());
    auto archive = ZipArchive::OpenFile(path, {});
    ASSERT_TRUE(archive.ok()) << archive.status().ToString();
    const auto file = ReadNpz(**archive, {});
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.status().code(), CodeNamed(want["code"].get<std::string>()))
        << file.status().ToString();
    EXPECT_NE(file.status().message().find(path.filename().string()), std::string::npos)
        << file.status().ToString();
  }
}

TEST_F(NumpyWritten, NpzHeaderLengthIsBoundedByTheLimit) {
  for (const char* name : {"stored.npz", "deflated.npz"}) {
    auto archive = ZipArchive::OpenFile(dir_ / name, {});
    ASSERT_TRUE(archive.ok()) << archive.status().ToString();
    const auto file = ReadNpz(**archive, ParseLimits{.max_header_bytes = 64});
    ASSERT_FALSE(file.ok()) << name;
    EXPECT_EQ(file.status().code(), StatusCode::kLimitExceeded) << file.status().ToString();
    EXPECT_EQ(file.status().tensor(), "W_dec");
  }
}

// ---- The Gemma Scope fixture ------------------------------------------

struct ReferenceArray {
  std::string name;
  std::vector<uint64_t> full_shape;
  uint32_t dtype_id = 0;
  std::vector<uint8_t> data;
};

// gemma_scope_reference.bin (fixtures/README.md, npz_reference).
std::vector<ReferenceArray> ParseReference(const std::vector<uint8_t>& bin) {
  size_t at = 0;
  const auto u32 = [&] {
    EXPECT_LE(at + 4, bin.size());
    const uint32_t v = at + 4 <= bin.size() ? test::LoadLe32(&bin[at]) : 0;
    at += 4;
    return v;
  };
  std::vector<ReferenceArray> arrays(u32());
  for (ReferenceArray& a : arrays) {
    const uint32_t name_len = u32();
    if (at + name_len > bin.size()) break;
    a.name.assign(bin.begin() + at, bin.begin() + at + name_len);
    at += name_len;
    a.full_shape.resize(u32());
    for (uint64_t& d : a.full_shape) d = u32() | static_cast<uint64_t>(u32()) << 32;
    a.dtype_id = u32();
    const uint32_t data_len = u32();
    if (at + data_len > bin.size()) break;
    a.data.assign(bin.begin() + at, bin.begin() + at + data_len);
    at += data_len;
  }
  EXPECT_EQ(at, bin.size());
  return arrays;
}

TEST(NpzFixture, GemmaScopeSmallMatchesItsReference) {
  const auto files = test::FixtureFiles("npz_reference", ".npz");
  AMN_SKIP_WITHOUT_FIXTURES(files, "npz_reference");
  const fs::path npz = test::FixturesDir() / "npz_reference" / "gemma_scope_small.npz";
  const auto reference =
      ParseReference(ReadBytes(test::FixturesDir() / "npz_reference" / "gemma_scope_reference.bin"));
  ASSERT_EQ(reference.size(), 5u);
  auto archive = ZipArchive::OpenFile(npz, {});
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  const auto file = ReadNpz(**archive, {});
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->arrays.size(), reference.size());
  const std::vector<uint8_t> file_bytes = ReadBytes(npz);
  constexpr uint32_t kReferenceF32 = 11;
  for (const ReferenceArray& want : reference) {
    SCOPED_TRACE(want.name);
    const auto found = std::find_if(file->arrays.begin(), file->arrays.end(),
                                    [&](const ArrayEntry& a) { return a.name == want.name; });
    ASSERT_NE(found, file->arrays.end());
    EXPECT_EQ(want.dtype_id, kReferenceF32);
    EXPECT_EQ(found->dtype, Dtype::kF32);
    EXPECT_EQ(found->shape, std::vector<uint64_t>{8});
    EXPECT_FALSE(found->big_endian);
    const ArrayMember& member = file->members[found->member];
    EXPECT_FALSE(member.deflated);
    EXPECT_EQ(test::RowMajorLeBytes(*found, MemberData(**archive, member, file_bytes)), want.data);
  }
}

// ---- Hand-built headers -------------------------------------------------

// An NPY file: magic, version, little-endian header length, `text` padded
// with spaces and '\n' to a multiple of 64 (as numpy does), then `data`.
std::vector<uint8_t> Npy(const std::string& text, const std::vector<uint8_t>& data = {},
                         uint8_t major = 1, bool pad = true) {
  const size_t preamble = major == 1 ? 10 : 12;
  std::string header = text;
  if (pad) {
    while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
  }
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  for (size_t i = 0; i < preamble - 8; ++i) out.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// Where the data starts in a file made by Npy().
uint64_t HeaderEnd(const std::vector<uint8_t>& npy) {
  if (npy[6] == 1) return 10 + (npy[8] | npy[9] << 8);
  return 12 + (npy[8] | npy[9] << 8 | npy[10] << 16 | static_cast<uint64_t>(npy[11]) << 24);
}

std::string Dict(const std::string& descr, const std::string& fortran, const std::string& shape) {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

std::vector<uint8_t> Bytes(size_t n) {
  std::vector<uint8_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(i * 7 + 1);
  return out;
}

TEST(NpyHeader, FortranStridesAndByteOrderFromHandBuiltBytes) {
  // '>i2' (2, 3) in Fortran order: memory holds column 0, column 1, column 2.
  // Elements, big-endian: a[r][c] = 0x0100 * (10 * r + c) + r + c.
  std::vector<uint8_t> data;
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 2; ++r) {
      data.push_back(static_cast<uint8_t>(10 * r + c));
      data.push_back(static_cast<uint8_t>(r + c));
    }
  }
  const auto bytes = Npy(Dict("'>i2'", "True", "(2, 3)"), data);
  const auto file = ParseNpyBytes(bytes);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const ArrayEntry& a = file->arrays[0];
  EXPECT_EQ(a.dtype, Dtype::kI16);
  EXPECT_TRUE(a.big_endian);
  EXPECT_EQ(a.shape, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(a.strides, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(a.elements, 6u);
  EXPECT_EQ(a.data_offset, 128u);  // 10 + 58 bytes of dict, padded to 64-byte units
  EXPECT_EQ(a.storage_elements, 6u);
  // Row-major little-endian: a[0][0..2], a[1][0..2], low byte first.
  const std::vector<uint8_t> want = {0, 0, 1, 1, 2, 2, 1, 10, 2, 11, 3, 12};
  EXPECT_EQ(test::RowMajorLeBytes(a, bytes), want);
}

TEST(NpyHeader, AcceptsThePythonSpellingsNumpyMightWrite) {
  struct Case {
    std::string text;
    Dtype dtype;
    std::vector<uint64_t> shape;
  };
  const std::vector<Case> cases = {
      {"{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 3)}", Dtype::kF32, {2, 3}},
      {"{'shape': (4,), 'descr': '|u1', 'fortran_order': False}", Dtype::kU8, {4}},
      {"{ 'descr' : '=f8' ,'fortran_order':False,'shape':( 1 , 2 , ) , }", Dtype::kF64, {1, 2}},
      {"{'descr': '|b1', 'fortran_order': False, 'shape': (3L, 1L), }", Dtype::kBool, {3, 1}},
      {"{'descr': '<u8', 'fortran_order': False, 'shape': (), }", Dtype::kU64, {}},
      {"{'descr': '|V2', 'fortran_order': False, 'shape': (0,), }", Dtype::kBf16, {0}},
      {"{'descr': '<V2', 'fortran_order': False,\n 'shape': (1,), }", Dtype::kBf16, {1}},
      {"{'descr': '|i1', 'fortran_order': False, 'shape': (0, 18446744073709551615), }",
       Dtype::kI8, {0, 18446744073709551615u}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    uint64_t elements = 1;
    for (uint64_t d : c.shape) elements *= d;
    const auto bytes = Npy(c.text, Bytes(elements * DtypeBytes(c.dtype)));
    const auto file = ParseNpyBytes(bytes);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_EQ(file->arrays[0].dtype, c.dtype);
    EXPECT_EQ(file->arrays[0].shape, c.shape);
    EXPECT_EQ(file->arrays[0].elements, elements);
    EXPECT_FALSE(file->arrays[0].big_endian);
  }
}

TEST(NpyHeader, VersionsTwoAndThreeHaveU32Lengths) {
  for (uint8_t major : {2, 3}) {
    const auto bytes = Npy(Dict("'<f4'", "False", "(3,)"), Bytes(12), major);
    // 57 bytes of dict after a 12-byte preamble, padded to 128.
    EXPECT_EQ(bytes[8] | bytes[9] << 8 | bytes[10] << 16 | bytes[11] << 24, 128 - 12);
    const auto header = ParseNpyHeader(AsBytes(bytes), "t.npy", {});
    ASSERT_TRUE(header.ok()) << header.status().ToString();
    EXPECT_EQ(header->major, major);
    EXPECT_EQ(header->data_offset, 128u);
    EXPECT_EQ(header->elements, 3u);
    const auto total = NpyHeaderBytes(AsBytes(bytes), "t.npy");
    ASSERT_TRUE(total.ok());
    EXPECT_EQ(*total, 128u);
  }
}

struct BadCase {
  const char* what;
  std::vector<uint8_t> bytes;
  StatusCode code;
};

std::vector<BadCase> BadFiles() {
  const std::string shape = "(2,)";
  const auto ok = [&](const std::string& text, size_t data = 8) { return Npy(text, Bytes(data)); };
  std::vector<BadCase> cases = {
      {"missing key", ok("{'descr': '<f4', 'shape': (2,), }"), StatusCode::kInvalid},
      {"extra key", ok("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1, }"),
       StatusCode::kInvalid},
      {"duplicate key", ok("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}"),
       StatusCode::kInvalid},
      {"non-string key", ok("{descr: '<f4', 'fortran_order': False, 'shape': (2,)}"), StatusCode::kInvalid},
      {"empty dict", ok("{}"), StatusCode::kInvalid},
      {"not a dict", ok("['<f4', False, (2,)]"), StatusCode::kInvalid},
      {"unclosed dict", ok("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "), StatusCode::kInvalid},
      {"no comma between items", ok("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}"),
       StatusCode::kInvalid},
      {"text after the dict", ok(Dict("'<f4'", "False", shape) + " x"), StatusCode::kInvalid},
      {"unterminated string", ok("{'descr: '<f4', 'fortran_order': False, 'shape': (2,)}"),
       StatusCode::kInvalid},
      {"unterminated string at the end", Npy("{'descr': '<f4", Bytes(8), 1, false), StatusCode::kInvalid},
      {"mismatched quotes", ok("{'descr\": '<f4', 'fortran_order': False, 'shape': (2,)}"),
       StatusCode::kInvalid},
      {"escape in a string", ok(Dict("'<f\\x34'", "False", shape)), StatusCode::kInvalid},
      {"fortran_order not a bool", ok(Dict("'<f4'", "1", shape)), StatusCode::kInvalid},
      {"fortran_order a string", ok(Dict("'<f4'", "'False'", shape)), StatusCode::kInvalid},
      {"fortran_order Truex", ok(Dict("'<f4'", "Truex", shape)), StatusCode::kInvalid},
      {"descr not a string", ok(Dict("4", "False", shape)), StatusCode::kInvalid},
      {"shape a list", ok(Dict("'<f4'", "False", "[2]")), StatusCode::kInvalid},
      {"shape an int", ok(Dict("'<f4'", "False", "2")), StatusCode::kInvalid},
      {"shape (n) without comma", ok(Dict("'<f4'", "False", "(2)")), StatusCode::kInvalid},
      {"negative dimension", ok(Dict("'<f4'", "False", "(-2,)")), StatusCode::kInvalid},
      {"dimension overflowing u64", ok(Dict("'<f4'", "False", "(18446744073709551616,)")),
       StatusCode::kInvalid},
      {"element count overflowing", ok(Dict("'<f4'", "False", "(4294967296, 4294967296)")),
       StatusCode::kInvalid},
      {"byte count overflowing", ok(Dict("'<f8'", "False", "(2305843009213693952,)")),
       StatusCode::kInvalid},
      {"overflow beside a zero", ok(Dict("'<f4'", "False", "(0, 4294967296, 4294967296)"), 0),
       StatusCode::kInvalid},
      {"float dimension", ok(Dict("'<f4'", "False", "(2.0,)")), StatusCode::kInvalid},
      {"hex dimension", ok(Dict("'<f4'", "False", "(0x2,)")), StatusCode::kInvalid},
      {"leading zero", ok(Dict("'<f4'", "False", "(02,)")), StatusCode::kInvalid},
      {"underscore", ok(Dict("'<f4'", "False", "(1_0,)")), StatusCode::kInvalid},
      {"double comma", ok(Dict("'<f4'", "False", "(2,,)")), StatusCode::kInvalid},
      {"65 dimensions", ok(Dict("'<f4'", "False", "(" + [] {
                              std::string s;
                              for (int i = 0; i < 65; ++i) s += "1, ";
                              return s;
                            }() + "2)")),
       StatusCode::kInvalid},
      {"complex", ok(Dict("'<c8'", "False", shape)), StatusCode::kUnsupported},
      {"object", ok(Dict("'|O'", "False", shape)), StatusCode::kUnsupported},
      {"unicode", ok(Dict("'<U3'", "False", shape)), StatusCode::kUnsupported},
      {"bytes", ok(Dict("'|S4'", "False", shape)), StatusCode::kUnsupported},
      {"datetime", ok(Dict("'<M8[ns]'", "False", shape)), StatusCode::kUnsupported},
      {"long double", ok(Dict("'<f16'", "False", shape)), StatusCode::kUnsupported},
      {"big-endian void", ok(Dict("'>V2'", "False", shape)), StatusCode::kUnsupported},
      {"other void", ok(Dict("'|V4'", "False", shape)), StatusCode::kUnsupported},
      {"no byte order", ok(Dict("'f4'", "False", shape)), StatusCode::kUnsupported},
      {"empty descr", ok(Dict("''", "False", shape)), StatusCode::kUnsupported},
      {"structured descr", ok(Dict("[('a', '<f4')]", "False", shape)), StatusCode::kUnsupported},
      {"data shorter", ok(Dict("'<f4'", "False", shape), 7), StatusCode::kTruncated},
      {"data longer", ok(Dict("'<f4'", "False", shape), 9), StatusCode::kInvalid},
  };
  // Header length past the end of the file.
  auto past = ok(Dict("'<f4'", "False", shape));
  past[8] = 0xff;
  past[9] = 0x7f;
  cases.push_back({"header length past the file", past, StatusCode::kTruncated});
  auto magic = ok(Dict("'<f4'", "False", shape));
  magic[1] = 'n';
  cases.push_back({"wrong magic", magic, StatusCode::kInvalid});
  cases.push_back({"not NPY at all", {'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0, 0}, StatusCode::kInvalid});
  cases.push_back({"only the magic", {0x93, 'N', 'U', 'M', 'P', 'Y'}, StatusCode::kTruncated});
  cases.push_back({"empty file", {}, StatusCode::kTruncated});
  auto v4 = ok(Dict("'<f4'", "False", shape));
  v4[6] = 4;
  cases.push_back({"version 4.0", v4, StatusCode::kUnsupported});
  auto v11 = ok(Dict("'<f4'", "False", shape));
  v11[7] = 1;
  cases.push_back({"version 1.1", v11, StatusCode::kUnsupported});
  auto v0 = ok(Dict("'<f4'", "False", shape));
  v0[6] = 0;
  cases.push_back({"version 0.0", v0, StatusCode::kUnsupported});
  // v2.0 preamble cut inside its u32 length.
  cases.push_back({"v2 preamble cut", {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 64, 0}, StatusCode::kTruncated});
  return cases;
}

TEST(NpyHeader, MalformedHeadersGiveTheirStatusCode) {
  for (const BadCase& c : BadFiles()) {
    SCOPED_TRACE(c.what);
    const auto file = ParseNpyBytes(c.bytes);
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.status().code(), c.code) << file.status().ToString();
    EXPECT_NE(file.status().message().find("t.npy"), std::string::npos) << file.status().ToString();
    EXPECT_EQ(file.status().tensor(), "t") << file.status().ToString();
  }
}

TEST(NpyHeader, ErrorsNameTheOffendingText) {
  const auto extra = ParseNpyBytes(
      Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'bogus': 1, }", Bytes(8)));
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("'bogus'"), std::string::npos);
  EXPECT_EQ(extra.status().byte_offset(), 10u + 56u);  // the key's opening quote
  const auto descr = ParseNpyBytes(Npy(Dict("'<c16'", "False", "(2,)"), Bytes(32)));
  ASSERT_FALSE(descr.ok());
  EXPECT_NE(descr.status().message().find("'<c16'"), std::string::npos);
  const auto structured = ParseNpyBytes(Npy(Dict("[('x', '<i4')]", "False", "(2,)"), Bytes(8)));
  ASSERT_FALSE(structured.ok());
  EXPECT_NE(structured.status().message().find("[('x', '<i4')]"), std::string::npos);
}

TEST(NpyHeader, HeaderLengthIsBoundedByTheLimit) {
  const auto bytes = Npy(Dict("'<f4'", "False", "(2,)"), Bytes(8));
  const uint64_t text_bytes = HeaderEnd(bytes) - 10;
  ParseLimits limits;
  limits.max_header_bytes = text_bytes - 1;
  const auto file = ParseNpyBytes(bytes, limits);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kLimitExceeded) << file.status().ToString();
  limits.max_header_bytes = text_bytes;
  EXPECT_TRUE(ParseNpyBytes(bytes, limits).ok());
  const auto direct = ParseNpyHeader(AsBytes(bytes), "t.npy", ParseLimits{.max_header_bytes = 10});
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.status().code(), StatusCode::kLimitExceeded);
}

TEST(NpyHeader, ShortPrefixesAskForMore) {
  const auto bytes = Npy(Dict("'<f4'", "False", "(2,)"), Bytes(8));
  const auto needed = NpyHeaderBytes(std::span(AsBytes(bytes)).first(10), "t.npy");
  ASSERT_TRUE(needed.ok()) << needed.status().ToString();
  EXPECT_EQ(*needed, HeaderEnd(bytes));
  for (size_t n = 0; n < HeaderEnd(bytes); ++n) {
    const auto header = ParseNpyHeader(AsBytes(bytes).first(n), "t.npy", {});
    ASSERT_FALSE(header.ok()) << n;
    EXPECT_EQ(header.status().code(), StatusCode::kTruncated) << header.status().ToString();
  }
  EXPECT_TRUE(ParseNpyHeader(AsBytes(bytes).first(HeaderEnd(bytes)), "t.npy", {}).ok());
}

// Every cut of a valid file, and every header byte replaced by a few
// troublesome values: an error or a consistent array, never a crash (the
// ASan/UBSan build runs this too).
TEST(NpyHeader, CutAndMutatedFilesNeverCrash) {
  const auto good = Npy(Dict("'<i4'", "True", "(2, 3, 1)"), Bytes(24));
  for (size_t n = 0; n < good.size(); ++n) {
    const auto cut = std::vector<uint8_t>(good.begin(), good.begin() + n);
    const auto file = ParseNpyBytes(cut);
    ASSERT_FALSE(file.ok()) << n;
    EXPECT_TRUE(file.status().code() == StatusCode::kTruncated ||
                file.status().code() == StatusCode::kInvalid)
        << file.status().ToString();
  }
  size_t accepted = 0;
  for (size_t at = 0; at < HeaderEnd(good); ++at) {
    for (const char value : {'\x00', '\xff', '\x80', '\'', '"', '(', ')', ',', '{', '}', ':', '-', '9', ' ',
                          '\\', 'L'}) {
      auto bytes = good;
      bytes[at] = static_cast<uint8_t>(value);
      const auto file = ParseNpyBytes(bytes);
      if (!file.ok()) continue;
      ++accepted;
      const ArrayEntry& a = file->arrays[0];
      EXPECT_TRUE(CheckArrayBounds(a, file->members[0]).ok());
      EXPECT_EQ(a.data_offset + a.elements * DtypeBytes(a.dtype), bytes.size());
    }
  }
  EXPECT_GT(accepted, 0u);  // padding spaces may change freely
}

}  // namespace
}  // namespace amn::formats
