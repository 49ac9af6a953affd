// Hugging Face PyTorch checkpoint directories (pytorch_model.bin, or
// pytorch_model-0000i-of-0000N.bin with pytorch_model.bin.index.json) become
// safetensors shards with model.safetensors.index.json, like a safetensors
// directory. The .bin files are torch.save zips built byte by byte.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/torch_zips.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string Shard(const std::string& name) {
  return TorchZip(TorchStateDict({{name, {"FloatStorage", "0", 6, 0, {2, 3}, {3, 1}, ""}}}),
                  {{"0", SixFloats()}});
}

std::vector<uint8_t> SixF32() {
  const std::string bytes = SixFloats();
  return {bytes.begin(), bytes.end()};
}

// BF16 of 0..5.
const std::vector<uint8_t> kSixBf16 = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x40,
                                       0x40, 0x40, 0x80, 0x40, 0xa0, 0x40};

TEST(PytorchDirCli, ShardedBinsBecomeSafetensorsShardsWithAnIndex) {
  TempDir dir;
  const fs::path model = dir.path() / "tiny";
  fs::create_directory(model);
  WriteText(model / "pytorch_model-00001-of-00002.bin", Shard("model.embed.weight"));
  WriteText(model / "pytorch_model-00002-of-00002.bin", Shard("lm_head.weight"));
  WriteText(model / "pytorch_model.bin.index.json",
            R"({"metadata": {"total_size": 48}, "weight_map": {)"
            R"("model.embed.weight": "pytorch_model-00001-of-00002.bin",)"
            R"("lm_head.weight": "pytorch_model-00002-of-00002.bin"}})");
  WriteText(model / "config.json", R"({"model_type": "llama", "torch_dtype": "float32"})");
  WriteText(model / "tokenizer.json", "{}");

  const CliResult inspect = RunAmn("inspect --json " + Quote(model));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_EQ(Json::parse(inspect.out)["format"], "pytorch") << inspect.out;
  EXPECT_EQ(Json::parse(inspect.out)["passthrough_tensors"], 2) << inspect.out;

  const fs::path out = dir.path() / "out";
  const CliResult r = RunAmn("remember -q " + Quote(model) + " -o " + Quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReadBack first(out / "model-00001-of-00002.safetensors");
  const ReadBack second(out / "model-00002-of-00002.safetensors");
  EXPECT_EQ(first.header["model.embed.weight"]["dtype"], "BF16");
  EXPECT_EQ(first.Data("model.embed.weight"), kSixBf16);
  EXPECT_EQ(second.Data("lm_head.weight"), kSixBf16);
  const Json index = Json::parse(SlurpText(out / "model.safetensors.index.json"));
  EXPECT_EQ(index["weight_map"]["model.embed.weight"], "model-00001-of-00002.safetensors");
  EXPECT_EQ(index["weight_map"]["lm_head.weight"], "model-00002-of-00002.safetensors");
  EXPECT_EQ(index["metadata"]["total_size"], 24);
  EXPECT_EQ(Json::parse(SlurpText(out / "config.json"))["torch_dtype"], "bfloat16");
  EXPECT_TRUE(fs::is_regular_file(out / "tokenizer.json"));
  EXPECT_FALSE(fs::exists(out / "pytorch_model.bin.index.json"));
  EXPECT_FALSE(fs::exists(out / "pytorch_model-00001-of-00002.bin"));

  // --keep-passthrough keeps F32.
  const CliResult kept = RunAmn("remember -q --keep-passthrough " + Quote(model) + " -o " +
                                Quote(dir.path() / "kept"));
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_EQ(ReadBack(dir.path() / "kept" / "model-00002-of-00002.safetensors").Data("lm_head.weight"),
            SixF32());
}

TEST(PytorchDirCli, OneBinBecomesModelSafetensors) {
  TempDir dir;
  const fs::path model = dir.path() / "one";
  fs::create_directory(model);
  WriteText(model / "pytorch_model.bin", Shard("w"));
  const CliResult r = RunAmn("remember -q --to f32 " + Quote(model) + " -o " + Quote(dir.path() / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReadBack out(dir.path() / "out" / "model.safetensors");
  EXPECT_EQ(out.Data("w"), SixF32());
  EXPECT_FALSE(fs::exists(dir.path() / "out" / "model.safetensors.index.json"));
}

TEST(PytorchDirCli, AnIndexThatDisagreesIsRefused) {
  TempDir dir;
  const fs::path model = dir.path() / "bad";
  fs::create_directory(model);
  WriteText(model / "pytorch_model-00001-of-00001.bin", Shard("a"));
  WriteText(model / "pytorch_model.bin.index.json",
            R"({"weight_map": {"b": "pytorch_model-00001-of-00001.bin"}})");
  const CliResult r = RunAmn("remember -q " + Quote(model) + " -o " + Quote(dir.path() / "out"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("weight_map lacks a tensor"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
  // A shard that is no torch zip is named.
  WriteText(model / "pytorch_model-00001-of-00001.bin", "not a zip at all, just text");
  const CliResult text = RunAmn("inspect " + Quote(model));
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_NE(text.err.find("pytorch_model-00001-of-00001.bin"), std::string::npos) << text.err;
}

// The model directory is the boundary here too (issue 20): a side file
// linked outside is skipped with a warning, a shard or config.json linked
// outside is refused, a shard the index does not name is not copied.
TEST(PytorchDirCli, SymlinksLeavingTheDirectoryAreNotFollowed) {
  TempDir dir;
  const fs::path model = dir.path() / "linked";
  fs::create_directory(model);
  WriteText(model / "pytorch_model.bin", Shard("w"));
  WriteText(dir.path() / "secret.txt", "not part of the model");
  fs::create_symlink(dir.path() / "secret.txt", model / "tokenizer.json");
  const CliResult side = RunAmn("remember -q " + Quote(model) + " -o " + Quote(dir.path() / "a"));
  ASSERT_EQ(side.exit_code, 0) << side.err;
  EXPECT_NE(side.err.find("warning"), std::string::npos) << side.err;
  EXPECT_NE(side.err.find("tokenizer.json"), std::string::npos) << side.err;
  EXPECT_FALSE(fs::exists(dir.path() / "a" / "tokenizer.json"));

  fs::create_symlink(dir.path() / "secret.txt", model / "config.json");
  const CliResult config = RunAmn("remember -q " + Quote(model) + " -o " + Quote(dir.path() / "b"));
  EXPECT_EQ(config.exit_code, 1);
  EXPECT_NE(config.err.find("outside the model directory"), std::string::npos) << config.err;
  EXPECT_FALSE(fs::exists(dir.path() / "b"));
  fs::remove(model / "config.json");

  fs::rename(model / "pytorch_model.bin", dir.path() / "elsewhere.bin");
  fs::create_symlink(dir.path() / "elsewhere.bin", model / "pytorch_model.bin");
  const CliResult shard = RunAmn("remember -q " + Quote(model) + " -o " + Quote(dir.path() / "c"));
  EXPECT_EQ(shard.exit_code, 1);
  EXPECT_NE(shard.err.find("pytorch_model.bin"), std::string::npos) << shard.err;
  EXPECT_NE(shard.err.find("outside the model directory"), std::string::npos) << shard.err;
  EXPECT_FALSE(fs::exists(dir.path() / "c"));
}

TEST(PytorchDirCli, ShardsTheIndexDoesNotNameAreNotCopied) {
  TempDir dir;
  const fs::path model = dir.path() / "stray";
  fs::create_directory(model);
  WriteText(model / "pytorch_model-00001-of-00001.bin", Shard("a"));
  WriteText(model / "pytorch_model-old.bin", Shard("b"));
  WriteText(model / "pytorch_model.bin.index.json",
            R"({"weight_map": {"a": "pytorch_model-00001-of-00001.bin"}})");
  const CliResult r = RunAmn("remember -q " + Quote(model) + " -o " + Quote(dir.path() / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / "out" / "model-00001-of-00001.safetensors"));
  EXPECT_FALSE(fs::exists(dir.path() / "out" / "pytorch_model-old.bin"));
  EXPECT_FALSE(fs::exists(dir.path() / "out" / "model-old.safetensors"));
}

}  // namespace
}  // namespace amn::test
