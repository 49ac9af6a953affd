// Model files on disk (formats/model_files.h): single files, sharded
// directories with and without model.safetensors.index.json, companion files
// and config.json, and every directory-level error the contract names. Each
// test builds its own directory under the system temp directory.
#include "formats/model_files.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tests/fixtures.h"
#include "tests/temp_dir.h"

namespace amn::formats {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// A fresh directory, removed with everything in it at the end of the test.
using test::TempDir;

// A safetensors file of U8 tensors {name, bytes}, packed in the order given.
std::string ShardBytes(const std::vector<std::pair<std::string, uint64_t>>& tensors) {
  std::string json = "{";
  uint64_t offset = 0;
  for (const auto& [name, bytes] : tensors) {
    if (json.size() > 1) json += ",";
    json += "\"" + name + "\":{\"dtype\":\"U8\",\"shape\":[" + std::to_string(bytes) +
            "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) +
            "]}";
    offset += bytes;
  }
  json += "}";
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i) file[i] = static_cast<char>(json.size() >> (8 * i) & 0xff);
  return file + json + std::string(offset, '\x11');
}

std::vector<std::string> TensorNames(const Shard& shard) {
  std::vector<std::string> names;
  for (const TensorEntry& tensor : shard.header.tensors) names.push_back(tensor.name);
  return names;
}

std::vector<std::string> FileNames(const std::vector<fs::path>& paths) {
  std::vector<std::string> names;
  for (const fs::path& path : paths) names.push_back(path.filename().string());
  return names;
}

std::vector<std::string> ShardNames(const ModelFiles& files) {
  std::vector<std::string> names;
  for (const Shard& shard : files.shards) names.push_back(shard.path.filename().string());
  return names;
}

void ExpectError(const Result<ModelFiles>& result, StatusCode code, const std::string& in_message,
                 const std::string& tensor = "") {
  ASSERT_FALSE(result.ok());
  const Status& status = result.status();
  const std::string text = status.ToString();
  EXPECT_EQ(status.code(), code) << text;
  EXPECT_NE(text.find(in_message), std::string::npos) << "'" << in_message << "' not in: " << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  if (!tensor.empty()) {
    EXPECT_EQ(status.tensor(), tensor) << text;
    EXPECT_NE(text.find("tensor '" + tensor + "'"), std::string::npos) << text;
  }
}

constexpr char kShard1[] = "model-00001-of-00002.safetensors";
constexpr char kShard2[] = "model-00002-of-00002.safetensors";
constexpr char kIndex[] = "model.safetensors.index.json";

// Two shards: a (4 bytes) and b (2) in the first, c (8) in the second.
void WriteTwoShards(const TempDir& dir) {
  dir.Write(kShard1, ShardBytes({{"a", 4}, {"b", 2}}));
  dir.Write(kShard2, ShardBytes({{"c", 8}}));
}

std::string IndexJson(const std::string& weight_map_body) {
  return R"({"metadata":{"total_size":14},"weight_map":{)" + weight_map_body + "}}";
}

const std::string kGoodWeightMap =
    std::string(R"("a":")") + kShard1 + R"(","b":")" + kShard1 + R"(","c":")" + kShard2 + R"(")";

// ---------------------------------------------------------------------------
// Good layouts.

TEST(ModelFiles, ShardedDirectoryWithIndex) {
  TempDir dir;
  WriteTwoShards(dir);
  dir.Write(kIndex, IndexJson(kGoodWeightMap));
  const std::string config = R"({"model_type":"llama","torch_dtype":"float8_e4m3fn"})";
  dir.Write("config.json", config);
  dir.Write("tokenizer.json", "{}");
  dir.Write("README.md", "# model\n");
  // Not named by the index: neither a shard nor a companion.
  dir.Write("consolidated.safetensors", ShardBytes({{"z", 1}}));
  fs::create_directory(dir.path() / "original");
  dir.Write("original/params.json", "{}");

  const auto files = OpenModelFiles(dir.path(), ParseLimits{});
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->input, dir.path());
  EXPECT_TRUE(files->is_directory);
  EXPECT_TRUE(files->has_index);
  EXPECT_EQ(ShardNames(*files), (std::vector<std::string>{kShard1, kShard2}));
  EXPECT_EQ(files->shards[0].path, dir.path() / kShard1);
  EXPECT_EQ(TensorNames(files->shards[0]), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(TensorNames(files->shards[1]), (std::vector<std::string>{"c"}));
  EXPECT_EQ(files->shards[0].file_bytes, fs::file_size(dir.path() / kShard1));
  EXPECT_EQ(files->shards[0].header.data_bytes, 6u);
  EXPECT_EQ(files->shards[1].header.data_bytes, 8u);
  EXPECT_EQ(Json::parse(files->index_metadata_json), Json::parse(R"({"total_size":14})"));
  // Byte order: upper case sorts first.
  EXPECT_EQ(FileNames(files->companion_files),
            (std::vector<std::string>{"README.md", "config.json", "tokenizer.json"}));
  EXPECT_EQ(files->companion_files[1], dir.path() / "config.json");
  EXPECT_EQ(files->config_json, config);
}

TEST(ModelFiles, IndexWithoutMetadata) {
  TempDir dir;
  WriteTwoShards(dir);
  dir.Write(kIndex, "{\"weight_map\":{" + kGoodWeightMap + "}}");
  const auto files = OpenModelFiles(dir.path(), ParseLimits{});
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->index_metadata_json, "{}");
  EXPECT_TRUE(files->config_json.empty());
  EXPECT_TRUE(files->companion_files.empty());
}

TEST(ModelFiles, ShardedDirectoryWithoutIndexTakesEverySafetensorsFileByName) {
  TempDir dir;
  dir.Write("b.safetensors", ShardBytes({{"b1", 3}}));
  dir.Write("a.safetensors", ShardBytes({{"a1", 1}, {"a2", 2}}));
  dir.Write("10.safetensors", ShardBytes({{"ten", 5}}));
  dir.Write("config.json", "{}");
  dir.Write("weights.safetensors.bak", "not a shard");
  const auto files = OpenModelFiles(dir.path(), ParseLimits{});
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_TRUE(files->is_directory);
  EXPECT_FALSE(files->has_index);
  EXPECT_EQ(files->index_metadata_json, "{}");
  EXPECT_EQ(ShardNames(*files),
            (std::vector<std::string>{"10.safetensors", "a.safetensors", "b.safetensors"}));
  EXPECT_EQ(TensorNames(files->shards[1]), (std::vector<std::string>{"a1", "a2"}));
  EXPECT_EQ(FileNames(files->companion_files),
            (std::vector<std::string>{"config.json", "weights.safetensors.bak"}));
  EXPECT_EQ(files->config_json, "{}");
}

TEST(ModelFiles, SymlinkedShardsAreFollowedInsideTheCacheRepo) {
  // Hugging Face cache snapshots are directories of symlinks into the
  // repo's blobs/ (models--ORG--NAME/snapshots/REV/x -> ../../blobs/HASH).
  TempDir cache;
  const fs::path repo = cache.path() / "models--org--name";
  const fs::path snapshot = repo / "snapshots" / "0123";
  fs::create_directories(snapshot);
  fs::create_directories(repo / "blobs");
  cache.Write("models--org--name/blobs/3f2a", ShardBytes({{"w", 4}}));
  cache.Write("models--org--name/blobs/9c1d", "{\"a\":1}");
  fs::create_symlink("../../blobs/3f2a", snapshot / "model.safetensors");
  fs::create_symlink("../../blobs/9c1d", snapshot / "config.json");
  const auto files = OpenModelFiles(snapshot, ParseLimits{});
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(ShardNames(*files), (std::vector<std::string>{"model.safetensors"}));
  EXPECT_EQ(files->config_json, "{\"a\":1}");
  EXPECT_TRUE(files->warnings.empty());
}

TEST(ModelFiles, SymlinksOutOfTheModelDirectoryAreRefusedOrSkipped) {
  TempDir outside, model;
  model.Write("model.safetensors", ShardBytes({{"w", 4}}));
  fs::create_symlink(outside.Write("secret", "{}"), model.path() / "tokenizer.json");
  const auto files = OpenModelFiles(model.path(), ParseLimits{});
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_TRUE(files->companion_files.empty());
  ASSERT_EQ(files->warnings.size(), 1u);
  EXPECT_NE(files->warnings[0].find("tokenizer.json"), std::string::npos) << files->warnings[0];
  // A shard, or config.json, that leaves the directory is refused.
  for (const char* name : {"config.json", "b.safetensors"}) {
    SCOPED_TRACE(name);
    TempDir dir;
    dir.Write("model.safetensors", ShardBytes({{"w", 4}}));
    const std::string contents = std::string(name) == "config.json" ? "{}" : ShardBytes({{"v", 2}});
    fs::create_symlink(outside.Write(std::string("target-") + name, contents), dir.path() / name);
    const auto refused = OpenModelFiles(dir.path(), ParseLimits{});
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalid);
    EXPECT_NE(refused.status().message().find(name), std::string::npos) << refused.status().ToString();
  }
}

TEST(ModelFiles, SingleFileReadsConfigNextToIt) {
  TempDir dir;
  const fs::path file = dir.Write("model.safetensors", ShardBytes({{"w", 4}, {"v", 2}}));
  dir.Write("config.json", R"({"architectures":["X"]})");
  dir.Write("tokenizer.json", "{}");
  const auto files = OpenModelFiles(file, ParseLimits{});
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->input, file);
  EXPECT_FALSE(files->is_directory);
  EXPECT_FALSE(files->has_index);
  ASSERT_EQ(files->shards.size(), 1u);
  EXPECT_EQ(files->shards[0].path, file);
  EXPECT_EQ(TensorNames(files->shards[0]), (std::vector<std::string>{"w", "v"}));
  // A single file names no directory to copy.
  EXPECT_TRUE(files->companion_files.empty());
  EXPECT_EQ(files->config_json, R"({"architectures":["X"]})");
}

TEST(ModelFiles, ReferenceFixtureAsSingleFile) {
  const auto fixtures = test::FixtureFiles("safetensors_reference", ".safetensors");
  AMN_SKIP_WITHOUT_FIXTURES(fixtures, "safetensors_reference");
  for (const fs::path& path : fixtures) {
    SCOPED_TRACE(path.string());
    fs::path expected_path = path;
    expected_path.replace_extension(".expected.json");
    std::ifstream expected_in(expected_path);
    const Json expected = Json::parse(expected_in);
    const auto files = OpenModelFiles(path, ParseLimits{});
    ASSERT_TRUE(files.ok()) << files.status().ToString();
    ASSERT_EQ(files->shards.size(), 1u);
    EXPECT_EQ(files->shards[0].file_bytes, fs::file_size(path));
    EXPECT_EQ(files->shards[0].header.json_bytes, expected.at("header_size").get<uint64_t>());
    EXPECT_EQ(files->shards[0].header.tensors.size(), expected.at("tensors").size());
  }
}

// ---------------------------------------------------------------------------
// Directory errors.

TEST(ModelFilesErrors, IndexNamesMissingShard) {
  TempDir dir;
  dir.Write(kShard1, ShardBytes({{"a", 4}, {"b", 2}}));
  dir.Write(kIndex, IndexJson(kGoodWeightMap));
  ExpectError(OpenModelFiles(dir.path(), ParseLimits{}), StatusCode::kInvalid, kShard2);
}

TEST(ModelFilesErrors, TensorInTwoShards) {
  {
    TempDir dir;
    dir.Write("a.safetensors", ShardBytes({{"x", 2}}));
    dir.Write("b.safetensors", ShardBytes({{"y", 1}, {"x", 2}}));
    ExpectError(OpenModelFiles(dir.path(), ParseLimits{}), StatusCode::kInvalid, "a.safetensors",
                "x");
  }
  {
    TempDir dir;
    dir.Write("a.safetensors", ShardBytes({{"x", 2}}));
    dir.Write("b.safetensors", ShardBytes({{"y", 1}, {"x", 2}}));
    dir.Write(kIndex, IndexJson(R"("x":"a.safetensors","y":"b.safetensors")"));
    ExpectError(OpenModelFiles(dir.path(), ParseLimits{}), StatusCode::kInvalid, "b.safetensors",
                "x");
  }
}

TEST(ModelFilesErrors, WeightMapDisagreesWithHeaders) {
  const std::string s1 = kShard1, s2 = kShard2;
  struct Case {
    std::string weight_map, tensor, in_message;
  };
  const std::vector<Case> cases = {
      // c is in the second shard (which the index then never names).
      {R"("a":")" + s1 + R"(","b":")" + s1 + R"(","c":")" + s1 + R"(")", "c", "does not hold it"},
      // a is in the first shard, both shards are named.
      {R"("a":")" + s2 + R"(","b":")" + s1 + R"(","c":")" + s2 + R"(")", "a",
       "puts the tensor in " + s2},
      // b is missing from weight_map.
      {R"("a":")" + s1 + R"(","c":")" + s2 + R"(")", "b", "lacks"},
      // ghost is in no shard.
      {kGoodWeightMap + R"(,"ghost":")" + s2 + R"(")", "ghost", "does not hold it"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.weight_map);
    TempDir dir;
    WriteTwoShards(dir);
    dir.Write(kIndex, IndexJson(c.weight_map));
    const auto result = OpenModelFiles(dir.path(), ParseLimits{});
    ExpectError(result, StatusCode::kInvalid, kIndex, c.tensor);
    ExpectError(result, StatusCode::kInvalid, c.in_message, c.tensor);
  }
}

TEST(ModelFilesErrors, BadIndexJson) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[]", "not a JSON object"},
      {R"({"weight_map":{"a":)", "invalid JSON"},
      {"{\"weight_map\":{" + kGoodWeightMap + R"(,"a":"x.safetensors"}})", "duplicate key \"a\""},
      {R"({"metadata":{}})", "weight_map"},
      {R"({"weight_map":[]})", "weight_map"},
      {R"({"weight_map":{"a":1}})", "not a string"},
      {R"({"weight_map":{"a":"../model.safetensors"}})", "../model.safetensors"},
      {R"({"weight_map":{"a":"/etc/passwd"}})", "/etc/passwd"},
      {R"({"weight_map":{"a":""}})", "not a file name"},
      {R"({"metadata":[],"weight_map":{}})", "metadata"},
      {R"({"metadata":)" + std::string(100, '[') + std::string(100, ']') + R"(,"weight_map":{}})",
       "deeper"},
  };
  for (const auto& [index, in_message] : cases) {
    SCOPED_TRACE(index);
    TempDir dir;
    WriteTwoShards(dir);
    dir.Write(kIndex, index);
    ExpectError(OpenModelFiles(dir.path(), ParseLimits{}), StatusCode::kInvalid, in_message);
  }
}

TEST(ModelFilesErrors, IndexJsonErrorNamesByteOffset) {
  TempDir dir;
  WriteTwoShards(dir);
  const std::string index = R"({"weight_map": {"a" "b"}})";  // ':' missing before "b"
  dir.Write(kIndex, index);
  const auto result = OpenModelFiles(dir.path(), ParseLimits{});
  ExpectError(result, StatusCode::kInvalid, kIndex);
  ASSERT_TRUE(result.status().byte_offset().has_value());
  // The offset lands on the token the parser stopped at.
  EXPECT_GE(*result.status().byte_offset(), index.find("\"b\""));
  EXPECT_LE(*result.status().byte_offset(), index.find("\"b\"") + 2);
}

TEST(ModelFilesErrors, IndexNamingNoShards) {
  TempDir dir;
  WriteTwoShards(dir);
  dir.Write(kIndex, R"({"weight_map":{}})");
  ExpectError(OpenModelFiles(dir.path(), ParseLimits{}), StatusCode::kInvalid, "no shards");
}

TEST(ModelFilesErrors, DirectoryWithoutShards) {
  TempDir dir;
  ExpectError(OpenModelFiles(dir.path(), ParseLimits{}), StatusCode::kInvalid, "no *.safetensors");
  dir.Write("config.json", "{}");
  ExpectError(OpenModelFiles(dir.path(), ParseLimits{}), StatusCode::kInvalid, dir.path().string());
}

TEST(ModelFilesErrors, MissingPath) {
  TempDir dir;
  ExpectError(OpenModelFiles(dir.path() / "nothing", ParseLimits{}), StatusCode::kIo, "nothing");
}

TEST(ModelFilesErrors, BadShardIsNamed) {
  TempDir dir;
  dir.Write("a.safetensors", ShardBytes({{"x", 2}}));
  std::string bad = ShardBytes({{"y", 4}});
  bad.pop_back();  // the data section is one byte short
  dir.Write("b.safetensors", bad);
  ExpectError(OpenModelFiles(dir.path(), ParseLimits{}), StatusCode::kTruncated, "b.safetensors",
              "y");
}

TEST(ModelFilesErrors, TotalBytesOverLimit) {
  TempDir dir;
  WriteTwoShards(dir);  // 6 + 8 data bytes
  ParseLimits limits;
  limits.max_total_bytes = 13;
  ExpectError(OpenModelFiles(dir.path(), limits), StatusCode::kLimitExceeded, "max_total_bytes");
  limits.max_total_bytes = 14;
  EXPECT_TRUE(OpenModelFiles(dir.path(), limits).ok());
}

TEST(ModelFilesErrors, ConfigAndIndexOverHeaderLimit) {
  TempDir dir;
  WriteTwoShards(dir);
  ParseLimits limits;
  limits.max_header_bytes = 200;  // the shard headers are under 120 bytes
  dir.Write("config.json", "{\"pad\":\"" + std::string(300, 'x') + "\"}");
  ExpectError(OpenModelFiles(dir.path(), limits), StatusCode::kLimitExceeded, "config.json");
  dir.Write(kIndex, IndexJson(kGoodWeightMap + std::string(200, ' ')));
  ExpectError(OpenModelFiles(dir.path(), limits), StatusCode::kLimitExceeded, kIndex);
}

}  // namespace
}  // namespace amn::formats
