// `amn convert --scheme <ggml type> --imatrix FILE`: a tensor with an entry
// in llama.cpp's legacy importance matrix is ggml_quantize_chunk of its F32
// values with that entry's per-column values (value / ncall), one without
// is the plain quantize; a wrong-sized entry is refused as llama-quantize
// does, nothing written; --imatrix with a float scheme is a usage error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "fixtures/safetensors_builder.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/fixtures.h"
#include "tests/ggml_oracle.h"
#include "tests/gguf_readback.h"
#include "tests/gguf_writer.h"
#include "tests/quant_fixture_files.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using fixtures::SafetensorsBuilder;
using Json = nlohmann::json;

struct DatEntry {
  std::string name;
  int32_t ncall;
  std::vector<float> values;
};

// llama-imatrix's legacy layout (formats/imatrix.h), with the trailer.
void WriteDat(const fs::path& path, const std::vector<DatEntry>& entries) {
  std::vector<uint8_t> b;
  auto i32 = [&](int32_t v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + 4);
  };
  i32(static_cast<int32_t>(entries.size()));
  for (const DatEntry& e : entries) {
    i32(static_cast<int32_t>(e.name.size()));
    b.insert(b.end(), e.name.begin(), e.name.end());
    i32(e.ncall);
    i32(static_cast<int32_t>(e.values.size()));
    const auto* p = reinterpret_cast<const uint8_t*>(e.values.data());
    b.insert(b.end(), p, p + e.values.size() * 4);
  }
  i32(4);  // last_call
  const std::string dataset = "calibration.txt";
  i32(static_cast<int32_t>(dataset.size()));
  b.insert(b.end(), dataset.begin(), dataset.end());
  WriteBytes(path, b);
}

// Positive, far from uniform (0.05 .. 60), as squared activations are.
std::vector<float> Importance(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t h = (static_cast<uint32_t>(i) * 2654435761u) ^ (seed * 40503u);
    v[i] = 0.05f + static_cast<float>(h % 1000) / 1000.0f * ((h >> 10) % 4 == 0 ? 60.0f : 2.0f);
  }
  return v;
}

TEST(ConvertCli, ImatrixEntriesAreGgmlQuantizeWithThem) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  GgufFixture q;
  if (!ReadGgufFixture("smollm2_q4_k.bin", q)) {
    GTEST_SKIP() << "fixture not found under " << FixturesDir() << "; set AMN_FIXTURES_DIR";
  }
  TempDir dir;
  const fs::path model = dir.path() / "m";
  WriteRealLlama(model, q.golden_bf16, /*odd=*/false);
  const fs::path f32 = dir.path() / "f32.gguf";
  ASSERT_EQ(RunAmn("convert -q " + Quote(model) + " -o " + Quote(f32) + " --scheme f32").exit_code,
            0);
  GgmlView ref;
  ASSERT_TRUE(LoadWithGgml(*ggml, f32, ref));
  const std::vector<uint8_t> ref_file = FileBytes(f32);

  // attn_q, ffn_down (rows of 96: Q4_K's fallback Q5_0 takes it too) and
  // output have entries; attn_k has none; one names no tensor; token_embd's
  // is the wrong size, which llama-quantize ignores for that tensor alone.
  // ncall 4: the values used are value / 4.
  const std::vector<DatEntry> entries = {{"blk.0.attn_q.weight", 4, Importance(256, 1)},
                                         {"blk.0.ffn_down.weight", 4, Importance(96, 2)},
                                         {"output.weight", 4, Importance(256, 3)},
                                         {"blk.7.attn_q.weight", 4, Importance(256, 4)},
                                         {"token_embd.weight", 4, Importance(100, 5)}};
  std::map<std::string, std::vector<float>> used;
  for (const DatEntry& e : entries) {
    std::vector<float> v = e.values;
    for (float& x : v) x /= 4.0f;
    used[e.name] = v;
  }
  used.erase("token_embd.weight");
  const fs::path imatrix = dir.path() / "imatrix.dat";
  WriteDat(imatrix, entries);

  for (const auto& [scheme, type] :
       std::vector<std::pair<std::string, int>>{
           {"q4_k", 12}, {"q4_0", 2}, {"iq3_s", 21}}) {
    SCOPED_TRACE(scheme);
    const fs::path out = dir.path() / (scheme + ".gguf");
    const CliResult r = RunAmn("convert " + Quote(model) + " -o " + Quote(out) + " --scheme " +
                               scheme + " --imatrix " + Quote(imatrix) + " --json -j 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json summary = Json::parse(r.out);
    EXPECT_EQ(summary["imatrix"]["tensors"], 3);
    EXPECT_EQ(summary["imatrix"]["file"], imatrix.string());
    GgmlView view;
    ASSERT_TRUE(LoadWithGgml(*ggml, out, view));
    const std::vector<uint8_t> file = FileBytes(out);
    int with = 0, without = 0;
    for (const GgmlView::Tensor& t : view.tensors) {
      SCOPED_TRACE(t.name);
      if (t.type == 0) continue;  // norms stay F32
      const GgmlView::Tensor* f = nullptr;
      for (const GgmlView::Tensor& c : ref.tensors) {
        if (c.name == t.name) f = &c;
      }
      ASSERT_NE(f, nullptr);
      const std::vector<float> values =
          Floats(Slice(ref_file, ref.data_offset + f->offset, f->size));
      const int64_t cols = static_cast<int64_t>(f->ne[0]);
      const std::vector<uint8_t> got = Slice(file, view.data_offset + t.offset, t.size);
      const std::vector<uint8_t> plain = ggml->Quantize(t.type, values, cols);
      const auto it = used.find(t.name);
      if (it == used.end()) {
        EXPECT_TRUE(got == plain) << "bytes differ from ggml_quantize_chunk without an imatrix";
        ++without;
        continue;
      }
      const std::vector<uint8_t> weighted = ggml->Quantize(t.type, values, cols, it->second.data());
      EXPECT_TRUE(weighted != plain) << "the importance values change nothing: a weak test";
      EXPECT_TRUE(got == weighted) << "bytes differ from ggml_quantize_chunk with the imatrix";
      ++with;
    }
    EXPECT_EQ(with, 3);
    EXPECT_EQ(without, 2);  // token_embd, attn_k
    // -j does not change a byte.
    const fs::path out1 = dir.path() / (scheme + "-j1.gguf");
    ASSERT_EQ(RunAmn("convert -q -j 1 " + Quote(model) + " -o " + Quote(out1) + " --scheme " +
                     scheme + " --imatrix " + Quote(imatrix))
                  .exit_code,
              0);
    EXPECT_TRUE(FileBytes(out1) == file);
  }
  const CliResult text = RunAmn("convert " + Quote(model) + " -o " + Quote(dir.path() / "t.gguf") +
                                " --scheme q4_k --imatrix " + Quote(imatrix));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Imatrix:     3 of them from "), std::string::npos) << text.out;
}

// llama-quantize throws on an entry of another size than the rows (but for
// token_embd.weight): refused in one line naming the file and the tensor,
// nothing written; --imatrix with a float scheme is a usage error.
TEST(ConvertCli, ImatrixOfTheWrongSizeOrForFloatsIsRefused) {
  GgufFixture q;
  if (!ReadGgufFixture("smollm2_q4_k.bin", q)) {
    GTEST_SKIP() << "fixture not found under " << FixturesDir() << "; set AMN_FIXTURES_DIR";
  }
  TempDir dir;
  const fs::path model = dir.path() / "m";
  WriteRealLlama(model, q.golden_bf16, /*odd=*/false);
  const fs::path imatrix = dir.path() / "wrong.dat";
  WriteDat(imatrix, {{"blk.0.attn_q.weight", 1, Importance(256, 1)},
                     {"blk.0.attn_k.weight", 1, Importance(255, 2)}});
  const std::vector<std::string> before = dir.Entries();
  for (const std::string scheme : {"q4_k", "q8_0"}) {
    const CliResult r =
        RunAmn("convert -q " + Quote(model) + " -o " + Quote(dir.path() / "out.gguf") +
               " --scheme " + scheme + " --imatrix " + Quote(imatrix));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(imatrix.string() + ": the entry for 'blk.0.attn_k.weight' has 255 values"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(dir.Entries(), before);
  }
  const CliResult f16 =
      RunAmn("convert -q " + Quote(model) + " -o " + Quote(dir.path() / "f16.gguf") +
             " --scheme f16 --imatrix " + Quote(imatrix));
  EXPECT_EQ(f16.exit_code, 2) << f16.err;
  EXPECT_NE(
      f16.err.find("--imatrix is for a ggml --scheme (q4_k, q4_0, ...); F16 is not quantized"),
      std::string::npos)
      << f16.err;
  EXPECT_EQ(std::count(f16.err.begin(), f16.err.end(), '\n'), 1) << f16.err;
  const CliResult missing =
      RunAmn("convert -q " + Quote(model) + " -o " + Quote(dir.path() / "q.gguf") +
             " --scheme q4_k --imatrix " + Quote(dir.path() / "none.dat"));
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_NE(missing.err.find("none.dat"), std::string::npos) << missing.err;
  EXPECT_EQ(dir.Entries(), before);
}

// A GGUF input with stacked experts (ne = [256, 8, 4]: 4 matrices of 8 rows,
// one engine chunk) and a GGUF imatrix (llama-imatrix's default output):
// each expert's rows are quantized with its own slice, in_sum2 / count, as
// llama-quantize does (one ggml_quantize_chunk per expert).
TEST(ConvertCli, ImatrixGgufGivesEachExpertItsSlice) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  TempDir dir;
  const uint64_t cols = 256, rows = 8, experts = 4;
  std::vector<float> w(cols * rows * experts), q(cols * 16);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = std::sin(0.37f * static_cast<float>(i)) * (1 + i % 7);
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = std::cos(0.11f * static_cast<float>(i)) * (1 + i % 5);
  const fs::path model = dir.path() / "moe.gguf";
  {
    GgufWriter g;
    g.Header(2, 1).KvStr("general.architecture", "qwen2moe");
    g.Tensor("blk.0.ffn_up_exps.weight", {cols, rows, experts}, 0, 0);
    g.Tensor("blk.0.attn_q.weight", {cols, 16}, 0, w.size() * 4);
    g.PadTo(32).Raw(w.data(), w.size() * 4).Raw(q.data(), q.size() * 4);
    WriteBytes(model, g.bytes());
  }
  const std::vector<float> sum2 = Importance(cols * experts, 9);
  const std::vector<float> counts = {2.0f, 5.0f, 8.0f, 3.0f};
  const fs::path imatrix = dir.path() / "imatrix.gguf";
  {
    GgufWriter g;
    g.Header(2, 1).KvStr("general.type", "imatrix");
    g.Tensor("blk.0.ffn_up_exps.weight.in_sum2", {cols, experts}, 0, 0);
    g.Tensor("blk.0.ffn_up_exps.weight.counts", {1, experts}, 0, 4096);
    g.PadTo(32).Raw(sum2.data(), sum2.size() * 4).Raw(counts.data(), counts.size() * 4);
    WriteBytes(imatrix, g.bytes());
  }
  std::vector<float> weights(sum2.size());
  for (size_t i = 0; i < sum2.size(); ++i) weights[i] = sum2[i] / counts[i / cols];
  for (const auto& [scheme, type] :
       std::vector<std::pair<std::string, int>>{{"q4_k", 12}, {"iq4_nl", 20}}) {
    SCOPED_TRACE(scheme);
    const fs::path out = dir.path() / (scheme + ".gguf");
    const CliResult r = RunAmn("convert " + Quote(model) + " -o " + Quote(out) + " --scheme " +
                               scheme + " --imatrix " + Quote(imatrix) + " --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(Json::parse(r.out)["imatrix"]["tensors"], 1);
    GgmlView view;
    ASSERT_TRUE(LoadWithGgml(*ggml, out, view));
    const std::vector<uint8_t> file = FileBytes(out);
    ASSERT_EQ(view.tensors.size(), 2u);
    std::vector<uint8_t> experts_want, experts_plain;
    for (uint64_t e = 0; e < experts; ++e) {
      const std::span<const float> m(w.data() + e * rows * cols, rows * cols);
      const std::vector<uint8_t> b = ggml->Quantize(type, m, cols, weights.data() + e * cols);
      experts_want.insert(experts_want.end(), b.begin(), b.end());
    }
    experts_plain = ggml->Quantize(type, w, cols);
    EXPECT_TRUE(experts_want != experts_plain) << "the importance values change nothing";
    const GgmlView::Tensor& t0 = view.tensors[0];
    EXPECT_EQ(t0.name, "blk.0.ffn_up_exps.weight");
    EXPECT_TRUE(Slice(file, view.data_offset + t0.offset, t0.size) == experts_want)
        << "bytes differ from ggml_quantize_chunk per expert with its imatrix slice";
    const GgmlView::Tensor& t1 = view.tensors[1];
    EXPECT_TRUE(Slice(file, view.data_offset + t1.offset, t1.size) == ggml->Quantize(type, q, cols))
        << "no entry: bytes differ from ggml_quantize_chunk without an imatrix";
  }
}

}  // namespace
}  // namespace amn::test
