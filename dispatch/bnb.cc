// Dispatch for bitsandbytes dequantization (kernels/bnb-inl.h): per-target
// entry points, HWY_EXPORT tables, the checked public wrappers DequantBnb4 and
// DequantBnbInt8 and the BnbTarget() probe. No math here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dispatch/bnb.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/bnb-inl.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {

void DequantBnb4ToF32Row(const bnb::Bnb4View& t, size_t begin, size_t end, float* out) {
  DequantBnb4Kernel<BnbOut::kF32>(t, begin, end, out);
}
void DequantBnb4ToBf16Row(const bnb::Bnb4View& t, size_t begin, size_t end, uint16_t* out) {
  DequantBnb4Kernel<BnbOut::kBf16>(t, begin, end, out);
}
void DequantBnb4ToF16Row(const bnb::Bnb4View& t, size_t begin, size_t end, uint16_t* out) {
  DequantBnb4Kernel<BnbOut::kF16>(t, begin, end, out);
}
void DequantBnbInt8ToF32Row(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                            float* out) {
  DequantBnbInt8Kernel<BnbOut::kF32>(ref::DequantBnbInt8ToF32, weight, scb, rows, cols, out);
}
void DequantBnbInt8ToBf16Row(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                             uint16_t* out) {
  DequantBnbInt8Kernel<BnbOut::kBf16>(ref::DequantBnbInt8ToBf16, weight, scb, rows, cols, out);
}
void DequantBnbInt8ToF16Row(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                            uint16_t* out) {
  DequantBnbInt8Kernel<BnbOut::kF16>(ref::DequantBnbInt8ToF16, weight, scb, rows, cols, out);
}
int64_t BnbTargetProbe() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <cstdint>
#include <string>

#include "amn/bnb_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/kernel_rows.h"

namespace amn {

HWY_EXPORT(DequantBnb4ToF32Row);
HWY_EXPORT(DequantBnb4ToBf16Row);
HWY_EXPORT(DequantBnb4ToF16Row);
HWY_EXPORT(DequantBnbInt8ToF32Row);
HWY_EXPORT(DequantBnbInt8ToBf16Row);
HWY_EXPORT(DequantBnbInt8ToF16Row);
HWY_EXPORT(BnbTargetProbe);

namespace internal {
void DequantBnb4ToF32Rows(const bnb::Bnb4View& t, size_t begin, size_t end, float* out) {
  HWY_DYNAMIC_DISPATCH(DequantBnb4ToF32Row)(t, begin, end, out);
}
void DequantBnb4ToBf16Rows(const bnb::Bnb4View& t, size_t begin, size_t end, uint16_t* out) {
  HWY_DYNAMIC_DISPATCH(DequantBnb4ToBf16Row)(t, begin, end, out);
}
void DequantBnb4ToF16Rows(const bnb::Bnb4View& t, size_t begin, size_t end, uint16_t* out) {
  HWY_DYNAMIC_DISPATCH(DequantBnb4ToF16Row)(t, begin, end, out);
}
void DequantBnbInt8ToF32Rows(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                             float* out) {
  HWY_DYNAMIC_DISPATCH(DequantBnbInt8ToF32Row)(weight, scb, rows, cols, out);
}
void DequantBnbInt8ToBf16Rows(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                              uint16_t* out) {
  HWY_DYNAMIC_DISPATCH(DequantBnbInt8ToBf16Row)(weight, scb, rows, cols, out);
}
void DequantBnbInt8ToF16Rows(const uint8_t* weight, const uint8_t* scb, size_t rows, size_t cols,
                             uint16_t* out) {
  HWY_DYNAMIC_DISPATCH(DequantBnbInt8ToF16Row)(weight, scb, rows, cols, out);
}
}  // namespace internal

TargetId BnbTarget() {
  (void)internal::PrepareDispatch();
  return HWY_DYNAMIC_DISPATCH(BnbTargetProbe)();
}

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

template <typename TOut>
void RunBnb4(void (*rows)(const bnb::Bnb4View&, size_t, size_t, TOut*), const bnb::Bnb4View& view,
             uint64_t begin, uint64_t end, std::span<std::byte> out) {
  rows(view, begin, end, reinterpret_cast<TOut*>(out.data()));
}

template <typename TOut>
void RunInt8(void (*rows)(const uint8_t*, const uint8_t*, size_t, size_t, TOut*),
             const BnbInt8Tensor& t, uint64_t row_begin, uint64_t row_end,
             std::span<std::byte> out) {
  rows(Bytes(t.weight) + row_begin * t.cols, Bytes(t.scb) + 4 * row_begin, row_end - row_begin,
       t.cols, reinterpret_cast<TOut*>(out.data()));
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

  bnb::Bnb4View view;
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
  switch (out_type) {
    case ElemType::kF32:
      RunBnb4(internal::DequantBnb4ToF32Rows, view, begin, end, out);
      break;
    case ElemType::kBf16:
      RunBnb4(internal::DequantBnb4ToBf16Rows, view, begin, end, out);
      break;
    default:
      RunBnb4(internal::DequantBnb4ToF16Rows, view, begin, end, out);
      break;
  }
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
  switch (out_type) {
    case ElemType::kF32:
      RunInt8(internal::DequantBnbInt8ToF32Rows, t, row_begin, row_end, out);
      break;
    case ElemType::kBf16:
      RunInt8(internal::DequantBnbInt8ToBf16Rows, t, row_begin, row_end, out);
      break;
    default:
      RunInt8(internal::DequantBnbInt8ToF16Rows, t, row_begin, row_end, out);
      break;
  }
  return Status::Ok();
}

}  // namespace amn
#endif  // HWY_ONCE
