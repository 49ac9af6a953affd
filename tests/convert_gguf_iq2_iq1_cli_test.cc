// `amn convert --scheme iq2_xxs|iq2_xs|iq2_s|iq1_s|iq1_m --imatrix FILE`:
// each quantized tensor is ggml_quantize_chunk of its F32 values with its
// importance values (rows of 96 fall back to IQ4_NL, as llama-quantize's
// tensor_type_fallback); a tensor without an entry is refused where ggml
// or llama-quantize (tensor_requires_imatrix) refuse it, nothing written;
// without --imatrix those schemes are a usage error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/fixtures.h"
#include "tests/ggml_oracle.h"
#include "tests/gguf_readback.h"
#include "tests/quant_fixture_files.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;

// llama-imatrix's legacy .dat (formats/imatrix.h) with ncall 1 and its
// trailer: the values used are the values given.
void WriteDat(const fs::path& path, const std::map<std::string, std::vector<float>>& entries) {
  std::vector<uint8_t> b;
  auto i32 = [&](int32_t v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + 4);
  };
  i32(static_cast<int32_t>(entries.size()));
  for (const auto& [name, values] : entries) {
    i32(static_cast<int32_t>(name.size()));
    b.insert(b.end(), name.begin(), name.end());
    i32(1);
    i32(static_cast<int32_t>(values.size()));
    const auto* p = reinterpret_cast<const uint8_t*>(values.data());
    b.insert(b.end(), p, p + values.size() * 4);
  }
  i32(1);
  i32(0);  // empty dataset name
  WriteBytes(path, b);
}

std::vector<float> Importance(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t h = (static_cast<uint32_t>(i) * 2654435761u) ^ (seed * 40503u);
    v[i] = 0.05f + static_cast<float>(h % 1000) / 1000.0f * ((h >> 10) % 4 == 0 ? 30.0f : 2.0f);
  }
  return v;
}

class ConvertIq2Iq1 : public ::testing::Test {
 protected:
  void SetUp() override {
    GgufFixture q;
    if (!ReadGgufFixture("smollm2_q4_k.bin", q)) {
      GTEST_SKIP() << "fixture not found under " << FixturesDir() << "; set AMN_FIXTURES_DIR";
    }
    model_ = dir_.path() / "m";
    WriteRealLlama(model_, q.golden_bf16, /*odd=*/false);
    // Every quantized tensor of WriteRealLlama's model (ffn_down: rows of 96).
    all_ = {{"token_embd.weight", Importance(256, 1)},
            {"blk.0.attn_q.weight", Importance(256, 2)},
            {"blk.0.attn_k.weight", Importance(256, 3)},
            {"blk.0.ffn_down.weight", Importance(96, 4)},
            {"output.weight", Importance(256, 5)}};
  }
  TempDir dir_;
  fs::path model_;
  std::map<std::string, std::vector<float>> all_;
};

TEST_F(ConvertIq2Iq1, WithoutImatrixTheSchemeIsAUsageError) {
  for (const std::string scheme : {"iq2_xxs", "iq2_xs", "iq2_s", "iq1_s", "iq1_m"}) {
    std::string upper = scheme;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    const CliResult r = RunAmn("convert -q " + Quote(model_) + " -o " +
                               Quote(dir_.path() / "o.gguf") + " --scheme " + scheme);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--scheme " + scheme + " needs --imatrix FILE: " + upper),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir_.path() / "o.gguf"));
  }
}

// A tensor without an entry: attn_k for every type; token_embd and output
// only where ggml's encoder itself needs the values (IQ2_XXS, IQ2_XS,
// IQ1_S), since llama-quantize exempts those two tensors.
TEST_F(ConvertIq2Iq1, ATensorWithoutAnEntryIsRefusedNamingIt) {
  std::map<std::string, std::vector<float>> no_k = all_;
  no_k.erase("blk.0.attn_k.weight");
  const fs::path no_k_dat = dir_.path() / "no_k.dat";
  WriteDat(no_k_dat, no_k);
  std::map<std::string, std::vector<float>> no_embd = all_;
  no_embd.erase("token_embd.weight");
  const fs::path no_embd_dat = dir_.path() / "no_embd.dat";
  WriteDat(no_embd_dat, no_embd);
  const std::vector<std::string> before = dir_.Entries();
  for (const std::string scheme : {"iq2_xxs", "iq2_xs", "iq2_s", "iq1_s", "iq1_m"}) {
    SCOPED_TRACE(scheme);
    const CliResult r = RunAmn("convert -q " + Quote(model_) + " -o " +
                               Quote(dir_.path() / "o.gguf") + " --scheme " + scheme +
                               " --imatrix " + Quote(no_k_dat));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("tensor 'blk.0.attn_k.weight': "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("needs importance values and " + no_k_dat.string() +
                         " has no usable entry for it"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(dir_.Entries(), before);
    const bool ggml_needs = scheme == "iq2_xxs" || scheme == "iq2_xs" || scheme == "iq1_s";
    const CliResult e = RunAmn("convert -q " + Quote(model_) + " -o " +
                               Quote(dir_.path() / "e.gguf") + " --scheme " + scheme +
                               " --imatrix " + Quote(no_embd_dat));
    EXPECT_EQ(e.exit_code, ggml_needs ? 1 : 0) << e.err;
    if (ggml_needs) {
      EXPECT_NE(e.err.find("tensor 'token_embd.weight': "), std::string::npos) << e.err;
    }
    fs::remove(dir_.path() / "e.gguf");
  }
}

// With every entry (and IQ2_S / IQ1_M also without token_embd's), each
// tensor is ggml's bytes: the type or its IQ4_NL fallback, weighted where
// there is an entry, plain where there is none.
TEST_F(ConvertIq2Iq1, TensorsAreGgmlQuantizeWithTheirImportance) {
  const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();
  const fs::path f32 = dir_.path() / "f32.gguf";
  ASSERT_EQ(
      RunAmn("convert -q " + Quote(model_) + " -o " + Quote(f32) + " --scheme f32").exit_code, 0);
  GgmlView ref;
  ASSERT_TRUE(LoadWithGgml(*ggml, f32, ref));
  const std::vector<uint8_t> ref_file = FileBytes(f32);
  const fs::path all_dat = dir_.path() / "all.dat";
  WriteDat(all_dat, all_);
  std::map<std::string, std::vector<float>> no_embd = all_;
  no_embd.erase("token_embd.weight");
  const fs::path no_embd_dat = dir_.path() / "no_embd.dat";
  WriteDat(no_embd_dat, no_embd);
  const std::vector<std::pair<std::string, int>> schemes = {
      {"iq2_xxs", 16}, {"iq2_xs", 17}, {"iq2_s", 22}, {"iq1_s", 19}, {"iq1_m", 29}};
  for (const auto& [scheme, type] : schemes) {
    for (const bool skip_embd : {false, true}) {
      if (skip_embd && (type == 16 || type == 17 || type == 19)) continue;
      SCOPED_TRACE(scheme + (skip_embd ? " without token_embd's entry" : ""));
      const fs::path out = dir_.path() / (scheme + ".gguf");
      const CliResult r =
          RunAmn("convert -q " + Quote(model_) + " -o " + Quote(out) + " --scheme " + scheme +
                 " --imatrix " + Quote(skip_embd ? no_embd_dat : all_dat));
      ASSERT_EQ(r.exit_code, 0) << r.err;
      GgmlView view;
      ASSERT_TRUE(LoadWithGgml(*ggml, out, view));
      const std::vector<uint8_t> file = FileBytes(out);
      int quantized = 0;
      for (const GgmlView::Tensor& t : view.tensors) {
        SCOPED_TRACE(t.name);
        if (t.type == 0) continue;  // norms stay F32
        const GgmlView::Tensor* f = nullptr;
        for (const GgmlView::Tensor& c : ref.tensors) {
          if (c.name == t.name) f = &c;
        }
        ASSERT_NE(f, nullptr);
        const int64_t cols = static_cast<int64_t>(f->ne[0]);
        EXPECT_EQ(t.type, cols % 256 == 0 ? type : 20);  // IQ4_NL for rows of 96
        const std::vector<float> values =
            Floats(Slice(ref_file, ref.data_offset + f->offset, f->size));
        const bool has = !(skip_embd && t.name == "token_embd.weight");
        const std::vector<uint8_t> want =
            ggml->Quantize(t.type, values, cols, has ? all_.at(t.name).data() : nullptr);
        EXPECT_TRUE(Slice(file, view.data_offset + t.offset, t.size) == want)
            << "bytes differ from ggml_quantize_chunk";
        ++quantized;
      }
      EXPECT_EQ(quantized, 5);
      fs::remove(out);
    }
  }
}

}  // namespace
}  // namespace amn::test
