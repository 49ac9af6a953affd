// Hostile input costs bounded work (issue 20): the model directory is the
// boundary for symlinks, one writer per output (the lock), schemes checked
// rather than guessed, and errors that name the file and the key.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures/safetensors_builder.h"
#include "formats/output_lock.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using fixtures::SafetensorsBuilder;
using Json = nlohmann::json;

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// A one-tensor plain model: remembering it needs no scheme.
bool WritePlainModel(const fs::path& path) {
  SafetensorsBuilder model;
  model.Add("model.norm.weight", "F32", {2}, {0, 0, 128, 63, 0, 0, 0, 64});
  return model.Write(path);
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// --- The model directory is the boundary --------------------------------------

TEST(ModelDirBoundary, SideFileLinkedOutsideIsSkippedWithAWarning) {
  TempDir dir;
  const fs::path model = dir.path() / "model";
  fs::create_directories(model);
  ASSERT_TRUE(WritePlainModel(model / "model.safetensors"));
  WriteText(dir.path() / "secret.txt", "not part of the model");
  fs::create_symlink(dir.path() / "secret.txt", model / "tokenizer.json");
  WriteText(model / "generation_config.json", "{}");
  const CliResult r = RunAmn("remember -q " + Quote(model) + " -o " + Quote(dir.path() / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.err, "warning")) << r.err;
  EXPECT_TRUE(Contains(r.err, "tokenizer.json")) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "out" / "tokenizer.json"));
  EXPECT_TRUE(fs::exists(dir.path() / "out" / "generation_config.json"));
}

TEST(ModelDirBoundary, ShardLinkedOutsideIsRefused) {
  TempDir dir;
  const fs::path model = dir.path() / "model";
  fs::create_directories(model);
  ASSERT_TRUE(WritePlainModel(dir.path() / "elsewhere.safetensors"));
  fs::create_symlink(dir.path() / "elsewhere.safetensors", model / "model.safetensors");
  const CliResult r = RunAmn("remember -q " + Quote(model) + " -o " + Quote(dir.path() / "out"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "model.safetensors")) << r.err;
  EXPECT_TRUE(Contains(r.err, "outside the model directory")) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
}

TEST(ModelDirBoundary, HuggingFaceCacheSnapshotLinksAreFollowed) {
  TempDir dir;
  const fs::path repo = dir.path() / "models--org--name";
  const fs::path snapshot = repo / "snapshots" / "0123abcd";
  fs::create_directories(snapshot);
  fs::create_directories(repo / "blobs");
  ASSERT_TRUE(WritePlainModel(repo / "blobs" / "aaaa"));
  WriteText(repo / "blobs" / "bbbb", "{\"tokenizer\": true}");
  WriteText(repo / "blobs" / "cccc", "{\"architectures\": [\"LlamaForCausalLM\"]}");
  fs::create_symlink("../../blobs/aaaa", snapshot / "model.safetensors");
  fs::create_symlink("../../blobs/bbbb", snapshot / "tokenizer.json");
  fs::create_symlink("../../blobs/cccc", snapshot / "config.json");
  const CliResult r = RunAmn("remember -q " + Quote(snapshot) + " -o " + Quote(dir.path() / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(Contains(r.err, "warning")) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() / "out" / "tokenizer.json"));
  EXPECT_TRUE(fs::exists(dir.path() / "out" / "config.json"));
}

// --- One writer per output ------------------------------------------------------

TEST(OutputLock, SecondWriterFailsNamingTheHoldersPid) {
  TempDir dir;
  const fs::path out = dir.path() / "out.safetensors";
  auto held = formats::OutputLock::Acquire(out);
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto second = formats::OutputLock::Acquire(out);
    const bool named = !second.ok() &&
                       Contains(second.status().message(), "PID " + std::to_string(::getppid()));
    ::_exit(named ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(OutputLock, RememberIntoALockedOutputFails) {
  TempDir dir;
  ASSERT_TRUE(WritePlainModel(dir.path() / "in.safetensors"));
  const fs::path out = dir.path() / "out.safetensors";
  {
    auto held = formats::OutputLock::Acquire(out);
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    const CliResult r = RunAmn("remember -q " + Quote(dir.path() / "in.safetensors") + " -o " + Quote(out));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(Contains(r.err, "PID " + std::to_string(::getpid()))) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  // Released (and its file removed): the next run writes, leaving no lock behind.
  const CliResult r = RunAmn("remember -q " + Quote(dir.path() / "in.safetensors") + " -o " + Quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(dir.Entries(), (std::vector<std::string>{"in.safetensors", "out.safetensors"}));
}

// --- Schemes checked, not guessed ------------------------------------------------

TEST(SchemeChecks, Fp8ScaleGridWithoutADeclaredBlockIsRefused) {
  TempDir dir;
  SafetensorsBuilder model;
  model.Add("layer.weight", "F8_E4M3", {256, 256}, std::vector<uint8_t>(256 * 256, 0x38));
  model.Add("layer.weight_scale_inv", "F32", {3, 3}, std::vector<uint8_t>(36, 0));
  ASSERT_TRUE(model.Write(dir.path() / "in.safetensors"));
  const CliResult r = RunAmn("remember -q " + Quote(dir.path() / "in.safetensors") + " -o " +
                             Quote(dir.path() / "out.safetensors"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "layer.weight")) << r.err;
  EXPECT_TRUE(Contains(r.err, "[3, 3]")) << r.err;
  EXPECT_TRUE(Contains(r.err, "[256, 256]")) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "out.safetensors"));
}

TEST(SchemeChecks, GptqGroupSizeZeroIsRefused) {
  TempDir dir;
  SafetensorsBuilder model;
  // 8 inputs x 8 outputs, 4-bit, one group.
  model.Add("l.qweight", "I32", {1, 8}, std::vector<uint8_t>(32, 0x11));
  model.Add("l.qzeros", "I32", {1, 1}, std::vector<uint8_t>(4, 0x77));
  model.Add("l.scales", "F16", {1, 8}, std::vector<uint8_t>(16, 0x3c));
  ASSERT_TRUE(model.Write(dir.path() / "model.safetensors"));
  WriteText(dir.path() / "config.json",
            Json({{"quantization_config", {{"quant_method", "gptq"}, {"bits", 4}, {"group_size", 0}}}})
                .dump());
  const CliResult r = RunAmn("remember -q " + Quote(dir.path() / "model.safetensors") + " -o " +
                             Quote(dir.path() / "out.safetensors"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "group_size is 0")) << r.err;
  EXPECT_TRUE(Contains(r.err, "l.qweight")) << r.err;
}

// --- Errors name the file and the key --------------------------------------------

TEST(ErrorMessages, OllamaManifestTypeErrorNamesTheKey) {
  TempDir dir;
  const fs::path manifests = dir.path() / "manifests" / "registry.ollama.ai" / "library" / "m";
  fs::create_directories(manifests);
  const Json manifest = {{"layers", Json::array({{{"mediaType", "application/vnd.ollama.image.model"},
                                                  {"digest", 5}}})}};
  WriteText(manifests / "latest", manifest.dump());
  const CliResult r = RunAmn("inspect ollama:m", "OLLAMA_MODELS=" + Quote(dir.path()) + " ");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "key \"layers[0].digest\": expected string, got number")) << r.err;
  EXPECT_TRUE(Contains(r.err, (manifests / "latest").string())) << r.err;
}

TEST(ErrorMessages, MalformedConfigNamesItsDirectory) {
  TempDir dir;
  const fs::path model = dir.path() / "model";
  fs::create_directories(model);
  ASSERT_TRUE(WritePlainModel(model / "model.safetensors"));
  WriteText(model / "config.json", "{\"quantization_config\": ");
  const CliResult r = RunAmn("inspect " + Quote(model));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, (model / "config.json").string())) << r.err;
}

}  // namespace
}  // namespace amn::test
