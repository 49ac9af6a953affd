// Typing of user-given GGUF metadata (integers parsed as integers, never
// through a double: DESIGN.md §7).
#include "formats/gguf_kv_text.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "formats/byte_source.h"

namespace amn::formats {
namespace {

Status Bad(std::string_view what, std::string_view why) {
  return Status(StatusCode::kInvalidArgument,
                "GGUF metadata '" + MessageSafe(std::string(what)) + "': " + std::string(why));
}

template <typename T>
bool ParseInt(std::string_view s, T& out) {
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool ParseReal(std::string_view s, double& out) {
  if (s.empty()) return false;
  // from_chars for double is in libstdc++ 11+.
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(out);
}

GgufValue Scalar(GgufValueType type) {
  GgufValue v;
  v.type = type;
  return v;
}

// An integer text as the narrowest of u32, i32, u64, i64 that holds it.
bool InferInt(std::string_view s, GgufValue& v) {
  uint64_t u = 0;
  int64_t i = 0;
  if (ParseInt(s, u)) {
    v = Scalar(u <= UINT32_MAX ? GgufValueType::kU32 : GgufValueType::kU64);
    v.u = u;
    return true;
  }
  if (ParseInt(s, i)) {
    v = Scalar(i >= INT32_MIN ? GgufValueType::kI32 : GgufValueType::kI64);
    v.i = i;
    return true;
  }
  return false;
}

Result<GgufValue> Typed(std::string_view type, std::string_view s, std::string_view what) {
  struct Unsigned { const char* name; GgufValueType t; uint64_t max; };
  struct Signed { const char* name; GgufValueType t; int64_t min, max; };
  static constexpr Unsigned kUnsigned[] = {{"u8", GgufValueType::kU8, UINT8_MAX},
                                           {"u16", GgufValueType::kU16, UINT16_MAX},
                                           {"u32", GgufValueType::kU32, UINT32_MAX},
                                           {"u64", GgufValueType::kU64, UINT64_MAX}};
  static constexpr Signed kSigned[] = {{"i8", GgufValueType::kI8, INT8_MIN, INT8_MAX},
                                       {"i16", GgufValueType::kI16, INT16_MIN, INT16_MAX},
                                       {"i32", GgufValueType::kI32, INT32_MIN, INT32_MAX},
                                       {"i64", GgufValueType::kI64, INT64_MIN, INT64_MAX}};
  for (const Unsigned& u : kUnsigned) {
    if (type != u.name) continue;
    GgufValue v = Scalar(u.t);
    if (!ParseInt(s, v.u) || v.u > u.max) return Bad(what, "not a " + std::string(type));
    return v;
  }
  for (const Signed& i : kSigned) {
    if (type != i.name) continue;
    GgufValue v = Scalar(i.t);
    if (!ParseInt(s, v.i) || v.i < i.min || v.i > i.max) return Bad(what, "not an " + std::string(type));
    return v;
  }
  if (type == "f32" || type == "f64") {
    GgufValue v = Scalar(type == "f32" ? GgufValueType::kF32 : GgufValueType::kF64);
    if (!ParseReal(s, v.f)) return Bad(what, "not a finite " + std::string(type));
    if (type == "f32" && std::fabs(v.f) > std::numeric_limits<float>::max()) {
      return Bad(what, "out of f32 range");
    }
    return v;
  }
  if (type == "bool") {
    if (s != "true" && s != "false") return Bad(what, "a bool is true or false");
    GgufValue v = Scalar(GgufValueType::kBool);
    v.b = s == "true";
    return v;
  }
  if (type == "str") {
    GgufValue v = Scalar(GgufValueType::kString);
    v.s = std::string(s);
    return v;
  }
  return Bad(what, "unknown type '" + std::string(type) +
                       "' (u8 i8 u16 i16 u32 i32 u64 i64 f32 f64 bool str)");
}

bool IsTypeName(std::string_view t) {
  for (const char* name : {"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64",
                           "bool", "str"}) {
    if (t == name) return true;
  }
  return false;
}

Result<GgufValue> FromJson(const nlohmann::json& j, std::string_view key, int depth) {
  if (depth > 8) return Bad(key, "arrays nest deeper than 8");
  if (j.is_boolean()) {
    GgufValue v = Scalar(GgufValueType::kBool);
    v.b = j.get<bool>();
    return v;
  }
  if (j.is_string()) {
    GgufValue v = Scalar(GgufValueType::kString);
    v.s = j.get<std::string>();
    return v;
  }
  if (j.is_number_unsigned() || j.is_number_integer()) {
    GgufValue v;
    InferInt(j.dump(), v);
    return v;
  }
  if (j.is_number_float()) {
    GgufValue v = Scalar(GgufValueType::kF32);
    v.f = j.get<double>();
    if (!std::isfinite(v.f) || std::fabs(v.f) > std::numeric_limits<float>::max()) {
      return Bad(key, "out of f32 range");
    }
    return v;
  }
  if (j.is_object()) {
    auto t = j.find("type");
    auto value = j.find("value");
    if (j.size() != 2 || t == j.end() || !t->is_string() || value == j.end() ||
        value->is_structured()) {
      return Bad(key, "an object value is {\"type\": \"u16\", \"value\": 7}");
    }
    const std::string text = value->is_string() ? value->get<std::string>() : value->dump();
    return Typed(t->get<std::string>(), text, key);
  }
  if (j.is_array()) {
    GgufValue v = Scalar(GgufValueType::kArray);
    bool any_real = false, all_i32 = true;
    for (const nlohmann::json& item : j) {
      AMN_ASSIGN_OR_RETURN(GgufValue e, FromJson(item, key, depth + 1));
      v.items.push_back(std::move(e));
      any_real |= item.is_number_float();
    }
    v.count = v.items.size();
    if (v.items.empty()) {
      v.elem_type = GgufValueType::kString;  // nothing says otherwise
      return v;
    }
    const bool numbers = j.front().is_number();
    for (const nlohmann::json& item : j) {
      if (item.is_number() != numbers) return Bad(key, "an array mixes element types");
    }
    if (numbers) {
      for (GgufValue& e : v.items) {
        if (any_real) {
          if (e.type != GgufValueType::kF32) e.f = e.type == GgufValueType::kU32 || e.type == GgufValueType::kU64
                                                        ? static_cast<double>(e.u) : static_cast<double>(e.i);
          e.type = GgufValueType::kF32;
          continue;
        }
        const bool fits = e.type == GgufValueType::kI32 || (e.type == GgufValueType::kU32 && e.u <= INT32_MAX);
        all_i32 &= fits;
      }
      if (!any_real) {
        for (GgufValue& e : v.items) {
          const int64_t i = e.type == GgufValueType::kU32 || e.type == GgufValueType::kU64
                                ? static_cast<int64_t>(e.u) : e.i;
          if (e.type == GgufValueType::kU64 && e.u > INT64_MAX) return Bad(key, "an integer over i64");
          e = Scalar(all_i32 ? GgufValueType::kI32 : GgufValueType::kI64);
          e.i = i;
        }
      }
    }
    v.elem_type = v.items.front().type;
    for (const GgufValue& e : v.items) {
      if (e.type != v.elem_type) return Bad(key, "an array mixes element types");
    }
    return v;
  }
  return Bad(key, "null has no GGUF type");
}

}  // namespace

Result<std::pair<std::string, GgufValue>> ParseGgufKvArgument(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) return Bad(text, "expected key=value");
  const std::string key(text.substr(0, eq));
  const std::string_view value = text.substr(eq + 1);
  const size_t colon = value.find(':');
  if (colon != std::string_view::npos && IsTypeName(value.substr(0, colon))) {
    AMN_ASSIGN_OR_RETURN(GgufValue v, Typed(value.substr(0, colon), value.substr(colon + 1), text));
    return std::pair(key, std::move(v));
  }
  GgufValue v;
  if (value == "true" || value == "false") {
    v = Scalar(GgufValueType::kBool);
    v.b = value == "true";
  } else if (InferInt(value, v)) {
  } else if (value.find_first_of(".eE") != std::string_view::npos && ParseReal(value, v.f) &&
             std::fabs(v.f) <= std::numeric_limits<float>::max()) {
    v.type = GgufValueType::kF32;
  } else {
    v = Scalar(GgufValueType::kString);
    v.s = std::string(value);
  }
  return std::pair(key, std::move(v));
}

Result<std::vector<std::pair<std::string, GgufValue>>> ParseGgufMetadataJson(std::string_view text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return Status(StatusCode::kInvalidArgument, "GGUF metadata JSON must be an object of key: value");
  }
  std::vector<std::pair<std::string, GgufValue>> out;
  for (const auto& [key, value] : j.items()) {
    AMN_ASSIGN_OR_RETURN(GgufValue v, FromJson(value, key, 0));
    out.emplace_back(key, std::move(v));
  }
  return out;
}

}  // namespace amn::formats
