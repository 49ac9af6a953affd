// Dispatch for scaled FP8 dequantization (kernels/fp8_dequant-inl.h):
// per-target entry points, HWY_EXPORT tables, the checked public wrapper
// DequantFp8Rows and the Fp8DequantTarget() probe. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/fp8_dequant.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/fp8_dequant-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {

void DequantE4m3ToF32Row(const uint8_t* codes, size_t rows, size_t cols, const float* scales,
                         size_t block_cols, float* out) {
  DequantE4m3ToF32Kernel(codes, rows, cols, scales, block_cols, out);
}
void DequantE4m3ToBf16Row(const uint8_t* codes, size_t rows, size_t cols, const float* scales,
                          size_t block_cols, uint16_t* out) {
  DequantE4m3ToBf16Kernel(codes, rows, cols, scales, block_cols, out);
}
void DequantE4m3ToF16Row(const uint8_t* codes, size_t rows, size_t cols, const float* scales,
                         size_t block_cols, uint16_t* out) {
  DequantE4m3ToF16Kernel(codes, rows, cols, scales, block_cols, out);
}
void DequantE5m2ToF32Row(const uint8_t* codes, size_t rows, size_t cols, const float* scales,
                         size_t block_cols, float* out) {
  DequantE5m2ToF32Kernel(codes, rows, cols, scales, block_cols, out);
}
void DequantE5m2ToBf16Row(const uint8_t* codes, size_t rows, size_t cols, const float* scales,
                          size_t block_cols, uint16_t* out) {
  DequantE5m2ToBf16Kernel(codes, rows, cols, scales, block_cols, out);
}
void DequantE5m2ToF16Row(const uint8_t* codes, size_t rows, size_t cols, const float* scales,
                         size_t block_cols, uint16_t* out) {
  DequantE5m2ToF16Kernel(codes, rows, cols, scales, block_cols, out);
}
int64_t Fp8DequantTargetProbe() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <string>

#include "amn/fp8_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/kernel_rows.h"

namespace amn {

HWY_EXPORT(DequantE4m3ToF32Row);
HWY_EXPORT(DequantE4m3ToBf16Row);
HWY_EXPORT(DequantE4m3ToF16Row);
HWY_EXPORT(DequantE5m2ToF32Row);
HWY_EXPORT(DequantE5m2ToBf16Row);
HWY_EXPORT(DequantE5m2ToF16Row);
HWY_EXPORT(Fp8DequantTargetProbe);

namespace internal {
void DequantE4m3ToF32Rows(const uint8_t* codes, size_t rows, size_t cols, const float* scales,
                          size_t block_cols, float* out) {
  HWY_DYNAMIC_DISPATCH(DequantE4m3ToF32Row)(codes, rows, cols, scales, block_cols, out);
}
void DequantE4m3ToBf16Rows(const uint8_t* codes, size_t rows, size_t cols, const float* scales,
                           size_t block_cols, uint16_t* out) {
  HWY_DYNAMIC_DISPATCH(DequantE4m3ToBf16Row)(codes, rows, cols, scales, block_cols, out);
}
void DequantE4m3ToF16Rows(const uint8_t* codes, size_t rows, size_t cols, const float* scales,
                          size_t block_cols, uint16_t* out) {
  HWY_DYNAMIC_DISPATCH(DequantE4m3ToF16Row)(codes, rows, cols, scales, block_cols, out);
}
void DequantE5m2ToF32Rows(const uint8_t* codes, size_t rows, size_t cols, const float* scales,
                          size_t block_cols, float* out) {
  HWY_DYNAMIC_DISPATCH(DequantE5m2ToF32Row)(codes, rows, cols, scales, block_cols, out);
}
void DequantE5m2ToBf16Rows(const uint8_t* codes, size_t rows, size_t cols, const float* scales,
                           size_t block_cols, uint16_t* out) {
  HWY_DYNAMIC_DISPATCH(DequantE5m2ToBf16Row)(codes, rows, cols, scales, block_cols, out);
}
void DequantE5m2ToF16Rows(const uint8_t* codes, size_t rows, size_t cols, const float* scales,
                          size_t block_cols, uint16_t* out) {
  HWY_DYNAMIC_DISPATCH(DequantE5m2ToF16Row)(codes, rows, cols, scales, block_cols, out);
}
}  // namespace internal

TargetId Fp8DequantTarget() {
  (void)internal::PrepareDispatch();
  return HWY_DYNAMIC_DISPATCH(Fp8DequantTargetProbe)();
}

namespace {

Status InvalidArgument(std::string message) {
  return Status(StatusCode::kInvalidArgument, "DequantFp8Rows: " + std::move(message));
}

// Runs the unchecked rows on the caller's bytes. `out` may start at any byte:
// the kernels store with StoreU and memcpy only.
template <typename TOut>
void RunRows(void (*rows_fn)(const uint8_t*, size_t, size_t, const float*, size_t, TOut*),
             std::span<const uint8_t> codes, size_t cols, std::span<const float> col_scales,
             size_t block_cols, std::span<std::byte> out) {
  rows_fn(codes.data(), codes.size() / cols, cols, col_scales.data(), block_cols,
          reinterpret_cast<TOut*>(out.data()));
}

}  // namespace

Status DequantFp8Rows(ElemType code_type, std::span<const uint8_t> codes, size_t cols,
                      std::span<const float> col_scales, size_t block_cols, ElemType out_type,
                      std::span<std::byte> out) {
  const bool e4m3 = code_type == ElemType::kF8E4m3;
  if (!e4m3 && code_type != ElemType::kF8E5m2) {
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

  switch (out_type) {
    case ElemType::kF32:
      RunRows(e4m3 ? internal::DequantE4m3ToF32Rows : internal::DequantE5m2ToF32Rows, codes, cols,
              col_scales, block_cols, out);
      break;
    case ElemType::kBf16:
      RunRows(e4m3 ? internal::DequantE4m3ToBf16Rows : internal::DequantE5m2ToBf16Rows, codes, cols,
              col_scales, block_cols, out);
      break;
    default:
      RunRows(e4m3 ? internal::DequantE4m3ToF16Rows : internal::DequantE5m2ToF16Rows, codes, cols,
              col_scales, block_cols, out);
      break;
  }
  return Status::Ok();
}

}  // namespace amn
#endif  // HWY_ONCE
