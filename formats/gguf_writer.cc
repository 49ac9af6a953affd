// GGUF v3 header bytes (ggml/src/gguf.cpp's layout, little-endian).
#include "formats/gguf_writer.h"

#include <algorithm>
#include <cstring>

namespace amn::formats {
namespace {

constexpr uint64_t kMaxAlignment = uint64_t{1} << 20;

template <typename T>
void Put(std::string& out, T value) {  // the host is little-endian (GGUF's order)
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

void PutString(std::string& out, std::string_view s) {
  Put<uint64_t>(out, s.size());
  out.append(s);
}

// The value without its type (arrays: element type, count, items).
Status PutValue(std::string& out, const GgufValue& v, GgufValueType type) {
  switch (type) {
    case GgufValueType::kU8: Put(out, static_cast<uint8_t>(v.u)); break;
    case GgufValueType::kI8: Put(out, static_cast<int8_t>(v.i)); break;
    case GgufValueType::kU16: Put(out, static_cast<uint16_t>(v.u)); break;
    case GgufValueType::kI16: Put(out, static_cast<int16_t>(v.i)); break;
    case GgufValueType::kU32: Put(out, static_cast<uint32_t>(v.u)); break;
    case GgufValueType::kI32: Put(out, static_cast<int32_t>(v.i)); break;
    case GgufValueType::kF32: Put(out, static_cast<float>(v.f)); break;
    case GgufValueType::kBool: Put(out, static_cast<uint8_t>(v.b ? 1 : 0)); break;
    case GgufValueType::kString: PutString(out, v.s); break;
    case GgufValueType::kU64: Put(out, v.u); break;
    case GgufValueType::kI64: Put(out, v.i); break;
    case GgufValueType::kF64: Put(out, v.f); break;
    case GgufValueType::kArray:
      if (v.items.size() != v.count) {
        return Status(StatusCode::kInvalidArgument,
                      "a GGUF array to write must hold all of its " + std::to_string(v.count) +
                          " items");
      }
      Put(out, static_cast<uint32_t>(v.elem_type));
      Put<uint64_t>(out, v.count);
      for (const GgufValue& item : v.items) {
        if (item.type != v.elem_type) {
          return Status(StatusCode::kInvalidArgument,
                        "a GGUF array of " + std::string(GgufValueTypeName(v.elem_type)) +
                            " holds a " + std::string(GgufValueTypeName(item.type)));
        }
        AMN_RETURN_IF_ERROR(PutValue(out, item, v.elem_type));
      }
      break;
    default:
      return Status(StatusCode::kInvalidArgument,
                    "GGUF value type " + std::to_string(static_cast<uint32_t>(type)) + " is unknown");
  }
  return Status::Ok();
}

}  // namespace

Status GgufMetadata::Set(std::string key, const GgufValue& value) {
  std::string encoded;
  Put(encoded, static_cast<uint32_t>(value.type));
  Status status = PutValue(encoded, value, value.type);
  if (!status.ok()) return Status(status.code(), key + ": " + status.message());
  SetEncoded(std::move(key), std::move(encoded));
  return Status::Ok();
}

void GgufMetadata::SetEncoded(std::string key, std::string encoded) {
  for (auto& [k, v] : entries_) {
    if (k == key) {  // an override keeps the key's place
      v = std::move(encoded);
      return;
    }
  }
  entries_.emplace_back(std::move(key), std::move(encoded));
}

void GgufMetadata::Remove(std::string_view key) {
  std::erase_if(entries_, [&](const auto& e) { return e.first == key; });
}

bool GgufMetadata::Has(std::string_view key) const { return Encoded(key) != nullptr; }

const std::string* GgufMetadata::Encoded(std::string_view key) const {
  for (const auto& [k, v] : entries_) {
    if (k == key) return &v;
  }
  return nullptr;
}

Result<uint64_t> GgufAlignment(const GgufMetadata& metadata) {
  const std::string* a = metadata.Encoded("general.alignment");
  if (a == nullptr) return kGgufDefaultAlignment;
  uint32_t type = 0, value = 0;
  if (a->size() == 8) {
    std::memcpy(&type, a->data(), 4);
    std::memcpy(&value, a->data() + 4, 4);
  }
  if (a->size() != 8 || type != static_cast<uint32_t>(GgufValueType::kU32) || value == 0 ||
      (value & (value - 1)) != 0 || value > kMaxAlignment) {
    return Status(StatusCode::kInvalidArgument,
                  "general.alignment must be a u32 power of two up to 1 MiB (ggml's rule)");
  }
  return uint64_t{value};
}

std::string GgufHeaderBytes(GgufMetadata metadata, const std::vector<GgufTensorOut>& tensors,
                            uint64_t alignment) {
  std::string out;
  out.append("GGUF", 4);
  Put<uint32_t>(out, kGgufWriteVersion);
  Put<uint64_t>(out, tensors.size());
  Put<uint64_t>(out, metadata.entries().size());
  for (auto& [key, encoded] : metadata.entries()) {
    PutString(out, key);
    out.append(encoded);
    std::string().swap(encoded);
  }
  for (const GgufTensorOut& t : tensors) {
    PutString(out, t.name);
    Put<uint32_t>(out, static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) Put(out, d);
    Put(out, t.ggml_type);
    Put(out, t.offset);
  }
  out.resize(GgufPad(out.size(), alignment), '\0');
  return out;
}

}  // namespace amn::formats
