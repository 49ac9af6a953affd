// GGUF v1-v3 header parser: a bounded cursor over a ByteSource, strict
// checks on every count, length and offset before anything is stored.
#include "formats/gguf.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <set>

#include "amn/ggml_dequant.h"
#include "formats/checked_math.h"

namespace amn::formats {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read little-endian
constexpr uint32_t kMaxDims = 4;         // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 8;
constexpr uint64_t kMaxNameBytes = 1 << 16;
constexpr uint64_t kMaxAlignment = 1 << 20;
constexpr size_t kWindow = 1 << 16;

// Sequential little-endian reads through a 64 KiB window of the source.
class Cursor {
 public:
  explicit Cursor(ByteSource& source) : source_(source) {}
  uint64_t pos() const { return pos_; }
  uint64_t remaining() const { return source_.size() - pos_; }

  Status Read(void* out, uint64_t n) {
    auto* dst = static_cast<std::byte*>(out);
    while (n > 0) {
      if (pos_ < window_start_ || pos_ >= window_start_ + window_.size()) {
        AMN_RETURN_IF_ERROR(Refill(n));
      }
      const uint64_t offset = pos_ - window_start_;
      const uint64_t take = std::min<uint64_t>(n, window_.size() - offset);
      std::memcpy(dst, window_.data() + offset, take);
      dst += take;
      pos_ += take;
      n -= take;
    }
    return Status::Ok();
  }
  Status Skip(uint64_t n) {
    if (n > remaining()) return Truncated(n);
    pos_ += n;
    return Status::Ok();
  }
  template <typename T>
  Status Le(T& value) {  // little-endian scalar; the host is little-endian
    return Read(&value, sizeof(T));
  }
  Status Truncated(uint64_t wanted) const {
    return Status(StatusCode::kTruncated, source_.name() + ": needs " + std::to_string(wanted) +
                                              " more bytes, file ends")
        .WithByteOffset(pos_);
  }

 private:
  Status Refill(uint64_t wanted) {
    if (remaining() == 0) return Truncated(wanted);
    window_start_ = pos_;
    window_.resize(std::min<uint64_t>(kWindow, remaining()));
    return source_.ReadAt(pos_, window_);
  }

  ByteSource& source_;
  uint64_t pos_ = 0;
  uint64_t window_start_ = 0;
  std::vector<std::byte> window_;
};

class Parser {
 public:
  Parser(ByteSource& source, const ParseLimits& limits)
      : source_(source), limits_(limits), cursor_(source) {}

  Result<GgufHeader> Run() {
    GgufHeader header;
    uint32_t magic = 0;
    AMN_RETURN_IF_ERROR(cursor_.Le(magic));
    if (magic != kMagic) return Invalid("not a GGUF file (bad magic)", 0);
    AMN_RETURN_IF_ERROR(cursor_.Le(header.version));
    if ((header.version & 0xFFFF) == 0 && header.version != 0) {
      return Status(StatusCode::kUnsupported,
                    source_.name() + ": big-endian GGUF files are not supported")
          .WithByteOffset(4);
    }
    if (header.version < 1 || header.version > 3) {
      return Status(StatusCode::kUnsupported, source_.name() + ": GGUF version " +
                                                  std::to_string(header.version) +
                                                  " (this build reads 1 to 3)")
          .WithByteOffset(4);
    }
    v1_ = header.version == 1;
    uint64_t tensor_count = 0, kv_count = 0;
    AMN_RETURN_IF_ERROR(Count(tensor_count));
    AMN_RETURN_IF_ERROR(Count(kv_count));
    // Each key/value takes at least 13 bytes and each tensor info 25: a
    // count the remaining bytes cannot hold is rejected before any reserve.
    if (kv_count > limits_.max_item_count || tensor_count > limits_.max_item_count) {
      return Status(StatusCode::kLimitExceeded,
                    source_.name() + ": " + std::to_string(kv_count) + " keys and " +
                        std::to_string(tensor_count) + " tensors exceed the item limit of " +
                        std::to_string(limits_.max_item_count))
          .WithByteOffset(cursor_.pos());
    }
    if (kv_count * 13 + tensor_count * 25 > cursor_.remaining()) return cursor_.Truncated(kv_count * 13 + tensor_count * 25);

    std::set<std::string, std::less<>> keys;
    header.metadata.reserve(kv_count);
    for (uint64_t k = 0; k < kv_count; ++k) {
      const uint64_t at = cursor_.pos();
      GgufKeyValue kv;
      AMN_RETURN_IF_ERROR(String(kv.key, kMaxNameBytes));
      if (!keys.insert(kv.key).second) return Invalid("duplicate key '" + MessageSafe(kv.key) + "'", at);
      uint32_t type = 0;
      kv.value_begin = cursor_.pos();
      AMN_RETURN_IF_ERROR(cursor_.Le(type));
      AMN_RETURN_IF_ERROR(Value(type, 0, true, kv.value));
      kv.value_end = cursor_.pos();
      header.metadata.push_back(std::move(kv));
    }
    if (const GgufValue* a = header.Find("general.alignment")) {
      if (a->type != GgufValueType::kU32 || a->u == 0 || (a->u & (a->u - 1)) != 0 ||
          a->u > kMaxAlignment) {
        return Invalid("general.alignment must be a u32 power of two up to 1 MiB", 0);
      }
      header.alignment = a->u;
    }

    std::set<std::string, std::less<>> names;
    header.tensors.reserve(tensor_count);
    for (uint64_t t = 0; t < tensor_count; ++t) {
      const uint64_t at = cursor_.pos();
      GgufTensorInfo info;
      AMN_RETURN_IF_ERROR(String(info.name, kMaxNameBytes));
      if (!names.insert(info.name).second) {
        return Invalid("duplicate tensor '" + MessageSafe(info.name) + "'", at);
      }
      AMN_RETURN_IF_ERROR(TensorInfo(info, at));
      header.tensors.push_back(std::move(info));
    }

    const uint64_t end = cursor_.pos();
    header.data_offset = end + (header.alignment - end % header.alignment) % header.alignment;
    if (header.data_offset > source_.size()) {
      if (!header.tensors.empty()) return cursor_.Truncated(header.data_offset - end);
      header.data_offset = source_.size();  // no tensors: padding may be absent
    }
    header.data_bytes = source_.size() - header.data_offset;
    AMN_RETURN_IF_ERROR(CheckLayout(header));
    return header;
  }

 private:
  Status Invalid(const std::string& what, uint64_t at) const {
    return Status(StatusCode::kInvalid, source_.name() + ": " + what).WithByteOffset(at);
  }

  Status Count(uint64_t& out) {
    if (v1_) {
      uint32_t v = 0;
      AMN_RETURN_IF_ERROR(cursor_.Le(v));
      out = v;
      return Status::Ok();
    }
    return cursor_.Le(out);
  }

  // A length-prefixed string; stored only when `out` is non-null.
  Status StringImpl(std::string* out, uint64_t max_bytes) {
    const uint64_t at = cursor_.pos();
    uint64_t n = 0;
    AMN_RETURN_IF_ERROR(Count(n));
    if (n > cursor_.remaining()) return cursor_.Truncated(n);
    if (n > max_bytes) {
      return Status(StatusCode::kLimitExceeded, source_.name() + ": string of " +
                                                    std::to_string(n) + " bytes")
          .WithByteOffset(at);
    }
    if (out == nullptr) return cursor_.Skip(n);
    out->resize(n);
    return cursor_.Read(out->data(), n);
  }
  Status String(std::string& out, uint64_t max_bytes) { return StringImpl(&out, max_bytes); }

  static uint64_t MinBytes(uint32_t type) {
    switch (static_cast<GgufValueType>(type)) {
      case GgufValueType::kU8: case GgufValueType::kI8: case GgufValueType::kBool: return 1;
      case GgufValueType::kU16: case GgufValueType::kI16: return 2;
      case GgufValueType::kU32: case GgufValueType::kI32: case GgufValueType::kF32: return 4;
      case GgufValueType::kU64: case GgufValueType::kI64: case GgufValueType::kF64: return 8;
      case GgufValueType::kString: return 4;  // at least a v1 length
      case GgufValueType::kArray: return 8;
    }
    return 1;
  }

  template <typename T>
  Status Scalar(T& out) { return cursor_.Le(out); }

  Status Value(uint32_t type, int depth, bool keep, GgufValue& v) {
    const uint64_t at = cursor_.pos();
    if (type > static_cast<uint32_t>(GgufValueType::kF64)) {
      return Invalid("unknown value type " + std::to_string(type), at - 4);
    }
    v.type = static_cast<GgufValueType>(type);
    switch (v.type) {
      case GgufValueType::kU8: { uint8_t x; AMN_RETURN_IF_ERROR(Scalar(x)); v.u = x; break; }
      case GgufValueType::kI8: { int8_t x; AMN_RETURN_IF_ERROR(Scalar(x)); v.i = x; break; }
      case GgufValueType::kU16: { uint16_t x; AMN_RETURN_IF_ERROR(Scalar(x)); v.u = x; break; }
      case GgufValueType::kI16: { int16_t x; AMN_RETURN_IF_ERROR(Scalar(x)); v.i = x; break; }
      case GgufValueType::kU32: { uint32_t x; AMN_RETURN_IF_ERROR(Scalar(x)); v.u = x; break; }
      case GgufValueType::kI32: { int32_t x; AMN_RETURN_IF_ERROR(Scalar(x)); v.i = x; break; }
      case GgufValueType::kU64: { uint64_t x; AMN_RETURN_IF_ERROR(Scalar(x)); v.u = x; break; }
      case GgufValueType::kI64: { int64_t x; AMN_RETURN_IF_ERROR(Scalar(x)); v.i = x; break; }
      case GgufValueType::kF32: { float x; AMN_RETURN_IF_ERROR(Scalar(x)); v.f = x; break; }
      case GgufValueType::kF64: { double x; AMN_RETURN_IF_ERROR(Scalar(x)); v.f = x; break; }
      case GgufValueType::kBool: {
        uint8_t x;
        AMN_RETURN_IF_ERROR(Scalar(x));
        if (x > 1) return Invalid("bool value " + std::to_string(x), at);
        v.b = x != 0;
        break;
      }
      case GgufValueType::kString:
        AMN_RETURN_IF_ERROR(StringImpl(keep ? &v.s : nullptr, limits_.max_header_bytes));
        break;
      case GgufValueType::kArray: {
        if (depth >= kMaxArrayDepth) {
          return Status(StatusCode::kLimitExceeded, source_.name() + ": arrays nested deeper than " +
                                                        std::to_string(kMaxArrayDepth))
              .WithByteOffset(at);
        }
        uint32_t elem = 0;
        AMN_RETURN_IF_ERROR(cursor_.Le(elem));
        if (elem > static_cast<uint32_t>(GgufValueType::kF64)) {
          return Invalid("unknown array element type " + std::to_string(elem), at);
        }
        v.elem_type = static_cast<GgufValueType>(elem);
        AMN_RETURN_IF_ERROR(Count(v.count));
        uint64_t min_bytes = 0;
        if (!CheckedMul(v.count, MinBytes(elem), &min_bytes) || min_bytes > cursor_.remaining()) {
          return cursor_.Truncated(min_bytes);
        }
        // Tokenizer vocabularies are large arrays; bound the total work.
        total_items_ += v.count;
        if (total_items_ > 16 * limits_.max_item_count) {
          return Status(StatusCode::kLimitExceeded, source_.name() + ": more than " +
                                                        std::to_string(16 * limits_.max_item_count) +
                                                        " array items")
              .WithByteOffset(at);
        }
        for (uint64_t n = 0; n < v.count; ++n) {
          const bool keep_item = keep && n < GgufValue::kKeptItems;
          GgufValue item;
          AMN_RETURN_IF_ERROR(Value(elem, depth + 1, keep_item, item));
          if (keep_item) v.items.push_back(std::move(item));
        }
        break;
      }
    }
    return Status::Ok();
  }

  Status TensorInfo(GgufTensorInfo& info, uint64_t at) {
    uint32_t n_dims = 0;
    AMN_RETURN_IF_ERROR(cursor_.Le(n_dims));
    if (n_dims == 0 || n_dims > kMaxDims) {
      return Invalid("tensor '" + MessageSafe(info.name) + "' has " + std::to_string(n_dims) +
                         " dimensions (1 to 4 allowed)", at);
    }
    info.elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t dim = 0;
      AMN_RETURN_IF_ERROR(Count(dim));
      if (!CheckedMul(info.elements, dim, &info.elements)) {
        return Invalid("tensor '" + MessageSafe(info.name) + "': element count overflows", at);
      }
      info.dims.push_back(dim);
    }
    AMN_RETURN_IF_ERROR(cursor_.Le(info.type));
    AMN_RETURN_IF_ERROR(cursor_.Le(info.offset));
    const GgmlTypeInfo* type = FindGgmlType(info.type);
    if (type == nullptr) {
      return Status(StatusCode::kUnsupported, source_.name() + ": tensor '" +
                                                  MessageSafe(info.name) + "' has unknown type id " +
                                                  std::to_string(info.type))
          .WithByteOffset(at);
    }
    if (info.dims[0] % type->block_elems != 0) {
      return Invalid("tensor '" + MessageSafe(info.name) + "': first dimension " +
                         std::to_string(info.dims[0]) + " is not a multiple of the " +
                         std::string(type->name) + " block (" + std::to_string(type->block_elems) + ")",
                     at);
    }
    if (!CheckedMul(info.elements / type->block_elems, type->block_bytes, &info.bytes)) {
      return Invalid("tensor '" + MessageSafe(info.name) + "': byte size overflows", at);
    }
    return Status::Ok();
  }

  Status CheckLayout(const GgufHeader& header) const {
    std::vector<const GgufTensorInfo*> order;
    for (const GgufTensorInfo& t : header.tensors) order.push_back(&t);
    std::sort(order.begin(), order.end(),
              [](const auto* a, const auto* b) { return a->offset < b->offset; });
    uint64_t previous_end = 0;
    const GgufTensorInfo* previous = nullptr;
    for (const GgufTensorInfo* t : order) {
      const std::string name = "tensor '" + MessageSafe(t->name) + "'";
      if (t->offset % header.alignment != 0) {
        return Invalid(name + ": data offset " + std::to_string(t->offset) +
                           " is not a multiple of the alignment " + std::to_string(header.alignment),
                       header.data_offset);
      }
      if (t->offset > header.data_bytes || t->bytes > header.data_bytes - t->offset) {
        return Status(StatusCode::kTruncated,
                      source_.name() + ": " + name + " data [" + std::to_string(t->offset) + ", " +
                          std::to_string(t->offset + t->bytes) + ") runs past the end of the file")
            .WithByteOffset(header.data_offset + t->offset);
      }
      if (previous != nullptr && t->offset < previous_end) {
        return Invalid(name + " overlaps tensor '" + MessageSafe(previous->name) + "'",
                       header.data_offset + t->offset);
      }
      previous_end = t->offset + t->bytes;
      previous = t;
    }
    if (header.data_bytes > limits_.max_total_bytes) {
      return Status(StatusCode::kLimitExceeded, source_.name() + ": data section over the limit");
    }
    return Status::Ok();
  }

  ByteSource& source_;
  const ParseLimits limits_;
  Cursor cursor_;
  bool v1_ = false;
  uint64_t total_items_ = 0;
};

}  // namespace

std::string_view GgufValueTypeName(GgufValueType type) {
  static constexpr std::array<std::string_view, 13> kNames = {
      "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = static_cast<size_t>(type);
  return i < kNames.size() ? kNames[i] : "unknown";
}

const GgufValue* GgufHeader::Find(std::string_view key) const {
  for (const GgufKeyValue& kv : metadata) {
    if (kv.key == key) return &kv.value;
  }
  return nullptr;
}

Result<GgufHeader> ReadGgufHeader(ByteSource& source, const ParseLimits& limits) {
  return Parser(source, limits.Clamped()).Run();
}

}  // namespace amn::formats
