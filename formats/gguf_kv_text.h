// GGUF metadata given as text (`amn convert --gguf-kv key=value` and
// `--gguf-metadata file.json`), typed as docs/cli.md says.
#ifndef AMN_FORMATS_GGUF_KV_TEXT_H_
#define AMN_FORMATS_GGUF_KV_TEXT_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "amn/result.h"
#include "formats/gguf.h"

namespace amn::formats {

// "key=value". The value's type is inferred: true/false -> bool; an integer
// -> u32 when it fits, else i32, else u64/i64; a decimal number (with '.',
// 'e' or 'E') -> f32; anything else -> string. An explicit type comes
// first: "key=u8:7", "key=f64:0.1", "key=str:42"; types u8 i8 u16 i16 u32
// i32 u64 i64 f32 f64 bool str. kInvalidArgument naming the argument for a
// missing '=', an empty key or a value its type cannot hold.
Result<std::pair<std::string, GgufValue>> ParseGgufKvArgument(std::string_view text);

// A JSON object of key -> value: strings, booleans and numbers typed as
// above; arrays of those (one element type: all strings, all bools, all
// integers -> i32 when all fit, else i64, numbers with a fraction -> f32)
// and of arrays; {"type": "u16", "value": 7} for an explicit scalar type.
// kInvalidArgument naming the key otherwise.
Result<std::vector<std::pair<std::string, GgufValue>>> ParseGgufMetadataJson(std::string_view text);

}  // namespace amn::formats

#endif  // AMN_FORMATS_GGUF_KV_TEXT_H_
