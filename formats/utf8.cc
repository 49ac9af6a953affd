// UTF-8 validation and the \xNN rule for bytes that are not UTF-8 (utf8.h).
#include "formats/utf8.h"

namespace amn::formats {

size_t Utf8SequenceLength(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char b0 = byte(at);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // no overlongs
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;  // no overlongs
    if (b0 == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (text.size() - at < n) return 0;
  if (byte(at + 1) < lo || byte(at + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((byte(at + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string EscapeInvalidUtf8(std::string_view text, bool controls) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    const auto b = static_cast<unsigned char>(text[i]);
    if (n == 0 || (controls && (b < 0x20 || b == 0x7f))) {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

size_t Utf8CutPoint(std::string_view text, size_t max_bytes) {
  if (max_bytes >= text.size()) return text.size();
  size_t cut = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    const size_t step = n == 0 ? 1 : n;
    if (i + step > max_bytes) break;
    i += step;
    cut = i;
  }
  return cut;
}

}  // namespace amn::formats
