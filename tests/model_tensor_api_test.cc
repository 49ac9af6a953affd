// amn::Model's per-tensor API (OutputTensors, DequantizeTensor,
// DequantizeTensorChunks) on a model of every fixture family
// (../shared/fixtures: FP8, GPTQ, AWQ, bitsandbytes, GGUF, NPZ, PyTorch):
// each tensor's bytes must equal those Model::Remember writes for it in its
// safetensors file, for any thread count and chunk size, and the quantized
// weights must equal the canonical libraries' BF16 bytes. Bad names, types,
// buffers and sinks fail with a status; concurrent calls agree.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "amn/model.h"
#include "fixtures/safetensors_builder.h"
#include "tests/bnb_fixture_model.h"
#include "tests/cli_files.h"
#include "tests/fixtures.h"
#include "tests/gguf_writer.h"
#include "tests/quant_fixture_files.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using fixtures::SafetensorsBuilder;
using Json = nlohmann::json;

constexpr char kPrefix[] = "model.layers.0.mlp.gate_proj";

std::string SlurpText(const fs::path& path) {
  const std::vector<uint8_t> bytes = ReadBytes(path);
  return std::string(bytes.begin(), bytes.end());
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

void WriteBytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::string Config(const Json& quantization_config) {
  return Json({{"architectures", {"LlamaForCausalLM"}}, {"quantization_config", quantization_config}}).dump();
}

std::vector<uint8_t> Norm() { return {0x00, 0x3C, 0x00, 0x40, 0x00, 0xC0, 0x00, 0x00}; }  // F16 1 2 -2 0

std::vector<uint8_t> AsU8(const std::vector<std::byte>& b) {
  std::vector<uint8_t> out(b.size());
  if (!b.empty()) std::memcpy(out.data(), b.data(), b.size());
  return out;
}

// DequantizeTensor into a buffer of exactly the tensor's size; small
// chunk_bytes make several chunks land in it at their offsets, in any order.
std::vector<uint8_t> Decode(const Model& model, const TensorInfo& t, std::optional<ElemType> to,
                            unsigned threads, size_t chunk_bytes = size_t{4} << 20) {
  std::vector<std::byte> out(t.bytes);
  DequantizeOptions options;
  options.threads = threads;
  options.chunk_bytes = chunk_bytes;
  const Status s = model.DequantizeTensor(t.name, to, out, options);
  EXPECT_TRUE(s.ok()) << t.name << ": " << s.ToString();
  return AsU8(out);
}

// DequantizeTensorChunks gathered; checks the ranges are consecutive and
// no bigger than asked where rows allow.
std::vector<uint8_t> DecodeChunks(const Model& model, const TensorInfo& t, std::optional<ElemType> to,
                                  unsigned threads, size_t chunk_bytes) {
  std::vector<uint8_t> out;
  DequantizeOptions options;
  options.threads = threads;
  options.chunk_bytes = chunk_bytes;
  const Status s = model.DequantizeTensorChunks(
      t.name, to,
      [&](uint64_t offset, std::span<const std::byte> bytes) {
        EXPECT_EQ(offset, out.size());
        const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
        out.insert(out.end(), p, p + bytes.size());
        return Status::Ok();
      },
      options);
  EXPECT_TRUE(s.ok()) << t.name << ": " << s.ToString();
  return out;
}

// Every output tensor of `input` against Model::Remember's file, for `to`;
// then each `expected` tensor (by name) against its reference bytes.
// Returns the listed tensors.
std::vector<TensorInfo> ExpectSameAsRemember(const fs::path& input, std::optional<ElemType> to,
                                             const std::map<std::string, std::vector<uint8_t>>& expected = {}) {
  SCOPED_TRACE(input.filename().string() + " to " + (to ? std::string(ElemTypeName(*to)) : "default"));
  auto model = Model::Open(input);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return {};
  TempDir dir;
  RememberOptions options;
  options.to = to;
  const Status remembered = model->Remember(dir.path() / "out.safetensors", options);
  EXPECT_TRUE(remembered.ok()) << remembered.ToString();
  if (!remembered.ok()) return {};
  const ReadBack back(dir.path() / "out.safetensors");
  auto list = model->OutputTensors(to);
  EXPECT_TRUE(list.ok()) << list.status().ToString();
  if (!list.ok()) return {};
  EXPECT_EQ(list->size() + 1, back.header.size()) << back.header.dump();  // + __metadata__
  for (const TensorInfo& t : *list) {
    SCOPED_TRACE(t.name);
    EXPECT_TRUE(back.header.contains(t.name));
    if (!back.header.contains(t.name)) continue;
    EXPECT_EQ(back.header[t.name]["dtype"], t.dtype);
    EXPECT_EQ(back.header[t.name]["shape"], Json(t.shape));
    const std::vector<uint8_t> want = back.Data(t.name);
    EXPECT_EQ(want.size(), t.bytes);
    EXPECT_TRUE(Decode(*model, t, to, 1) == want);
    EXPECT_TRUE(Decode(*model, t, to, 3) == want);
    EXPECT_TRUE(Decode(*model, t, to, 3, 700) == want);
    EXPECT_TRUE(Decode(*model, t, to, 1, 500) == want);
    EXPECT_TRUE(DecodeChunks(*model, t, to, 1, 1000) == want);
    EXPECT_TRUE(DecodeChunks(*model, t, to, 4, 333) == want);
    if (const auto it = expected.find(t.name); it != expected.end()) {
      EXPECT_TRUE(Decode(*model, t, to, 2) == it->second) << "reference bytes";
    }
  }
  for (const auto& [name, bytes] : expected) {
    EXPECT_TRUE(back.header.contains(name)) << name << " is not in the output";
  }
  // Every tensor from four threads at once, each with its own workers
  // (packed schemes and arrays through the guarded maps): the same bytes.
  std::atomic<int> mismatches{0};
  std::vector<std::thread> callers;
  for (unsigned c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      for (const TensorInfo& t : *list) {
        std::vector<std::byte> got(t.bytes);
        DequantizeOptions options;
        options.threads = 1 + c % 2;
        options.chunk_bytes = 600;
        const bool same = model->DequantizeTensor(t.name, to, got, options).ok() &&
                          (got.empty() || std::memcmp(got.data(), back.Data(t.name).data(), got.size()) == 0);
        if (!same) ++mismatches;
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(mismatches.load(), 0);
  return *list;
}

const TensorInfo* Find(const std::vector<TensorInfo>& list, const std::string& name) {
  for (const TensorInfo& t : list) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

TEST(ModelTensors, Fp8MatchesRememberAndPyTorch) {
  const auto files = FixtureFiles("fp8_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "fp8_reference");
  for (const fs::path& path : files) {
    const auto f = ReadFp8Fixture(path);
    ASSERT_TRUE(f) << path;
    const std::string scale_dtype = ScaleDtypeName(f->scale_dtype);
    SafetensorsBuilder m;
    m.Add("model.norm.weight", "F16", {4}, Norm());
    m.Add("layer.weight", "F8_E4M3", {f->rows, f->cols}, f->weight);
    if (f->scheme == 0) {
      m.Add("layer.weight_scale_inv", scale_dtype, {(f->rows + 127) / 128, (f->cols + 127) / 128}, f->scales);
    } else if (f->scheme == 1) {
      m.Add("layer.weight_scale", scale_dtype, {1}, f->scales);
    } else {
      m.Add("layer.weight_scale", scale_dtype, {f->rows, 1}, f->scales);
    }
    TempDir dir;
    ASSERT_TRUE(m.Write(dir.path() / "model-FP8.safetensors"));
    const auto list = ExpectSameAsRemember(dir.path() / "model-FP8.safetensors", std::nullopt,
                                           {{"layer.weight", f->expected}});
    ASSERT_EQ(list.size(), 2u);  // the scale is part of its weight
    const TensorInfo* w = Find(list, "layer.weight");
    ASSERT_NE(w, nullptr);
    EXPECT_TRUE(w->quantized);
    EXPECT_TRUE(w->converts);
    EXPECT_EQ(w->source_dtype, "F8_E4M3");
    EXPECT_NE(w->scheme.find("FP8 E4M3"), std::string::npos) << w->scheme;
    EXPECT_EQ(w->dtype, "BF16");
    EXPECT_EQ(w->shape, (std::vector<uint64_t>{f->rows, f->cols}));
    EXPECT_EQ(w->bytes, uint64_t{f->rows} * f->cols * 2);
    const TensorInfo* norm = Find(list, "model.norm.weight");
    ASSERT_NE(norm, nullptr);
    EXPECT_FALSE(norm->quantized);
    EXPECT_EQ(norm->source_dtype, "F16");
    ExpectSameAsRemember(dir.path() / "model-FP8.safetensors", ElemType::kF32);
    ExpectSameAsRemember(dir.path() / "model-FP8.safetensors", ElemType::kF16);
  }
}

TEST(ModelTensors, GptqMatchesRememberAndTheReference) {
  const auto files = FixtureFiles("gptq_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gptq_reference");
  for (const fs::path& path : files) {
    const auto f = ReadGptqFixture(path);
    ASSERT_TRUE(f) << path;
    const uint32_t groups = f->in / f->group_size;
    const std::string p = kPrefix;
    SafetensorsBuilder m;
    m.Add(p + ".qweight", "I32", {f->in * f->bits / 32, f->out}, f->qweight);
    m.Add(p + ".qzeros", "I32", {groups, f->out * f->bits / 32}, f->qzeros);
    m.Add(p + ".scales", ScaleDtypeName(f->scale_dtype), {groups, f->out}, f->scales);
    m.Add(p + ".g_idx", "I32", {f->in}, f->g_idx);
    m.Add("model.norm.weight", "F16", {4}, Norm());
    TempDir dir;
    ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
    WriteText(dir.path() / "config.json",
              Config({{"quant_method", "gptq"}, {"bits", f->bits}, {"group_size", f->group_size},
                      {"desc_act", false}, {"sym", true}}));
    const auto list = ExpectSameAsRemember(dir.path() / "model.safetensors", std::nullopt,
                                           {{p + ".weight", TransposeU16(f->expected, f->in, f->out)}});
    ASSERT_EQ(list.size(), 2u);
    const TensorInfo* w = Find(list, p + ".weight");
    ASSERT_NE(w, nullptr);
    EXPECT_TRUE(w->quantized);
    EXPECT_EQ(w->source_dtype, "I32");
    EXPECT_NE(w->scheme.find("GPTQ"), std::string::npos) << w->scheme;
    EXPECT_EQ(w->shape, (std::vector<uint64_t>{f->out, f->in}));
    ExpectSameAsRemember(dir.path() / "model.safetensors", ElemType::kF32);
  }
}

TEST(ModelTensors, AwqMatchesRememberAndTheReference) {
  const auto files = FixtureFiles("awq_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "awq_reference");
  for (const fs::path& path : files) {
    const auto f = ReadAwqFixture(path);
    ASSERT_TRUE(f) << path;
    const uint32_t groups = f->in / f->group_size;
    const std::string p = kPrefix;
    SafetensorsBuilder m;
    m.Add(p + ".qweight", "I32", {f->in, f->out / 8}, f->qweight);
    m.Add(p + ".qzeros", "I32", {groups, f->out / 8}, f->qzeros);
    m.Add(p + ".scales", ScaleDtypeName(f->scale_dtype), {groups, f->out}, f->scales);
    TempDir dir;
    ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
    WriteText(dir.path() / "config.json",
              Config({{"quant_method", "awq"}, {"bits", 4}, {"group_size", f->group_size},
                      {"version", "gemm"}, {"zero_point", true}}));
    const auto list = ExpectSameAsRemember(dir.path() / "model.safetensors", std::nullopt,
                                           {{p + ".weight", TransposeU16(f->expected, f->in, f->out)}});
    EXPECT_EQ(list.size(), 1u);
    ExpectSameAsRemember(dir.path() / "model.safetensors", ElemType::kF16);
  }
}

TEST(ModelTensors, BitsandbytesMatchesRememberAndTheReference) {
  const auto files = FixtureFiles("bnb_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "bnb_reference");
  int checked = 0;
  for (const fs::path& path : files) {
    const auto f = ReadBnbFixture(path);
    ASSERT_TRUE(f) << path;
    const std::string w = std::string(kPrefix) + ".weight";
    SafetensorsBuilder m;
    Json config;
    if (f->format == 1) {
      AddBnbInt8Layer(m, *f, kPrefix);
      config = {{"quant_method", "bitsandbytes"}, {"load_in_8bit", true}};
    } else {
      AddBnb4Layer(m, *f, w, {64, f->elements / 64});
      config = {{"quant_method", "bitsandbytes"}, {"load_in_4bit", true},
                {"bnb_4bit_quant_type", Bnb4QuantType(*f)}, {"bnb_4bit_use_double_quant", f->format == 2}};
    }
    TempDir dir;
    ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
    WriteText(dir.path() / "config.json", Config(config));
    const auto list = ExpectSameAsRemember(dir.path() / "model.safetensors", std::nullopt, {{w, f->expected}});
    ASSERT_EQ(list.size(), 1u) << "absmax, quant_map, quant_state, SCB are part of the weight";
    EXPECT_TRUE(list[0].quantized);
    ExpectSameAsRemember(dir.path() / "model.safetensors", ElemType::kF32);
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

TEST(ModelTensors, GgufMatchesRememberAndGgufPy) {
  const auto files = FixtureFiles("gguf_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gguf_reference");
  // Every fixture's blocks as one tensor of a single GGUF file.
  GgufWriter w(3);
  std::vector<GgmlBlockFixture> blocks;
  for (const fs::path& path : files) {
    const auto f = ReadGgmlBlockFixture(path);
    ASSERT_TRUE(f) << path;
    blocks.push_back(*f);
  }
  w.Header(blocks.size(), 0);
  uint64_t offset = 0;
  std::map<std::string, std::vector<uint8_t>> expected;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string name = files[i].stem().string();
    w.Tensor(name, {blocks[i].n}, blocks[i].type, offset);
    offset += (blocks[i].blocks.size() + 31) / 32 * 32;
    expected[name] = blocks[i].golden_bf16;
  }
  w.PadTo(32);
  for (const GgmlBlockFixture& b : blocks) w.Raw(b.blocks.data(), b.blocks.size()).PadTo(32);
  TempDir dir;
  WriteBytes(dir.path() / "model.gguf", w.bytes());
  const auto list = ExpectSameAsRemember(dir.path() / "model.gguf", std::nullopt, expected);
  ASSERT_EQ(list.size(), blocks.size());
  for (const TensorInfo& t : list) {
    EXPECT_TRUE(t.quantized) << t.name;
    EXPECT_EQ(t.scheme, "ggml " + t.source_dtype);
  }
  ExpectSameAsRemember(dir.path() / "model.gguf", ElemType::kF32);
}

TEST(ModelTensors, NpzMatchesRememberAndNumpy) {
  const auto files = FixtureFiles("npz_reference", ".npz");
  const auto refs = FixtureFiles("npz_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(refs, "npz_reference");
  ASSERT_FALSE(files.empty());
  // gemma_scope_reference.bin (array_formats_cli_test.cc): u32 count, then
  // per array: name, ndim + shape, dtype id, F32 data.
  const std::vector<uint8_t> ref = ReadBytes(refs.front());
  size_t at = 0;
  auto u32 = [&] {
    const uint32_t v = LoadLe32(&ref[at]);
    at += 4;
    return v;
  };
  std::map<std::string, std::vector<uint8_t>> expected;
  for (uint32_t n = u32(), i = 0; i < n; ++i) {
    const uint32_t name_len = u32();
    const std::string name(ref.begin() + static_cast<long>(at), ref.begin() + static_cast<long>(at + name_len));
    at += name_len;
    at += 8 * size_t{u32()};
    ASSERT_EQ(u32(), 11u);
    const uint32_t len = u32();
    expected[name] = {ref.begin() + static_cast<long>(at), ref.begin() + static_cast<long>(at + len)};
    at += len;
  }
  ASSERT_EQ(expected.size(), 5u);
  const auto list = ExpectSameAsRemember(files.front(), std::nullopt, expected);
  ASSERT_EQ(list.size(), 5u);
  for (const TensorInfo& t : list) {
    EXPECT_FALSE(t.quantized);
    EXPECT_EQ(t.dtype, "F32");
    EXPECT_TRUE(t.converts);
  }
  ExpectSameAsRemember(files.front(), ElemType::kBf16);
}

TEST(ModelTensors, PthMatchesRememberAndTorch) {
  const auto files = FixtureFiles("pth_reference", ".pth");
  AMN_SKIP_WITHOUT_FIXTURES(files, "pth_reference");
  for (const fs::path& file : files) {
    const Json ref = Json::parse(SlurpText(file.parent_path() / (file.stem().string() + "_reference.json")));
    std::map<std::string, std::vector<uint8_t>> expected;
    for (const Json& t : ref.at("tensors")) {
      const std::string hex = t.at("data_hex");
      std::vector<uint8_t> bytes;
      for (size_t i = 0; i + 1 < hex.size(); i += 2) {
        bytes.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
      }
      expected[t.at("name")] = bytes;
    }
    const auto list = ExpectSameAsRemember(file, std::nullopt, expected);
    EXPECT_EQ(list.size(), expected.size());
    ExpectSameAsRemember(file, ElemType::kF16);
  }
}

// --- Errors and threads ---------------------------------------------------------

class ModelTensorErrors : public testing::Test {
 protected:
  void SetUp() override {
    SafetensorsBuilder m;
    std::vector<uint8_t> codes(64 * 32), scale = {0x00, 0x00, 0x80, 0x3F};  // F32 1.0
    for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint8_t>(i * 7 % 0x7E);
    m.Add("layer.weight", "F8_E4M3", {64, 32}, codes);
    m.Add("layer.weight_scale", "F32", {1}, scale);
    m.Add("model.norm.weight", "F16", {4}, Norm());
    m.Add("ids", "I64", {2}, {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0});
    ASSERT_TRUE(m.Write(dir_.path() / "model.safetensors"));
    auto model = Model::Open(dir_.path() / "model.safetensors");
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_.emplace(std::move(*model));
  }
  TempDir dir_;
  std::optional<Model> model_;
};

TEST_F(ModelTensorErrors, BadNamesTypesBuffersAndSinksAreStatuses) {
  std::vector<std::byte> out(64 * 32 * 4);
  Status s = model_->DequantizeTensor("no.such.tensor", std::nullopt, out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no.such.tensor"), std::string::npos) << s.message();
  // A companion is part of its weight, not an output of its own.
  s = model_->DequantizeTensor("layer.weight_scale", std::nullopt, out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = model_->DequantizeTensor("layer.weight", ElemType::kF8E4m3, out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_EQ(model_->OutputTensors(ElemType::kF8E5m2).status().code(), StatusCode::kInvalidArgument);
  // One byte short: refused before anything is decoded.
  std::vector<std::byte> shorter(64 * 32 * 2 - 1, std::byte{0x5A});
  s = model_->DequantizeTensor("layer.weight", std::nullopt, shorter);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("4096"), std::string::npos) << s.message();
  EXPECT_EQ(shorter[0], std::byte{0x5A});
  s = model_->DequantizeTensor("layer.weight", std::nullopt, std::span<std::byte>());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // A longer buffer: only the tensor's bytes are written.
  std::vector<std::byte> longer(64 * 32 * 2 + 3, std::byte{0x5A});
  ASSERT_TRUE(model_->DequantizeTensor("layer.weight", std::nullopt, longer).ok());
  EXPECT_EQ(longer.back(), std::byte{0x5A});
  // A sink that fails stops the decode with its status.
  DequantizeOptions options;
  options.chunk_bytes = 256;
  options.threads = 2;
  int calls = 0;
  s = model_->DequantizeTensorChunks(
      "layer.weight", std::nullopt,
      [&](uint64_t, std::span<const std::byte>) {
        return ++calls == 3 ? Status(StatusCode::kIo, "engine buffer gone") : Status::Ok();
      },
      options);
  EXPECT_EQ(s.code(), StatusCode::kIo);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(model_->DequantizeTensorChunks("layer.weight", std::nullopt, TensorSink()).code(),
            StatusCode::kInvalidArgument);
  // Cancelled between chunks.
  std::atomic<bool> cancel{true};
  options.cancel = &cancel;
  EXPECT_EQ(model_->DequantizeTensor("layer.weight", std::nullopt, out, options).code(), StatusCode::kCancelled);
  // The limit on what a model makes applies to one tensor too.
  ParseLimits limits;
  limits.max_total_bytes = 3000;  // the input's 2076 bytes fit, the 4096 of the BF16 weight do not
  auto small = Model::Open(dir_.path() / "model.safetensors", limits);
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_EQ(small->DequantizeTensor("layer.weight", std::nullopt, out).code(), StatusCode::kLimitExceeded);
  EXPECT_TRUE(small->DequantizeTensor("model.norm.weight", std::nullopt, out).ok());
}

TEST_F(ModelTensorErrors, KeptDtypesAndTheListOrder) {
  for (std::optional<ElemType> to : {std::optional<ElemType>(), std::optional(ElemType::kF32)}) {
    auto list = model_->OutputTensors(to);
    ASSERT_TRUE(list.ok());
    ASSERT_EQ(list->size(), 3u);
    // By name, whatever the type.
    EXPECT_EQ((*list)[0].name, "ids");
    EXPECT_EQ((*list)[1].name, "layer.weight");
    EXPECT_EQ((*list)[2].name, "model.norm.weight");
    EXPECT_EQ((*list)[0].dtype, "I64");  // kept, as remember keeps it
    EXPECT_FALSE((*list)[0].converts);
    EXPECT_EQ((*list)[1].dtype, to ? "F32" : "BF16");
    std::vector<std::byte> ids(16);
    ASSERT_TRUE(model_->DequantizeTensor("ids", to, ids).ok());
    EXPECT_EQ(ids[8], std::byte{2});
  }
}

TEST_F(ModelTensorErrors, ConcurrentCallsAgree) {
  std::vector<std::byte> want(64 * 32 * 4), norm(16);
  ASSERT_TRUE(model_->DequantizeTensor("layer.weight", ElemType::kF32, want).ok());
  ASSERT_TRUE(model_->DequantizeTensor("model.norm.weight", ElemType::kF32, norm).ok());
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      // Half on the same tensor, half on another; types planned concurrently.
      for (int k = 0; k < 20; ++k) {
        DequantizeOptions options;
        options.threads = 1 + static_cast<unsigned>(i % 3);
        options.chunk_bytes = 512;
        const bool weight = i % 2 == 0;
        std::vector<std::byte> got(weight ? want.size() : norm.size());
        const Status s = model_->DequantizeTensor(weight ? "layer.weight" : "model.norm.weight",
                                                  ElemType::kF32, got, options);
        if (!s.ok() || got != (weight ? want : norm)) ++mismatches;
        std::vector<std::byte> bf16(weight ? want.size() / 2 : norm.size() / 2);
        if (!model_->DequantizeTensor(weight ? "layer.weight" : "model.norm.weight", ElemType::kBf16, bf16)
                 .ok()) {
          ++mismatches;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace amn::test
