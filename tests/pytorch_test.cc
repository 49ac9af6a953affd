// PyTorch zip checkpoints (formats/pytorch.h): the pth_reference fixtures
// against their reference JSON, and files torch.save writes at test time
// (tests/pytorch_crosscheck.py) against what torch itself says they hold.
// Element bytes are read here, through each entry's strides, straight from
// the file, so the views ReadPytorch describes are checked byte for byte.
#include "formats/pytorch.h"
#include "tests/array_view_bytes.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/byte_source.h"
#include "tests/fixtures.h"

namespace amn::formats {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Result<ArrayFile> ReadFile(const fs::path& path) {
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::OpenFile(path, ParseLimits());
  if (!zip.ok()) return zip.status();
  return ReadPytorch(**zip, ParseLimits());
}

std::string Hex(const std::vector<uint8_t>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

// The entry's bytes read from the whole file (stored members only).
std::vector<uint8_t> RowMajorBytes(const std::vector<uint8_t>& file, const ArrayFile& arrays,
                                   const ArrayEntry& entry) {
  const ArrayMember& member = arrays.members.at(entry.member);
  EXPECT_FALSE(member.deflated) << entry.name;
  EXPECT_LE(member.file_offset + member.bytes, file.size()) << entry.name;
  if (member.file_offset + member.bytes > file.size()) return {};
  return test::RowMajorLeBytes(entry, std::span(file).subspan(member.file_offset, member.bytes));
}

// Names, order, shapes, dtypes and bytes against [{name, shape, dtype, hex}].
void ExpectTensors(const fs::path& path, const ArrayFile& arrays, const Json& tensors,
                   const char* hex_key) {
  const std::vector<uint8_t> file = test::ReadBytes(path);
  ASSERT_EQ(arrays.arrays.size(), tensors.size()) << path;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ArrayEntry& entry = arrays.arrays[i];
    const Json& want = tensors[i];
    EXPECT_EQ(entry.name, want.at("name").get<std::string>()) << path;
    EXPECT_EQ(entry.shape, want.at("shape").get<std::vector<uint64_t>>()) << entry.name;
    EXPECT_EQ(DtypeName(entry.dtype), want.at("dtype").get<std::string>()) << entry.name;
    uint64_t elements = 1;
    for (uint64_t d : entry.shape) elements *= d;
    EXPECT_EQ(entry.elements, elements) << entry.name;
    EXPECT_EQ(Hex(RowMajorBytes(file, arrays, entry)), want.at(hex_key).get<std::string>())
        << path << ": " << entry.name;
  }
}

TEST(Pytorch, ReferenceFixtures) {
  const auto files = test::FixtureFiles("pth_reference", ".pth");
  AMN_SKIP_WITHOUT_FIXTURES(files, "pth_reference");
  for (const fs::path& path : files) {
    const fs::path ref_path = path.parent_path() / (path.stem().string() + "_reference.json");
    std::ifstream ref_in(ref_path);
    ASSERT_TRUE(ref_in.good()) << ref_path;
    const Json ref = Json::parse(ref_in);
    Result<ArrayFile> arrays = ReadFile(path);
    ASSERT_TRUE(arrays.ok()) << arrays.status().ToString();
    EXPECT_EQ(arrays->format, "pytorch");
    EXPECT_EQ(arrays->metadata.at("pytorch.version"), "3");
    ExpectTensors(path, *arrays, ref.at("tensors"), "data_hex");
    // The fixture README: weight_ih_l0 [n, 1] has stride (1, 1).
    EXPECT_EQ(arrays->arrays[0].strides, (std::vector<uint64_t>{1, 1}));
    if (path.filename() == "algzoo_rnn_small.pth") {
      // Two tensors share storage 0 (10 floats), the second from element 2.
      ASSERT_EQ(arrays->members.size(), 2u);
      EXPECT_EQ(arrays->members[0].name, "archive/data/0");
      EXPECT_EQ(arrays->members[0].bytes, 40u);
      EXPECT_EQ(arrays->members[1].name, "archive/data/1");
      EXPECT_EQ(arrays->arrays[0].member, 0u);
      EXPECT_EQ(arrays->arrays[1].member, 0u);
      EXPECT_EQ(arrays->arrays[1].storage_offset, 2u);
      EXPECT_EQ(arrays->arrays[1].storage_elements, 10u);
      EXPECT_EQ(arrays->arrays[2].member, 1u);
    } else {
      EXPECT_EQ(arrays->members.size(), 3u);
      EXPECT_EQ(arrays->members[0].name.rfind("one_layer_16_hidden_94_acc_2nd_argmax/data/", 0), 0u);
    }
    for (const ArrayEntry& entry : arrays->arrays) EXPECT_FALSE(entry.big_endian);

    auto source = FileSource::Open(path);
    ASSERT_TRUE(source.ok());
    EXPECT_FALSE(LooksLikeLegacyTorch(**source));
  }
}

std::string Quote(const fs::path& path) { return "'" + path.string() + "'"; }

class GeneratedFiles : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("amn_pytorch_test_" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    const std::string script = std::string(AMN_PROJECT_ROOT) + "/tests/pytorch_crosscheck.py";
    const int status = std::system(("/usr/bin/python3 " + Quote(script) + " " + Quote(*dir_) +
                                    " >/dev/null 2>&1").c_str());
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      std::ifstream in(*dir_ / "expected.json");
      expected_ = new Json(Json::parse(in));
    }
  }
  static void TearDownTestSuite() {
    std::error_code ignored;
    fs::remove_all(*dir_, ignored);
    delete dir_;
    delete expected_;
    expected_ = nullptr;
  }
  void SetUp() override {
    if (expected_ == nullptr) GTEST_SKIP() << "/usr/bin/python3 with torch not available";
  }
  static fs::path Path(const std::string& name) { return *dir_ / name; }
  static const Json& Expected(const std::string& name) { return expected_->at(name); }

  static fs::path* dir_;
  static Json* expected_;
};
fs::path* GeneratedFiles::dir_ = nullptr;
Json* GeneratedFiles::expected_ = nullptr;

TEST_F(GeneratedFiles, MatchTorch) {
  for (const char* name : {"dtypes.pth", "views.pth", "nested.pth", "alone.pth", "little.pth", "big.pth"}) {
    SCOPED_TRACE(name);
    Result<ArrayFile> arrays = ReadFile(Path(name));
    ASSERT_TRUE(arrays.ok()) << arrays.status().ToString();
    ExpectTensors(Path(name), *arrays, Expected(name).at("tensors"), "hex");
  }
}

TEST_F(GeneratedFiles, ViewsKeepTheirStridesAndStorages) {
  Result<ArrayFile> arrays = ReadFile(Path("views.pth"));
  ASSERT_TRUE(arrays.ok()) << arrays.status().ToString();
  const auto& a = arrays->arrays;
  ASSERT_EQ(a.size(), 6u);
  // base = arange(60).reshape(6, 10): one storage for the first four.
  EXPECT_EQ(a[0].strides, (std::vector<uint64_t>{1, 10}));  // base.T
  EXPECT_FALSE(a[0].contiguous());
  EXPECT_EQ(a[1].storage_offset, 12u);                      // base[1::2, 2::3]
  EXPECT_EQ(a[1].strides, (std::vector<uint64_t>{20, 3}));
  EXPECT_EQ(a[2].storage_offset, 40u);                      // base[4]
  EXPECT_TRUE(a[2].contiguous());
  EXPECT_EQ(a[3].storage_offset, 35u);                      // base[3:, 5:]
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(a[i].member, a[0].member);
  EXPECT_EQ(a[0].storage_elements, 60u);
  EXPECT_EQ(a[4].strides, (std::vector<uint64_t>{1, 0}));   // expand: stride 0
  EXPECT_EQ(a[5].strides, (std::vector<uint64_t>{1, 1}));   // [5, 1]
  EXPECT_EQ(arrays->members.size(), 3u);
}

TEST_F(GeneratedFiles, BigEndianStoragesAreFlagged) {
  Result<ArrayFile> arrays = ReadFile(Path("big.pth"));
  ASSERT_TRUE(arrays.ok()) << arrays.status().ToString();
  for (const ArrayEntry& entry : arrays->arrays) {
    EXPECT_EQ(entry.big_endian, DtypeBytes(entry.dtype) > 1) << entry.name;
  }
}

TEST_F(GeneratedFiles, RefusalsNameTheTensorOrTheProblem) {
  for (const char* name : {"complex.pth", "sparse.pth", "oob.pth", "global.pth", "missing.pth",
                           "short.pth", "nopkl.pth"}) {
    SCOPED_TRACE(name);
    const Json& want = Expected(name);
    Result<ArrayFile> arrays = ReadFile(Path(name));
    ASSERT_FALSE(arrays.ok());
    const Status& status = arrays.status();
    EXPECT_EQ(StatusCodeName(status.code()), want.at("error").get<std::string>()) << status.ToString();
    if (want.contains("tensor")) {
      EXPECT_EQ(status.tensor(), want.at("tensor").get<std::string>()) << status.ToString();
    }
    if (want.contains("message")) {
      EXPECT_NE(status.message().find(want.at("message").get<std::string>()), std::string::npos)
          << status.ToString();
    }
    EXPECT_NE(status.message().find(name), std::string::npos) << status.ToString();  // names the file
  }
}

TEST_F(GeneratedFiles, LegacyFilesAreRecognised) {
  auto legacy = FileSource::Open(Path("legacy.pth"));
  ASSERT_TRUE(legacy.ok());
  EXPECT_TRUE(LooksLikeLegacyTorch(**legacy));
  auto zip = FileSource::Open(Path("nested.pth"));
  ASSERT_TRUE(zip.ok());
  EXPECT_FALSE(LooksLikeLegacyTorch(**zip));
  const std::vector<std::byte> empty;
  MemorySource none(empty);
  EXPECT_FALSE(LooksLikeLegacyTorch(none));
}

TEST_F(GeneratedFiles, TightLimitsAreEnforced) {
  Result<std::unique_ptr<ZipArchive>> zip = ZipArchive::OpenFile(Path("nested.pth"), ParseLimits());
  ASSERT_TRUE(zip.ok()) << zip.status().ToString();
  ParseLimits limits;
  limits.max_item_count = 20;  // the pickle builds far more values
  Result<ArrayFile> arrays = ReadPytorch(**zip, limits);
  ASSERT_FALSE(arrays.ok());
  EXPECT_EQ(arrays.status().code(), StatusCode::kLimitExceeded) << arrays.status().ToString();
  limits = ParseLimits();
  limits.max_header_bytes = 100;  // data.pkl is larger
  arrays = ReadPytorch(**zip, limits);
  ASSERT_FALSE(arrays.ok());
  EXPECT_EQ(arrays.status().code(), StatusCode::kLimitExceeded) << arrays.status().ToString();
}

}  // namespace
}  // namespace amn::formats
