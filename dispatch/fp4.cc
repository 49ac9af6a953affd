// Dispatch for NVFP4 and gpt-oss MXFP4 dequantization (kernels/fp4-inl.h):
// per-target entry points, HWY_EXPORT tables, the checked public wrappers
// DequantNvfp4 / DequantMxfp4 and the Fp4Target() probe. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/fp4.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/fp4-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {

// Dequant{Nvfp4,Mxfp4St,Mxfp4StTransposed}To{F32,Bf16,F16}Row.
#define AMN_FP4_ROWS(Out, TOut)                                                               \
  void DequantNvfp4To##Out##Row(const uint8_t* packed, const uint8_t* scales,                \
                                float global_scale, size_t rows, size_t cols, TOut* out) {   \
    DequantNvfp4Kernel<DequantOut::k##Out>(ref::DequantNvfp4To##Out, packed, scales,         \
                                           global_scale, rows, cols, out);                   \
  }                                                                                           \
  void DequantMxfp4StTo##Out##Row(const uint8_t* blocks, const uint8_t* scales, size_t rows, \
                                  size_t groups, TOut* out) {                                 \
    DequantMxfp4Kernel<DequantOut::k##Out>(ref::DequantMxfp4StTo##Out, blocks, scales, rows, \
                                           groups, out);                                      \
  }                                                                                           \
  void DequantMxfp4StTransposedTo##Out##Row(const uint8_t* blocks, const uint8_t* scales,    \
                                            size_t rows, size_t groups, size_t col_begin,     \
                                            size_t col_end, TOut* out) {                      \
    DequantMxfp4TransposedKernel<DequantOut::k##Out>(ref::DequantMxfp4StTransposedTo##Out,   \
                                                     blocks, scales, rows, groups, col_begin, \
                                                     col_end, out);                           \
  }
AMN_FP4_ROWS(F32, float)
AMN_FP4_ROWS(Bf16, uint16_t)
AMN_FP4_ROWS(F16, uint16_t)
#undef AMN_FP4_ROWS

int64_t Fp4TargetProbe() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "amn/fp4_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/kernel_rows.h"

namespace amn {

#define AMN_FP4_EXPORT(Out, TOut)                                                               \
  HWY_EXPORT(DequantNvfp4To##Out##Row);                                                         \
  HWY_EXPORT(DequantMxfp4StTo##Out##Row);                                                       \
  HWY_EXPORT(DequantMxfp4StTransposedTo##Out##Row);                                             \
  namespace internal {                                                                          \
  void DequantNvfp4To##Out##Rows(const uint8_t* packed, const uint8_t* scales,                 \
                                 float global_scale, size_t rows, size_t cols, TOut* out) {    \
    HWY_DYNAMIC_DISPATCH(DequantNvfp4To##Out##Row)(packed, scales, global_scale, rows, cols,  \
                                                   out);                                        \
  }                                                                                             \
  void DequantMxfp4StTo##Out##Rows(const uint8_t* blocks, const uint8_t* scales, size_t rows,  \
                                   size_t groups, TOut* out) {                                  \
    HWY_DYNAMIC_DISPATCH(DequantMxfp4StTo##Out##Row)(blocks, scales, rows, groups, out);        \
  }                                                                                             \
  void DequantMxfp4StTransposedTo##Out##Rows(const uint8_t* blocks, const uint8_t* scales,     \
                                             size_t rows, size_t groups, size_t col_begin,      \
                                             size_t col_end, TOut* out) {                       \
    HWY_DYNAMIC_DISPATCH(DequantMxfp4StTransposedTo##Out##Row)(blocks, scales, rows, groups,    \
                                                               col_begin, col_end, out);        \
  }                                                                                             \
  }  // namespace internal
AMN_FP4_EXPORT(F32, float)
AMN_FP4_EXPORT(Bf16, uint16_t)
AMN_FP4_EXPORT(F16, uint16_t)
#undef AMN_FP4_EXPORT
HWY_EXPORT(Fp4TargetProbe);

TargetId Fp4Target() {
  (void)internal::PrepareDispatch();
  return HWY_DYNAMIC_DISPATCH(Fp4TargetProbe)();
}

namespace {

Status Invalid(const char* function, const std::string& message) {
  return Status(StatusCode::kInvalidArgument, std::string(function) + ": " + message);
}

bool IsOutType(ElemType type) {
  return type == ElemType::kF32 || type == ElemType::kF16 || type == ElemType::kBf16;
}

// a * b, false on overflow.
bool Mul(uint64_t a, uint64_t b, uint64_t* product) {
  return !__builtin_mul_overflow(a, b, product);
}

// The checks every call shares: output type, row range, output size (rows
// of row_elems elements). Size arithmetic is checked.
Status CheckOutput(const char* function, ElemType out_type, uint64_t total_rows,
                   uint64_t row_elems, uint64_t row_begin, uint64_t row_end, size_t out_bytes) {
  if (!IsOutType(out_type)) {
    return Invalid(function, "out_type must be f32, f16 or bf16, not " +
                                 std::string(ElemTypeName(out_type)));
  }
  if (row_begin > row_end || row_end > total_rows) {
    return Invalid(function, "row range [" + std::to_string(row_begin) + ", " +
                                 std::to_string(row_end) + ") is not inside the " +
                                 std::to_string(total_rows) + " output rows");
  }
  uint64_t elems = 0, bytes = 0;
  if (!Mul(row_end - row_begin, row_elems, &elems) ||
      !Mul(elems, ElemTypeBytes(out_type), &bytes) || bytes > SIZE_MAX) {
    return Invalid(function, "the output size overflows");
  }
  if (out_bytes < bytes) {
    return Invalid(function, "out holds " + std::to_string(out_bytes) + " bytes, the rows need " +
                                 std::to_string(bytes));
  }
  return internal::CheckKernelCall(elems, elems);
}

Status CheckSpan(const char* function, const char* field, size_t got, uint64_t want) {
  if (got == want) return Status::Ok();
  return Invalid(function, std::string(field) + " holds " + std::to_string(got) +
                               " bytes, the shape needs " + std::to_string(want));
}

uint32_t LoadLe32(const std::byte* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

const uint8_t* Bytes(std::span<const std::byte> s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

}  // namespace

Status DequantNvfp4(const Nvfp4Tensor& t, uint64_t row_begin, uint64_t row_end,
                    ElemType out_type, std::span<std::byte> out) {
  constexpr const char* kFn = "DequantNvfp4";
  if (t.cols % ref::kNvfp4GroupElems != 0) {
    return Invalid(kFn, "cols (" + std::to_string(t.cols) + ") must be a multiple of 16");
  }
  uint64_t elems = 0;
  if (!Mul(t.rows, t.cols, &elems)) return Invalid(kFn, "rows * cols overflows");
  AMN_RETURN_IF_ERROR(CheckSpan(kFn, "packed", t.packed.size(), elems / 2));
  AMN_RETURN_IF_ERROR(
      CheckSpan(kFn, "scales", t.scales.size(), elems / ref::kNvfp4GroupElems));
  AMN_RETURN_IF_ERROR(CheckSpan(kFn, "global_scale", t.global_scale.size(), sizeof(float)));
  AMN_RETURN_IF_ERROR(CheckOutput(kFn, out_type, t.rows, t.cols, row_begin, row_end, out.size()));
  const size_t rows = static_cast<size_t>(row_end - row_begin);
  if (rows == 0 || t.cols == 0) return Status::Ok();

  const uint32_t global_bits = LoadLe32(t.global_scale.data());
  float global;
  std::memcpy(&global, &global_bits, sizeof(global));
  const size_t cols = static_cast<size_t>(t.cols);
  const uint8_t* packed = Bytes(t.packed) + row_begin * (cols / 2);
  const uint8_t* scales = Bytes(t.scales) + row_begin * (cols / ref::kNvfp4GroupElems);
  // `out` may start at any byte: the kernels store with StoreU and memcpy.
  switch (out_type) {
    case ElemType::kF32:
      internal::DequantNvfp4ToF32Rows(packed, scales, global, rows, cols,
                                      reinterpret_cast<float*>(out.data()));
      break;
    case ElemType::kBf16:
      internal::DequantNvfp4ToBf16Rows(packed, scales, global, rows, cols,
                                       reinterpret_cast<uint16_t*>(out.data()));
      break;
    default:
      internal::DequantNvfp4ToF16Rows(packed, scales, global, rows, cols,
                                      reinterpret_cast<uint16_t*>(out.data()));
      break;
  }
  return Status::Ok();
}

Status DequantMxfp4(const Mxfp4Tensor& t, uint64_t row_begin, uint64_t row_end,
                    ElemType out_type, std::span<std::byte> out) {
  constexpr const char* kFn = "DequantMxfp4";
  uint64_t matrix_groups = 0, n_groups = 0, n_bytes = 0, cols = 0, total_rows = 0;
  if (!Mul(t.rows, t.groups, &matrix_groups) || !Mul(t.experts, matrix_groups, &n_groups) ||
      !Mul(n_groups, ref::kMxfp4GroupBytes, &n_bytes) ||
      !Mul(t.groups, ref::kMxfp4GroupElems, &cols) ||
      !Mul(t.experts, t.transpose ? cols : t.rows, &total_rows)) {
    return Invalid(kFn, "experts * rows * groups overflows");
  }
  AMN_RETURN_IF_ERROR(CheckSpan(kFn, "blocks", t.blocks.size(), n_bytes));
  AMN_RETURN_IF_ERROR(CheckSpan(kFn, "scales", t.scales.size(), n_groups));
  const uint64_t row_elems = t.transpose ? t.rows : cols;
  AMN_RETURN_IF_ERROR(
      CheckOutput(kFn, out_type, total_rows, row_elems, row_begin, row_end, out.size()));
  if (row_begin == row_end || row_elems == 0) return Status::Ok();

  const uint8_t* blocks = Bytes(t.blocks);
  const uint8_t* scales = Bytes(t.scales);
  const size_t groups = static_cast<size_t>(t.groups);
  if (!t.transpose) {
    // The rows of all experts are one row-major run.
    const size_t rows = static_cast<size_t>(row_end - row_begin);
    const uint8_t* b = blocks + row_begin * groups * ref::kMxfp4GroupBytes;
    const uint8_t* s = scales + row_begin * groups;
    switch (out_type) {
      case ElemType::kF32:
        internal::DequantMxfp4StToF32Rows(b, s, rows, groups, reinterpret_cast<float*>(out.data()));
        break;
      case ElemType::kBf16:
        internal::DequantMxfp4StToBf16Rows(b, s, rows, groups,
                                           reinterpret_cast<uint16_t*>(out.data()));
        break;
      default:
        internal::DequantMxfp4StToF16Rows(b, s, rows, groups,
                                          reinterpret_cast<uint16_t*>(out.data()));
        break;
    }
    return Status::Ok();
  }
  // Transposed: each expert's [G*32][R] matrix in turn, from the output row
  // range's first expert to its last.
  const size_t rows = static_cast<size_t>(t.rows);
  const size_t elem_bytes = ElemTypeBytes(out_type);
  for (uint64_t o = row_begin; o < row_end;) {
    const uint64_t expert = o / cols;
    const size_t col_begin = static_cast<size_t>(o % cols);
    const size_t col_end = static_cast<size_t>(std::min<uint64_t>(cols, row_end - expert * cols));
    const uint8_t* b = blocks + expert * matrix_groups * ref::kMxfp4GroupBytes;
    const uint8_t* s = scales + expert * matrix_groups;
    std::byte* y = out.data() + (o - row_begin) * rows * elem_bytes;
    switch (out_type) {
      case ElemType::kF32:
        internal::DequantMxfp4StTransposedToF32Rows(b, s, rows, groups, col_begin, col_end,
                                                    reinterpret_cast<float*>(y));
        break;
      case ElemType::kBf16:
        internal::DequantMxfp4StTransposedToBf16Rows(b, s, rows, groups, col_begin, col_end,
                                                     reinterpret_cast<uint16_t*>(y));
        break;
      default:
        internal::DequantMxfp4StTransposedToF16Rows(b, s, rows, groups, col_begin, col_end,
                                                    reinterpret_cast<uint16_t*>(y));
        break;
    }
    o += col_end - col_begin;
  }
  return Status::Ok();
}

}  // namespace amn
#endif  // HWY_ONCE
