// Escaping of control bytes and non-UTF-8 bytes for printing (printable.h):
// the \xNN rule of formats/utf8.h with control bytes escaped too.
#include "cli/printable.h"

#include "formats/utf8.h"

namespace amn::cli {

std::string Printable(std::string_view text) { return formats::EscapeInvalidUtf8(text, true); }

}  // namespace amn::cli
