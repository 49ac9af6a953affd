// What the model commands (parse, inspect, remember, forget) share: errors
// turned into one line and an exit code, the interrupt flag the library
// polls, and the --max-* / --verify options.
#ifndef AMN_CLI_COMMAND_SUPPORT_H_
#define AMN_CLI_COMMAND_SUPPORT_H_

#include <CLI/CLI.hpp>
#include <signal.h>

#include <array>
#include <atomic>

#include "amn/limits.h"
#include "amn/status.h"

namespace amn::cli {

// Prints "amn: <status>" and returns its exit code (usage error for
// kInvalidArgument, interrupted for kCancelled, else failure).
int Fail(const Status& status);

// Set by SIGINT, SIGTERM or SIGHUP while an InterruptGuard lives.
extern std::atomic<bool> g_interrupted;

// Routes SIGINT, SIGTERM and SIGHUP (a closed terminal or ssh session) to
// g_interrupted for its lifetime. A signal ignored when amn started (nohup,
// `&` in a script) stays ignored.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, kSignals.size()> old_ = {};
};

// --max-*: ParseLimits from the command line, tighten-only; and --verify,
// how the input is opened.
struct LimitOptions {
  ParseLimits limits;
  bool verify = false;
};

void AddLimitOptions(CLI::App* cmd, LimitOptions& o);

}  // namespace amn::cli

#endif  // AMN_CLI_COMMAND_SUPPORT_H_
