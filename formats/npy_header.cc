// NPY headers (numpy.lib.format, "NPY format" v1.0 / v2.0 / v3.0): the
// preamble (magic, version, header length) and the header text, a Python
// dict literal read by a small strict parser that accepts only what numpy
// writes: exactly the keys 'descr', 'fortran_order' and 'shape', quoted
// strings without escapes, True / False, and tuples of decimal integers.
// Nothing is ever evaluated; integers are parsed as integers with overflow
// checks.
#include "formats/npy.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "formats/checked_math.h"

namespace amn::formats {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr uint64_t kVersionOffset = 6;
constexpr uint64_t kLengthOffset = 8;
// numpy's own limit (NPY_MAXDIMS in numpy 2): no numpy array has more.
constexpr size_t kMaxDims = 64;

std::string Where(std::string_view name) { return MessageSafe(name, kMessagePathBytes) + ": "; }

// The fixed-size part before the header text.
struct Preamble {
  uint8_t major = 0, minor = 0;
  uint64_t text_offset = 0;  // 10 (v1.0) or 12 (v2.0, v3.0)
  uint64_t text_bytes = 0;
};

Result<Preamble> ParsePreamble(std::span<const std::byte> prefix, std::string_view name) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(prefix.data());
  const size_t magic_bytes = std::min(prefix.size(), kMagic.size());
  if (magic_bytes > 0 && std::memcmp(bytes, kMagic.data(), magic_bytes) != 0) {
    return Status(StatusCode::kInvalid, Where(name) + "not an NPY file (no \\x93NUMPY magic)")
        .WithByteOffset(0);
  }
  if (prefix.size() < kLengthOffset) {
    return Status(StatusCode::kTruncated,
                  Where(name) + "needs " + std::to_string(kLengthOffset + 2) +
                      " bytes for the NPY magic, version and header length, has " +
                      std::to_string(prefix.size()))
        .WithByteOffset(prefix.size());
  }
  Preamble p;
  p.major = bytes[kVersionOffset];
  p.minor = bytes[kVersionOffset + 1];
  if (p.major < 1 || p.major > 3 || p.minor != 0) {
    return Status(StatusCode::kUnsupported, Where(name) + "NPY version " + std::to_string(p.major) +
                                                "." + std::to_string(p.minor) +
                                                " (this build reads 1.0, 2.0 and 3.0)")
        .WithByteOffset(kVersionOffset);
  }
  // v1.0 has a u16 header length, v2.0 and v3.0 a u32 (little-endian).
  const uint64_t length_bytes = p.major == 1 ? 2 : 4;
  p.text_offset = kLengthOffset + length_bytes;
  if (prefix.size() < p.text_offset) {
    return Status(StatusCode::kTruncated,
                  Where(name) + "needs " + std::to_string(p.text_offset) +
                      " bytes for the NPY magic, version and header length, has " +
                      std::to_string(prefix.size()))
        .WithByteOffset(prefix.size());
  }
  for (uint64_t i = length_bytes; i-- > 0;) {
    p.text_bytes = p.text_bytes << 8 | bytes[kLengthOffset + i];
  }
  return p;
}

// "<f4" and friends; nullopt for everything this build does not read.
struct Descr {
  Dtype dtype;
  bool big_endian;
};

std::optional<Descr> MapDescr(std::string_view descr) {
  if (descr.size() < 3) return std::nullopt;
  const char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') return std::nullopt;
  const std::string_view type = descr.substr(1);
  struct Row {
    std::string_view type;
    Dtype dtype;
  };
  static constexpr Row kRows[] = {
      {"b1", Dtype::kBool}, {"i1", Dtype::kI8},  {"i2", Dtype::kI16}, {"i4", Dtype::kI32},
      {"i8", Dtype::kI64},  {"u1", Dtype::kU8},  {"u2", Dtype::kU16}, {"u4", Dtype::kU32},
      {"u8", Dtype::kU64},  {"f2", Dtype::kF16}, {"f4", Dtype::kF32}, {"f8", Dtype::kF64},
      // JAX's bfloat16 (ml_dtypes) has no numpy type code: numpy writes it as
      // a 2-byte void. A void has no byte order, so '>V2' says nothing numpy
      // would write and is left unsupported.
      {"V2", Dtype::kBf16},
  };
  for (const Row& row : kRows) {
    if (type != row.type) continue;
    if (row.dtype == Dtype::kBf16 && order == '>') return std::nullopt;
    // '=' is the writer's native order; this build reads little-endian hosts'
    // files as little-endian. '|' (no order) numpy writes only for one-byte
    // types and voids.
    return Descr{row.dtype, order == '>' && DtypeBytes(row.dtype) > 1};
  }
  return std::nullopt;
}

// The header dict. Offsets in errors are bytes from the start of the array
// data (the file for .npy, the member for .npz).
class HeaderTextParser {
 public:
  HeaderTextParser(std::string_view text, uint64_t text_offset, std::string_view name)
      : text_(text), text_offset_(text_offset), name_(name) {}

  Status Run(NpyHeader& header);

 private:
  enum Key : unsigned { kDescr = 1, kFortranOrder = 2, kShape = 4 };

  Status Invalid(const std::string& what) const { return InvalidAt(what, pos_); }
  Status InvalidAt(const std::string& what, size_t pos) const {
    return Status(StatusCode::kInvalid, Where(name_) + "NPY header: " + what)
        .WithByteOffset(text_offset_ + pos);
  }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  void SkipSpace() {
    while (!AtEnd() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                        text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  Status Expect(char c, const char* what) {
    SkipSpace();
    if (Peek() != c) return Invalid(std::string("expected ") + what + Found());
    ++pos_;
    return Status::Ok();
  }
  std::string Found() const {
    if (AtEnd()) return ", found the end of the header";
    return ", found '" + MessageSafe(text_.substr(pos_, 1)) + "'";
  }
  Result<std::string_view> String();
  Status Value(Key key, NpyHeader& header);
  Status Bool(bool& value);
  Status Shape(std::vector<uint64_t>& shape);
  Result<uint64_t> Dimension();

  std::string_view text_;
  uint64_t text_offset_;
  std::string_view name_;
  size_t pos_ = 0;
  std::string_view descr_;
  size_t descr_pos_ = 0;
};

// 'x' or "x"; the dict's strings are dtype codes and key names, so escapes
// (which numpy never writes there) are refused rather than interpreted.
Result<std::string_view> HeaderTextParser::String() {
  SkipSpace();
  const char quote = Peek();
  if (quote != '\'' && quote != '"') return Invalid("expected a quoted string" + Found());
  const size_t begin = ++pos_;
  while (!AtEnd() && text_[pos_] != quote) {
    if (text_[pos_] == '\\') return Invalid("escape sequences in strings are not supported");
    if (text_[pos_] == '\n') return Invalid("unterminated string");
    ++pos_;
  }
  if (AtEnd()) return InvalidAt("unterminated string", begin - 1);
  return text_.substr(begin, pos_++ - begin);
}

Status HeaderTextParser::Bool(bool& value) {
  SkipSpace();
  const std::string_view rest = text_.substr(pos_);
  for (const auto& [word, meaning] : {std::pair{std::string_view("True"), true},
                                      std::pair{std::string_view("False"), false}}) {
    if (rest.starts_with(word)) {
      const size_t after = pos_ + word.size();
      // "Truex" is a different identifier.
      if (after < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[after])) != 0 ||
                                   text_[after] == '_')) {
        break;
      }
      pos_ = after;
      value = meaning;
      return Status::Ok();
    }
  }
  return Invalid("'fortran_order' must be True or False");
}

// A non-negative decimal integer as Python writes it (no sign, no leading
// zeros, no underscores); the 'L' suffix of Python 2 longs, which old numpy
// wrote into shapes, is accepted.
Result<uint64_t> HeaderTextParser::Dimension() {
  SkipSpace();
  const size_t begin = pos_;
  if (Peek() == '-') return Invalid("negative dimension in 'shape'");
  if (std::isdigit(static_cast<unsigned char>(Peek())) == 0) {
    return Invalid("expected a dimension (a non-negative integer) in 'shape'" + Found());
  }
  uint64_t value = 0;
  while (std::isdigit(static_cast<unsigned char>(Peek())) != 0) {
    if (!CheckedMul(value, 10, &value) ||
        !CheckedAdd(value, static_cast<uint64_t>(Peek() - '0'), &value)) {
      return InvalidAt("dimension in 'shape' overflows 64 bits", begin);
    }
    ++pos_;
  }
  if (pos_ - begin > 1 && text_[begin] == '0') {
    return InvalidAt("dimension with a leading zero in 'shape'", begin);
  }
  if (Peek() == 'L') ++pos_;
  const char next = Peek();
  if (std::isalnum(static_cast<unsigned char>(next)) != 0 || next == '_' || next == '.') {
    return Invalid("dimension in 'shape' is not a decimal integer");
  }
  return value;
}

// (), (n,), (n, m), (n, m,): a one-element tuple needs its comma, or it
// would be a parenthesised integer.
Status HeaderTextParser::Shape(std::vector<uint64_t>& shape) {
  AMN_RETURN_IF_ERROR(Expect('(', "a tuple for 'shape'"));
  SkipSpace();
  if (Peek() == ')') {
    ++pos_;
    return Status::Ok();
  }
  while (true) {
    if (shape.size() == kMaxDims) {
      return Invalid("'shape' has more than " + std::to_string(kMaxDims) + " dimensions");
    }
    AMN_ASSIGN_OR_RETURN(const uint64_t dim, Dimension());
    shape.push_back(dim);
    SkipSpace();
    if (Peek() == ')') {
      if (shape.size() == 1) return Invalid("'shape' (n) is an integer, not a tuple: write (n,)");
      ++pos_;
      return Status::Ok();
    }
    AMN_RETURN_IF_ERROR(Expect(',', "',' or ')' in 'shape'"));
    SkipSpace();
    if (Peek() == ')') {
      ++pos_;
      return Status::Ok();
    }
  }
}

Status HeaderTextParser::Value(Key key, NpyHeader& header) {
  switch (key) {
    case kDescr: {
      SkipSpace();
      if (Peek() == '[') {
        return Status(StatusCode::kUnsupported,
                      Where(name_) + "structured NPY dtype (descr " +
                          MessageSafe(text_.substr(pos_), 80) + ") is not supported")
            .WithByteOffset(text_offset_ + pos_);
      }
      descr_pos_ = pos_;
      AMN_ASSIGN_OR_RETURN(descr_, String());
      return Status::Ok();
    }
    case kFortranOrder:
      return Bool(header.fortran_order);
    case kShape:
      return Shape(header.shape);
  }
  return Status::Ok();
}

Status HeaderTextParser::Run(NpyHeader& header) {
  AMN_RETURN_IF_ERROR(Expect('{', "'{' opening the header dict"));
  unsigned seen = 0;
  while (true) {
    SkipSpace();
    if (Peek() == '}') {
      ++pos_;
      break;
    }
    const size_t key_pos = pos_;
    AMN_ASSIGN_OR_RETURN(const std::string_view key_text, String());
    Key key;
    if (key_text == "descr") {
      key = kDescr;
    } else if (key_text == "fortran_order") {
      key = kFortranOrder;
    } else if (key_text == "shape") {
      key = kShape;
    } else {
      return InvalidAt("unexpected key '" + MessageSafe(key_text) + "'", key_pos);
    }
    if ((seen & key) != 0) return InvalidAt("duplicate key '" + std::string(key_text) + "'", key_pos);
    seen |= key;
    AMN_RETURN_IF_ERROR(Expect(':', "':' after a key"));
    AMN_RETURN_IF_ERROR(Value(key, header));
    SkipSpace();
    if (Peek() == '}') continue;
    AMN_RETURN_IF_ERROR(Expect(',', "',' or '}' after a value"));
  }
  SkipSpace();
  if (!AtEnd()) return Invalid("unexpected text after the header dict");
  for (const auto& [key, key_name] : {std::pair{kDescr, "descr"},
                                      std::pair{kFortranOrder, "fortran_order"},
                                      std::pair{kShape, "shape"}}) {
    if ((seen & key) == 0) return InvalidAt(std::string("missing key '") + key_name + "'", 0);
  }
  const std::optional<Descr> descr = MapDescr(descr_);
  if (!descr) {
    return Status(StatusCode::kUnsupported,
                  Where(name_) + "NPY dtype '" + MessageSafe(descr_, 40) +
                      "' is not supported (bool, int8..uint64, float16/32/64 and bfloat16 as "
                      "V2 are)")
        .WithByteOffset(text_offset_ + descr_pos_);
  }
  header.dtype = descr->dtype;
  header.big_endian = descr->big_endian;
  return Status::Ok();
}

}  // namespace

Result<uint64_t> NpyHeaderBytes(std::span<const std::byte> prefix, std::string_view name) {
  AMN_ASSIGN_OR_RETURN(const Preamble p, ParsePreamble(prefix, name));
  return p.text_offset + p.text_bytes;  // at most 12 + 2^32 - 1: no overflow
}

Result<NpyHeader> ParseNpyHeader(std::span<const std::byte> prefix, std::string_view name,
                                 const ParseLimits& limits) {
  AMN_ASSIGN_OR_RETURN(const Preamble p, ParsePreamble(prefix, name));
  if (p.text_bytes > limits.max_header_bytes) {
    return Status(StatusCode::kLimitExceeded,
                  Where(name) + "NPY header of " + std::to_string(p.text_bytes) +
                      " bytes exceeds the limit of " + std::to_string(limits.max_header_bytes))
        .WithByteOffset(kLengthOffset);
  }
  const uint64_t header_end = p.text_offset + p.text_bytes;
  if (prefix.size() < header_end) {
    return Status(StatusCode::kTruncated,
                  Where(name) + "needs " + std::to_string(header_end) +
                      " bytes for the NPY header, has " + std::to_string(prefix.size()))
        .WithByteOffset(prefix.size());
  }
  NpyHeader header;
  header.major = p.major;
  header.minor = p.minor;
  header.data_offset = header_end;
  // v1.0 and v2.0 headers are latin-1, v3.0 UTF-8; every byte that matters
  // to the grammar is ASCII in both, so the text is read as bytes.
  const std::string_view text(reinterpret_cast<const char*>(prefix.data()) + p.text_offset,
                              p.text_bytes);
  HeaderTextParser parser(text, p.text_offset, name);
  AMN_RETURN_IF_ERROR(parser.Run(header));

  // The element count, and the count without zero dimensions: strides are
  // products of dimensions even when another dimension is zero, so those
  // products must not overflow either (numpy refuses such shapes too).
  uint64_t elements = 1, nonzero_elements = 1, nonzero_bytes = 0;
  for (const uint64_t dim : header.shape) {
    elements *= dim;  // cannot overflow once nonzero_elements does not
    if (dim != 0 && !CheckedMul(nonzero_elements, dim, &nonzero_elements)) {
      return Status(StatusCode::kInvalid, Where(name) + "NPY shape's element count overflows")
          .WithByteOffset(p.text_offset);
    }
  }
  if (!CheckedMul(nonzero_elements, DtypeBytes(header.dtype), &nonzero_bytes)) {
    return Status(StatusCode::kInvalid, Where(name) + "NPY array's byte count overflows")
        .WithByteOffset(p.text_offset);
  }
  header.elements = elements;
  return header;
}

}  // namespace amn::formats
