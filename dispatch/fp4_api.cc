// The checked FP4 APIs of amn/fp4_dequant.h (DequantNvfp4, DequantMxfp4):
// layout checks, then the dispatched Nvfp4 / Mxfp4St decoders of the kernel
// table.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "amn/fp4_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/family_decoders.h"
#include "kernels/ref/fp4_ref.h"

namespace amn {

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
  const kernels::Nvfp4Args args{Bytes(t.packed), Bytes(t.scales), global, cols};
  internal::DecodeNvfp4(args, static_cast<size_t>(row_begin), static_cast<size_t>(row_end),
                        out_type, out.data());
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
    const kernels::Mxfp4StArgs args{blocks, scales, 0, groups, false};
    internal::DecodeMxfp4St(args, static_cast<size_t>(row_begin), static_cast<size_t>(row_end),
                            out_type, out.data());
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
    internal::DecodeMxfp4St(kernels::Mxfp4StArgs{b, s, rows, groups, true}, col_begin, col_end,
                            out_type, y);
    o += col_end - col_begin;
  }
  return Status::Ok();
}

}  // namespace amn
