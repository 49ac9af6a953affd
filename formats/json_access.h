// Typed reads of untrusted JSON (manifests, configs, index files): a value
// of the wrong type or a missing member is a Status naming the file and the
// key path, `invalid: FILE: key "layers[3].digest": expected string, got
// number`, never a bare nlohmann type_error. Internal to formats/ (it
// includes nlohmann/json).
#ifndef AMN_FORMATS_JSON_ACCESS_H_
#define AMN_FORMATS_JSON_ACCESS_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "amn/result.h"

namespace amn::formats {

// One place in a JSON document: the file's name for messages and the key
// path from the root ("" is the root, "layers[3].digest").
struct JsonAt {
  std::string file;
  std::string key;

  JsonAt Member(std::string_view name) const;
  JsonAt Element(size_t index) const;
};

// kInvalid "FILE: key \"KEY\": expected WHAT, got TYPE" (the root: "the
// document").
Status JsonTypeError(const JsonAt& at, std::string_view expected, const nlohmann::json& got);

// `value` as an object / array (a reference into it), or the type error.
Result<const nlohmann::json*> JsonObject(const nlohmann::json& value, const JsonAt& at);
Result<const nlohmann::json*> JsonArray(const nlohmann::json& value, const JsonAt& at);
// A required member of `object` (kInvalid "... : missing" when absent).
Result<const nlohmann::json*> JsonRequired(const nlohmann::json& object, const JsonAt& at,
                                           std::string_view name);
// Scalars: strings, unsigned integers (never through a double) and bools.
Result<std::string> JsonString(const nlohmann::json& value, const JsonAt& at);
Result<uint64_t> JsonUint(const nlohmann::json& value, const JsonAt& at);
Result<bool> JsonBool(const nlohmann::json& value, const JsonAt& at);

}  // namespace amn::formats

#endif  // AMN_FORMATS_JSON_ACCESS_H_
