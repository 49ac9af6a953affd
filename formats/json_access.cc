// Typed reads of untrusted JSON with messages naming file and key.
#include "formats/json_access.h"

#include "formats/byte_source.h"

namespace amn::formats {
namespace {

using Json = nlohmann::json;

std::string Where(const JsonAt& at) {
  const std::string file = MessageSafe(at.file, kMessagePathBytes);
  if (at.key.empty()) return file + ": the document";
  return file + ": key \"" + MessageSafe(at.key) + "\"";
}

}  // namespace

JsonAt JsonAt::Member(std::string_view name) const {
  return {file, key.empty() ? std::string(name) : key + "." + std::string(name)};
}

JsonAt JsonAt::Element(size_t index) const {
  return {file, key + "[" + std::to_string(index) + "]"};
}

Status JsonTypeError(const JsonAt& at, std::string_view expected, const Json& got) {
  return Status(StatusCode::kInvalid,
                Where(at) + ": expected " + std::string(expected) + ", got " + got.type_name());
}

Result<const Json*> JsonObject(const Json& value, const JsonAt& at) {
  if (!value.is_object()) return JsonTypeError(at, "object", value);
  return &value;
}

Result<const Json*> JsonArray(const Json& value, const JsonAt& at) {
  if (!value.is_array()) return JsonTypeError(at, "array", value);
  return &value;
}

Result<const Json*> JsonRequired(const Json& object, const JsonAt& at, std::string_view name) {
  AMN_RETURN_IF_ERROR(JsonObject(object, at).status());
  const auto it = object.find(std::string(name));
  if (it == object.end()) return Status(StatusCode::kInvalid, Where(at.Member(name)) + ": missing");
  return &*it;
}

Result<std::string> JsonString(const Json& value, const JsonAt& at) {
  if (!value.is_string()) return JsonTypeError(at, "string", value);
  return value.get_ref<const std::string&>();
}

Result<uint64_t> JsonUint(const Json& value, const JsonAt& at) {
  if (!value.is_number_unsigned()) return JsonTypeError(at, "unsigned integer", value);
  return value.get<uint64_t>();
}

Result<bool> JsonBool(const Json& value, const JsonAt& at) {
  if (!value.is_boolean()) return JsonTypeError(at, "boolean", value);
  return value.get<bool>();
}

}  // namespace amn::formats
