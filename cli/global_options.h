// The options every `amn` command takes, before or after its name
// (`amn --isa AVX2 remember x` and `amn remember x --isa AVX2` alike):
// registered on the main app and on each command, bound to one struct.
#ifndef AMN_CLI_GLOBAL_OPTIONS_H_
#define AMN_CLI_GLOBAL_OPTIONS_H_

#include <CLI/CLI.hpp>

#include <string>

namespace amn::cli {

struct GlobalOptions {
  std::string isa;       // --isa: cap kernel dispatch (empty: AMN_ISA or none)
  unsigned threads = 0;  // -j: worker threads for remember (0: every core)
};

// Adds --isa and -j/--threads to `app` (the main app or a command), in the
// "Global options" group of its --help. When both places give one, the
// later on the command line wins.
void AddGlobalOptions(CLI::App& app, GlobalOptions& options);

}  // namespace amn::cli

#endif  // AMN_CLI_GLOBAL_OPTIONS_H_
