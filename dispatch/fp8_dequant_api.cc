// The checked scaled-FP8 API of amn/fp8_dequant.h (DequantFp8Rows): shape
// and scale checks, then the dispatched Fp8Dequant decoder of the kernel table.
#include <string>

#include "amn/fp8_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/family_decoders.h"

namespace amn {

namespace {

Status InvalidArgument(std::string message) {
  return Status(StatusCode::kInvalidArgument, "DequantFp8Rows: " + std::move(message));
}

}  // namespace

Status DequantFp8Rows(ElemType code_type, std::span<const uint8_t> codes, size_t cols,
                      std::span<const float> col_scales, size_t block_cols, ElemType out_type,
                      std::span<std::byte> out) {
  if (code_type != ElemType::kF8E4m3 && code_type != ElemType::kF8E5m2) {
    return InvalidArgument("code type must be e4m3 or e5m2, not " +
                           std::string(ElemTypeName(code_type)));
  }
  if (out_type != ElemType::kF32 && out_type != ElemType::kF16 && out_type != ElemType::kBf16) {
    return InvalidArgument("output type must be f32, f16 or bf16, not " +
                           std::string(ElemTypeName(out_type)));
  }
  if (cols == 0) return InvalidArgument("cols must be at least 1");
  if (block_cols == 0) return InvalidArgument("block_cols must be at least 1");
  if (codes.size() % cols != 0) {
    return InvalidArgument(std::to_string(codes.size()) + " codes are not whole rows of " +
                           std::to_string(cols) + " columns");
  }
  const size_t n_scales = (cols - 1) / block_cols + 1;  // ceil without overflow
  if (col_scales.size() < n_scales) {
    return InvalidArgument(std::to_string(cols) + " columns in blocks of " +
                           std::to_string(block_cols) + " need " + std::to_string(n_scales) +
                           " scales, got " + std::to_string(col_scales.size()));
  }
  // Dividing the output bytes (never multiplying the element count) cannot
  // overflow.
  AMN_RETURN_IF_ERROR(
      internal::CheckKernelCall(codes.size(), out.size() / ElemTypeBytes(out_type)));
  if (codes.empty()) return Status::Ok();

  const kernels::Fp8ScaledArgs args{code_type, codes.data(), cols, col_scales.data(), block_cols};
  internal::DecodeFp8Dequant(args, 0, codes.size() / cols, out_type, out.data());
  return Status::Ok();
}

}  // namespace amn
