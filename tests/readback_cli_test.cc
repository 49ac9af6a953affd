// Every kind of `amn remember` output read back by an independent reader,
// tests/safetensors_readback.py (Python's json module and numpy, no amn
// code): safetensors FP8, GPTQ (sharded, with an index) and bitsandbytes
// checkpoints, an unquantized BF16 model, the generated demo model, GGUF,
// NPZ and PyTorch files, at the default type, other --to types and with
// --keep-passthrough. The reader checks the layout (header padding,
// __metadata__ format "pt", the reference writer's tensor order, aligned,
// contiguous offsets), the directory (index, config.json torch_dtype against
// the tensors, copied files), `amn inspect` of input and output against the
// files, and the values: the real-model fixtures' expected bytes, and numpy's
// conversions of the input's plain tensors.
//
// Exits 77 (ctest SKIP_RETURN_CODE) when neither python3 on PATH nor
// /usr/bin/python3 can import numpy.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fixtures/safetensors_builder.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/fixtures.h"
#include "tests/gguf_writer.h"
#include "tests/quant_fixture_files.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using fixtures::SafetensorsBuilder;
using Json = nlohmann::json;

std::string g_python;  // the interpreter that imports numpy, set by main

std::string Script() { return std::string(AMN_PROJECT_ROOT) + "/tests/safetensors_readback.py"; }

std::string Hex(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::vector<uint8_t> Le32s(std::initializer_list<float> values) {
  std::vector<uint8_t> out(4 * values.size());
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

void WriteBytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

// The files of a transformers model directory besides config.json.
std::vector<std::string> WriteTokenizerFiles(const fs::path& dir) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"tokenizer.json", R"({"version":"1.0","model":{"type":"BPE"}})"},
      {"tokenizer_config.json", R"({"bos_token":"<s>","chat_template":"{{ messages }}"})"},
      {"special_tokens_map.json", R"({"bos_token":"<s>","eos_token":"</s>"})"},
      {"tokenizer.model", std::string("\x0a\x05\x3c\x75\x6e\x6b\x3e\x00\xff", 9)},
      {"vocab.json", R"({"<s>":0,"</s>":1})"},
      {"merges.txt", "#version: 0.2\na b\n"},
      {"chat_template.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}"},
      {"generation_config.json", R"({"bos_token_id":0,"eos_token_id":1})"}};
  std::vector<std::string> names;
  for (const auto& [name, text] : files) {
    WriteFile(dir / name, text);
    names.push_back(name);
  }
  return names;
}

Json Inspect(const fs::path& path, const std::string& flags = "") {
  const CliResult r = RunAmn("inspect --json " + flags + " " + Quote(path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? Json::parse(r.out) : Json();
}

// One `amn remember INPUT -o OUTPUT FLAGS` run and what the reader checks.
struct Case {
  fs::path input, output;
  std::string flags;  // "--to f16 --keep-passthrough", ...
  Json to;            // "BF16" / "F16" / "F32" / null (kept)
  bool keep_passthrough = false;
  bool quantized = false;
  bool safetensors_input = false;  // the reader compares plain tensors with it
  Json expected = Json::array();
  Json metadata = Json::object();  // entries every output file's __metadata__ keeps
  std::vector<std::string> absent, copied, not_copied;
};

void RememberAndReadBack(const Case& c, const fs::path& work) {
  SCOPED_TRACE(c.input.filename().string() + " " + c.flags);
  const CliResult r =
      RunAmn("remember -q " + c.flags + " " + Quote(c.input) + " -o " + Quote(c.output));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json manifest = {{"output", c.output.string()},
                   {"to", c.to},
                   {"keep_passthrough", c.keep_passthrough},
                   {"quantized", c.quantized},
                   {"expected", c.expected},
                   {"absent", c.absent},
                   {"metadata", c.metadata},
                   {"copied", Json::object()},
                   {"not_copied", c.not_copied},
                   {"inspect", Inspect(c.output)},
                   {"remembered_bytes", Inspect(c.input, c.flags)["remembered_bytes"]}};
  if (c.safetensors_input) manifest["input"] = c.input.string();
  for (const std::string& name : c.copied) manifest["copied"][name] = (c.input / name).string();
  const fs::path path = work / "manifest.json";
  WriteFile(path, manifest.dump());
  const CliResult check = RunCommand(g_python, Quote(Script()) + " " + Quote(path));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

Json Expect(const std::string& name, const std::string& dtype, const Json& shape,
            const std::vector<uint8_t>& bytes, const std::string& how = "hex") {
  Json e = {{"name", name}, {"dtype", dtype}, {"shape", shape}};
  if (how == "hex") {
    e["hex"] = Hex(bytes);
  } else if (how == "near_bf16") {
    e["near_bf16_hex"] = Hex(bytes);
  } else {
    e["from_dtype"] = how;
    e["hex"] = Hex(bytes);
  }
  return e;
}

// --- safetensors checkpoints -------------------------------------------------

struct Fp8Fixture {
  uint32_t scheme, scale_dtype, rows, cols;
  std::vector<uint8_t> weight, scales, expected;
};

std::optional<Fp8Fixture> ReadFp8Fixture(const fs::path& path) {
  const std::vector<uint8_t> f = ReadBytes(path);
  if (f.size() < 28) return std::nullopt;
  Fp8Fixture x{
      HeaderField(f, 0), HeaderField(f, 1), HeaderField(f, 2), HeaderField(f, 3), {}, {}, {}};
  SectionReader r(f, 28);
  x.weight = r.Take(HeaderField(f, 4));
  x.scales = r.Take(HeaderField(f, 5));
  x.expected = r.Take(HeaderField(f, 6));
  if (!r.ok() || !r.at_end()) return std::nullopt;
  return x;
}

TEST(Readback, Fp8ModelDirectories) {
  const auto files = FixtureFiles("fp8_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "fp8_reference");
  for (const fs::path& path : files) {
    const auto x = ReadFp8Fixture(path);
    ASSERT_TRUE(x) << path;
    TempDir dir;
    const fs::path model = dir.path() / "model-FP8";
    fs::create_directory(model);
    const std::string w = "model.layers.0.mlp.down_proj.weight";
    const std::string scale_dtype = ScaleDtypeName(x->scale_dtype);
    SafetensorsBuilder m;
    m.Add("model.norm.weight", "BF16", {4}, {0x80, 0x3F, 0x00, 0x40, 0xC0, 0xBF, 0x01, 0x3C});
    m.Add(w, "F8_E4M3", {x->rows, x->cols}, x->weight);
    if (x->scheme == 0) {
      m.Add(w + "_scale_inv", scale_dtype, {(x->rows + 127) / 128, (x->cols + 127) / 128},
            x->scales);
    } else {
      const uint64_t n = x->scales.size() / (x->scale_dtype == 0 ? 4 : 2);
      m.Add("model.layers.0.mlp.down_proj.weight_scale", scale_dtype,
            x->scheme == 1 ? std::vector<uint64_t>{1} : std::vector<uint64_t>{n, 1}, x->scales);
    }
    m.Add("model.layers.0.mlp.down_proj.input_scale", "F32", {1}, Le32s({0.5f}));
    m.Add("model.rotary_emb.inv_freq", "F32", {3}, Le32s({1.0f, 0.1f, 3.0e-5f}));
    m.Add("model.position_ids", "I64", {2}, {1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0});
    m.Metadata("format", "pt").Metadata("producer", "test");
    ASSERT_TRUE(m.Write(model / "model.safetensors"));
    Json config = {{"architectures", {"LlamaForCausalLM"}}, {"torch_dtype", "bfloat16"}};
    if (x->scheme == 0) {
      config["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}};
    }
    WriteFile(model / "config.json", config.dump(2));
    Case c;
    c.input = model;
    c.quantized = true;
    c.safetensors_input = true;
    c.copied = WriteTokenizerFiles(model);
    c.absent = {w + "_scale_inv", "model.layers.0.mlp.down_proj.weight_scale",
                "model.layers.0.mlp.down_proj.input_scale"};
    c.metadata = {{"producer", "test"}};
    c.output = dir.path() / "bf16";
    c.to = "BF16";
    c.expected = Json::array({Expect(w, "BF16", {x->rows, x->cols}, x->expected)});
    RememberAndReadBack(c, dir.path());
    // F16: the fixture holds PyTorch's BF16 rounding of the same products.
    c.output = dir.path() / "f16";
    c.flags = "--to f16";
    c.to = "F16";
    c.expected = Json::array({Expect(w, "F16", {x->rows, x->cols}, x->expected, "near_bf16")});
    RememberAndReadBack(c, dir.path());
    c.output = dir.path() / "f16-kept";
    c.flags = "--to f16 --keep-passthrough";
    c.keep_passthrough = true;
    RememberAndReadBack(c, dir.path());
  }
}

constexpr char kPrefix[] = "model.layers.0.mlp.gate_proj";

TEST(Readback, GptqShardedDirectoryWithIndex) {
  const auto files = FixtureFiles("gptq_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gptq_reference");
  for (const fs::path& path : files) {
    const auto f = ReadGptqFixture(path);
    ASSERT_TRUE(f) << path;
    TempDir dir;
    const fs::path model = dir.path() / "m-GPTQ";
    fs::create_directory(model);
    const uint32_t groups = f->in / f->group_size;
    const std::string p = kPrefix;
    SafetensorsBuilder a, b;
    a.Add(p + ".qweight", "I32", {f->in * f->bits / 32, f->out}, f->qweight);
    a.Add("lm_head.weight", "F16", {2, 2}, {0x00, 0x3C, 0x00, 0xBC, 0x55, 0x35, 0xFF, 0x7B});
    b.Add(p + ".qzeros", "I32", {groups, f->out * f->bits / 32}, f->qzeros);
    b.Add(p + ".scales", ScaleDtypeName(f->scale_dtype), {groups, f->out}, f->scales);
    b.Add(p + ".g_idx", "I32", {f->in}, f->g_idx);
    b.Add("model.norm.weight", "F16", {4}, {0x00, 0x3C, 0x00, 0x40, 0x00, 0xC0, 0x01, 0x00});
    ASSERT_TRUE(a.Write(model / "model-00001-of-00002.safetensors"));
    ASSERT_TRUE(b.Write(model / "model-00002-of-00002.safetensors"));
    Json index = {{"metadata", {{"total_size", 1}, {"total_parameters", 1}}},
                  {"weight_map", Json::object()}};
    for (const std::string& n : a.Names())
      index["weight_map"][n] = "model-00001-of-00002.safetensors";
    for (const std::string& n : b.Names())
      index["weight_map"][n] = "model-00002-of-00002.safetensors";
    WriteFile(model / "model.safetensors.index.json", index.dump());
    const Json quant = {{"quant_method", "gptq"},
                        {"bits", f->bits},
                        {"group_size", f->group_size},
                        {"desc_act", false},
                        {"sym", true}};
    WriteFile(model / "config.json",
              Json({{"torch_dtype", "float16"}, {"quantization_config", quant}}).dump());
    WriteFile(model / "quantize_config.json", quant.dump());
    Case c;
    c.input = model;
    c.output = dir.path() / "out";
    c.to = "BF16";
    c.quantized = true;
    c.safetensors_input = true;
    c.copied = WriteTokenizerFiles(model);
    c.not_copied = {"quantize_config.json"};
    c.absent = {p + ".qweight", p + ".qzeros", p + ".scales", p + ".g_idx"};
    c.expected = Json::array(
        {Expect(p + ".weight", "BF16", {f->out, f->in}, TransposeU16(f->expected, f->in, f->out))});
    RememberAndReadBack(c, dir.path());
  }
}

TEST(Readback, BitsandbytesFiles) {
  const auto files = FixtureFiles("bnb_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "bnb_reference");
  for (const fs::path& path : files) {
    const auto f = ReadBnbFixture(path);
    ASSERT_TRUE(f) << path;
    TempDir dir;
    const std::string w = std::string(kPrefix) + ".weight";
    SafetensorsBuilder m;
    Json quant = {{"quant_method", "bitsandbytes"}};
    Json shape;
    if (f->format == 1) {
      m.Add(w, "I8", {f->rows, f->cols}, f->weight);
      // bitsandbytes saves SCB and weight_format at module level.
      m.Add(std::string(kPrefix) + ".SCB", "F32", {f->rows}, f->scb);
      m.Add(std::string(kPrefix) + ".weight_format", "U8", {}, {0});
      quant["load_in_8bit"] = true;
      shape = {f->rows, f->cols};
    } else {
      // NF4 and FP4 codebooks differ at index 8: FP4 stores +0.0 there.
      const std::string type = LoadLe32(&f->quant_map[32]) == 0 ? "fp4" : "nf4";
      shape = {64, f->elements / 64};
      m.Add(w, "U8", {f->elements / 2, 1}, f->packed);
      m.Add(w + ".absmax", f->format == 2 ? "U8" : "F32", {f->elements / f->block_size}, f->absmax);
      m.Add(w + ".quant_map", "F32", {16}, f->quant_map);
      Json state = {{"shape", shape},
                    {"blocksize", f->block_size},
                    {"quant_type", type},
                    {"dtype", "bfloat16"}};
      if (f->format == 2) {
        m.Add(w + ".nested_absmax", "F32", {f->nested_absmax.size() / 4}, f->nested_absmax);
        m.Add(w + ".nested_quant_map", "F32", {256}, f->nested_quant_map);
        state["nested_blocksize"] = 256;
        state["nested_offset"] = static_cast<double>(f->nested_offset);
      }
      const std::string text = state.dump();
      m.Add(w + ".quant_state.bitsandbytes__" + type, "U8", {text.size()},
            std::vector<uint8_t>(text.begin(), text.end()));
      quant["load_in_4bit"] = true;
      quant["bnb_4bit_quant_type"] = type;
      quant["bnb_4bit_use_double_quant"] = f->format == 2;
    }
    m.Add("model.norm.weight", "F32", {2}, Le32s({1.0f, -0.3f}));
    ASSERT_TRUE(m.Write(dir.path() / "model.safetensors"));
    WriteFile(dir.path() / "config.json", Json({{"quantization_config", quant}}).dump());
    Case c;
    c.input = dir.path() / "model.safetensors";
    c.output = dir.path() / "out.safetensors";
    c.to = "BF16";
    c.quantized = true;
    c.safetensors_input = true;
    c.absent = {w + ".absmax", w + ".quant_map", std::string(kPrefix) + ".SCB",
                std::string(kPrefix) + ".weight_format"};
    c.expected = Json::array({Expect(w, "BF16", shape, f->expected)});
    RememberAndReadBack(c, dir.path());
  }
}

// The headline of the rule: --to converts plain float tensors too.
TEST(Readback, UnquantizedModelDirectory) {
  TempDir dir;
  const fs::path model = dir.path() / "plain";
  fs::create_directory(model);
  SafetensorsBuilder m;
  m.Add("model.embed_tokens.weight", "BF16", {2, 3},
        {0x80, 0x3F, 0x00, 0xC0, 0x49, 0x40, 0x01, 0x00, 0x7F, 0x7F, 0x00, 0x80});
  m.Add("model.norm.weight", "F32", {2}, Le32s({1.0f, 1.0e-3f}));
  m.Add("model.layers.0.self_attn.rope.inv_freq", "F64", {1}, {0, 0, 0, 0, 0, 0, 0xF0, 0x3F});
  m.Add("model.position_ids", "I32", {3}, {0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0});
  ASSERT_TRUE(m.Write(model / "model.safetensors"));
  WriteFile(model / "config.json",
            R"({"torch_dtype": "bfloat16", "text_config": {"torch_dtype": "bfloat16"}})");
  Case c;
  c.input = model;
  c.safetensors_input = true;
  c.copied = WriteTokenizerFiles(model);
  for (const auto& [flag, type] :
       {std::pair{"f16", "F16"}, std::pair{"f32", "F32"}, std::pair{"bf16", "BF16"}}) {
    c.output = dir.path() / flag;
    c.flags = std::string("--to ") + flag;
    c.to = type;
    c.keep_passthrough = false;
    RememberAndReadBack(c, dir.path());
    c.output = dir.path() / (std::string(flag) + "-kept");
    c.flags += " --keep-passthrough";
    c.keep_passthrough = true;
    RememberAndReadBack(c, dir.path());
  }
}

TEST(Readback, GeneratedDemoModel) {
  TempDir dir;
  const fs::path model = dir.path() / "demo-FP8";
  const CliResult r = RunBuilt(AMN_DEMO_GENERATOR_PATH, Quote(model) + " 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Case c;
  c.input = model;
  c.output = dir.path() / "demo-f32";
  c.flags = "--to f32";
  c.to = "F32";
  c.quantized = true;
  c.safetensors_input = true;
  c.copied = {"generation_config.json", "tokenizer_config.json"};
  RememberAndReadBack(c, dir.path());
}

// --- GGUF, NPZ, PyTorch --------------------------------------------------------

TEST(Readback, GgufFixturesAndPlainTypes) {
  const auto files = FixtureFiles("gguf_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(files, "gguf_reference");
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;  // GGUF order, fastest first
    uint32_t type;
    std::vector<uint8_t> raw;
    std::string dtype;              // plain types: the safetensors dtype
    std::vector<uint8_t> expected;  // quantized: gguf-py's BF16
  };
  std::vector<Tensor> tensors;
  for (const fs::path& path : files) {
    const std::vector<uint8_t> f = ReadBytes(path);
    const uint32_t type = LoadLe32(&f[0]), n = LoadLe32(&f[4]), raw = LoadLe32(&f[8]);
    tensors.push_back({"blk." + path.stem().string() + ".weight",
                       {256, n / 256},
                       type,
                       {f.begin() + 16, f.begin() + 16 + raw},
                       "",
                       {f.begin() + 16 + raw, f.end()}});
  }
  tensors.push_back(
      {"token_embd.weight", {3, 2}, 0, Le32s({1.5f, -2.0f, 3.1f, 1.0e-8f, 7.0f, 0.0f}), "F32", {}});
  tensors.push_back(
      {"output_norm.weight", {4}, 1, {0x00, 0x3C, 0x00, 0xC0, 0x01, 0x00, 0xFF, 0x7B}, "F16", {}});
  tensors.push_back({"rope_freqs.weight",
                     {2},
                     28,
                     {0, 0, 0, 0, 0, 0, 0xF0, 0x3F, 0x9A, 0x99, 0x99, 0x99, 0x99, 0x99, 0xB9, 0x3F},
                     "F64",
                     {}});
  tensors.push_back(
      {"token_types", {3}, 26, {1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 7, 0, 0, 0}, "I32", {}});
  GgufWriter gguf(3);
  gguf.Header(tensors.size(), 2)
      .KvStr("general.architecture", "llama")
      .KvStr("general.name", "readback");
  uint64_t offset = 0;
  for (const Tensor& t : tensors) {
    gguf.Tensor(t.name, t.dims, t.type, offset);
    offset += (t.raw.size() + 31) / 32 * 32;
  }
  gguf.PadTo(32);
  for (const Tensor& t : tensors) gguf.Raw(t.raw.data(), t.raw.size()).PadTo(32);
  TempDir dir;
  const fs::path in = dir.path() / "model-Q4_K_M.gguf";
  WriteBytes(in, gguf.bytes());
  for (const auto& [flags, type] : {std::pair{"", "BF16"}, std::pair{"--to f32", "F32"},
                                    std::pair{"--to f16 --keep-passthrough", "F16"}}) {
    Case c;
    c.input = in;
    c.output = dir.path() / (std::string(type) + ".safetensors");
    c.flags = flags;
    c.to = type;
    c.metadata = {{"general.architecture", "llama"}, {"general.name", "readback"}};
    c.quantized = true;
    c.keep_passthrough = std::string(flags).find("keep") != std::string::npos;
    for (const Tensor& t : tensors) {
      const Json shape(std::vector<uint64_t>(t.dims.rbegin(), t.dims.rend()));
      if (t.dtype.empty()) {
        c.expected.push_back(Expect(t.name, type, shape, t.expected,
                                    std::string(type) == "BF16" ? "hex" : "near_bf16"));
      } else if (t.dtype == "I32" || c.keep_passthrough) {
        c.expected.push_back(Expect(t.name, t.dtype, shape, t.raw));
      } else {
        c.expected.push_back(Expect(t.name, type, shape, t.raw, t.dtype));
      }
    }
    RememberAndReadBack(c, dir.path());
  }
}

TEST(Readback, NpzFixture) {
  const auto npz = FixtureFiles("npz_reference", ".npz");
  const auto refs = FixtureFiles("npz_reference", ".bin");
  AMN_SKIP_WITHOUT_FIXTURES(refs, "npz_reference");
  ASSERT_FALSE(npz.empty());
  // gemma_scope_reference.bin (../shared/fixtures/README.md): per array, its
  // name, original shape (skipped), dtype id and the F32 bytes.
  const std::vector<uint8_t> ref = ReadBytes(refs.front());
  size_t at = 0;
  auto u32 = [&] {
    const uint32_t v = LoadLe32(&ref[at]);
    at += 4;
    return v;
  };
  std::vector<std::pair<std::string, std::vector<uint8_t>>> arrays;
  for (uint32_t n = u32(), i = 0; i < n; ++i) {
    const uint32_t name_len = u32();
    std::string name(ref.begin() + static_cast<long>(at),
                     ref.begin() + static_cast<long>(at + name_len));
    at += name_len;
    at += 8 * size_t{u32()};
    ASSERT_EQ(u32(), 11u) << "F32";
    const uint32_t len = u32();
    arrays.emplace_back(name, std::vector<uint8_t>(ref.begin() + static_cast<long>(at),
                                                   ref.begin() + static_cast<long>(at + len)));
    at += len;
  }
  TempDir dir;
  for (const auto& [flags, type] : {std::pair{"", ""}, std::pair{"--to bf16", "BF16"}}) {
    Case c;
    c.input = npz.front();
    c.output = dir.path() / (std::string("out") + type + ".safetensors");
    c.flags = flags;
    if (*type != '\0') c.to = type;
    for (const auto& [name, bytes] : arrays) {
      c.expected.push_back(*type == '\0' ? Expect(name, "F32", {bytes.size() / 4}, bytes)
                                         : Expect(name, type, {bytes.size() / 4}, bytes, "F32"));
    }
    RememberAndReadBack(c, dir.path());
  }
}

TEST(Readback, PthFixtures) {
  const auto files = FixtureFiles("pth_reference", ".pth");
  AMN_SKIP_WITHOUT_FIXTURES(files, "pth_reference");
  for (const fs::path& file : files) {
    const Json ref =
        Json::parse(SlurpText(file.parent_path() / (file.stem().string() + "_reference.json")));
    TempDir dir;
    for (const auto& [flags, type] : {std::pair{"", ""}, std::pair{"--to f16", "F16"}}) {
      Case c;
      c.input = file;
      c.output = dir.path() / (std::string("out") + type + ".safetensors");
      c.flags = flags;
      if (*type != '\0') c.to = type;
      for (const Json& t : ref.at("tensors")) {
        Json e = {{"name", t["name"]}, {"shape", t["shape"]}, {"hex", t["data_hex"]}};
        e["dtype"] = *type == '\0' ? t["dtype"] : Json(type);
        if (*type != '\0') e["from_dtype"] = t["dtype"];
        c.expected.push_back(e);
      }
      RememberAndReadBack(c, dir.path());
    }
  }
}

// The first Python that imports numpy (python3 on PATH, then Debian's).
std::string FindPython() {
  for (const char* python : {"python3", "/usr/bin/python3"}) {
    if (RunCommand(python, Quote(Script()) + " --probe").exit_code == 0) return python;
  }
  return "";
}

}  // namespace
}  // namespace amn::test

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  amn::test::g_python = amn::test::FindPython();
  if (amn::test::g_python.empty()) {
    std::printf("skipped: neither python3 nor /usr/bin/python3 can import numpy\n");
    return 77;
  }
  return RUN_ALL_TESTS();
}
