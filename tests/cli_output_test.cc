// What `amn` prints: the progress bar (only on a terminal, as wide as the
// terminal: run on a pseudo-terminal of a set size), `remember --json`,
// binary size units everywhere, and `inspect --json` without empty or
// irrelevant keys.
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/torch_zips.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Runs amn with `args` on a new pseudo-terminal of `columns` columns
// (stdin, stdout and stderr all on it) and returns all it printed. COLUMNS
// is unset unless `columns_env` is given.
std::string RunOnPty(const std::vector<std::string>& args, unsigned short columns,
                     const std::string& columns_env = "") {
  struct winsize size = {};
  size.ws_row = 24;
  size.ws_col = columns;
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, &size);
  if (pid < 0) return "forkpty failed";
  if (pid == 0) {
    if (columns_env.empty()) {
      unsetenv("COLUMNS");
    } else {
      setenv("COLUMNS", columns_env.c_str(), 1);
    }
    std::vector<char*> argv = {const_cast<char*>(AMN_CLI_PATH)};
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(AMN_CLI_PATH, argv.data());
    _exit(127);
  }
  std::string out;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = read(master, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(n));
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  return out;
}

// The progress bar's drawings: pieces between carriage returns and newlines
// that hold a percentage, with the erase-line sequence removed.
std::vector<std::string> ProgressDrawings(const std::string& tty) {
  std::vector<std::string> drawings;
  std::string piece;
  auto flush = [&] {
    for (size_t at; (at = piece.find("\033[K")) != std::string::npos;) piece.erase(at, 3);
    if (piece.find('%') != std::string::npos) drawings.push_back(piece);
    piece.clear();
  };
  for (char c : tty) {
    if (c == '\r' || c == '\n') {
      flush();
    } else {
      piece += c;
    }
  }
  flush();
  return drawings;
}

class CliOutput : public testing::Test {
 protected:
  void SetUp() override {
    input_ = dir_.path() / "demo-FP8";
    const CliResult r = RunBuilt(AMN_DEMO_GENERATOR_PATH, Quote(input_) + " 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::vector<std::string> RememberArgs() const {
    return {"remember", input_.string(), "-o", (dir_.path() / "out").string(), "--force"};
  }
  TempDir dir_;
  fs::path input_;
};

TEST_F(CliOutput, NoProgressWhenStderrIsNotATerminal) {
  const CliResult r = RunAmn("remember " + Quote(input_) + " -o " + Quote(dir_.path() / "out"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out.find('\r'), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('%'), std::string::npos) << r.out;
}

TEST_F(CliOutput, ProgressFitsTheTerminal) {
  for (const unsigned short columns : {200, 80, 60, 40, 24, 12, 6}) {
    SCOPED_TRACE(columns);
    const std::vector<std::string> drawings = ProgressDrawings(RunOnPty(RememberArgs(), columns));
    ASSERT_FALSE(drawings.empty()) << "no progress drawn";
    for (const std::string& d : drawings) EXPECT_LT(d.size(), columns) << d;  // never the last column
    EXPECT_NE(drawings.back().find("100%"), std::string::npos) << drawings.back();
    if (columns >= 80) {
      EXPECT_TRUE(std::regex_search(drawings.back(), std::regex(R"( (\d+)/\1 tensors )"))) << drawings.back();
      EXPECT_EQ(drawings.back().front(), '[') << drawings.back();
      // The rate's unit follows its size (KiB/s .. GiB/s): a fast machine shows GiB/s.
      EXPECT_TRUE(std::regex_search(drawings.back(), std::regex(R"( \d+(\.\d+)? [KMGT]?i?B/s )"))) << drawings.back();
    }
  }
  // COLUMNS, when set, is the width.
  for (const std::string& d : ProgressDrawings(RunOnPty(RememberArgs(), 200, "30"))) {
    EXPECT_LT(d.size(), 30u) << d;
  }
  // -q and --json keep the terminal quiet apart from the JSON.
  std::vector<std::string> quiet = RememberArgs();
  quiet.push_back("-q");
  EXPECT_TRUE(ProgressDrawings(RunOnPty(quiet, 80)).empty());
}

TEST_F(CliOutput, RememberJsonSummary) {
  const fs::path out = dir_.path() / "out";
  const CliResult r = RunAmn("remember " + Quote(input_) + " -o " + Quote(out) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json json = Json::parse(r.out);  // stdout holds the JSON and nothing else
  size_t files = 0, tensors = 0;
  uint64_t bytes = 0, shard_bytes = 0;
  for (const auto& entry : fs::directory_iterator(out)) {
    ++files;
    bytes += fs::file_size(entry.path());
    if (entry.path().extension() == ".safetensors") {
      shard_bytes += fs::file_size(entry.path());
      const ReadBack shard(entry.path());
      tensors += shard.header.size() - (shard.header.contains("__metadata__") ? 1 : 0);
    }
  }
  EXPECT_EQ(json["files"], files);
  EXPECT_EQ(json["bytes_written"], bytes);
  EXPECT_EQ(json["shard_bytes"], shard_bytes);
  EXPECT_EQ(json["tensors"], tensors);
  EXPECT_EQ(json["to"], "BF16");
  EXPECT_EQ(json["output"], out.string());
  EXPECT_EQ(json["input"], input_.string());
  EXPECT_GE(json["seconds"].get<double>(), 0.0);
  EXPECT_EQ(json["target"], Json::parse(RunAmn("targets --json").out)["active"]);
  // A single-file output counts one file.
  const fs::path pth = dir_.path() / "fp8.pth";
  std::ofstream(pth, std::ios::binary) << Fp8TorchZip();
  const CliResult one = RunAmn("remember " + Quote(pth) + " --json -j 1");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const Json single = Json::parse(one.out);
  EXPECT_EQ(single["files"], 1);
  EXPECT_EQ(single["tensors"], 2);
  EXPECT_EQ(single["to"], "kept");
  EXPECT_EQ(single["bytes_written"], fs::file_size(dir_.path() / "fp8.safetensors"));
}

TEST_F(CliOutput, SizesUseBinaryUnitsWithTheirNames) {
  const std::regex decimal_label(R"(\d (kB|KB|MB|GB|TB)\b)");
  const std::regex binary_label(R"(\d (B|KiB|MiB|GiB|TiB)\b)");
  const std::string out = (dir_.path() / "out").string();
  for (const std::string& args : {"inspect " + Quote(input_), "parse " + Quote(input_),
                                  "remember " + Quote(input_) + " -o " + Quote(out), std::string("remember --help")}) {
    SCOPED_TRACE(args);
    const CliResult r = RunAmn(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(std::regex_search(r.out, decimal_label)) << r.out;
    EXPECT_TRUE(std::regex_search(r.out, binary_label)) << r.out;
  }
  // The FP8 weights' size, in MiB of 2^20 bytes.
  uint64_t fp8_bytes = 0;
  const Json info = Json::parse(RunAmn("inspect --json " + Quote(input_)).out);
  for (const Json& d : info["dtypes"]) {
    if (d["dtype"] == "F8_E4M3") fp8_bytes = d["bytes"];
  }
  ASSERT_GE(fp8_bytes, uint64_t{1} << 20);
  char want[32];
  std::snprintf(want, sizeof want, "(%.0f MiB)", static_cast<double>(fp8_bytes) / (1 << 20));
  EXPECT_NE(RunAmn("inspect " + Quote(input_)).out.find(want), std::string::npos) << want;
}

// Every key of an object holds something: no "", [], {} anywhere.
void ExpectNoEmptyValues(const Json& json, const std::string& where) {
  for (const auto& [key, value] : json.items()) {
    EXPECT_FALSE((value.is_string() && value.get<std::string>().empty()) ||
                 (value.is_array() && value.empty()) || (value.is_object() && value.empty()))
        << where << ": " << key;
    if (value.is_structured()) ExpectNoEmptyValues(value, where + "." + key);
  }
}

TEST_F(CliOutput, InspectJsonHasOnlyRelevantKeys) {
  // config.json's identity, as transformers writes it.
  Json config = Json::parse(SlurpText(input_ / "config.json"));
  config["model_type"] = "qwen3";
  std::ofstream(input_ / "config.json") << config.dump(2);
  Json json = Json::parse(RunAmn("inspect --json " + Quote(input_)).out);
  EXPECT_EQ(json["architecture"], "Qwen3ForCausalLM");
  EXPECT_EQ(json["model_type"], "qwen3");
  for (const char* absent : {"gguf_version", "alignment", "metadata_keys", "unsupported"}) {
    EXPECT_FALSE(json.contains(absent)) << absent;
  }
  for (const char* present : {"shards", "quantized_tensors", "companion_tensors", "dropped_tensors",
                              "lethe_took_bytes", "remembered_bytes", "to"}) {
    EXPECT_TRUE(json.contains(present)) << present;
  }
  ExpectNoEmptyValues(json, "demo");
  EXPECT_NE(RunAmn("inspect " + Quote(input_)).out.find("Model:       Qwen3ForCausalLM (model_type qwen3)"),
            std::string::npos);

  // A PyTorch file: nothing quantized, no shards, no companions.
  const fs::path pth = dir_.path() / "fp8.pth";
  std::ofstream(pth, std::ios::binary) << Fp8TorchZip();
  json = Json::parse(RunAmn("inspect --json " + Quote(pth)).out);
  for (const char* absent : {"gguf_version", "architecture", "model_type", "shards", "sharded",
                             "quantized_tensors", "companion_tensors", "companion_dtypes",
                             "dropped_tensors", "unsupported", "lethe_took_bytes"}) {
    EXPECT_FALSE(json.contains(absent)) << absent;
  }
  EXPECT_EQ(json["passthrough_tensors"], 2);
  EXPECT_EQ(json["to"], "kept");
  ExpectNoEmptyValues(json, "fp8.pth");
}

}  // namespace
}  // namespace amn::test
