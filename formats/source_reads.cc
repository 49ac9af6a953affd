// Plain tensor elements read, converted or gathered for the engines.
#include "formats/source_reads.h"

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

uint64_t SourceScratchBytes(const OutputTensor& src, uint64_t count) {
  switch (src.decode) {
    case Decode::kConvert: return count * DtypeBytes(src.source_dtype);
    case Decode::kArray:
      return src.dtype == src.array.entry.dtype ? 0 : count * DtypeBytes(src.array.entry.dtype);
    default: return 0;
  }
}

Status ReadSourceElements(EngineInputs& inputs, size_t tensor, const OutputTensor& src,
                          uint64_t first, uint64_t count, std::span<std::byte> scratch,
                          std::span<std::byte> dst) {
  switch (src.decode) {
    case Decode::kCopy: {
      const uint64_t elem = DtypeBytes(src.dtype);
      return inputs.Read(src.input_file, src.input_offset + first * elem, dst.first(count * elem));
    }
    case Decode::kConvert: {
      const uint64_t in_elem = DtypeBytes(src.source_dtype);
      const std::span<std::byte> raw = scratch.first(count * in_elem);
      AMN_RETURN_IF_ERROR(inputs.Read(src.input_file, src.input_offset + first * in_elem, raw));
      return ConvertFloats(FloatTypeOf(src.source_dtype), raw, FloatTypeOf(src.dtype),
                           dst.first(count * DtypeBytes(src.dtype)));
    }
    case Decode::kArray: {
      AMN_ASSIGN_OR_RETURN(const std::span<const std::byte> storage,
                           inputs.Storage(tensor, src.input_file, src.array));
      AMN_RETURN_IF_ERROR(GatherArrayChunk(src, storage, first, count, scratch,
                                           dst.first(count * DtypeBytes(src.dtype))));
      return inputs.CheckMaps();
    }
    default:
      return Status(StatusCode::kInvalidArgument, "a plain tensor was expected")
          .WithTensor(src.name);
  }
}

}  // namespace amn::formats
