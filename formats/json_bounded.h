// JSON read from a file (config.json, generation_config.json, an index, a
// quantization config, an Ollama manifest, a bitsandbytes quant_state),
// parsed with a nesting bound (docs/limits.md).
//
// nlohmann's parser keeps its own stack, but dump(), comparisons and our
// walks over a value recurse once per level: a value nested 100,000 deep
// would overflow the stack. The bound is checked as the parser opens each
// array or object, so nothing deeper is ever built.
#ifndef AMN_FORMATS_JSON_BOUNDED_H_
#define AMN_FORMATS_JSON_BOUNDED_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "amn/result.h"
#include "formats/byte_source.h"

namespace amn::formats {

// Nesting bound of config-like files; index files keep a tighter one (32).
inline constexpr int kMaxJsonDepth = 512;

// Parses `text` (the contents of `file`, named in messages) into Json
// (nlohmann::json or nlohmann::ordered_json). Errors: kInvalid "FILE:
// invalid JSON: ..." with the byte offset nlohmann reports, or kInvalid
// "FILE: JSON nested deeper than N levels". `hook`, when set, sees every
// parse event of a value within the bound (nlohmann's parser_callback_t:
// returning false drops the value).
template <class Json>
Result<Json> ParseBoundedJson(std::string_view text, const std::string& file,
                              int max_depth = kMaxJsonDepth,
                              const typename Json::parser_callback_t& hook = nullptr) {
  struct TooDeep {};
  const typename Json::parser_callback_t callback =
      [&](int depth, typename Json::parse_event_t event, Json& parsed) {
        // `depth` counts the containers enclosing the event; an opening bracket
        // is reported at the depth of the container it opens.
        const bool opens =
            event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start;
        if (opens && depth >= max_depth) throw TooDeep{};
        return hook ? hook(depth, event, parsed) : true;
      };
  try {
    return Json::parse(text, callback, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const TooDeep&) {
    return Status(StatusCode::kInvalid,
                  file + ": JSON nested deeper than " + std::to_string(max_depth) + " levels");
  } catch (const typename Json::parse_error& error) {
    return Status(StatusCode::kInvalid, file + ": invalid JSON: " + JsonErrorText(error))
        .WithByteOffset(error.byte == 0 ? 0 : error.byte - 1);
  } catch (const typename Json::exception& error) {
    return Status(StatusCode::kInvalid, file + ": invalid JSON: " + JsonErrorText(error));
  }
}

}  // namespace amn::formats

#endif  // AMN_FORMATS_JSON_BOUNDED_H_
