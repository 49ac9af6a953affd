// Text from files and command lines made safe to print: no control bytes
// reach the terminal from amn's output or its error lines.
#ifndef AMN_CLI_PRINTABLE_H_
#define AMN_CLI_PRINTABLE_H_

#include <string>
#include <string_view>

namespace amn::cli {

// `text` with every byte below 0x20, 0x7f and every byte that is no part of
// a well-formed UTF-8 sequence written as \xNN (newlines and tabs too: what
// this returns is one line of valid UTF-8).
std::string Printable(std::string_view text);

}  // namespace amn::cli

#endif  // AMN_CLI_PRINTABLE_H_
