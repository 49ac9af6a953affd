// The C++ model API (amn/model.h) without the CLI: default output names,
// progress reports, cancellation (nothing left behind), keep_passthrough,
// and scheme counts on the generated demo model.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "amn/model.h"
#include "tests/cli_runner.h"

namespace amn {
namespace {

namespace fs = std::filesystem;

// qemu-user (AMN_TEST_EMULATED, a cross build's tests) may hang when a
// thread starts: there every run takes one thread, which starts none.
unsigned Threads(unsigned native) {
  const char* emulated = std::getenv("AMN_TEST_EMULATED");
  return emulated != nullptr && std::string(emulated) == "1" ? 1 : native;
}

TEST(ModelApi, DefaultOutputPathReplacesQuantSuffixes) {
  struct Case {
    const char* in;
    ElemType to;
    const char* out;
  };
  const Case cases[] = {
      {"/m/model-FP8.safetensors", ElemType::kBf16, "/m/model-bf16.safetensors"},
      {"/m/model-fp8.safetensors", ElemType::kF16, "/m/model-f16.safetensors"},
      {"/m/weights.safetensors", ElemType::kBf16, "/m/weights-bf16.safetensors"},
      {"/m/Qwen3-8B-FP8", ElemType::kBf16, "/m/Qwen3-8B-bf16"},
      {"/m/Qwen3-8B-FP8/", ElemType::kF32, "/m/Qwen3-8B-f32"},
      {"/m/Llama-3.2-1B-Instruct-FP8-dynamic", ElemType::kBf16, "/m/Llama-3.2-1B-Instruct-bf16"},
      {"/m/Qwen2-7B-GPTQ-Int4", ElemType::kBf16, "/m/Qwen2-7B-bf16"},
      {"rel-FP8.safetensors", ElemType::kBf16, "rel-bf16.safetensors"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Model::DefaultOutputPath(c.in, c.to), fs::path(c.out)) << c.in;
  }
}

class ModelApiOnDemo : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("amn_model_api_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const test::CliResult r =
        test::RunBuilt(AMN_DEMO_GENERATOR_PATH, "'" + (dir_ / "demo-FP8").string() + "' 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

TEST_F(ModelApiOnDemo, InspectCountsTheScheme) {
  auto model = Model::Open(dir_ / "demo-FP8");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const InspectInfo info = model->Inspect();
  EXPECT_TRUE(info.quantized);
  EXPECT_TRUE(info.unsupported.empty());
  EXPECT_EQ(info.shards, 2u);
  EXPECT_EQ(info.quantized_tensors, 8u);
  EXPECT_EQ(info.companion_tensors, 8u);
  EXPECT_EQ(info.dropped_tensors, 8u);
  EXPECT_EQ(info.passthrough_tensors, 2u * 2 + 3);  // 2 norms per layer + embed, norm, lm_head
  EXPECT_EQ(info.scheme, "Fine-grained FP8, 128x128 blocks (E4M3)");
}

// RememberOptions::keep_passthrough: the demo's passthrough tensors (BF16
// norms and embeddings) become F16 with `to` unless it is set.
TEST_F(ModelApiOnDemo, KeepPassthroughKeepsTheOtherTensors) {
  auto model = Model::Open(dir_ / "demo-FP8");
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->Inspect(ElemType::kF16).converted_tensors, 7u);
  EXPECT_EQ(model->Inspect(ElemType::kF16, true).converted_tensors, 0u);
  RememberOptions options;
  options.threads = Threads(0);
  options.to = ElemType::kF16;
  ASSERT_TRUE(model->Remember(dir_ / "all", options).ok());
  options.keep_passthrough = true;
  ASSERT_TRUE(model->Remember(dir_ / "kept", options).ok());
  auto dtypes = [](const fs::path& path) {
    std::vector<std::string> names;
    auto out = Model::Open(path);
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    if (out.ok()) {
      for (const DtypeStat& d : out->Inspect().dtypes) names.push_back(d.dtype);
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  EXPECT_EQ(dtypes(dir_ / "all"), std::vector<std::string>{"F16"});
  EXPECT_EQ(dtypes(dir_ / "kept"), (std::vector<std::string>{"BF16", "F16"}));
}

TEST_F(ModelApiOnDemo, ProgressReachesTheTotal) {
  auto model = Model::Open(dir_ / "demo-FP8");
  ASSERT_TRUE(model.ok());
  RememberProgress last;
  int calls = 0;
  RememberOptions options;
  options.threads = Threads(2);
  options.progress = [&](const RememberProgress& p) {
    EXPECT_GE(p.bytes_done, last.bytes_done);
    last = p;
    ++calls;
  };
  ASSERT_TRUE(model->Remember(dir_ / "out", options).ok());
  EXPECT_GT(calls, 1);
  EXPECT_EQ(last.bytes_done, last.bytes_total);
  EXPECT_EQ(last.tensors_done, last.tensors_total);
  uint64_t on_disk = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "out")) {
    if (e.path().extension() == ".safetensors") on_disk += fs::file_size(e.path());
  }
  EXPECT_EQ(on_disk, last.bytes_total);
}

TEST_F(ModelApiOnDemo, CancelStopsAndLeavesNothing) {
  auto model = Model::Open(dir_ / "demo-FP8");
  ASSERT_TRUE(model.ok());
  std::atomic<bool> cancel{true};
  RememberOptions options;
  options.threads = Threads(0);
  options.cancel = &cancel;
  const Status status = model->Remember(dir_ / "out", options);
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
  EXPECT_EQ(Entries(), std::vector<std::string>{"demo-FP8"});
}

}  // namespace
}  // namespace amn
