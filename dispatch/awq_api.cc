// The checked packed-integer APIs (amn/awq_dequant.h DequantAwq,
// amn/packed_int_dequant.h DequantPackedInt): layout checks, then the
// dispatched Awq / PackedInt decoders of the kernel table.
#include <string>

#include "amn/awq_dequant.h"
#include "amn/packed_int_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/family_decoders.h"

namespace amn {

namespace {

// a * b, or false when it overflows 64 bits.
bool Mul(uint64_t a, uint64_t b, uint64_t* product) {
  return !__builtin_mul_overflow(a, b, product);
}

bool IsFloatOutput(ElemType type) {
  return type == ElemType::kF32 || type == ElemType::kF16 || type == ElemType::kBf16;
}

// Exactly `expected` bytes, or an error naming the tensor.
Status CheckBytes(const char* api, const char* field, size_t got, uint64_t expected, bool ok) {
  if (!ok) return Status(StatusCode::kInvalidArgument, std::string(api) + ": " + field + " size overflows");
  if (got != expected) {
    return Status(StatusCode::kInvalidArgument, std::string(api) + ": " + field + " holds " +
                                                    std::to_string(got) + " bytes, the shape needs " +
                                                    std::to_string(expected));
  }
  return Status::Ok();
}

// The row range and output size of a call that writes (row_end - row_begin)
// rows of row_len elements of out_type.
Status CheckRowsOut(const char* api, uint64_t row_begin, uint64_t row_end, uint64_t n_rows,
                    uint64_t row_len, ElemType out_type, size_t out_bytes) {
  if (row_begin > row_end || row_end > n_rows) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(api) + ": rows [" + std::to_string(row_begin) + ", " +
                      std::to_string(row_end) + ") are not within the " + std::to_string(n_rows) +
                      " rows");
  }
  uint64_t n_out = 0;
  if (!Mul(row_end - row_begin, row_len, &n_out)) {
    return Status(StatusCode::kInvalidArgument, std::string(api) + ": output size overflows");
  }
  const Status call = internal::CheckKernelCall(n_out, out_bytes / ElemTypeBytes(out_type));
  if (!call.ok()) return Status(call.code(), std::string(api) + ": " + call.message());
  return Status::Ok();
}

Status AwqInvalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, "DequantAwq: " + std::move(message));
}

const uint8_t* Bytes(std::span<const std::byte> span) {
  return reinterpret_cast<const uint8_t*>(span.data());
}

}  // namespace

Status DequantAwq(const AwqLayer& layer, WeightOrientation orientation, uint64_t row_begin,
                  uint64_t row_end, ElemType out_type, std::span<std::byte> out) {
  constexpr const char* kApi = "DequantAwq";
  if (layer.in_features == 0) return AwqInvalid("in_features must be at least 1");
  if (layer.out_features == 0 || layer.out_features % 8 != 0) {
    return AwqInvalid("out_features must be a positive multiple of 8, not " +
                      std::to_string(layer.out_features));
  }
  if (layer.group_size == 0) return AwqInvalid("group_size must be at least 1");
  if (!IsFloatOutput(layer.scale_type)) {
    return AwqInvalid("scale_type must be f32, f16 or bf16, not " +
                      std::string(ElemTypeName(layer.scale_type)));
  }
  if (!IsFloatOutput(out_type)) {
    return AwqInvalid("output type must be f32, f16 or bf16, not " +
                      std::string(ElemTypeName(out_type)));
  }
  const uint64_t k = layer.in_features;
  const uint64_t n = layer.out_features;
  const uint64_t groups = (k - 1) / layer.group_size + 1;
  uint64_t expected = 0;
  bool ok = Mul(k, n / 2, &expected);  // K * (N/8) words of 4 bytes
  AMN_RETURN_IF_ERROR(CheckBytes(kApi, "qweight", layer.qweight.size(), expected, ok));
  ok = Mul(groups, n / 2, &expected);
  AMN_RETURN_IF_ERROR(CheckBytes(kApi, "qzeros", layer.qzeros.size(), expected, ok));
  ok = Mul(groups, n, &expected) && Mul(expected, ElemTypeBytes(layer.scale_type), &expected);
  AMN_RETURN_IF_ERROR(CheckBytes(kApi, "scales", layer.scales.size(), expected, ok));
  const bool out_in = orientation == WeightOrientation::kOutIn;
  AMN_RETURN_IF_ERROR(CheckRowsOut(kApi, row_begin, row_end, out_in ? n : k, out_in ? k : n,
                                   out_type, out.size()));
  if (row_begin == row_end) return Status::Ok();

  const ref::AwqMatrix m{Bytes(layer.qweight), Bytes(layer.qzeros), Bytes(layer.scales),
                         layer.scale_type,     k,                   n,
                         layer.group_size};
  // `out` may start at any byte: the kernels store with StoreU and memcpy.
  internal::DecodeAwq(kernels::AwqArgs{m, out_in}, row_begin, row_end, out_type, out.data());
  return Status::Ok();
}

namespace {
Status PackedInvalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, "DequantPackedInt: " + std::move(message));
}
}  // namespace

Status DequantPackedInt(const PackedIntLayer& layer, uint64_t row_begin, uint64_t row_end,
                        ElemType out_type, std::span<std::byte> out) {
  constexpr const char* kApi = "DequantPackedInt";
  if (layer.num_bits != 4 && layer.num_bits != 8) {
    return PackedInvalid("num_bits must be 4 or 8, not " + std::to_string(layer.num_bits));
  }
  if (layer.rows == 0 || layer.cols == 0) {
    return PackedInvalid("weight_shape [" + std::to_string(layer.rows) + ", " +
                         std::to_string(layer.cols) + "] has a zero dimension");
  }
  if (layer.group_size == 0) return PackedInvalid("group_size must be at least 1");
  if (layer.cols % layer.group_size != 0) {
    return PackedInvalid("group_size " + std::to_string(layer.group_size) +
                         " does not divide the " + std::to_string(layer.cols) + " columns");
  }
  if (!IsFloatOutput(layer.scale_type)) {
    return PackedInvalid("scale_type must be f32, f16 or bf16, not " +
                         std::string(ElemTypeName(layer.scale_type)));
  }
  if (!IsFloatOutput(out_type)) {
    return PackedInvalid("output type must be f32, f16 or bf16, not " +
                         std::string(ElemTypeName(out_type)));
  }
  if (layer.tensor_scale && !layer.weight_zero_point.empty()) {
    return PackedInvalid("weight_zero_point with a per-tensor scale is not a packed layout");
  }
  const uint64_t per_word = 32 / layer.num_bits;
  const uint64_t groups = layer.cols / layer.group_size;
  const uint64_t words = (layer.cols - 1) / per_word + 1;
  uint64_t expected = 0;
  bool ok = Mul(layer.rows, words, &expected) && Mul(expected, 4, &expected);
  AMN_RETURN_IF_ERROR(CheckBytes(kApi, "weight_packed", layer.weight_packed.size(), expected, ok));
  expected = 1;  // strategy "tensor": one scale
  ok = (layer.tensor_scale || Mul(layer.rows, groups, &expected)) &&
       Mul(expected, ElemTypeBytes(layer.scale_type), &expected);
  AMN_RETURN_IF_ERROR(CheckBytes(kApi, "weight_scale", layer.weight_scale.size(), expected, ok));
  if (!layer.weight_zero_point.empty()) {
    const uint64_t zp_rows = (layer.rows - 1) / per_word + 1;
    ok = layer.zero_point_i8 ? Mul(layer.rows, groups, &expected)
                             : Mul(zp_rows, groups, &expected) && Mul(expected, 4, &expected);
    AMN_RETURN_IF_ERROR(
        CheckBytes(kApi, "weight_zero_point", layer.weight_zero_point.size(), expected, ok));
  }
  AMN_RETURN_IF_ERROR(
      CheckRowsOut(kApi, row_begin, row_end, layer.rows, layer.cols, out_type, out.size()));
  if (row_begin == row_end) return Status::Ok();

  ref::PackedIntMatrix m;
  m.weight_packed = Bytes(layer.weight_packed);
  m.scales = Bytes(layer.weight_scale);
  m.zero_points = layer.weight_zero_point.empty() ? nullptr : Bytes(layer.weight_zero_point);
  m.zero_points_i8 = layer.zero_point_i8;
  m.scale_type = layer.scale_type;
  m.rows = layer.rows;
  m.cols = layer.cols;
  m.group_size = layer.group_size;
  m.bits = layer.num_bits;
  m.tensor_scale = layer.tensor_scale;
  internal::DecodePackedInt(m, row_begin, row_end, out_type, out.data());
  return Status::Ok();
}

}  // namespace amn
