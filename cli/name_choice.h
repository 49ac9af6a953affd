// Options whose value is one of a few names (--to bf16|f16|f32): a CLI11
// validator that shows and names only the names (never what they map to,
// so no enum bytes reach --help or an error), and suggests the closest.
#ifndef AMN_CLI_NAME_CHOICE_H_
#define AMN_CLI_NAME_CHOICE_H_

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace amn::cli {

// Accepts any of `names` whatever its case and stores it lower-case (the
// names are lower-case). An error reads "'bf17' is not one of bf16, ...;
// did you mean 'bf16'?", with the given value's control bytes escaped.
CLI::Validator NameChoice(std::vector<std::string> names);

}  // namespace amn::cli

#endif  // AMN_CLI_NAME_CHOICE_H_
