// Plain tensor elements read, converted or gathered for the engines.
#include "formats/source_reads.h"

#include <algorithm>
#include <cstring>

#include "amn/fp8_dequant.h"
#include "amn/ggml_dequant.h"

namespace amn::formats {

FloatType FloatTypeOf(Dtype d) {
  switch (d) {
    case Dtype::kF64: return FloatType::kF64;
    case Dtype::kF16: return FloatType::kF16;
    case Dtype::kBf16: return FloatType::kBf16;
    case Dtype::kF8E4m3: return FloatType::kF8E4m3;
    case Dtype::kF8E5m2: return FloatType::kF8E5m2;
    default: return FloatType::kF32;
  }
}

Status GatherArrayChunk(const OutputTensor& out, std::span<const std::byte> storage, uint64_t first,
                        uint64_t count, std::span<std::byte> scratch, std::span<std::byte> dst) {
  const ArrayEntry& a = out.array.entry;
  StridedView view;
  view.storage = storage.data();
  view.elem_bytes = DtypeBytes(a.dtype);
  view.shape = a.shape;
  view.strides = a.strides;
  view.offset = a.storage_offset;
  const bool swap = a.big_endian && view.elem_bytes > 1;
  if (out.dtype == a.dtype) return CopyStridedElements(view, first, count, swap, dst);
  const std::span<std::byte> raw = scratch.first(count * view.elem_bytes);
  AMN_RETURN_IF_ERROR(CopyStridedElements(view, first, count, swap, raw));
  return ConvertFloats(FloatTypeOf(a.dtype), raw, FloatTypeOf(out.dtype), dst);
}

namespace {

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

ElemType ElemOf(Dtype d) {
  return d == Dtype::kF16 ? ElemType::kF16 : d == Dtype::kBf16 ? ElemType::kBf16 : ElemType::kF32;
}

// The whole units (ggml blocks, packed rows) of `unit` elements that
// elements [first, first + count) lie in, and whether they are exactly those.
struct Units {
  uint64_t begin = 0, end = 0;
  bool exact = false;
};
Units UnitsOf(uint64_t first, uint64_t count, uint64_t unit) {
  return {first / unit, CeilDiv(first + count, unit), first % unit == 0 && count % unit == 0};
}

Status ScratchTooSmall(const OutputTensor& src) {
  return Status(StatusCode::kInvalidArgument, "scratch buffer too small for a dequantized range")
      .WithTensor(src.name);
}

}  // namespace

uint64_t SourceScratchBytes(const OutputTensor& src, uint64_t first, uint64_t count) {
  const uint64_t elem = DtypeBytes(src.dtype);
  switch (src.decode) {
    case Decode::kConvert: return count * DtypeBytes(src.source_dtype);
    case Decode::kArray:
      return src.dtype == src.array.entry.dtype ? 0 : count * DtypeBytes(src.array.entry.dtype);
    case Decode::kFp8: return count;  // one byte a code
    case Decode::kGgml: {
      const GgmlTypeInfo* info = FindGgmlType(src.ggml_type);
      const Units u = UnitsOf(first, count, info->block_elems);
      const uint64_t blocks = u.end - u.begin;
      return blocks * info->block_bytes + (u.exact ? 0 : blocks * info->block_elems * elem);
    }
    case Decode::kPacked: {
      const Units u = UnitsOf(first, count, std::max<uint64_t>(1, src.packed.row_elems));
      return u.exact ? 0 : (u.end - u.begin) * src.packed.row_elems * elem;
    }
    default: return 0;
  }
}

Status DequantFp8Elements(const Fp8Weight& w, std::span<const float> scales, ElemType code_type,
                          uint64_t first, std::span<const uint8_t> codes, ElemType out_type,
                          std::span<std::byte> out) {
  const uint64_t count = codes.size(), elem = ElemTypeBytes(out_type);
  if (count == 0) return Status::Ok();
  if (scales.empty()) return Status(StatusCode::kInvalid, "FP8 weight without scales");
  if (w.layout == Fp8Layout::kPerTensor) {
    return DequantFp8Rows(code_type, codes, count, scales.first(1), count, out_type,
                          out.first(count * elem));
  }
  // `n` codes from `done` as rows of `cols`, the same column scales for each.
  auto run = [&](uint64_t done, uint64_t n, uint64_t cols, const float* s, uint64_t n_scales,
                 uint64_t block) {
    return DequantFp8Rows(code_type, codes.subspan(done, n), cols, std::span(s, n_scales), block,
                          out_type, out.subspan(done * elem, n * elem));
  };
  const bool block = w.layout == Fp8Layout::kBlock;
  uint64_t done = 0;
  while (done < count) {
    const uint64_t e = first + done, r = e / w.cols, c0 = e % w.cols, left = count - done;
    const float* row_scales = block ? scales.data() + (r / w.block_rows) * w.scale_cols
                                    : scales.data() + r;
    if (c0 == 0 && left >= w.cols) {
      // Whole rows: one scale (per channel) or one band of block rows.
      uint64_t rows = 1;
      if (block) rows = std::min(left / w.cols, (r / w.block_rows + 1) * w.block_rows - r);
      const uint64_t n = rows * w.cols;
      AMN_RETURN_IF_ERROR(block ? run(done, n, w.cols, row_scales, w.scale_cols, w.block_cols)
                                : run(done, n, w.cols, row_scales, 1, w.cols));
      done += n;
      continue;
    }
    // Part of one row, [c0, c1): a block's tail first, then whole blocks.
    const uint64_t c1 = std::min(w.cols, c0 + left);
    if (!block) {
      AMN_RETURN_IF_ERROR(run(done, c1 - c0, c1 - c0, row_scales, 1, c1 - c0));
      done += c1 - c0;
      continue;
    }
    uint64_t c = c0;
    if (c % w.block_cols != 0) {
      const uint64_t n = std::min(c1, (c / w.block_cols + 1) * w.block_cols) - c;
      AMN_RETURN_IF_ERROR(run(done, n, n, row_scales + c / w.block_cols, 1, n));
      done += n;
      c += n;
    }
    if (c < c1) {
      const uint64_t n = c1 - c;
      AMN_RETURN_IF_ERROR(
          run(done, n, n, row_scales + c / w.block_cols, CeilDiv(n, w.block_cols), w.block_cols));
      done += n;
    }
  }
  return Status::Ok();
}

Status ReadSourceElements(EngineInputs& inputs, size_t tensor, const OutputTensor& src,
                          uint64_t first, uint64_t count, std::span<std::byte> scratch,
                          std::span<std::byte> dst) {
  if (scratch.size() < SourceScratchBytes(src, first, count)) return ScratchTooSmall(src);
  const uint64_t elem = DtypeBytes(src.dtype);
  const std::span<std::byte> out = dst.first(count * elem);
  switch (src.decode) {
    case Decode::kCopy:
      return inputs.Read(src.input_file, src.input_offset + first * elem, out);
    case Decode::kConvert: {
      const uint64_t in_elem = DtypeBytes(src.source_dtype);
      const std::span<std::byte> raw = scratch.first(count * in_elem);
      AMN_RETURN_IF_ERROR(inputs.Read(src.input_file, src.input_offset + first * in_elem, raw));
      return ConvertFloats(FloatTypeOf(src.source_dtype), raw, FloatTypeOf(src.dtype), out);
    }
    case Decode::kArray: {
      AMN_ASSIGN_OR_RETURN(const std::span<const std::byte> storage,
                           inputs.Storage(tensor, src.input_file, src.array));
      AMN_RETURN_IF_ERROR(GatherArrayChunk(src, storage, first, count, scratch, out));
      return inputs.CheckMaps();
    }
    case Decode::kFp8: {
      AMN_ASSIGN_OR_RETURN(const std::span<const float> scales, inputs.Scales(tensor, src));
      const std::span<std::byte> codes = scratch.first(count);
      AMN_RETURN_IF_ERROR(inputs.Read(src.input_file, src.input_offset + first, codes));
      return DequantFp8Elements(
          src.fp8_layout, scales, src.code_type, first,
          std::span(reinterpret_cast<const uint8_t*>(codes.data()), codes.size()), ElemOf(src.dtype),
          out);
    }
    case Decode::kGgml: {
      // Whole blocks read and decoded; a range inside them copied out.
      const GgmlTypeInfo* info = FindGgmlType(src.ggml_type);
      const Units u = UnitsOf(first, count, info->block_elems);
      const uint64_t blocks = u.end - u.begin;
      const std::span<std::byte> raw = scratch.first(blocks * info->block_bytes);
      AMN_RETURN_IF_ERROR(
          inputs.Read(src.input_file, src.input_offset + u.begin * info->block_bytes, raw));
      const std::span<const uint8_t> raw_u8(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
      const GgmlType type = static_cast<GgmlType>(src.ggml_type);
      if (u.exact) return DequantGgml(type, raw_u8, ElemOf(src.dtype), out);
      const std::span<std::byte> decoded =
          scratch.subspan(raw.size(), blocks * info->block_elems * elem);
      AMN_RETURN_IF_ERROR(DequantGgml(type, raw_u8, ElemOf(src.dtype), decoded));
      std::memcpy(out.data(), decoded.data() + (first - u.begin * info->block_elems) * elem,
                  out.size());
      return Status::Ok();
    }
    case Decode::kPacked: {
      AMN_ASSIGN_OR_RETURN(const PackedViews views, inputs.Views(tensor, src.packed));
      const uint64_t row = std::max<uint64_t>(1, src.packed.row_elems);
      const Units u = UnitsOf(first, count, row);
      if (u.exact) {
        AMN_RETURN_IF_ERROR(
            DecodePackedRows(src.packed, views, u.begin, u.end, ElemOf(src.dtype), out));
      } else {
        const std::span<std::byte> decoded = scratch.first((u.end - u.begin) * row * elem);
        AMN_RETURN_IF_ERROR(
            DecodePackedRows(src.packed, views, u.begin, u.end, ElemOf(src.dtype), decoded));
        std::memcpy(out.data(), decoded.data() + (first - u.begin * row) * elem, out.size());
      }
      return inputs.CheckMaps();
    }
    default:
      return Status(StatusCode::kInvalidArgument, "a tensor of floats was expected")
          .WithTensor(src.name);
  }
}

}  // namespace amn::formats
