// Text operands of pickle protocols 0 and 1 (pickle_text.h), following
// CPython's Lib/pickle.py (load_int, load_long, load_float, load_string,
// load_unicode), Objects/bytesobject.c (_PyBytes_DecodeEscape) and
// Objects/unicodeobject.c (raw-unicode-escape).
#include "formats/pickle_text.h"

#include <charconv>
#include <system_error>

#include "formats/byte_source.h"

namespace amn::formats {
namespace {

Status Bad(const std::string& what) { return Status(StatusCode::kInvalid, what); }

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | cp >> 6);
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | cp >> 12);
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | cp >> 18);
    out += static_cast<char>(0x80 | (cp >> 12 & 0x3F));
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

Result<int64_t> ParsePickleDecimal(std::string_view text) {
  const std::string shown = "'" + MessageSafe(text, 40) + "'";
  std::string_view digits = text;
  const bool negative = !digits.empty() && digits.front() == '-';
  if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) digits.remove_prefix(1);
  if (digits.empty()) return Bad("integer " + shown + " has no digits");
  uint64_t magnitude = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return Bad("integer " + shown + " is not decimal digits");
    if (magnitude > (UINT64_MAX - static_cast<uint64_t>(c - '0')) / 10) {
      return Status(StatusCode::kUnsupported, "integer " + shown + " does not fit in 64 bits");
    }
    magnitude = magnitude * 10 + static_cast<uint64_t>(c - '0');
  }
  constexpr uint64_t kMaxPositive = uint64_t{INT64_MAX};
  if (magnitude > kMaxPositive + (negative ? 1 : 0)) {
    return Status(StatusCode::kUnsupported, "integer " + shown + " does not fit in 64 bits");
  }
  if (negative) return magnitude == kMaxPositive + 1 ? INT64_MIN : -static_cast<int64_t>(magnitude);
  return static_cast<int64_t>(magnitude);
}

Result<double> ParsePickleFloat(std::string_view text) {
  std::string_view number = text;
  if (!number.empty() && number.front() == '+') number.remove_prefix(1);  // from_chars takes no '+'
  double value = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || error != std::errc() || end != number.data() + number.size()) {
    return Bad("float '" + MessageSafe(text, 40) + "' is not a number");
  }
  return value;
}

Result<std::string> DecodePickleString(std::string_view quoted) {
  if (quoted.size() < 2 || quoted.front() != quoted.back() ||
      (quoted.front() != '\'' && quoted.front() != '"')) {
    return Bad("the STRING argument must be quoted");
  }
  const std::string_view s = quoted.substr(1, quoted.size() - 2);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i == s.size()) return Bad("STRING ends in a backslash");
    const char c = s[i];
    switch (c) {
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x': {
        const int hi = i + 1 < s.size() ? HexDigit(s[i + 1]) : -1;
        const int lo = i + 2 < s.size() ? HexDigit(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) return Bad("STRING has an invalid \\x escape");
        out += static_cast<char>(hi << 4 | lo);
        i += 2;
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          unsigned value = static_cast<unsigned>(c - '0');
          for (int n = 1; n < 3 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7'; ++n) {
            value = value * 8 + static_cast<unsigned>(s[++i] - '0');
          }
          out += static_cast<char>(value & 0xFF);  // CPython keeps the low byte of \400..\777
        } else {
          out += '\\';
          out += c;
        }
    }
  }
  return out;
}

Result<std::string> DecodePickleUnicode(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size();) {
    const auto byte = static_cast<unsigned char>(raw[i]);
    if (byte != '\\') {
      AppendUtf8(out, byte);
      ++i;
      continue;
    }
    // \u and \U are escapes only after an odd run of backslashes.
    size_t run = 0;
    while (i < raw.size() && raw[i] == '\\') {
      ++run;
      ++i;
    }
    const bool escape = run % 2 == 1 && i < raw.size() && (raw[i] == 'u' || raw[i] == 'U');
    out.append(escape ? run - 1 : run, '\\');
    if (!escape) continue;
    const size_t digits = raw[i] == 'u' ? 4 : 8;
    ++i;
    if (raw.size() - i < digits) return Bad("UNICODE has a truncated \\u or \\U escape");
    uint32_t cp = 0;
    for (size_t k = 0; k < digits; ++k, ++i) {
      const int d = HexDigit(raw[i]);
      if (d < 0) return Bad("UNICODE has a truncated \\u or \\U escape");
      if (cp > 0x10FFFF) break;  // keeps the shift from overflowing; refused below
      cp = cp << 4 | static_cast<uint32_t>(d);
    }
    if (cp > 0x10FFFF) return Bad("UNICODE escape past U+10FFFF");
    if (cp >= 0xD800 && cp <= 0xDFFF) return Bad("UNICODE escape is a lone surrogate");
    AppendUtf8(out, cp);
  }
  return out;
}

}  // namespace amn::formats
