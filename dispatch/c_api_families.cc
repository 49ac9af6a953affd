// The C ABI (amn/amn.h), part 4: the linear-layer families with side inputs
// (GPTQ, AWQ, compressed-tensors pack-quantized, bitsandbytes 4-bit and
// LLM.int8, NVFP4, gpt-oss MXFP4) on top of their checked C++ calls. Each
// entry point checks what the C++ call would reject, with the same rules
// (its header's comment), so a failure allocates no message; then it maps
// the params onto the C++ struct and runs it.
#include <cstddef>
#include <cstdint>
#include <span>

#include "amn/amn.h"
#include "amn/awq_dequant.h"
#include "amn/bnb_dequant.h"
#include "amn/fp4_dequant.h"
#include "amn/gptq_dequant.h"
#include "amn/packed_int_dequant.h"
#include "dispatch/c_api_internal.h"

namespace amn::capi {
namespace {

std::span<const std::byte> Bytes(const void* data, size_t bytes) {
  if (bytes == 0) return {};
  return {static_cast<const std::byte*>(data), bytes};
}

std::span<std::byte> Out(void* dst, uint64_t out_bytes) {
  if (out_bytes == 0) return {};
  return {static_cast<std::byte*>(dst), static_cast<size_t>(out_bytes)};
}

bool Orientation(const amn_orientation& o, WeightOrientation* out) {
  if (EnumValue(o) == AMN_OUT_IN) {
    *out = WeightOrientation::kOutIn;
  } else if (EnumValue(o) == AMN_IN_OUT) {
    *out = WeightOrientation::kInOut;
  } else {
    return false;
  }
  return true;
}

amn_status BadDst(const char* fn) {
  return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "dst_type must be AMN_F32, AMN_F16 or AMN_BF16");
}
amn_status BadScaleType(const char* fn) {
  return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "scale_type must be AMN_F32, AMN_F16 or AMN_BF16");
}
amn_status Overflow(const char* fn) {
  return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "a tensor size overflows");
}

uint32_t LoadLe32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

amn_status DequantizeGptq(const amn_gptq_params* p, uint64_t row_begin, uint64_t row_end,
                          const amn_dtype& dst_type, void* dst, size_t dst_bytes) {
  constexpr const char* kFn = "amn_dequantize_gptq";
  if (p == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "params is NULL");
  GptqLayer layer;
  WeightOrientation orientation;
  ElemType out_type;
  const uint64_t bits = p->bits;
  if (bits != 2 && bits != 3 && bits != 4 && bits != 8) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "bits must be 2, 3, 4 or 8");
  }
  const int64_t zeros = EnumValue(p->zeros);
  if (zeros != AMN_GPTQ_ZEROS_V1 && zeros != AMN_GPTQ_ZEROS_V2) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "zeros must be AMN_GPTQ_ZEROS_V1 or _V2");
  }
  if (!FloatType(p->scale_type, &layer.scale_type)) return BadScaleType(kFn);
  if (!Orientation(p->orientation, &orientation)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "orientation must be AMN_OUT_IN or AMN_IN_OUT");
  }
  if (!FloatType(dst_type, &out_type)) return BadDst(kFn);
  const uint64_t k = p->in_features, n = p->out_features;
  uint64_t k_bits = 0, n_bits = 0;
  if (!Mul(k, bits, &k_bits) || k_bits % 32 != 0 || !Mul(n, bits, &n_bits) || n_bits % 32 != 0) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn,
                "bits * in_features and bits * out_features must be multiples of 32");
  }
  uint64_t qweight = 0, qzeros = 0, scales = 0, g_idx = 0;
  if (!Mul(k_bits / 32 * 4, n, &qweight) || !Mul(p->groups, n_bits / 32 * 4, &qzeros) ||
      !Mul(p->groups, n, &scales) || !Mul(scales, ElemTypeBytes(layer.scale_type), &scales) ||
      !Mul(k, 4, &g_idx)) {
    return Overflow(kFn);
  }
  if (p->groups == 0 && k > 0) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "groups is 0 while in_features > 0");
  }
  const bool has_g_idx = p->g_idx_bytes != 0;
  if (!has_g_idx) {
    g_idx = 0;
    if (p->group_size == 0) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "group_size is 0 and there is no g_idx");
    }
    if (p->groups < CeilDiv(k, p->group_size)) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "groups < ceil(in_features / group_size)");
    }
  }
  const bool out_in = orientation == WeightOrientation::kOutIn;
  uint64_t out_bytes = 0;
  amn_status checked =
      CheckRows(kFn, row_begin, row_end, out_in ? n : k, out_in ? k : n, out_type, &out_bytes);
  if (checked != AMN_OK) return checked;
  checked = CheckCall(kFn,
                      {{"qweight", p->qweight, p->qweight_bytes, qweight},
                       {"qzeros", p->qzeros, p->qzeros_bytes, qzeros},
                       {"scales", p->scales, p->scales_bytes, scales},
                       {"g_idx", p->g_idx, p->g_idx_bytes, g_idx}},
                      dst, dst_bytes, out_bytes);
  if (checked != AMN_OK) return checked;
  if (has_g_idx) {
    const auto* values = static_cast<const uint8_t*>(p->g_idx);
    for (uint64_t i = 0; i < k; ++i) {
      const auto g = static_cast<int32_t>(LoadLe32(values + 4 * i));
      if (g < 0 || static_cast<uint64_t>(g) >= p->groups) {
        return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "a g_idx value is outside [0, groups)");
      }
    }
  }
  layer.bits = p->bits;
  layer.in_features = k;
  layer.out_features = n;
  layer.groups = p->groups;
  layer.group_size = p->group_size;
  layer.zeros_plus_one = zeros == AMN_GPTQ_ZEROS_V1;
  layer.qweight = Bytes(p->qweight, p->qweight_bytes);
  layer.qzeros = Bytes(p->qzeros, p->qzeros_bytes);
  layer.scales = Bytes(p->scales, p->scales_bytes);
  layer.g_idx = Bytes(p->g_idx, p->g_idx_bytes);
  return FromStatus(
      kFn, DequantGptq(layer, orientation, row_begin, row_end, out_type, Out(dst, out_bytes)));
}

amn_status DequantizeAwq(const amn_awq_params* p, uint64_t row_begin, uint64_t row_end,
                         const amn_dtype& dst_type, void* dst, size_t dst_bytes) {
  constexpr const char* kFn = "amn_dequantize_awq";
  if (p == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "params is NULL");
  AwqLayer layer;
  WeightOrientation orientation;
  ElemType out_type;
  if (p->in_features == 0) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "in_features is 0");
  if (p->out_features == 0 || p->out_features % 8 != 0) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "out_features must be a positive multiple of 8");
  }
  if (p->group_size == 0) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "group_size is 0");
  if (!FloatType(p->scale_type, &layer.scale_type)) return BadScaleType(kFn);
  if (!Orientation(p->orientation, &orientation)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "orientation must be AMN_OUT_IN or AMN_IN_OUT");
  }
  if (!FloatType(dst_type, &out_type)) return BadDst(kFn);
  const uint64_t k = p->in_features, n = p->out_features;
  const uint64_t groups = CeilDiv(k, p->group_size);
  uint64_t qweight = 0, qzeros = 0, scales = 0;
  if (!Mul(k, n / 2, &qweight) || !Mul(groups, n / 2, &qzeros) || !Mul(groups, n, &scales) ||
      !Mul(scales, ElemTypeBytes(layer.scale_type), &scales)) {
    return Overflow(kFn);
  }
  const bool out_in = orientation == WeightOrientation::kOutIn;
  uint64_t out_bytes = 0;
  amn_status checked =
      CheckRows(kFn, row_begin, row_end, out_in ? n : k, out_in ? k : n, out_type, &out_bytes);
  if (checked != AMN_OK) return checked;
  checked = CheckCall(kFn,
                      {{"qweight", p->qweight, p->qweight_bytes, qweight},
                       {"qzeros", p->qzeros, p->qzeros_bytes, qzeros},
                       {"scales", p->scales, p->scales_bytes, scales}},
                      dst, dst_bytes, out_bytes);
  if (checked != AMN_OK) return checked;
  layer.in_features = k;
  layer.out_features = n;
  layer.group_size = p->group_size;
  layer.qweight = Bytes(p->qweight, p->qweight_bytes);
  layer.qzeros = Bytes(p->qzeros, p->qzeros_bytes);
  layer.scales = Bytes(p->scales, p->scales_bytes);
  return FromStatus(
      kFn, DequantAwq(layer, orientation, row_begin, row_end, out_type, Out(dst, out_bytes)));
}

amn_status DequantizePackedInt(const amn_packed_int_params* p, uint64_t row_begin,
                               uint64_t row_end, const amn_dtype& dst_type, void* dst,
                               size_t dst_bytes) {
  constexpr const char* kFn = "amn_dequantize_packed_int";
  if (p == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "params is NULL");
  PackedIntLayer layer;
  ElemType out_type;
  if (p->num_bits != 4 && p->num_bits != 8) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "num_bits must be 4 or 8");
  }
  if (p->rows == 0 || p->cols == 0) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "rows or cols is 0");
  if (p->group_size == 0 || p->cols % p->group_size != 0) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "group_size must be non-zero and divide cols");
  }
  if (!FloatType(p->scale_type, &layer.scale_type)) return BadScaleType(kFn);
  if (!FloatType(dst_type, &out_type)) return BadDst(kFn);
  const bool has_zero_point = p->weight_zero_point_bytes != 0;
  if (p->tensor_scale != 0 && has_zero_point) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "a per-tensor scale takes no weight_zero_point");
  }
  const uint64_t per_word = 32 / p->num_bits;
  const uint64_t groups = p->cols / p->group_size;
  const size_t scale_bytes = ElemTypeBytes(layer.scale_type);
  uint64_t rows_groups = 0, packed = 0, scales = scale_bytes, zero_points = 0;
  bool ok = Mul(p->rows, groups, &rows_groups) &&
            Mul(p->rows, CeilDiv(p->cols, per_word), &packed) && Mul(packed, 4, &packed) &&
            (p->tensor_scale != 0 || Mul(rows_groups, scale_bytes, &scales));
  if (ok && has_zero_point && p->zero_point_i8 != 0) {
    zero_points = rows_groups;  // i8 [rows][groups]
  } else if (ok && has_zero_point) {
    ok = Mul(CeilDiv(p->rows, per_word), groups, &zero_points) && Mul(zero_points, 4, &zero_points);
  }
  if (!ok) return Overflow(kFn);
  uint64_t out_bytes = 0;
  amn_status checked = CheckRows(kFn, row_begin, row_end, p->rows, p->cols, out_type, &out_bytes);
  if (checked != AMN_OK) return checked;
  checked = CheckCall(kFn,
                      {{"weight_packed", p->weight_packed, p->weight_packed_bytes, packed},
                       {"weight_scale", p->weight_scale, p->weight_scale_bytes, scales},
                       {"weight_zero_point", p->weight_zero_point, p->weight_zero_point_bytes,
                        zero_points}},
                      dst, dst_bytes, out_bytes);
  if (checked != AMN_OK) return checked;
  layer.rows = p->rows;
  layer.cols = p->cols;
  layer.num_bits = p->num_bits;
  layer.group_size = p->group_size;
  layer.tensor_scale = p->tensor_scale != 0;
  layer.weight_packed = Bytes(p->weight_packed, p->weight_packed_bytes);
  layer.weight_scale = Bytes(p->weight_scale, p->weight_scale_bytes);
  layer.weight_zero_point = Bytes(p->weight_zero_point, p->weight_zero_point_bytes);
  layer.zero_point_i8 = p->zero_point_i8 != 0;
  return FromStatus(kFn,
                    DequantPackedInt(layer, row_begin, row_end, out_type, Out(dst, out_bytes)));
}

amn_status DequantizeBnb4(const amn_bnb4_params* p, uint64_t begin, uint64_t end,
                          const amn_dtype& dst_type, void* dst, size_t dst_bytes) {
  constexpr const char* kFn = "amn_dequantize_bnb4";
  if (p == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "params is NULL");
  ElemType out_type;
  if (p->block_size == 0 || p->block_size % 2 != 0) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "block_size must be even and at least 2");
  }
  const bool dq = p->double_quant != 0;
  if (dq && p->nested_block_size == 0) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "nested_block_size is 0");
  }
  if (!FloatType(dst_type, &out_type)) return BadDst(kFn);
  // n_blocks <= N / 2 + 1, so 4 * n_blocks cannot overflow.
  const uint64_t n_blocks = CeilDiv(p->n_elems, p->block_size);
  const uint64_t absmax = dq ? n_blocks : 4 * n_blocks;
  const uint64_t nested_absmax = dq ? 4 * CeilDiv(n_blocks, p->nested_block_size) : 0;
  const uint64_t nested_map = dq ? 4 * 256 : 0;
  uint64_t out_bytes = 0;
  amn_status checked = CheckRows(kFn, begin, end, p->n_elems, 1, out_type, &out_bytes);
  if (checked != AMN_OK) return checked;
  // Without double quant the nested spans are not read: check them as empty.
  checked = CheckCall(
      kFn,
      {{"packed", p->packed, p->packed_bytes, CeilDiv(p->n_elems, 2)},
       {"quant_map", p->quant_map, p->quant_map_bytes, 4 * 16},
       {"absmax", p->absmax, p->absmax_bytes, absmax},
       {"nested_absmax", dq ? p->nested_absmax : nullptr, dq ? p->nested_absmax_bytes : 0,
        nested_absmax},
       {"nested_quant_map", dq ? p->nested_quant_map : nullptr,
        dq ? p->nested_quant_map_bytes : 0, nested_map}},
      dst, dst_bytes, out_bytes);
  if (checked != AMN_OK) return checked;
  Bnb4Tensor t;
  t.elements = p->n_elems;
  t.block_size = p->block_size;
  t.packed = Bytes(p->packed, p->packed_bytes);
  t.quant_map = Bytes(p->quant_map, p->quant_map_bytes);
  t.absmax = Bytes(p->absmax, p->absmax_bytes);
  t.double_quant = dq;
  if (dq) {
    t.nested_absmax = Bytes(p->nested_absmax, p->nested_absmax_bytes);
    t.nested_quant_map = Bytes(p->nested_quant_map, p->nested_quant_map_bytes);
    t.nested_block_size = p->nested_block_size;
    t.nested_offset = p->nested_offset;
  }
  return FromStatus(kFn, DequantBnb4(t, begin, end, out_type, Out(dst, out_bytes)));
}

amn_status DequantizeBnbInt8(const amn_bnb_int8_params* p, uint64_t row_begin, uint64_t row_end,
                             const amn_dtype& dst_type, void* dst, size_t dst_bytes) {
  constexpr const char* kFn = "amn_dequantize_bnb_int8";
  if (p == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "params is NULL");
  ElemType out_type;
  if (!FloatType(dst_type, &out_type)) return BadDst(kFn);
  uint64_t weight = 0, scb = 0;
  if (!Mul(p->rows, p->cols, &weight) || !Mul(p->rows, 4, &scb)) return Overflow(kFn);
  uint64_t out_bytes = 0;
  amn_status checked = CheckRows(kFn, row_begin, row_end, p->rows, p->cols, out_type, &out_bytes);
  if (checked != AMN_OK) return checked;
  checked = CheckCall(kFn,
                      {{"weight", p->weight, p->weight_bytes, weight},
                       {"scb", p->scb, p->scb_bytes, scb}},
                      dst, dst_bytes, out_bytes);
  if (checked != AMN_OK) return checked;
  BnbInt8Tensor t;
  t.rows = p->rows;
  t.cols = p->cols;
  t.weight = Bytes(p->weight, p->weight_bytes);
  t.scb = Bytes(p->scb, p->scb_bytes);
  return FromStatus(kFn, DequantBnbInt8(t, row_begin, row_end, out_type, Out(dst, out_bytes)));
}

amn_status DequantizeNvfp4(const amn_nvfp4_params* p, uint64_t row_begin, uint64_t row_end,
                           const amn_dtype& dst_type, void* dst, size_t dst_bytes) {
  constexpr const char* kFn = "amn_dequantize_nvfp4";
  if (p == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "params is NULL");
  ElemType out_type;
  if (p->cols % 16 != 0) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "cols is not a multiple of 16");
  if (!FloatType(dst_type, &out_type)) return BadDst(kFn);
  uint64_t elems = 0;
  if (!Mul(p->rows, p->cols, &elems)) return Overflow(kFn);
  uint64_t out_bytes = 0;
  amn_status checked = CheckRows(kFn, row_begin, row_end, p->rows, p->cols, out_type, &out_bytes);
  if (checked != AMN_OK) return checked;
  checked = CheckCall(kFn,
                      {{"packed", p->packed, p->packed_bytes, elems / 2},
                       {"scales", p->scales, p->scales_bytes, elems / 16},
                       {"global_scale", p->global_scale, p->global_scale_bytes, 4}},
                      dst, dst_bytes, out_bytes);
  if (checked != AMN_OK) return checked;
  Nvfp4Tensor t;
  t.rows = p->rows;
  t.cols = p->cols;
  t.packed = Bytes(p->packed, p->packed_bytes);
  t.scales = Bytes(p->scales, p->scales_bytes);
  t.global_scale = Bytes(p->global_scale, p->global_scale_bytes);
  return FromStatus(kFn, DequantNvfp4(t, row_begin, row_end, out_type, Out(dst, out_bytes)));
}

amn_status DequantizeMxfp4(const amn_mxfp4_params* p, uint64_t row_begin, uint64_t row_end,
                           const amn_dtype& dst_type, void* dst, size_t dst_bytes) {
  constexpr const char* kFn = "amn_dequantize_mxfp4";
  if (p == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "params is NULL");
  ElemType out_type;
  if (!FloatType(dst_type, &out_type)) return BadDst(kFn);
  const bool transpose = p->transpose != 0;
  uint64_t matrix_groups = 0, n_groups = 0, blocks = 0, cols = 0, total_rows = 0;
  if (!Mul(p->rows, p->groups, &matrix_groups) || !Mul(p->experts, matrix_groups, &n_groups) ||
      !Mul(n_groups, 16, &blocks) || !Mul(p->groups, 32, &cols) ||
      !Mul(p->experts, transpose ? cols : p->rows, &total_rows)) {
    return Overflow(kFn);
  }
  uint64_t out_bytes = 0;
  amn_status checked = CheckRows(kFn, row_begin, row_end, total_rows, transpose ? p->rows : cols,
                                 out_type, &out_bytes);
  if (checked != AMN_OK) return checked;
  checked = CheckCall(kFn,
                      {{"blocks", p->blocks, p->blocks_bytes, blocks},
                       {"scales", p->scales, p->scales_bytes, n_groups}},
                      dst, dst_bytes, out_bytes);
  if (checked != AMN_OK) return checked;
  Mxfp4Tensor t;
  t.experts = p->experts;
  t.rows = p->rows;
  t.groups = p->groups;
  t.blocks = Bytes(p->blocks, p->blocks_bytes);
  t.scales = Bytes(p->scales, p->scales_bytes);
  t.transpose = transpose;
  return FromStatus(kFn, DequantMxfp4(t, row_begin, row_end, out_type, Out(dst, out_bytes)));
}

}  // namespace
}  // namespace amn::capi

using namespace amn::capi;  // NOLINT: the entry points below only forward

extern "C" {

amn_status amn_dequantize_gptq(const amn_gptq_params* params, uint64_t row_begin,
                               uint64_t row_end, amn_dtype dst_type, void* dst, size_t dst_bytes) {
  return Guarded("amn_dequantize_gptq", [&] {
    return DequantizeGptq(params, row_begin, row_end, dst_type, dst, dst_bytes);
  });
}

amn_status amn_dequantize_awq(const amn_awq_params* params, uint64_t row_begin, uint64_t row_end,
                              amn_dtype dst_type, void* dst, size_t dst_bytes) {
  return Guarded("amn_dequantize_awq", [&] {
    return DequantizeAwq(params, row_begin, row_end, dst_type, dst, dst_bytes);
  });
}

amn_status amn_dequantize_packed_int(const amn_packed_int_params* params, uint64_t row_begin,
                                     uint64_t row_end, amn_dtype dst_type, void* dst,
                                     size_t dst_bytes) {
  return Guarded("amn_dequantize_packed_int", [&] {
    return DequantizePackedInt(params, row_begin, row_end, dst_type, dst, dst_bytes);
  });
}

amn_status amn_dequantize_bnb4(const amn_bnb4_params* params, uint64_t begin, uint64_t end,
                               amn_dtype dst_type, void* dst, size_t dst_bytes) {
  return Guarded("amn_dequantize_bnb4", [&] {
    return DequantizeBnb4(params, begin, end, dst_type, dst, dst_bytes);
  });
}

amn_status amn_dequantize_bnb_int8(const amn_bnb_int8_params* params, uint64_t row_begin,
                                   uint64_t row_end, amn_dtype dst_type, void* dst,
                                   size_t dst_bytes) {
  return Guarded("amn_dequantize_bnb_int8", [&] {
    return DequantizeBnbInt8(params, row_begin, row_end, dst_type, dst, dst_bytes);
  });
}

amn_status amn_dequantize_nvfp4(const amn_nvfp4_params* params, uint64_t row_begin,
                                uint64_t row_end, amn_dtype dst_type, void* dst,
                                size_t dst_bytes) {
  return Guarded("amn_dequantize_nvfp4", [&] {
    return DequantizeNvfp4(params, row_begin, row_end, dst_type, dst, dst_bytes);
  });
}

amn_status amn_dequantize_mxfp4(const amn_mxfp4_params* params, uint64_t row_begin,
                                uint64_t row_end, amn_dtype dst_type, void* dst,
                                size_t dst_bytes) {
  return Guarded("amn_dequantize_mxfp4", [&] {
    return DequantizeMxfp4(params, row_begin, row_end, dst_type, dst, dst_bytes);
  });
}

}  // extern "C"
