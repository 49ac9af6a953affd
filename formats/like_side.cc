// Reads of a --like weight's side values, one chunk's at a time.
#include "formats/like_side.h"

#include <cmath>
#include <vector>

#include "amn/array_copy.h"
#include "formats/source_reads.h"

namespace amn::formats {
namespace {

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

std::string Where(const LikeSideTensor& t) { return "--like " + t.path + ": '" + t.name + "'"; }

Status Unfit(const LikeSideTensor& t, const std::string& why) {
  return Status(StatusCode::kInvalidArgument, Where(t) + " " + why).WithTensor(t.name);
}

bool FloatDtype(Dtype d) { return d == Dtype::kF32 || d == Dtype::kF16 || d == Dtype::kBf16; }

Status Expect(const LikeSideTensor& t, bool dtype_ok, const char* dtypes, uint64_t elements) {
  if (!dtype_ok) {
    return Unfit(t, "is " + std::string(DtypeName(t.dtype)) + "; side values are " + dtypes);
  }
  if (t.elements != elements) {
    return Unfit(t, "holds " + std::to_string(t.elements) + " values; the weight needs " +
                        std::to_string(elements));
  }
  return Status::Ok();
}

// Float elements [first, first + out.size()) of `t` as F32.
Status ReadFloats(EngineInputs& inputs, const LikeSideTensor& t, uint64_t first,
                  std::span<float> out) {
  const uint64_t elem = DtypeBytes(t.dtype);
  if (t.dtype == Dtype::kF32) {
    return inputs.Read(t.file, t.offset + first * elem, std::as_writable_bytes(out));
  }
  std::vector<std::byte> raw(out.size() * elem);
  AMN_RETURN_IF_ERROR(inputs.Read(t.file, t.offset + first * elem, raw));
  return ConvertFloats(FloatTypeOf(t.dtype), raw, FloatType::kF32, std::as_writable_bytes(out));
}

}  // namespace

Status CheckLikeSide(const LikeSide& like, uint64_t count) {
  if (!like.nested) {
    return Expect(like.values, FloatDtype(like.values.dtype), "F32, F16 or BF16", count);
  }
  AMN_RETURN_IF_ERROR(Expect(like.values, like.values.dtype == Dtype::kU8, "U8 codes", count));
  if (like.nested_block_size == 0) {
    return Unfit(like.nested_absmax, "has nested blocks of 0 values");
  }
  AMN_RETURN_IF_ERROR(Expect(like.nested_absmax, FloatDtype(like.nested_absmax.dtype),
                             "F32, F16 or BF16", CeilDiv(count, like.nested_block_size)));
  return Expect(like.nested_map, FloatDtype(like.nested_map.dtype), "F32, F16 or BF16", 256);
}

Status ReadLikeSide(EngineInputs& inputs, const LikeSide& like, uint64_t first,
                    std::span<float> side) {
  if (side.empty()) return Status::Ok();
  const LikeSideTensor& values = like.values;
  if (first > values.elements || side.size() > values.elements - first) {
    return Unfit(values, "holds " + std::to_string(values.elements) + " values; a chunk reads " +
                             std::to_string(first + side.size()));
  }
  if (!like.nested) {
    AMN_RETURN_IF_ERROR(ReadFloats(inputs, values, first, side));
  } else {
    std::vector<uint8_t> codes(side.size());
    AMN_RETURN_IF_ERROR(
        inputs.Read(values.file, values.offset + first, std::as_writable_bytes(std::span(codes))));
    const uint64_t nbs = like.nested_block_size;
    const uint64_t block0 = first / nbs, blocks = (first + side.size() - 1) / nbs - block0 + 1;
    std::vector<float> nested(blocks), map(256);
    AMN_RETURN_IF_ERROR(ReadFloats(inputs, like.nested_absmax, block0, nested));
    AMN_RETURN_IF_ERROR(ReadFloats(inputs, like.nested_map, 0, map));
    for (size_t i = 0; i < side.size(); ++i) {
      // Two roundings, as bitsandbytes' dequantize_blockwise then += offset.
      const float scaled = map[codes[i]] * nested[(first + i) / nbs - block0];
      side[i] = scaled + like.nested_offset;
    }
  }
  for (size_t i = 0; i < side.size(); ++i) {
    // What the encoders take (amn/quantize.h): finite, >= 0, FP8 scales > 0.
    const float v = side[i];
    const char* bad = !std::isfinite(v)            ? "is NaN or infinite"
                      : v < 0.0f                   ? "is negative"
                      : v == 0.0f && like.positive ? "is zero"
                                                   : nullptr;
    if (bad == nullptr) continue;
    // Name what holds it: the value, or the nested state it is recovered from.
    std::string what = Where(values) + " value " + std::to_string(first + i);
    if (like.nested) {
      what +=
          " (recovered from '" + like.nested_absmax.name + "' and '" + like.nested_map.name + "')";
    }
    return Status(StatusCode::kInvalid, what + " " + bad + "; the file is corrupt")
        .WithTensor(values.name)
        .WithByteOffset(values.offset + (first + i) * DtypeBytes(values.dtype));
  }
  return Status::Ok();
}

}  // namespace amn::formats
