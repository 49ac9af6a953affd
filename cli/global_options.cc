// Options accepted before or after the command name (global_options.h).
#include "cli/global_options.h"

namespace amn::cli {

void AddGlobalOptions(CLI::App& app, GlobalOptions& options) {
  constexpr const char* kGroup = "Global options (before or after the command)";
  app.add_option("--isa", options.isa,
                 "Cap kernel dispatch at this ISA target or below (see `amn targets`); "
                 "overrides AMN_ISA")
      ->type_name("NAME")
      ->group(kGroup);
  app.add_option("-j,--threads", options.threads,
                 "Worker threads for remember, forget and convert (default: every core); the output is identical "
                 "for any value; 1 starts no thread. Other commands run one thread")
      ->type_name("N")
      ->check(CLI::Range(1u, 4096u))
      ->group(kGroup);
}

}  // namespace amn::cli
