// The `amn` subcommands: each registers itself and its options on the CLI11
// app and returns the subcommand with the function that runs it.
#ifndef AMN_CLI_COMMANDS_H_
#define AMN_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

#include <functional>

#include "cli/global_options.h"

namespace amn::cli {

struct Command {
  CLI::App* app;              // the subcommand, to see whether it was chosen
  std::function<int()> run;   // returns the exit code
};

Command AddTargetsCommand(CLI::App& app);
Command AddBenchCommand(CLI::App& app);
Command AddParseCommand(CLI::App& app);
Command AddInspectCommand(CLI::App& app);
Command AddRememberCommand(CLI::App& app, const GlobalOptions& globals);
Command AddForgetCommand(CLI::App& app, const GlobalOptions& globals);
Command AddConvertCommand(CLI::App& app, const GlobalOptions& globals);

}  // namespace amn::cli

#endif  // AMN_CLI_COMMANDS_H_
