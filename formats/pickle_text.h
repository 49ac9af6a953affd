// The text operands of pickle protocols 0 and 1 (INT, LONG, FLOAT, STRING,
// UNICODE, GET, PUT: one line each, without its newline), decoded as
// CPython's Lib/pickle.py Unpickler reads them, strictly: what a pickler
// writes is accepted, anything else is an error, nothing is evaluated.
#ifndef AMN_FORMATS_PICKLE_TEXT_H_
#define AMN_FORMATS_PICKLE_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "amn/result.h"

namespace amn::formats {

// INT / LONG / GET / PUT: an optional sign and decimal digits (LONG's
// trailing 'L' is the caller's to strip). kUnsupported beyond int64,
// kInvalid for anything else (hex, spaces, underscores, an empty line).
Result<int64_t> ParsePickleDecimal(std::string_view text);

// FLOAT: repr() of a float ("1.5", "-2e-05", "inf", "nan"). kInvalid when
// the whole line is not one number.
Result<double> ParsePickleFloat(std::string_view text);

// STRING: a quoted Python 2 str literal ('abc' or "a'b") with the escapes
// of codecs.escape_decode: \\ \' \" \a \b \f \n \r \t \v, \xHH and up to
// three octal digits. An unknown escape keeps its backslash, as CPython does.
// kInvalid: no matching quotes, a trailing backslash, a short \x escape.
Result<std::string> DecodePickleString(std::string_view quoted);

// UNICODE: raw-unicode-escape bytes (each byte is the code point U+0000 to
// U+00FF, and \uXXXX / \UXXXXXXXX after an odd run of backslashes), as
// UTF-8. kInvalid: a short escape, a surrogate or a code point past U+10FFFF.
Result<std::string> DecodePickleUnicode(std::string_view raw);

}  // namespace amn::formats

#endif  // AMN_FORMATS_PICKLE_TEXT_H_
