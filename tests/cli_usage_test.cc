// `amn` command lines as people type them: no control bytes in any --help or
// usage error, global options before or after the command, and a
// did-you-mean line for a mistyped command or option.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_files.h"
#include "tests/cli_runner.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;

// The first byte below 0x20 other than \n and \t, as text, or "" when clean.
std::string ControlByte(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if ((byte < 0x20 && byte != '\n' && byte != '\t') || byte == 0x7f) {
      return "byte " + std::to_string(byte) + " at " + std::to_string(i);
    }
  }
  return "";
}

size_t Lines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

TEST(CliUsage, HelpOfEveryCommandHasNoControlBytes) {
  for (const char* command : {"", "parse", "inspect", "info", "remember", "dequantize", "targets", "bench"}) {
    SCOPED_TRACE(command);
    const CliResult r = RunAmn(std::string(command) + " --help");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(ControlByte(r.out + r.err), "");
  }
  const CliResult remember = RunAmn("remember --help");
  for (const char* word : {"--to TYPE", "bf16", "--json", "-j,--threads", "--isa", "GiB"}) {
    EXPECT_NE(remember.out.find(word), std::string::npos) << word;
  }
}

TEST(CliUsage, BadEnumValuesGiveOneCleanLine) {
  struct Case {
    std::string args, env, must_say;
  };
  const Case cases[] = {
      {"inspect x.safetensors --to bf17", "", "did you mean 'bf16'?"},
      {"remember x.safetensors --to \"$(printf 'f1\\001\\002')\"", "", "f1\\x01\\x02"},
      {"remember x.safetensors --to", "", "--to"},
      {"--isa \"$(printf '\\033[31mAVX')\" targets", "", "\\x1b[31mAVX"},
      {"targets", "AMN_ISA=\"$(printf 'x\\033y')\"", "x\\x1by"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args + " " + c.env);
    const CliResult r = RunAmn(c.args, c.env);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(ControlByte(r.out + r.err), "") << r.err;
    EXPECT_EQ(Lines(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("amn: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.must_say), std::string::npos) << r.err;
  }
}

TEST(CliUsage, GlobalOptionsBeforeOrAfterTheCommand) {
  for (const char* args : {"--isa baseline targets --json", "targets --isa baseline --json",
                           "targets --json --isa=baseline", "-j 2 --isa baseline targets --json"}) {
    SCOPED_TRACE(args);
    const CliResult r = RunAmn(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto json = nlohmann::json::parse(r.out);
    EXPECT_EQ(json["cap"], json["targets"].back()["name"]);
  }
  // -j before and after remember: both run, with the same bytes.
  TempDir dir;
  const fs::path input = dir.path() / "demo-FP8";
  ASSERT_EQ(RunBuilt(AMN_DEMO_GENERATOR_PATH, Quote(input) + " 2").exit_code, 0);
  const CliResult before = RunAmn("-j 2 remember -q " + Quote(input) + " -o " + Quote(dir.path() / "a"));
  const CliResult after = RunAmn("remember -q " + Quote(input) + " -o " + Quote(dir.path() / "b") +
                                 " -j 1 --isa baseline");
  ASSERT_EQ(before.exit_code, 0) << before.err;
  ASSERT_EQ(after.exit_code, 0) << after.err;
  for (const char* shard : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}) {
    EXPECT_EQ(ReadBytes(dir.path() / "a" / shard), ReadBytes(dir.path() / "b" / shard)) << shard;
  }
  EXPECT_EQ(RunAmn("-j 0 targets").exit_code, 2);
  EXPECT_EQ(RunAmn("targets --threads 0").exit_code, 2);
}

TEST(CliUsage, DidYouMean) {
  struct Case {
    const char* args;
    const char* error;
    const char* suggestion;  // nullptr: no suggestion line
  };
  const Case cases[] = {
      {"remembr x", "unknown command 'remembr'", "remember"},
      {"Inspect x", "unknown command 'Inspect'", "inspect"},
      {"inpsect x", "unknown command 'inpsect'", "inspect"},
      {"tragets", "unknown command 'tragets'", "targets"},
      {"remember x --thread 2", "unknown option '--thread' for 'remember'", "--threads"},
      {"remember x --froce", "unknown option '--froce' for 'remember'", "--force"},
      {"inspect x --jsn", "unknown option '--jsn' for 'inspect'", "--json"},
      {"bench --quik", "unknown option '--quik' for 'bench'", "--quick"},
      {"--verison", "unknown option '--verison'", "--version"},
      {"parse x --max-item=3", "unknown option '--max-item' for 'parse'", "--max-items"},
      {"zzzzzz x", "unknown command 'zzzzzz'", nullptr},
      {"remember x --zzzzzz", "unknown option '--zzzzzz' for 'remember'", nullptr},
      {"remember x y", "unexpected argument 'y' for 'remember'", nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const CliResult r = RunAmn(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind(std::string("amn: ") + c.error, 0), 0u) << r.err;
    EXPECT_EQ(ControlByte(r.err), "");
    if (c.suggestion != nullptr) {
      EXPECT_EQ(Lines(r.err), 2u) << r.err;
      EXPECT_NE(r.err.find(std::string("\namn: did you mean '") + c.suggestion + "'?\n"), std::string::npos)
          << r.err;
    } else {
      EXPECT_EQ(Lines(r.err), 1u) << r.err;
      EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
    }
  }
}

}  // namespace
}  // namespace amn::test
