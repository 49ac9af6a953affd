// The C ABI (amn/amn.h), part 3: FP8 weights with per-tensor, per-row or
// 2-D block scales in F32/BF16/F16, mapped onto amn::DequantFp8Rows (which
// takes F32 column scales for a run of rows). Scales are widened to F32 a
// fixed-size chunk at a time in a stack buffer: nothing is allocated.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "amn/amn.h"
#include "amn/convert.h"
#include "amn/fp8_dequant.h"
#include "dispatch/c_api_internal.h"

namespace amn::capi {
namespace {

constexpr const char* kFn = "amn_dequantize_fp8";

// Scales widened per chunk; block rows wider than this many column blocks
// are run a row and a chunk of column blocks at a time.
constexpr size_t kScaleChunk = 256;
using ScaleChunk = std::array<float, kScaleChunk>;

// Widens scales [first, first + count) (count <= kScaleChunk) to F32: the
// exact widening of amn/convert.h, read from little-endian bytes at any
// alignment.
Status LoadScales(const uint8_t* scales, ElemType type, uint64_t first, size_t count,
                  ScaleChunk& out) {
  if (type == ElemType::kF32) {
    for (size_t i = 0; i < count; ++i) {
      const uint8_t* p = scales + 4 * (first + i);
      const uint32_t bits = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                            static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
      std::memcpy(&out[i], &bits, sizeof(float));
    }
    return Status::Ok();
  }
  std::array<uint16_t, kScaleChunk> halves;
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* p = scales + 2 * (first + i);
    halves[i] = static_cast<uint16_t>(p[0] | p[1] << 8);
  }
  const std::span<const uint16_t> in(halves.data(), count);
  const std::span<float> widened(out.data(), count);
  return type == ElemType::kBf16 ? ConvertBf16ToF32(in, widened) : ConvertF16ToF32(in, widened);
}

// Everything a checked call needs, in size_t (every product fits: it is at
// most the byte size of a span the caller holds).
struct Fp8Call {
  ElemType code_type;
  ElemType scale_type;
  ElemType out_type;
  const uint8_t* codes;
  const uint8_t* scales;
  size_t cols;
  std::byte* out;
};

// Rows [r0, r1) with one F32 scale for every block of `block_cols` columns
// (scales[0, ceil(cols / block_cols)) of `chunk`).
Status RunRows(const Fp8Call& c, size_t r0, size_t r1, size_t row_begin,
               std::span<const float> chunk, size_t block_cols) {
  const size_t elem = ElemTypeBytes(c.out_type);
  const size_t n = (r1 - r0) * c.cols;
  return DequantFp8Rows(c.code_type, {c.codes + r0 * c.cols, n}, c.cols, chunk, block_cols,
                        c.out_type, {c.out + (r0 - row_begin) * c.cols * elem, n * elem});
}

Status RunTensor(const Fp8Call& c, size_t row_begin, size_t row_end) {
  ScaleChunk scale;
  AMN_RETURN_IF_ERROR(LoadScales(c.scales, c.scale_type, 0, 1, scale));
  return RunRows(c, row_begin, row_end, row_begin, std::span(scale.data(), 1), c.cols);
}

Status RunPerRow(const Fp8Call& c, size_t row_begin, size_t row_end) {
  ScaleChunk scales;
  for (size_t r0 = row_begin; r0 < row_end; r0 += kScaleChunk) {
    const size_t count = std::min(kScaleChunk, row_end - r0);
    AMN_RETURN_IF_ERROR(LoadScales(c.scales, c.scale_type, r0, count, scales));
    for (size_t i = 0; i < count; ++i) {
      AMN_RETURN_IF_ERROR(
          RunRows(c, r0 + i, r0 + i + 1, row_begin, std::span(scales.data() + i, 1), c.cols));
    }
  }
  return Status::Ok();
}

// Block scales S[ceil(rows / block_rows)][ceil(cols / block_cols)]. A run
// of rows inside one row block shares a row of S; when that row has more
// than kScaleChunk entries, each row is run in column pieces of
// kScaleChunk blocks (a piece starts on a block boundary, so its scales are
// a contiguous part of the row of S).
Status RunBlocks(const Fp8Call& c, size_t row_begin, size_t row_end, size_t block_rows,
                 size_t block_cols) {
  const size_t elem = ElemTypeBytes(c.out_type);
  const size_t scale_cols = (c.cols - 1) / block_cols + 1;
  ScaleChunk scales;
  for (size_t r0 = row_begin; r0 < row_end;) {
    const size_t row_block = r0 / block_rows;
    const size_t r1 = std::min(row_end, (row_block + 1) * block_rows);
    const uint64_t first_scale = uint64_t{row_block} * scale_cols;
    if (scale_cols <= kScaleChunk) {
      AMN_RETURN_IF_ERROR(LoadScales(c.scales, c.scale_type, first_scale, scale_cols, scales));
      AMN_RETURN_IF_ERROR(
          RunRows(c, r0, r1, row_begin, std::span(scales.data(), scale_cols), block_cols));
    } else {
      for (size_t b0 = 0; b0 < scale_cols; b0 += kScaleChunk) {
        const size_t n_blocks = std::min(kScaleChunk, scale_cols - b0);
        const size_t c0 = b0 * block_cols;
        const size_t width = std::min(c.cols - c0, n_blocks * block_cols);
        AMN_RETURN_IF_ERROR(
            LoadScales(c.scales, c.scale_type, first_scale + b0, n_blocks, scales));
        for (size_t r = r0; r < r1; ++r) {
          const size_t at = r * c.cols + c0;
          AMN_RETURN_IF_ERROR(DequantFp8Rows(
              c.code_type, {c.codes + at, width}, width, std::span(scales.data(), n_blocks),
              block_cols, c.out_type,
              {c.out + ((r - row_begin) * c.cols + c0) * elem, width * elem}));
        }
      }
    }
    r0 = r1;
  }
  return Status::Ok();
}

amn_status DequantizeFp8(const amn_fp8_params* p, uint64_t row_begin, uint64_t row_end,
                         const amn_dtype& dst_type, void* dst, size_t dst_bytes) {
  if (p == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "params is NULL");
  Fp8Call c{};
  const int64_t code_type = EnumValue(p->code_type);
  const int64_t scale_kind = EnumValue(p->scale_kind);
  if (code_type == AMN_E4M3) {
    c.code_type = ElemType::kF8E4m3;
  } else if (code_type == AMN_E5M2) {
    c.code_type = ElemType::kF8E5m2;
  } else {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "code_type must be AMN_E4M3 or AMN_E5M2");
  }
  if (!FloatType(p->scale_type, &c.scale_type)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "scale_type must be AMN_F32, AMN_F16 or AMN_BF16");
  }
  if (!FloatType(dst_type, &c.out_type)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "dst_type must be AMN_F32, AMN_F16 or AMN_BF16");
  }
  if (p->cols == 0) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "cols must be at least 1");
  uint64_t n_codes = 0, n_scales = 0, scale_bytes = 0;
  if (!Mul(p->rows, p->cols, &n_codes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "rows * cols overflows");
  }
  switch (scale_kind) {
    case AMN_FP8_SCALE_TENSOR:
      n_scales = 1;
      break;
    case AMN_FP8_SCALE_ROW:
      n_scales = p->rows;
      break;
    case AMN_FP8_SCALE_BLOCK:
      if (p->block_rows == 0 || p->block_cols == 0) {
        return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "block_rows and block_cols must be at least 1");
      }
      if (!Mul(CeilDiv(p->rows, p->block_rows), CeilDiv(p->cols, p->block_cols), &n_scales)) {
        return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "the scale count overflows");
      }
      break;
    default:
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "unknown scale_kind");
  }
  if (!Mul(n_scales, ElemTypeBytes(c.scale_type), &scale_bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "the scale size overflows");
  }
  uint64_t out_bytes = 0;
  amn_status checked =
      CheckRows(kFn, row_begin, row_end, p->rows, p->cols, c.out_type, &out_bytes);
  if (checked != AMN_OK) return checked;
  checked = CheckCall(kFn,
                      {{"codes", p->codes, p->codes_bytes, n_codes},
                       {"scales", p->scales, p->scales_bytes, scale_bytes}},
                      dst, dst_bytes, out_bytes);
  if (checked != AMN_OK) return checked;
  if (row_begin == row_end) return Succeed();

  // codes_bytes == rows * cols, so rows, cols and row indexes fit size_t.
  c.codes = static_cast<const uint8_t*>(p->codes);
  c.scales = static_cast<const uint8_t*>(p->scales);
  c.cols = static_cast<size_t>(p->cols);
  c.out = static_cast<std::byte*>(dst);
  const auto begin = static_cast<size_t>(row_begin);
  const auto end = static_cast<size_t>(row_end);
  switch (scale_kind) {
    case AMN_FP8_SCALE_TENSOR:
      return FromStatus(kFn, RunTensor(c, begin, end));
    case AMN_FP8_SCALE_ROW:
      return FromStatus(kFn, RunPerRow(c, begin, end));
    default:
      // A block wider than the tensor is one block: clamping keeps the
      // sizes in size_t and changes no scale index.
      return FromStatus(kFn, RunBlocks(c, begin, end,
                                       static_cast<size_t>(std::min(p->block_rows, p->rows)),
                                       static_cast<size_t>(std::min(p->block_cols, p->cols))));
  }
}

}  // namespace
}  // namespace amn::capi

extern "C" amn_status amn_dequantize_fp8(const amn_fp8_params* params, uint64_t row_begin,
                                         uint64_t row_end, amn_dtype dst_type, void* dst,
                                         size_t dst_bytes) {
  return amn::capi::Guarded(amn::capi::kFn, [&] {
    return amn::capi::DequantizeFp8(params, row_begin, row_end, dst_type, dst, dst_bytes);
  });
}
