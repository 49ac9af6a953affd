// Encoders, the `forget` direction: plain BF16/F16/F32 rows to FP8 with
// scales, bitsandbytes NF4/FP4 (plain and double quant) and LLM.int8().
// Every function is dispatched per CPU like the decoders and gives the same
// bytes on every target as its scalar reference in kernels/ref/. Formulas,
// rounding and the canonical code they follow: docs/schemes/forget.md.
#ifndef AMN_QUANTIZE_H_
#define AMN_QUANTIZE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "amn/elem_type.h"
#include "amn/ggml_type.h"
#include "amn/export.h"
#include "amn/status.h"
#include "amn/targets.h"

namespace amn {

// A row-major block of a plain float tensor as it sits in a file:
// little-endian, any alignment. type is kBf16, kF16 or kF32.
struct FloatRows {
  ElemType type = ElemType::kBf16;
  std::span<const std::byte> bytes;  // rows * cols elements
  uint64_t rows = 0, cols = 0;
};

// What quantization took from one call's elements, x against its decoded
// x' (both as double): accumulated in an order fixed by the element index
// alone, so the sums are the same bytes on every target. A caller that
// splits a tensor into calls at boundaries that do not depend on the thread
// count and adds the results in call order gets the same totals for any -j.
struct QuantError {
  uint64_t elements = 0;
  double sum_abs = 0;     // sum |x - x'|      (the Lethe distance is sum_abs / elements)
  double max_abs = 0;     // max |x - x'|
  double sum_sq_err = 0;  // sum (x - x')^2   (relative RMSE = sqrt(sum_sq_err / sum_sq_ref))
  double sum_sq_ref = 0;  // sum x^2
};

inline void Accumulate(QuantError& total, const QuantError& part) {
  total.elements += part.elements;
  total.sum_abs += part.sum_abs;
  total.max_abs = std::max(total.max_abs, part.max_abs);
  total.sum_sq_err += part.sum_sq_err;
  total.sum_sq_ref += part.sum_sq_ref;
}

// Every encoder refuses a NaN or an infinity in its input with
// kInvalidArgument naming the element's index within the call (the caller
// adds the tensor's name); nothing useful is written then.

// ---- FP8 ---------------------------------------------------------------

enum class Fp8Format : uint8_t { kE4m3, kE5m2 };

// The largest finite value: 448 (E4M3), 57344 (E5M2).
constexpr float Fp8MaxFinite(Fp8Format format) {
  return format == Fp8Format::kE4m3 ? 448.0f : 57344.0f;
}

// scale = amax / max_finite in F32; an all-zero group gets scale 1, and a
// group whose amax is so small (below 2^-149 * max_finite, subnormal) that
// the quotient underflows to 0 gets the smallest subnormal, 2^-149: a zero
// scale would divide its values to infinity.
constexpr float Fp8ScaleFromAmax(float amax, Fp8Format format) {
  if (amax == 0.0f) return 1.0f;
  const float scale = amax / Fp8MaxFinite(format);
  return scale == 0.0f ? std::numeric_limits<float>::denorm_min() : scale;
}

// max |x| (F32) of each group_rows x group_cols group of `in`, into amax
// (ceil(rows / group_rows) x ceil(cols / group_cols) entries, row-major;
// edge groups are partial). Per tensor: group = (rows, cols); per channel:
// (1, cols); fine-grained: (128, 128).
AMN_API Status AbsMaxGrid(const FloatRows& in, uint64_t group_rows, uint64_t group_cols,
                          std::span<float> amax);

// codes[i] = RNE(clamp(x / scale, -max_finite, max_finite)) in `format`
// (a division, not a reciprocal multiply), scale from the group grid of
// AbsMaxGrid. Every scale must be finite and > 0. error (may be null) gets
// x' = f32(code) * scale.
AMN_API Status QuantizeFp8(const FloatRows& in, uint64_t group_rows, uint64_t group_cols,
                           Fp8Format format, std::span<const float> scales,
                           std::span<std::byte> codes, QuantError* error);

// ---- bitsandbytes 4-bit --------------------------------------------------

enum class Bnb4Type : uint8_t { kNf4, kFp4 };

// The 16-entry codebook bitsandbytes stores as `.quant_map` (get_4bit_type).
AMN_API void Bnb4Codebook(Bnb4Type type, std::span<float, 16> out);

// The flat elements of `in` (rows * cols of them; a call starts at a block
// boundary) in blocks of block_size (even, >= 2; the last may be partial):
// absmax f32 [ceil(n / block_size)] = max |x| of each block unless
// absmax_given (then read: re-encoding with a model's own absmax, codes clamp
// to the codebook's ends); packed u8 [ceil(n / 2)], element 2k in the high
// nibble of byte k, each code the codebook entry nearest to x / absmax as
// bitsandbytes' CUDA kernel decides it: x * (1 / absmax) through its F32
// decision tree, a value on a pivot taking the lower code (exact rule:
// kernels/ref/bnb_encode_ref.h). error (may be null) gets x' = cb[code] * absmax.
AMN_API Status QuantizeBnb4(const FloatRows& in, uint64_t block_size, Bnb4Type type,
                            bool absmax_given, std::span<float> absmax,
                            std::span<std::byte> packed, QuantError* error);

// bitsandbytes' signed dynamic 8-bit map (create_dynamic_map(signed=True)),
// stored as `.nested_quant_map`.
AMN_API void BnbDynamicMap(std::span<float, 256> out);

// Double quant of a whole tensor's absmax vector (bitsandbytes'
// quantize_4bit with compress_statistics): offset = mean(absmax), then
// blocks of nested_block_size (bitsandbytes uses 256) over absmax - offset:
// nested_absmax f32 [ceil(nb / nested_block_size)] = each block's max |v|,
// codes u8 [nb] = the dynamic map entry nearest to v / nested_absmax as
// bitsandbytes' CUDA dQuantize finds it (v * (1 / nested_absmax), binary
// search, midpoint ties keep the search's pivot). The mean is summed in
// double in index order and rounded once (torch.mean's F32 order is not
// reproduced): docs/schemes/forget.md.
// QuantizeBnbNested's blocks with the offset given (forget writes a
// tensor's nested state a few blocks at a time, the offset measured
// before): absmax holds whole nested blocks of the tensor (the last may be
// short), codes [absmax.size()] or empty (then only nested_absmax is
// made), nested_absmax [ceil(size / block)]; the same bytes as those
// blocks of QuantizeBnbNested of the whole vector.
AMN_API Status QuantizeBnbNestedBlocks(std::span<const float> absmax, uint64_t nested_block_size,
                                       float offset, std::span<uint8_t> codes,
                                       std::span<float> nested_absmax);

AMN_API Status QuantizeBnbNested(std::span<const float> absmax, uint64_t nested_block_size,
                                 std::span<uint8_t> codes, std::span<float> nested_absmax,
                                 float* offset);

// QuantizeBnbNested's offset alone (the mean of the whole tensor's absmax,
// as above), for callers that then make the codes with
// QuantizeBnbNestedBlocks; absmax finite and >= 0.
AMN_API Status BnbNestedOffset(std::span<const float> absmax, float* offset);

// ---- bitsandbytes LLM.int8() --------------------------------------------

// Row-wise: SCB f32 [rows] = max |x| of each row unless scb_given (then
// read); codes i8 [rows][cols] = round(x * 127 / SCB) clamped to
// [-127, 127], in bitsandbytes' int8_vectorwise_quant order and rounding.
// error (may be null) gets x' = code * SCB / 127 as DequantBnbInt8 computes it.
AMN_API Status QuantizeBnbInt8(const FloatRows& in, bool scb_given, std::span<float> scb,
                               std::span<int8_t> codes, QuantError* error);

// ---- ggml block types -----------------------------------------------------

// True where this build has an encoder for `type`.
AMN_API bool CanQuantizeGgml(GgmlType type);

// True for the encodable types ggml quantizes only with an importance
// matrix (ggml_quantize_requires_imatrix: IQ2_XXS, IQ2_XS, IQ1_S);
// QuantizeGgml refuses them without one (kInvalidArgument naming the type).
AMN_API bool GgmlQuantizeNeedsImatrix(GgmlType type);

// ggml block type `type` from in (rows x cols, cols a multiple of the
// type's block elements): out gets rows whole rows of blocks (ggml's row
// size each), the same bytes as ggml_quantize_chunk gives for the same F32
// values and imatrix (cols importance weights, or empty: then ggml's
// quantize_row_<type>_ref; refused where GgmlQuantizeNeedsImatrix). error (may be null) gets x' as ggml's
// dequantize_row_<type> decodes it.
AMN_API Status QuantizeGgml(GgmlType type, const FloatRows& in, std::span<const float> imatrix,
                            std::span<std::byte> out, QuantError* error);

// Probe: the target the encoders' dispatch table runs right now.
AMN_API TargetId EncodeTarget();

}  // namespace amn

#endif  // AMN_QUANTIZE_H_
