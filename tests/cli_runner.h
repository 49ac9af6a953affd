// Runs the built `amn` binary through the shell for end-to-end tests.
#ifndef AMN_TESTS_CLI_RUNNER_H_
#define AMN_TESTS_CLI_RUNNER_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

namespace amn::test {

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string SlurpText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Runs `env_prefix <binary> args` with stdin from /dev/null.
inline CliResult RunCommand(const std::string& binary, const std::string& args,
                            const std::string& env_prefix = "") {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string tag = std::to_string(getpid());
  const auto out = dir / ("amn_cli_out_" + tag);
  const auto err = dir / ("amn_cli_err_" + tag);
  const std::string command = env_prefix + " '" + binary + "' " + args + " >'" + out.string() +
                              "' 2>'" + err.string() + "' </dev/null";
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = SlurpText(out);
  result.err = SlurpText(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return result;
}

// A cross build's tests run under qemu-user (tests/CMakeLists.txt), which
// does not start the binaries they spawn by itself (no binfmt_misc needed):
// AMN_TEST_EMULATOR holds the emulator command ("qemu-aarch64 -L ... -cpu
// a64fx") that runs this project's own binaries; empty natively.
inline std::string EmulatorPrefix() {
  const char* emulator = std::getenv("AMN_TEST_EMULATOR");
  return emulator != nullptr ? std::string(emulator) : std::string();
}

// Runs a binary of this build (the CLI, the demo generator), under the
// emulator when there is one.
inline CliResult RunBuilt(const std::string& binary, const std::string& args,
                          const std::string& env_prefix = "") {
  return RunCommand(binary, args, env_prefix + " " + EmulatorPrefix());
}

// `args` with every "-j N" made "-j 1", or "-j 1 " in front when it has none
// (-j given twice to one command is a usage error).
inline std::string OneThreadArgs(const std::string& args) {
  static const std::regex kThreads(R"((^|\s)-j\s*[0-9]+)");
  if (std::regex_search(args, kThreads)) return std::regex_replace(args, kThreads, "$1-j 1");
  return "-j 1 " + args;
}

// Under the emulator every run is -j 1: qemu-user may hang in
// pthread_create, and -j 1 starts no thread. The -j N == -j 1 comparisons
// are then -j 1 against itself; the native run checks them.
inline CliResult RunAmn(const std::string& args, const std::string& env_prefix = "") {
  return RunBuilt(AMN_CLI_PATH, EmulatorPrefix().empty() ? args : OneThreadArgs(args), env_prefix);
}

}  // namespace amn::test

#endif  // AMN_TESTS_CLI_RUNNER_H_
