// Command-line mistakes as amn reports them: one line naming the problem
// (control bytes escaped), and for a mistyped command or option a second
// line with the closest name ("amn: did you mean 'remember'?").
#ifndef AMN_CLI_USAGE_ERROR_H_
#define AMN_CLI_USAGE_ERROR_H_

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace amn::cli {

// Prints the error `e` that app.parse(args) threw (args without the program
// name) and returns the usage exit code.
int ReportUsageError(CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args);

}  // namespace amn::cli

#endif  // AMN_CLI_USAGE_ERROR_H_
