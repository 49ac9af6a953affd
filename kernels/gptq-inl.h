// Per-target GPTQ dequantization (amn/gptq_dequant.h), Highway 1.0.3: the
// entry point over kernels/gptq_in_out-inl.h (kInOut) and
// kernels/gptq_out_in-inl.h (kOutIn). Same bytes as kernels/ref/gptq_ref.cc
// on every target: codes and zeros unpacked with integer ops, (f32(q) -
// f32(z)) exact, one Mul by the scale (never fused), the reference's NaN
// choice, then float_convert-inl.h's F32 -> BF16/F16 rounding (or results
// from per-group tables computed that way). SCALAR (one-lane vectors: no
// ConcatOdd, no useful table lookup) runs the reference. No load or store
// leaves the caller's spans: partial vectors go through zero-padded stack
// copies (Highway 1.0.3 masked loads may fault).
#if defined(AMN_KERNELS_GPTQ_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GPTQ_INL_H_
#undef AMN_KERNELS_GPTQ_INL_H_
#else
#define AMN_KERNELS_GPTQ_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "amn/weight_layout.h"
#include "hwy/highway.h"
#include "kernels/kernel_args.h"
#include "kernels/fp8_dequant-inl.h"
#include "kernels/gptq_in_out-inl.h"
#include "kernels/gptq_layout.h"
#include "kernels/gptq_out_in-inl.h"
#include "kernels/ref/gptq_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Rows [row_begin, row_end) of `orientation` to `out` (kernels/ref/gptq_ref.h
// has the layout, formula and NaN rule). The layer must be valid.
template <DequantOut kOut, typename TOut>
HWY_INLINE void DequantGptqKernel(const gptq::LayerView& layer, WeightOrientation orientation,
                                  size_t row_begin, size_t row_end, TOut* out) {
#if HWY_TARGET == HWY_SCALAR
  constexpr ElemType kType = kOut == DequantOut::kF32    ? ElemType::kF32
                             : kOut == DequantOut::kBf16 ? ElemType::kBf16
                                                         : ElemType::kF16;
  ref::DequantGptq(layer, orientation, row_begin, row_end, kType, out);
#else
  if (row_begin >= row_end) return;
  const auto run = [&](auto bits_tag) {
    constexpr uint32_t kBits = decltype(bits_tag)::value;
    if (orientation == WeightOrientation::kInOut) {
      DequantGptqInOut<kBits, kOut>(layer, row_begin, row_end, out);
    } else {
      DequantGptqOutIn<kBits, kOut>(layer, row_begin, row_end, out);
    }
  };
  switch (layer.bits) {
    case 2: run(std::integral_constant<uint32_t, 2>()); break;
    case 3: run(std::integral_constant<uint32_t, 3>()); break;
    case 4: run(std::integral_constant<uint32_t, 4>()); break;
    default: run(std::integral_constant<uint32_t, 8>()); break;
  }
#endif
}

// The Gptq family (kernels/kernel_args.h): rows [begin, end) of the
// orientation.
HWY_INLINE void DecodeGptq(const kernels::GptqArgs& a, size_t begin, size_t end, ElemType out_type,
                           void* out) {
  switch (out_type) {
    case ElemType::kF32:
      DequantGptqKernel<DequantOut::kF32>(a.layer, a.orientation, begin, end, static_cast<float*>(out));
      break;
    case ElemType::kBf16:
      DequantGptqKernel<DequantOut::kBf16>(a.layer, a.orientation, begin, end,
                                           static_cast<uint16_t*>(out));
      break;
    case ElemType::kF16:
      DequantGptqKernel<DequantOut::kF16>(a.layer, a.orientation, begin, end,
                                          static_cast<uint16_t*>(out));
      break;
    default:
      break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GPTQ_INL_H_
