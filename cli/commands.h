// The `amn` subcommands: each registers its options on the CLI11 app and
// returns the function that runs it (returning an exit code).
#ifndef AMN_CLI_COMMANDS_H_
#define AMN_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

#include <functional>

namespace amn::cli {

using Command = std::function<int()>;

Command AddTargetsCommand(CLI::App& app);
Command AddBenchCommand(CLI::App& app);

}  // namespace amn::cli

#endif  // AMN_CLI_COMMANDS_H_
