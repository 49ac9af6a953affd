// `amn remember` writes what it says: --to T makes every float tensor T
// (unless --keep-passthrough), config.json's torch_dtype names what the
// shards hold and inspect agrees; every file carries __metadata__ "format":
// "pt" and the reference writer's layout (widest dtype first, then by name,
// aligned offsets, header padded to 8 bytes); a model directory's tokenizer
// and generation files travel with it and its index describes the output.
// Expected values are derived by hand in the comments; files are read back
// with nlohmann::json here (tests/readback_cli_test.cc adds numpy).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures/safetensors_builder.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/fixtures.h"
#include "tests/gguf_writer.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using fixtures::SafetensorsBuilder;
using Json = nlohmann::json;

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::vector<uint8_t> F32Bytes(float v) {
  std::vector<uint8_t> out(4);
  std::memcpy(out.data(), &v, 4);
  return out;
}

Json ReadJson(const fs::path& path) { return Json::parse(SlurpText(path)); }

// dtype -> tensor count and bytes, from `amn inspect --json`.
std::map<std::string, std::pair<int, int>> InspectDtypes(const fs::path& path) {
  const CliResult r = RunAmn("inspect --json " + Quote(path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const Json info = Json::parse(r.out);
  std::map<std::string, std::pair<int, int>> dtypes;
  for (const Json& d : info["dtypes"]) dtypes[d["dtype"]] = {d["tensors"], d["bytes"]};
  return dtypes;
}

CliResult Remember(const fs::path& in, const fs::path& out, const std::string& flags) {
  return RunAmn("remember -q " + flags + " " + Quote(in) + " -o " + Quote(out));
}

// An unquantized BF16 model: `--to f16` used to copy it unchanged while
// labelling it float16.
TEST(HonestOutput, ToConvertsEveryFloatTensorOfAnUnquantizedModel) {
  TempDir dir;
  const fs::path model = dir.path() / "plain";
  fs::create_directory(model);
  SafetensorsBuilder m;
  // BF16 1.0, -2.5, 0.5, 3.0; F32 0.25; I64 5.
  m.Add("a.weight", "BF16", {4}, {0x80, 0x3F, 0x20, 0xC0, 0x00, 0x3F, 0x40, 0x40});
  m.Add("b.bias", "F32", {1}, F32Bytes(0.25f));
  m.Add("ids", "I64", {1}, {5, 0, 0, 0, 0, 0, 0, 0});
  ASSERT_TRUE(m.Write(model / "model.safetensors"));
  WriteFile(model / "config.json",
            R"({"torch_dtype": "bfloat16", "dtype": "bfloat16",)"
            R"( "text_config": {"torch_dtype": "bfloat16", "quantization_config": {"bits": 4}},)"
            R"( "rope_scaling": {"type": "linear"}})");

  const CliResult r = Remember(model, dir.path() / "f16", "--to f16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReadBack out(dir.path() / "f16" / "model.safetensors");
  EXPECT_EQ(out.header["a.weight"]["dtype"], "F16");
  // F16: 1.0 = 0x3C00, -2.5 = 0xC100, 0.5 = 0x3800, 3.0 = 0x4200; 0.25 = 0x3400.
  EXPECT_EQ(out.Data("a.weight"),
            std::vector<uint8_t>({0x00, 0x3C, 0x00, 0xC1, 0x00, 0x38, 0x00, 0x42}));
  EXPECT_EQ(out.header["b.bias"]["dtype"], "F16");
  EXPECT_EQ(out.Data("b.bias"), std::vector<uint8_t>({0x00, 0x34}));
  EXPECT_EQ(out.header["ids"]["dtype"], "I64");
  EXPECT_EQ(out.Data("ids"), std::vector<uint8_t>({5, 0, 0, 0, 0, 0, 0, 0}));
  const Json config = ReadJson(dir.path() / "f16" / "config.json");
  EXPECT_EQ(config["torch_dtype"], "float16");
  EXPECT_EQ(config["dtype"], "float16");
  EXPECT_EQ(config["text_config"], Json({{"torch_dtype", "float16"}}));
  EXPECT_EQ(config["rope_scaling"], Json({{"type", "linear"}}));
  // inspect agrees with the files, and predicted their size.
  EXPECT_EQ(InspectDtypes(dir.path() / "f16"),
            (std::map<std::string, std::pair<int, int>>{{"F16", {2, 10}}, {"I64", {1, 8}}}));
  const Json predicted = Json::parse(RunAmn("inspect --json --to f16 " + Quote(model)).out);
  EXPECT_EQ(predicted["converted_tensors"], 2);
  EXPECT_EQ(predicted["remembered_bytes"], 18);

  // --keep-passthrough: nothing is quantized, so nothing changes; the config
  // names the dtype holding the most bytes (BF16 8 bytes, F32 4).
  const CliResult kept = Remember(model, dir.path() / "kept", "--to f16 --keep-passthrough");
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  const ReadBack k(dir.path() / "kept" / "model.safetensors");
  EXPECT_EQ(k.header["a.weight"]["dtype"], "BF16");
  EXPECT_EQ(k.Data("a.weight"),
            std::vector<uint8_t>({0x80, 0x3F, 0x20, 0xC0, 0x00, 0x3F, 0x40, 0x40}));
  EXPECT_EQ(k.header["b.bias"]["dtype"], "F32");
  EXPECT_EQ(ReadJson(dir.path() / "kept" / "config.json")["torch_dtype"], "bfloat16");
  EXPECT_EQ(Json::parse(RunAmn("inspect --json --to f16 --keep-passthrough " + Quote(model))
                            .out)["remembered_bytes"],
            20);
}

// FP8 weights with a BF16 norm: --to f16 used to leave the norm BF16.
TEST(HonestOutput, Fp8ToF16ConvertsPassthroughTensors) {
  TempDir dir;
  const fs::path model = dir.path() / "m-FP8";
  fs::create_directory(model);
  SafetensorsBuilder m;
  // E4M3 0x38 = 1.0, 0xB8 = -1.0, 0x40 = 2.0, 0x00 = 0; times 2.0.
  m.Add("w.weight", "F8_E4M3", {1, 4}, {0x38, 0xB8, 0x40, 0x00});
  m.Add("w.weight_scale", "F32", {1}, F32Bytes(2.0f));
  m.Add("norm.weight", "BF16", {2}, {0x80, 0x3F, 0x40, 0x40});  // 1.0, 3.0
  ASSERT_TRUE(m.Write(model / "model.safetensors"));
  WriteFile(model / "config.json", R"({"torch_dtype": "bfloat16"})");

  ASSERT_EQ(Remember(model, dir.path() / "f16", "--to f16").exit_code, 0);
  const ReadBack out(dir.path() / "f16" / "model.safetensors");
  EXPECT_EQ(out.header["w.weight"]["dtype"], "F16");
  EXPECT_EQ(out.Data("w.weight"),
            std::vector<uint8_t>({0x00, 0x40, 0x00, 0xC0, 0x00, 0x44, 0x00, 0x00}));
  EXPECT_EQ(out.header["norm.weight"]["dtype"], "F16");
  EXPECT_EQ(out.Data("norm.weight"), std::vector<uint8_t>({0x00, 0x3C, 0x00, 0x42}));
  EXPECT_EQ(ReadJson(dir.path() / "f16" / "config.json")["torch_dtype"], "float16");
  EXPECT_EQ(InspectDtypes(dir.path() / "f16"),
            (std::map<std::string, std::pair<int, int>>{{"F16", {2, 12}}}));

  // Kept passthrough: the norm stays BF16; the config names the dequantized
  // weights' type.
  ASSERT_EQ(Remember(model, dir.path() / "kept", "--to f16 --keep-passthrough").exit_code, 0);
  const ReadBack kept(dir.path() / "kept" / "model.safetensors");
  EXPECT_EQ(kept.header["w.weight"]["dtype"], "F16");
  EXPECT_EQ(kept.header["norm.weight"]["dtype"], "BF16");
  EXPECT_EQ(kept.Data("norm.weight"), std::vector<uint8_t>({0x80, 0x3F, 0x40, 0x40}));
  EXPECT_EQ(ReadJson(dir.path() / "kept" / "config.json")["torch_dtype"], "float16");
}

// The header of a file in file order, its length, and its first key.
struct RawHeader {
  nlohmann::ordered_json json;
  uint64_t length = 0;
};

RawHeader ReadRawHeader(const fs::path& path) {
  const std::vector<uint8_t> file = ReadBytes(path);
  RawHeader h;
  for (int i = 7; i >= 0; --i) h.length = h.length << 8 | file[i];
  h.json = nlohmann::ordered_json::parse(file.begin() + 8,
                                         file.begin() + 8 + static_cast<long>(h.length));
  return h;
}

TEST(HonestOutput, FilesFollowTheReferenceLayout) {
  TempDir dir;
  SafetensorsBuilder m;
  m.Add("z", "U8", {3}, {1, 2, 3});
  m.Add("m", "I64", {1}, {9, 0, 0, 0, 0, 0, 0, 0});
  m.Add("b", "BF16", {1}, {0x80, 0x3F});
  m.Add("a", "BF16", {1}, {0x00, 0x40});
  m.Add("e", "BOOL", {1}, {1});
  m.Add("c", "F32", {1}, F32Bytes(1.0f));
  m.Add("d", "I16", {1}, {7, 0});
  m.Metadata("source", "kept");
  ASSERT_TRUE(m.Write(dir.path() / "in.safetensors"));
  ASSERT_EQ(
      Remember(dir.path() / "in.safetensors", dir.path() / "out.safetensors", "--keep-passthrough")
          .exit_code,
      0);
  const RawHeader h = ReadRawHeader(dir.path() / "out.safetensors");
  EXPECT_EQ(h.length % 8, 0u);
  // huggingface/safetensors `prepare`: by dtype (I64 > F32 > BF16 > I16 > U8 >
  // BOOL), then by name; each offset a multiple of its element size.
  std::vector<std::string> order;
  for (const auto& [key, value] : h.json.items()) order.push_back(key);
  EXPECT_EQ(order, (std::vector<std::string>{"__metadata__", "m", "c", "a", "b", "d", "z", "e"}));
  EXPECT_EQ(h.json["__metadata__"], nlohmann::ordered_json({{"format", "pt"}, {"source", "kept"}}));
  const std::map<std::string, std::pair<int, int>> offsets = {
      {"m", {0, 8}},   {"c", {8, 12}},  {"a", {12, 14}}, {"b", {14, 16}},
      {"d", {16, 18}}, {"z", {18, 21}}, {"e", {21, 22}}};
  for (const auto& [name, range] : offsets) {
    EXPECT_EQ(h.json[name]["data_offsets"], nlohmann::ordered_json({range.first, range.second}))
        << name;
  }
  const ReadBack out(dir.path() / "out.safetensors");
  EXPECT_EQ(out.Data("a"), std::vector<uint8_t>({0x00, 0x40}));
  EXPECT_EQ(out.Data("z"), std::vector<uint8_t>({1, 2, 3}));
  EXPECT_EQ(out.file.size(), 8 + h.length + 22);
}

TEST(HonestOutput, GgufAndNpyOutputsSayFormatPt) {
  TempDir dir;
  GgufWriter w(3);
  w.Header(1, 1).KvStr("general.name", "tiny").Tensor("t", {2}, 0, 0).PadTo(32);
  const std::vector<uint8_t> f32 = {0, 0, 0x80, 0x3F, 0, 0, 0, 0xC0};  // 1.0, -2.0
  w.Raw(f32.data(), f32.size());
  std::ofstream(dir.path() / "tiny.gguf", std::ios::binary)
      .write(reinterpret_cast<const char*>(w.bytes().data()),
             static_cast<std::streamsize>(w.bytes().size()));
  ASSERT_EQ(Remember(dir.path() / "tiny.gguf", dir.path() / "gguf.safetensors", "").exit_code, 0);
  const RawHeader g = ReadRawHeader(dir.path() / "gguf.safetensors");
  EXPECT_EQ(g.json["__metadata__"],
            nlohmann::ordered_json({{"format", "pt"}, {"general.name", "tiny"}}));
  EXPECT_EQ(g.json["t"]["dtype"], "BF16");

  // NPY v1.0: magic, version, header length 118 (10 + 118 = 128 bytes), the
  // dict padded with spaces and a newline, then two little-endian F32.
  std::string npy = std::string("\x93NUMPY\x01\x00", 8) + std::string("\x76\x00", 2);
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  dict.append(117 - dict.size(), ' ');
  npy += dict + "\n" + std::string(f32.begin(), f32.end());
  WriteFile(dir.path() / "a.npy", npy);
  ASSERT_EQ(Remember(dir.path() / "a.npy", dir.path() / "npy.safetensors", "").exit_code, 0);
  const RawHeader n = ReadRawHeader(dir.path() / "npy.safetensors");
  EXPECT_EQ(n.json["__metadata__"]["format"], "pt");
  EXPECT_EQ(n.json["a"]["dtype"], "F32");  // array formats keep dtypes without --to
}

// A GPTQ directory with everything a transformers repository carries.
TEST(HonestOutput, ModelDirectoryTravelsWithItsFiles) {
  TempDir dir;
  const fs::path model = dir.path() / "tiny-GPTQ";
  fs::create_directory(model);
  SafetensorsBuilder m;
  // 4-bit, 8 inputs x 8 outputs, one group of 8: every code 9, every v1
  // stored zero 7 (zero 8), every scale 1.0: (9 - 8) * 1.0 = 1.0 everywhere.
  std::vector<uint8_t> qweight;
  for (int i = 0; i < 8; ++i) qweight.insert(qweight.end(), {0x99, 0x99, 0x99, 0x99});
  std::vector<uint8_t> scales;
  for (int i = 0; i < 8; ++i) scales.insert(scales.end(), {0x00, 0x3C});
  m.Add("l.qweight", "I32", {1, 8}, qweight);
  m.Add("l.qzeros", "I32", {1, 1}, {0x77, 0x77, 0x77, 0x77});
  m.Add("l.scales", "F16", {1, 8}, scales);
  m.Add("norm.weight", "F16", {2}, {0x00, 0x3C, 0x00, 0x38});  // 1.0, 0.5
  ASSERT_TRUE(m.Write(model / "model.safetensors"));
  WriteFile(model / "model.safetensors.index.json",
            R"({"metadata": {"total_size": 1, "total_parameters": 1, "note": "kept"},)"
            R"( "weight_map": {"l.qweight": "model.safetensors", "l.qzeros": "model.safetensors",)"
            R"( "l.scales": "model.safetensors", "norm.weight": "model.safetensors"}})");
  WriteFile(model / "config.json",
            R"({"architectures": ["LlamaForCausalLM"], "torch_dtype": "float16"})");
  WriteFile(model / "quantize_config.json",
            R"({"bits": 4, "group_size": 8, "desc_act": false, "sym": true})");
  const std::vector<std::string> travel = {"tokenizer.json",
                                           "tokenizer_config.json",
                                           "special_tokens_map.json",
                                           "tokenizer.model",
                                           "vocab.json",
                                           "merges.txt",
                                           "chat_template.jinja",
                                           "chat_template.json",
                                           "generation_config.json",
                                           "README.md"};
  for (const std::string& name : travel) WriteFile(model / name, "contents of " + name);

  ASSERT_EQ(Remember(model, dir.path() / "out", "").exit_code, 0);
  const fs::path out = dir.path() / "out";
  for (const std::string& name : travel)
    EXPECT_EQ(SlurpText(out / name), SlurpText(model / name)) << name;
  EXPECT_FALSE(fs::exists(out / "quantize_config.json"))
      << "it describes a quantization that is gone";
  const ReadBack shard(out / "model.safetensors");
  EXPECT_EQ(shard.header["l.weight"]["shape"], Json({8, 8}));
  std::vector<uint8_t> ones;  // BF16 1.0 = 0x3F80
  for (int i = 0; i < 64; ++i) ones.insert(ones.end(), {0x80, 0x3F});
  EXPECT_EQ(shard.Data("l.weight"), ones);
  EXPECT_EQ(shard.Data("norm.weight"), std::vector<uint8_t>({0x80, 0x3F, 0x00, 0x3F}));
  const Json index = ReadJson(out / "model.safetensors.index.json");
  // 64 BF16 weights + 2 BF16 norm values: 132 bytes, 66 parameters.
  EXPECT_EQ(index["metadata"],
            Json({{"total_size", 132}, {"total_parameters", 66}, {"note", "kept"}}));
  EXPECT_EQ(index["weight_map"],
            Json({{"l.weight", "model.safetensors"}, {"norm.weight", "model.safetensors"}}));
  const Json config = ReadJson(out / "config.json");
  EXPECT_EQ(config["torch_dtype"], "bfloat16");
  EXPECT_EQ(config["architectures"], Json({"LlamaForCausalLM"}));
}

}  // namespace
}  // namespace amn::test
