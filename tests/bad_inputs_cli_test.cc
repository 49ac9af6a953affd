// The bad-input corpus (fixtures/bad/, written by fixtures/make_bad_inputs.cc)
// end to end: for every MANIFEST line, `amn parse`, `amn inspect` and
// `amn remember -o out.safetensors` must exit 1 with exactly one stderr line
// "amn: <expected code>: ...", leave nothing beside the input or the output
// (no output file, no .amn-partial temporary), stay under a 2 GiB address
// space and finish within 20 s. The expected codes are the corpus's own
// (hand-derived from the format specs and the library's documented error
// contracts), not the output of the code under test.
//
// MANIFEST lines marked "<code>@remember" damage array data that parse and
// inspect never read (header-only by design): those two may succeed, or fail
// with one well-formed line; remember must fail with <code>.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_files.h"
#include "tests/cli_runner.h"

#if defined(__SANITIZE_ADDRESS__)
#define AMN_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AMN_UNDER_ASAN 1
#endif
#endif

namespace amn::test {
namespace {

namespace fs = std::filesystem;

struct BadInput {
  std::string file;
  std::string code;            // as the CLI prints it: "limit exceeded"
  bool data_only = false;      // "@remember": only remember reads the damage
  std::string what;
};

// gtest prints parameters on failure; the file name says which one.
void PrintTo(const BadInput& input, std::ostream* os) { *os << input.file; }

fs::path CorpusDir() { return fs::path(AMN_PROJECT_ROOT) / "fixtures" / "bad"; }

// MANIFEST: "<file> <code>[@remember] <what it is>", codes hyphenated.
std::vector<BadInput> ReadManifest() {
  std::vector<BadInput> inputs;
  std::ifstream in(CorpusDir() / "MANIFEST");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    BadInput input;
    fields >> input.file >> input.code;
    std::getline(fields >> std::ws, input.what);
    if (const size_t at = input.code.find("@remember"); at != std::string::npos) {
      input.data_only = true;
      input.code.erase(at);
    }
    for (char& ch : input.code) {
      if (ch == '-') ch = ' ';
    }
    inputs.push_back(input);
  }
  return inputs;
}

// A wall-clock bound for every command, and an address-space bound except
// under AddressSanitizer, whose shadow memory reserves terabytes.
std::string Bounds() {
  std::string prefix = "timeout -k 5 20";
#ifndef AMN_UNDER_ASAN
  prefix += " prlimit --as=" + std::to_string(uint64_t{2} << 30) + " --";
#endif
  return prefix;
}

// One line, ending in a newline, "amn: <code>: ...".
::testing::AssertionResult OneErrorLine(const CliResult& r, const std::string& code) {
  if (r.exit_code != 1) {
    return ::testing::AssertionFailure() << "exit code " << r.exit_code << " (want 1; 124 is "
                                         << "a timeout), stderr: " << r.err;
  }
  const std::string prefix = "amn: " + code + ": ";
  if (r.err.rfind(prefix, 0) != 0) {
    return ::testing::AssertionFailure() << "stderr does not start with '" << prefix
                                         << "': " << r.err;
  }
  if (r.err.find('\n') != r.err.size() - 1) {
    return ::testing::AssertionFailure() << "stderr is not exactly one line: " << r.err;
  }
  return ::testing::AssertionSuccess();
}

class BadInputs : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputs, EveryCommandRefusesCleanly) {
  const BadInput& input = GetParam();
  SCOPED_TRACE(input.file + ": " + input.what);
  // A private copy, so anything written beside the input shows too.
  TempDir dir;
  const fs::path copy = dir.path() / input.file;
  fs::copy_file(CorpusDir() / input.file, copy);
  const fs::path out = dir.path() / "out.safetensors";
  const std::vector<std::string> only_input = {input.file};

  for (const char* command : {"parse", "inspect"}) {
    SCOPED_TRACE(command);
    const CliResult r = RunAmn(std::string(command) + " " + Quote(copy), Bounds());
    if (input.data_only) {
      const bool one_line = r.err.rfind("amn: ", 0) == 0 && r.err.find('\n') == r.err.size() - 1;
      EXPECT_TRUE(r.exit_code == 0 || (r.exit_code == 1 && one_line))
          << "exit " << r.exit_code << ", stderr: " << r.err;
    } else {
      EXPECT_TRUE(OneErrorLine(r, input.code));
    }
    EXPECT_EQ(dir.Entries(), only_input);
  }
  const CliResult r = RunAmn("remember " + Quote(copy) + " -o " + Quote(out), Bounds());
  EXPECT_TRUE(OneErrorLine(r, input.code));
  EXPECT_EQ(dir.Entries(), only_input) << "remember left files behind";
}

std::string CaseName(const ::testing::TestParamInfo<BadInput>& info) {
  std::string name = info.param.file;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInputs, ::testing::ValuesIn(ReadManifest()), CaseName);

// The corpus is there and covers every format (an empty MANIFEST would make
// the suite above pass vacuously).
TEST(BadInputsManifest, CoversEveryFormat) {
  const std::vector<BadInput> inputs = ReadManifest();
  ASSERT_GE(inputs.size(), 30u) << "MANIFEST in " << CorpusDir();
  for (const char* extension : {".safetensors", ".gguf", ".npy", ".npz", ".pth"}) {
    size_t n = 0;
    for (const BadInput& input : inputs) n += fs::path(input.file).extension() == extension;
    EXPECT_GE(n, 4u) << extension;
  }
  for (const BadInput& input : inputs) {
    EXPECT_TRUE(fs::is_regular_file(CorpusDir() / input.file)) << input.file;
    EXPECT_TRUE(input.code == "truncated" || input.code == "invalid" ||
                input.code == "unsupported" || input.code == "limit exceeded")
        << input.file << ": " << input.code;
  }
}

}  // namespace
}  // namespace amn::test
