// The exit codes of `amn`, documented in docs/cli.md.
#ifndef AMN_CLI_EXIT_CODES_H_
#define AMN_CLI_EXIT_CODES_H_

namespace amn::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the work failed (input, I/O, library error)
inline constexpr int kExitUsage = 2;    // bad command line or AMN_ISA
inline constexpr int kExitInterrupted = 130;  // SIGINT/SIGTERM/SIGHUP: stopped, nothing left behind

}  // namespace amn::cli

#endif  // AMN_CLI_EXIT_CODES_H_
