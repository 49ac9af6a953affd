// perf/synthetic_model (the model perf/thread_scaling.sh times): the layout
// perf/plain_model.py's formula gives, safetensors read back by hand here and
// by `amn parse`, Gaussian-like finite values, the same bytes for any -j, and
// transformers-style shards with their index.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli_files.h"
#include "tests/cli_runner.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

CliResult RunSynthetic(const fs::path& out, const std::string& args) {
  return RunBuilt(AMN_SYNTHETIC_MODEL_PATH, Quote(out) + " " + args);
}

struct Safetensors {
  json header;
  std::string bytes;  // the whole file
  uint64_t data_offset = 0;
};

Safetensors Load(const fs::path& path) {
  Safetensors st;
  st.bytes = SlurpText(path);
  EXPECT_GE(st.bytes.size(), 8u);
  uint64_t n = 0;
  for (int b = 7; b >= 0; --b) n = n << 8 | static_cast<unsigned char>(st.bytes[b]);
  EXPECT_EQ(n % 8, 0u) << "header padded to 8 bytes";
  st.header = json::parse(st.bytes.substr(8, n));
  st.data_offset = 8 + n;
  return st;
}

// plain_model.py's layer count for hidden h.
uint64_t PlainModelLayers(double gib, uint64_t h) {
  const uint64_t inter = h * 11 / 4, vocab = 32000;
  const uint64_t per_layer = 2 * (4 * h * h + 3 * h * inter + 2 * h);
  const uint64_t fixed = 2 * (2 * vocab * h + h);
  return std::max<uint64_t>(1, static_cast<uint64_t>((gib * 1073741824.0 - fixed) / per_layer));
}

TEST(SyntheticModel, PlainModelLayoutWithGaussianLikeFiniteValues) {
  TempDir dir;
  const fs::path out = dir.path() / "m";
  const CliResult r = RunSynthetic(out, "--gib 0.01 --hidden 64 -j 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const uint64_t layers = PlainModelLayers(0.01, 64);
  ASSERT_GT(layers, 2u);
  const json config = json::parse(SlurpText(out / "config.json"));
  EXPECT_EQ(config["num_hidden_layers"], layers);
  EXPECT_EQ(config["hidden_size"], 64);
  EXPECT_EQ(config["intermediate_size"], 176);
  EXPECT_EQ(config["architectures"][0], "LlamaForCausalLM");
  EXPECT_FALSE(fs::exists(out / "model.safetensors.index.json"));

  const Safetensors st = Load(out / "model.safetensors");
  EXPECT_EQ(st.header.size(), 1 + 3 + 9 * layers);  // __metadata__, embed/norm/lm_head, layers
  EXPECT_EQ(st.header["__metadata__"]["format"], "pt");
  // Offsets contiguous, in file order, ending at the file's end.
  std::map<uint64_t, std::pair<uint64_t, std::string>> by_offset;
  for (const auto& [name, t] : st.header.items()) {
    if (name == "__metadata__") continue;
    EXPECT_EQ(t["dtype"], "BF16") << name;
    uint64_t elems = 1;
    for (const auto& d : t["shape"]) elems *= d.get<uint64_t>();
    const uint64_t begin = t["data_offsets"][0], end = t["data_offsets"][1];
    EXPECT_EQ(end - begin, 2 * elems) << name;
    by_offset[begin] = {end, name};
  }
  uint64_t at = 0;
  for (const auto& [begin, rest] : by_offset) {
    EXPECT_EQ(begin, at) << rest.second;
    at = rest.first;
  }
  EXPECT_EQ(st.data_offset + at, st.bytes.size());
  for (const char* name : {"model.embed_tokens.weight", "lm_head.weight", "model.norm.weight",
                           "model.layers.0.self_attn.q_proj.weight", "model.layers.1.mlp.down_proj.weight",
                           "model.layers.2.post_attention_layernorm.weight"})
    EXPECT_TRUE(st.header.contains(name)) << name;
  EXPECT_EQ(st.header["model.layers.0.mlp.down_proj.weight"]["shape"], json({64, 176}));

  auto values = [&](const std::string& name) {
    const json& t = st.header[name];
    const uint64_t begin = t["data_offsets"][0], end = t["data_offsets"][1];
    std::vector<uint16_t> v((end - begin) / 2);
    std::memcpy(v.data(), st.bytes.data() + st.data_offset + begin, end - begin);
    return v;
  };
  for (uint16_t bits : values("model.layers.1.input_layernorm.weight")) ASSERT_EQ(bits, 0x3F80);
  const std::vector<uint16_t> w = values("model.embed_tokens.weight");
  double sum = 0, sum2 = 0, most = 0;
  for (uint16_t bits : w) {
    ASSERT_NE(bits & 0x7F80, 0x7F80) << "NaN or Inf";
    const uint32_t f32 = static_cast<uint32_t>(bits) << 16;
    float x;
    std::memcpy(&x, &f32, 4);
    sum += x;
    sum2 += static_cast<double>(x) * x;
    most = std::max(most, std::fabs(static_cast<double>(x)));
  }
  const double n = static_cast<double>(w.size()), mean = sum / n;
  const double sigma = std::sqrt(sum2 / n - mean * mean);
  EXPECT_NEAR(mean, 0.0, 1e-4);
  EXPECT_NEAR(sigma, 0.02, 2e-4);
  EXPECT_GT(most, 3 * 0.02);        // tails beyond 3 sigma, like a Gaussian's
  EXPECT_LT(most, 3.5 * 0.02);      // the Irwin-Hall bound (4 uniforms: sqrt(12) sigma)

  // Read back by amn's own parser as well.
  const CliResult parsed = RunAmn("parse --json " + Quote(out));
  ASSERT_EQ(parsed.exit_code, 0) << parsed.err;
  EXPECT_EQ(json::parse(parsed.out)["tensors"].size(), 3 + 9 * layers);
}

TEST(SyntheticModel, SameBytesForAnyThreadCountAndSeedMatters) {
  TempDir dir;
  ASSERT_EQ(RunSynthetic(dir.path() / "a", "--gib 0.01 --hidden 64 -j 1").exit_code, 0);
  ASSERT_EQ(RunSynthetic(dir.path() / "b", "--gib 0.01 --hidden 64 -j 3").exit_code, 0);
  ASSERT_EQ(RunSynthetic(dir.path() / "c", "--gib 0.01 --hidden 64 -j 3 --seed 1").exit_code, 0);
  const std::string a = SlurpText(dir.path() / "a" / "model.safetensors");
  EXPECT_TRUE(a == SlurpText(dir.path() / "b" / "model.safetensors"));
  EXPECT_FALSE(a == SlurpText(dir.path() / "c" / "model.safetensors"));
}

TEST(SyntheticModel, ShardsAndIndexLikeTransformers) {
  TempDir dir;
  const fs::path out = dir.path() / "s";
  const uint64_t max_shard = 3000000;
  ASSERT_EQ(RunSynthetic(out, "--gib 0.01 --hidden 64 --shard-bytes " + std::to_string(max_shard)).exit_code, 0);
  const json index = json::parse(SlurpText(out / "model.safetensors.index.json"));
  const json& map = index["weight_map"];
  std::map<std::string, std::vector<std::string>> files;
  for (const auto& [name, file] : map.items()) files[file.get<std::string>()].push_back(name);
  ASSERT_GE(files.size(), 3u);
  uint64_t total = 0;
  size_t shard = 0;
  for (const auto& [file, names] : files) {
    char expected[64];
    std::snprintf(expected, sizeof expected, "model-%05zu-of-%05zu.safetensors", ++shard, files.size());
    EXPECT_EQ(file, expected);
    const Safetensors st = Load(out / file);
    EXPECT_EQ(st.header.size(), names.size() + 1) << file;
    uint64_t data = 0;
    for (const std::string& name : names) {
      ASSERT_TRUE(st.header.contains(name)) << name << " in " << file;
      data += st.header[name]["data_offsets"][1].get<uint64_t>() -
              st.header[name]["data_offsets"][0].get<uint64_t>();
    }
    EXPECT_EQ(st.data_offset + data, st.bytes.size());
    if (names.size() > 1) {
      EXPECT_LE(data, max_shard) << file;
    }
    total += data;
  }
  EXPECT_EQ(index["metadata"]["total_size"], total);
  // State-dict order: the embedding first, lm_head last.
  EXPECT_EQ(map["model.embed_tokens.weight"], "model-00001-of-" + files.rbegin()->first.substr(15));
  EXPECT_EQ(map["lm_head.weight"], files.rbegin()->first);
  const CliResult parsed = RunAmn("parse --json " + Quote(out));
  ASSERT_EQ(parsed.exit_code, 0) << parsed.err;
  EXPECT_EQ(json::parse(parsed.out)["tensors"].size(), map.size());
}

TEST(SyntheticModel, BadArgumentsAreUsageErrors) {
  TempDir dir;
  EXPECT_EQ(RunSynthetic(dir.path() / "x", "--gib 0").exit_code, 2);
  EXPECT_EQ(RunSynthetic(dir.path() / "x", "--hidden 100").exit_code, 2);
  EXPECT_EQ(RunSynthetic(dir.path() / "x", "--bogus").exit_code, 2);
}

}  // namespace
}  // namespace amn::test
