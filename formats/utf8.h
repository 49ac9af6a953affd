// UTF-8 well-formedness (RFC 3629: no overlongs, no surrogates, nothing past
// U+10FFFF) and the one rule by which a name that is not UTF-8 (a GGUF
// tensor name or metadata string, an NPZ member name, a pickle dict key) is
// written as text: every byte that is no part of a well-formed sequence
// becomes the four characters \xNN (lowercase hex). Valid text is unchanged.
#ifndef AMN_FORMATS_UTF8_H_
#define AMN_FORMATS_UTF8_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace amn::formats {

// Length of the well-formed UTF-8 sequence starting at text[at], or 0 when
// the byte there starts none (a stray continuation byte, an overlong or
// surrogate encoding, a truncated sequence).
size_t Utf8SequenceLength(std::string_view text, size_t at);

bool IsValidUtf8(std::string_view text);

// `text` with each byte outside a well-formed sequence written as \xNN,
// and with `controls` also each byte below 0x20 and 0x7f (then the result
// is one printable line).
std::string EscapeInvalidUtf8(std::string_view text, bool controls = false);

// The largest n <= max_bytes such that text[0, n) does not end inside a
// well-formed multi-byte sequence (a cut that never splits a character).
size_t Utf8CutPoint(std::string_view text, size_t max_bytes);

}  // namespace amn::formats

#endif  // AMN_FORMATS_UTF8_H_
