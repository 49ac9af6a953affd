// QuantWeight -> kernel call, per scheme.
#include "formats/packed_decode.h"

#include <cstring>

#include "amn/awq_dequant.h"
#include "amn/bnb_dequant.h"
#include "amn/fp4_dequant.h"
#include "amn/gptq_dequant.h"
#include "amn/packed_int_dequant.h"

namespace amn::formats {
namespace {

ElemType ScaleType(const std::optional<InputSpan>& span) {
  if (span && span->dtype == Dtype::kBf16) return ElemType::kBf16;
  if (span && span->dtype == Dtype::kF32) return ElemType::kF32;
  return ElemType::kF16;
}

}  // namespace

PackedJob MakePackedJob(const QuantWeight& w, const InputSpan& codes,
                        const std::array<std::optional<InputSpan>, kPartCount>& parts) {
  PackedJob job;
  job.weight = w;
  job.codes = codes;
  job.parts = parts;
  switch (w.kind) {
    case QuantKind::kBnb4:
      job.rows = w.output_elements;  // flat: any element range
      job.row_elems = 1;
      break;
    case QuantKind::kMxfp4:
      job.rows = w.experts * w.mx_groups * 32;
      job.row_elems = w.mx_rows;
      break;
    default:
      job.rows = w.out_features;
      job.row_elems = w.in_features;
      break;
  }
  return job;
}

namespace {

Status DecodeRows(const PackedJob& job, const PackedViews& v, uint64_t row_begin,
                  uint64_t row_end, ElemType out_type, std::span<std::byte> out) {
  const QuantWeight& w = job.weight;
  auto part = [&](Part p) { return v.parts[static_cast<size_t>(p)]; };
  switch (w.kind) {
    case QuantKind::kGptq: {
      GptqLayer layer;
      layer.bits = w.bits;
      layer.in_features = w.in_features;
      layer.out_features = w.out_features;
      layer.groups = w.groups;
      layer.group_size = w.group_size;
      layer.zeros_plus_one = w.zeros_plus_one;
      layer.scale_type = ScaleType(job.parts[static_cast<size_t>(Part::kScale)]);
      layer.qweight = v.codes;
      layer.qzeros = part(Part::kZeros);
      layer.scales = part(Part::kScale);
      layer.g_idx = part(Part::kGIdx);
      return DequantGptq(layer, WeightOrientation::kOutIn, row_begin, row_end, out_type, out);
    }
    case QuantKind::kAwq: {
      AwqLayer layer;
      layer.in_features = w.in_features;
      layer.out_features = w.out_features;
      layer.group_size = w.group_size;
      layer.scale_type = ScaleType(job.parts[static_cast<size_t>(Part::kScale)]);
      layer.qweight = v.codes;
      layer.qzeros = part(Part::kZeros);
      layer.scales = part(Part::kScale);
      return DequantAwq(layer, WeightOrientation::kOutIn, row_begin, row_end, out_type, out);
    }
    case QuantKind::kBnb4: {
      Bnb4Tensor t;
      t.elements = w.output_elements;
      t.block_size = w.block_size;
      t.packed = v.codes;
      t.quant_map = part(Part::kQuantMap);
      t.absmax = part(Part::kAbsmax);
      t.double_quant = w.double_quant;
      t.nested_absmax = part(Part::kNestedAbsmax);
      t.nested_quant_map = part(Part::kNestedQuantMap);
      t.nested_block_size = w.nested_block_size;
      t.nested_offset = w.nested_offset;
      return DequantBnb4(t, row_begin, row_end, out_type, out);
    }
    case QuantKind::kBnbInt8: {
      BnbInt8Tensor t;
      t.rows = w.out_features;
      t.cols = w.in_features;
      t.weight = v.codes;
      t.scb = part(Part::kScale);
      return DequantBnbInt8(t, row_begin, row_end, out_type, out);
    }
    case QuantKind::kPackedInt: {
      PackedIntLayer layer;
      layer.num_bits = w.bits;
      layer.rows = w.out_features;
      layer.cols = w.in_features;
      layer.group_size = w.group_size;
      layer.scale_type = ScaleType(job.parts[static_cast<size_t>(Part::kScale)]);
      layer.weight_packed = v.codes;
      layer.weight_scale = part(Part::kScale);
      layer.weight_zero_point = part(Part::kZeros);
      layer.tensor_scale = w.tensor_scale;
      layer.zero_point_i8 = w.zero_point_i8;
      return DequantPackedInt(layer, row_begin, row_end, out_type, out);
    }
    case QuantKind::kNvfp4: {
      Nvfp4Tensor t;
      t.rows = w.out_features;
      t.cols = w.in_features;
      t.packed = v.codes;
      t.scales = part(Part::kScale);
      t.global_scale = part(Part::kGlobalScale);
      return DequantNvfp4(t, row_begin, row_end, out_type, out);
    }
    case QuantKind::kMxfp4: {
      Mxfp4Tensor t;
      t.experts = w.experts;
      t.rows = w.mx_rows;
      t.groups = w.mx_groups;
      t.blocks = v.codes;
      t.scales = part(Part::kScale);
      t.transpose = true;
      return DequantMxfp4(t, row_begin, row_end, out_type, out);
    }
    case QuantKind::kFp8: break;
  }
  return Status(StatusCode::kInvalidArgument, "not a packed weight");
}

}  // namespace

Status DecodePackedRows(const PackedJob& job, const PackedViews& v, uint64_t row_begin,
                        uint64_t row_end, ElemType out_type, std::span<std::byte> out) {
  Status status = DecodeRows(job, v, row_begin, row_end, out_type, out);
  // Detection checked every shape, so a kernel refusing its arguments here
  // means the tensor data itself is inconsistent (a g_idx entry out of
  // range): bad input, not a caller error.
  if (status.code() == StatusCode::kInvalidArgument) {
    return Status(StatusCode::kInvalid, status.message());
  }
  return status;
}

}  // namespace amn::formats
