// The checked bitsandbytes API of amn/bnb_dequant.h (DequantBnb4,
// DequantBnbInt8): every size the layout implies, then the dispatched Bnb4 /
// BnbInt8 decoders of the kernel table.
#include <cstdint>
#include <string>

#include "amn/bnb_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/family_decoders.h"

namespace amn {

namespace {

Status InvalidArgument(const char* function, std::string message) {
  return Status(StatusCode::kInvalidArgument, std::string(function) + ": " + std::move(message));
}

Status CheckOutType(const char* function, ElemType out_type) {
  if (out_type != ElemType::kF32 && out_type != ElemType::kF16 && out_type != ElemType::kBf16) {
    return InvalidArgument(function, "output type must be f32, f16 or bf16, not " +
                                         std::string(ElemTypeName(out_type)));
  }
  return Status::Ok();
}

Status CheckSpan(const char* function, const char* field, size_t got, uint64_t want) {
  if (got != want) {
    return InvalidArgument(function, std::string(field) + " holds " + std::to_string(got) +
                                         " bytes, the layout needs " + std::to_string(want));
  }
  return Status::Ok();
}

// ceil(a / b) for b >= 1, without overflow.
uint64_t CeilDiv(uint64_t a, uint64_t b) { return a == 0 ? 0 : (a - 1) / b + 1; }

const uint8_t* Bytes(std::span<const std::byte> s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

// Every size the layout implies: the spans must match exactly.
Status CheckBnb4(const Bnb4Tensor& t) {
  constexpr const char* kFn = "DequantBnb4";
  if (t.block_size == 0 || t.block_size % 2 != 0) {
    return InvalidArgument(
        kFn, "block_size must be even and at least 2, not " + std::to_string(t.block_size));
  }
  const uint64_t n_blocks = CeilDiv(t.elements, t.block_size);
  AMN_RETURN_IF_ERROR(CheckSpan(kFn, "packed", t.packed.size(), CeilDiv(t.elements, 2)));
  AMN_RETURN_IF_ERROR(
      CheckSpan(kFn, "quant_map", t.quant_map.size(), 4 * uint64_t{bnb::kCodebookSize}));
  if (!t.double_quant) {
    // n_blocks <= elements / 2 + 1, so 4 * n_blocks cannot overflow.
    return CheckSpan(kFn, "absmax (f32)", t.absmax.size(), 4 * n_blocks);
  }
  AMN_RETURN_IF_ERROR(CheckSpan(kFn, "absmax (u8, double quant)", t.absmax.size(), n_blocks));
  if (t.nested_block_size == 0) {
    return InvalidArgument(kFn, "nested_block_size must be at least 1");
  }
  AMN_RETURN_IF_ERROR(CheckSpan(kFn, "nested_absmax", t.nested_absmax.size(),
                                4 * CeilDiv(n_blocks, t.nested_block_size)));
  return CheckSpan(kFn, "nested_quant_map", t.nested_quant_map.size(),
                   4 * uint64_t{bnb::kNestedCodebookSize});
}

}  // namespace

Status DequantBnb4(const Bnb4Tensor& t, uint64_t begin, uint64_t end, ElemType out_type,
                   std::span<std::byte> out) {
  constexpr const char* kFn = "DequantBnb4";
  AMN_RETURN_IF_ERROR(CheckOutType(kFn, out_type));
  AMN_RETURN_IF_ERROR(CheckBnb4(t));
  if (begin > end || end > t.elements) {
    return InvalidArgument(kFn, "range [" + std::to_string(begin) + ", " + std::to_string(end) +
                                    ") is not inside the " + std::to_string(t.elements) +
                                    " elements");
  }
  // Dividing the output bytes (never multiplying the count) cannot overflow.
  AMN_RETURN_IF_ERROR(internal::CheckKernelCall(end - begin, out.size() / ElemTypeBytes(out_type)));
  if (begin == end) return Status::Ok();

  kernels::Bnb4Args view;
  view.packed = Bytes(t.packed);
  view.quant_map = Bytes(t.quant_map);
  view.absmax = Bytes(t.absmax);
  view.block_size = t.block_size;
  view.double_quant = t.double_quant;
  if (t.double_quant) {
    view.nested_absmax = Bytes(t.nested_absmax);
    view.nested_quant_map = Bytes(t.nested_quant_map);
    view.nested_block_size = t.nested_block_size;
    view.nested_offset_bits = bnb::ToBits(t.nested_offset);
  }
  internal::DecodeBnb4(view, begin, end, out_type, out.data());
  return Status::Ok();
}

Status DequantBnbInt8(const BnbInt8Tensor& t, uint64_t row_begin, uint64_t row_end,
                      ElemType out_type, std::span<std::byte> out) {
  constexpr const char* kFn = "DequantBnbInt8";
  AMN_RETURN_IF_ERROR(CheckOutType(kFn, out_type));
  if (t.cols != 0 && t.rows > UINT64_MAX / t.cols) {
    return InvalidArgument(kFn, "rows * cols overflows");
  }
  AMN_RETURN_IF_ERROR(CheckSpan(kFn, "weight", t.weight.size(), t.rows * t.cols));
  if (t.rows > UINT64_MAX / 4) return InvalidArgument(kFn, "rows * 4 overflows");
  AMN_RETURN_IF_ERROR(CheckSpan(kFn, "scb", t.scb.size(), 4 * t.rows));
  if (row_begin > row_end || row_end > t.rows) {
    return InvalidArgument(kFn, "row range [" + std::to_string(row_begin) + ", " +
                                    std::to_string(row_end) + ") is not inside the " +
                                    std::to_string(t.rows) + " rows");
  }
  // (row_end - row_begin) * cols <= rows * cols, checked above.
  AMN_RETURN_IF_ERROR(internal::CheckKernelCall((row_end - row_begin) * t.cols,
                                                out.size() / ElemTypeBytes(out_type)));
  if (row_begin == row_end || t.cols == 0) return Status::Ok();
  internal::DecodeBnbInt8(kernels::BnbInt8Args{Bytes(t.weight), Bytes(t.scb), t.cols}, row_begin,
                         row_end, out_type, out.data());
  return Status::Ok();
}

}  // namespace amn
