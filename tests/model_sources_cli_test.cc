// Where models live on disk besides plain paths: Ollama's store (hf.co/ names
// included) and the Hugging Face hub cache, with --verify recomputing the
// sha256 each blob is named by. Layouts are generated in a temp dir.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures/safetensors_builder.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/gguf_writer.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

void WriteBytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// sha256sum's digest (coreutils), independent of amn's own SHA-256.
std::string Sha256sum(const fs::path& path) {
  std::string digest;
  if (FILE* pipe = ::popen(("sha256sum " + Quote(path)).c_str(), "r")) {
    char line[256] = {};
    if (std::fgets(line, sizeof(line), pipe) != nullptr) digest = std::string(line).substr(0, 64);
    ::pclose(pipe);
  }
  return digest;
}

std::vector<uint8_t> TinyGguf() {
  GgufWriter g;
  g.Header(1, 2).KvU32("general.alignment", 32).KvStr("general.architecture", "llama");
  g.Tensor("w", {4}, 0, 0).PadTo(32);
  const float values[4] = {1.0f, -2.0f, 0.5f, 3.0f};
  g.Raw(values, sizeof(values));
  return g.bytes();
}

// An Ollama store with `manifest_rel` (under manifests/) naming the blob.
struct OllamaStore {
  TempDir dir;
  fs::path blob;
  std::string env;
  explicit OllamaStore(const fs::path& manifest_rel) {
    const fs::path models = dir.path() / "models";
    const fs::path staged = dir.path() / "staged.gguf";
    WriteBytes(staged, TinyGguf());
    const std::string digest = Sha256sum(staged);
    blob = models / "blobs" / ("sha256-" + digest);
    fs::create_directories(blob.parent_path());
    fs::rename(staged, blob);
    fs::create_directories((models / "manifests" / manifest_rel).parent_path());
    std::ofstream(models / "manifests" / manifest_rel)
        << R"({"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.model",)"
        << R"("digest":"sha256:)" << digest << R"(","size":48}]})";
    env = "OLLAMA_MODELS=" + Quote(models);
  }
};

TEST(OllamaCli, HuggingFaceNamesUseTheirHostDirectory) {
  OllamaStore store(fs::path("hf.co") / "bartowski" / "Tiny-GGUF" / "Q4_K_M");
  const CliResult r = RunAmn("inspect --json ollama:hf.co/bartowski/Tiny-GGUF:Q4_K_M", store.env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["architecture"], "llama");
  // Without a tag: "latest", looked for under the same host directory.
  const CliResult latest = RunAmn("inspect ollama:hf.co/bartowski/Tiny-GGUF", store.env);
  EXPECT_EQ(latest.exit_code, 1);
  EXPECT_NE(latest.err.find("hf.co/bartowski/Tiny-GGUF/latest"), std::string::npos) << latest.err;
  const fs::path out = store.dir.path() / "out.safetensors";
  const CliResult remembered =
      RunAmn("remember -q --verify ollama:hf.co/bartowski/Tiny-GGUF:Q4_K_M -o " + Quote(out), store.env);
  EXPECT_EQ(remembered.exit_code, 0) << remembered.err;
  EXPECT_TRUE(fs::exists(out));
  EXPECT_EQ(RunAmn("parse ollama:a/b/c/d:tag", store.env).exit_code, 2);  // too many parts
}

TEST(OllamaCli, VerifyRefusesABlobThatIsNotWhatItsNameSays) {
  OllamaStore store(fs::path("registry.ollama.ai") / "library" / "tiny" / "latest");
  EXPECT_EQ(RunAmn("parse --verify ollama:tiny", store.env).exit_code, 0);
  {
    std::fstream f(store.blob, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('\x7f');  // a flipped byte in the data: still parses
  }
  EXPECT_EQ(RunAmn("parse ollama:tiny", store.env).exit_code, 0);
  const CliResult r = RunAmn("remember -q --verify ollama:tiny -o " +
                             Quote(store.dir.path() / "out.safetensors"), store.env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(store.blob.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sha256"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(store.dir.path() / "out.safetensors"));
  // --verify on a plain path is refused: there is no digest to check.
  EXPECT_NE(RunAmn("parse --verify " + Quote(store.blob)).exit_code, 0);
}

// A hub cache as huggingface_hub lays it out.
struct HfCache {
  TempDir dir;
  fs::path cache, repo, blob;
  std::string commit = "0123456789abcdef0123456789abcdef01234567";
  HfCache() {
    cache = dir.path() / "hub";
    repo = cache / "models--Org--Tiny-FP8";
    fixtures::SafetensorsBuilder b;
    b.Add("model.norm.weight", "F32", {2}, {0, 0, 128, 63, 0, 0, 0, 64});
    const fs::path staged = dir.path() / "staged";
    WriteBytes(staged, b.Bytes());
    blob = repo / "blobs" / Sha256sum(staged);
    fs::create_directories(blob.parent_path());
    fs::rename(staged, blob);
    // config.json is a small git file: its etag is a 40-hex git sha1.
    const fs::path config_blob = repo / "blobs" / "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    std::ofstream(config_blob) << R"({"model_type": "llama", "torch_dtype": "float32"})";
    const fs::path snapshot = repo / "snapshots" / commit;
    fs::create_directories(snapshot);
    fs::create_symlink(fs::path("../../blobs") / blob.filename(), snapshot / "model.safetensors");
    fs::create_symlink(fs::path("../../blobs") / config_blob.filename(), snapshot / "config.json");
    fs::create_directories(repo / "refs");
    std::ofstream(repo / "refs" / "main") << commit;  // no newline, as huggingface_hub writes it
  }
  std::string Env() const { return "HF_HUB_CACHE=" + Quote(cache); }
};

TEST(HfCacheCli, ResolvesRefsToSnapshots) {
  HfCache hf;
  for (const std::string& name : {std::string("hf:Org/Tiny-FP8"), std::string("hf:Org/Tiny-FP8@main"),
                                  "hf:Org/Tiny-FP8@" + hf.commit}) {
    SCOPED_TRACE(name);
    const CliResult r = RunAmn("inspect --json " + name, hf.Env());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(Json::parse(r.out)["format"], "safetensors");
  }
  // HF_HOME/hub is the next place looked at.
  const CliResult home = RunAmn("inspect hf:Org/Tiny-FP8", "HF_HOME=" + Quote(hf.dir.path()));
  EXPECT_EQ(home.exit_code, 0) << home.err;
  const fs::path out = hf.dir.path() / "out";
  const CliResult r = RunAmn("remember -q --verify hf:Org/Tiny-FP8 -o " + Quote(out), hf.Env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(out / "model.safetensors"));
  EXPECT_TRUE(fs::is_regular_file(out / "config.json"));
  // The default output: the repository name, quantization suffix dropped,
  // in the current directory.
  const CliResult defaulted =
      RunAmn("remember -q hf:Org/Tiny-FP8", "cd " + Quote(hf.dir.path()) + " && " + hf.Env());
  EXPECT_EQ(defaulted.exit_code, 0) << defaulted.err;
  EXPECT_TRUE(fs::is_regular_file(hf.dir.path() / "Tiny-bf16" / "model.safetensors"));
}

TEST(HfCacheCli, MissingPiecesNameThePathLookedAt) {
  HfCache hf;
  const CliResult repo = RunAmn("inspect hf:Org/Other", hf.Env());
  EXPECT_EQ(repo.exit_code, 1);
  EXPECT_NE(repo.err.find((hf.cache / "models--Org--Other").string()), std::string::npos) << repo.err;
  const CliResult ref = RunAmn("inspect hf:Org/Tiny-FP8@v2", hf.Env());
  EXPECT_EQ(ref.exit_code, 1);
  EXPECT_NE(ref.err.find((hf.repo / "refs" / "v2").string()), std::string::npos) << ref.err;
  const std::string other = std::string(40, 'f');
  const CliResult snapshot = RunAmn("inspect hf:Org/Tiny-FP8@" + other, hf.Env());
  EXPECT_EQ(snapshot.exit_code, 1);
  EXPECT_NE(snapshot.err.find((hf.repo / "snapshots" / other).string()), std::string::npos)
      << snapshot.err;
  EXPECT_EQ(RunAmn("inspect hf:Org/../../etc", hf.Env()).exit_code, 2);
}

TEST(HfCacheCli, VerifyRefusesADamagedBlob) {
  HfCache hf;
  {
    std::fstream f(hf.blob, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('\x41');
  }
  EXPECT_EQ(RunAmn("inspect hf:Org/Tiny-FP8", hf.Env()).exit_code, 0);
  const CliResult r = RunAmn("inspect --verify hf:Org/Tiny-FP8", hf.Env());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(hf.blob.filename().string()), std::string::npos) << r.err;
}

}  // namespace
}  // namespace amn::test
