// GGUF TQ1_0 blocks with a finite d straight from the packed trits to
// F32/F16/BF16 outputs, Highway 1.0.3 (used by ggml_kquant-inl.h, every
// target but SCALAR). Each result is digit · d with digit in {-1, 0, 1}:
// exactly -d, +0 · d (±0 with d's sign) and d in F32, so the reference's
// outputs are three bit patterns of d's own, in the output type: F32 and
// F16 d ^ sign, d & sign, d (f32(d) and d are exact), BF16 the same of
// BF16(d), which rounds symmetrically. The digits index a table of them.
#if defined(AMN_KERNELS_GGML_TQ1_TABLE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_TQ1_TABLE_INL_H_
#undef AMN_KERNELS_GGML_TQ1_TABLE_INL_H_
#else
#define AMN_KERNELS_GGML_TQ1_TABLE_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "hwy/highway.h"
#include "kernels/ggml_blocks.h"
#include "kernels/ggml_kquant_blocks.h"
#include "kernels/ref/float_convert_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR

// The digit + 1 (0, 1, 2: the table index) of N packed bytes at src, for
// digit k = 0 .. digits - 1: ((x·3^k mod 256)·3) >> 8, on u16 lanes
// (Highway 1.0.3 has no u8 Mul); `emit(k, t)` gets them. Also the digit
// step of the two-pass decode (Tq1Digits, ggml_kquant-inl.h).
template <class D16, class Emit>
HWY_INLINE void Tq1TableIndices(D16 d16, const uint8_t* src, int digits, const Emit& emit) {
  const hn::Rebind<uint8_t, D16> d8;
  auto p = hn::PromoteTo(d16, hn::LoadU(d8, src));
  for (int k = 0; k < digits; ++k) {
    const auto q = hn::And(p, hn::Set(d16, 0xFF));
    p = hn::Add(q, hn::Add(q, q));
    emit(k, hn::ShiftRight<8>(p));
  }
}

// 16-bit outputs: the three patterns in a 16-byte table, low bytes at
// 0..2, high bytes at 8..10, looked up with the u16 index t | (t + 8) << 8.
template <class D16>
HWY_INLINE void Tq1Table16Digits(D16 d16, const uint8_t* src, int digits, size_t stride,
                                 hn::Vec<hn::Repartition<uint8_t, D16>> table, uint16_t* dst) {
  const hn::Repartition<uint8_t, D16> d8;
  Tq1TableIndices(d16, src, digits, [&](int k, hn::Vec<D16> t) {
    const auto index = hn::Add(hn::Mul(t, hn::Set(d16, 0x0101)), hn::Set(d16, 0x0800));
    hn::StoreU(hn::BitCast(d16, hn::TableLookupBytes(table, hn::BitCast(d8, index))), d16,
               dst + stride * k);
  });
}

// F32 outputs: the three patterns in lanes 0..2 of `table`, looked up per
// half of the u16 indices widened to u32.
template <class D16>
HWY_INLINE void Tq1Table32Digits(D16 d16, const uint8_t* src, int digits, size_t stride,
                                 hn::Vec<hn::Rebind<float, hn::Half<D16>>> table, float* dst) {
  const hn::Half<D16> dh;
  const hn::Rebind<uint32_t, decltype(dh)> du;
  const hn::Rebind<float, decltype(dh)> df;
  const size_t half = hn::Lanes(dh);
  Tq1TableIndices(d16, src, digits, [&](int k, hn::Vec<D16> t) {
    const auto lo = hn::PromoteTo(du, hn::LowerHalf(dh, t));
    const auto hi = hn::PromoteTo(du, hn::UpperHalf(dh, t));
    hn::StoreU(hn::TableLookupLanes(table, hn::IndicesFromVec(df, lo)), df, dst + stride * k);
    hn::StoreU(hn::TableLookupLanes(table, hn::IndicesFromVec(df, hi)), df,
               dst + stride * k + half);
  });
}

// Which outputs take Tq1TableBlock instead of the two passes: F16 and BF16
// everywhere (BF16 measured 1.4-2.7x faster on the x86 targets; its
// rounding is then one scalar call per block), F32 on the x86 targets but
// SSE4 (AVX2 1.32x, SSSE3 1.15x, AVX3_DL 1.04x; SSE4 0.94x, where the
// 4-lane TableLookupLanes is emulated; Arm untimed keeps the passes):
// docs/performance/gguf-decode.md, "TQ1_0 F32 and BF16 through the table".
template <typename TOut>
constexpr bool Tq1UsesTable() {
  if constexpr (sizeof(TOut) == 2) {
    return true;
  } else {
    return HWY_ARCH_X86 && HWY_TARGET != HWY_SSE4;
  }
}

// One TQ1_0 block at b whose d is finite to its 256 outputs at y (TOut
// float: F32; uint16_t: BF16 with kBf16, else F16): elements 32k + l from
// qs[l] (l < 32), 160 + 16k + l from qs[32 + l] (l < 16), 240 + 4k + l from
// qh[l] (l < 4; through 8-lane copies so no load or store leaves the block).
template <bool kBf16, typename TOut>
HWY_INLINE void Tq1TableBlock(const uint8_t* b, TOut* HWY_RESTRICT y) {
  using namespace kq::tq1;
  const hn::CappedTag<uint16_t, 16> d16;
  const size_t n = hn::Lanes(d16);  // 8 or 16 (every non-SCALAR target)
  const hn::Full128<uint16_t> d16x8;
  HWY_ALIGN uint8_t qh[8] = {};
  std::memcpy(qh, b + kQh, 4);
  const uint16_t d_f16 = kq::LoadLe16(b + kD);
  if constexpr (std::is_same_v<TOut, float>) {
    const uint32_t d = ggml::F16ScaleBits(d_f16);
    HWY_ALIGN uint32_t values[16] = {d ^ 0x80000000u, d & 0x80000000u, d};
    const hn::Rebind<float, hn::Half<decltype(d16)>> df;
    const auto table = hn::BitCast(df, hn::Load(hn::RebindToUnsigned<decltype(df)>(), values));
    for (size_t l = 0; l < 32; l += n) Tq1Table32Digits(d16, b + kQs + l, 5, 32, table, y + l);
    for (size_t l = 0; l < 16; l += n) {
      Tq1Table32Digits(d16, b + kQs + 32 + l, 5, 16, table, y + 160 + l);
    }
    const hn::Rebind<float, hn::Half<decltype(d16x8)>> df4;
    const auto table4 = hn::BitCast(df4, hn::Load(hn::RebindToUnsigned<decltype(df4)>(), values));
    HWY_ALIGN float rows[4][8];
    Tq1Table32Digits(d16x8, qh, 4, 8, table4, &rows[0][0]);
    for (size_t k = 0; k < 4; ++k) std::memcpy(y + 240 + 4 * k, rows[k], 4 * sizeof(float));
  } else {
    uint16_t v = d_f16;
    if constexpr (kBf16) {
      const uint32_t bits = ggml::F16ScaleBits(d_f16);
      float d;
      std::memcpy(&d, &bits, sizeof(d));
      ref::ConvertF32ToBf16(&d, 1, &v);
    }
    const uint16_t values[3] = {static_cast<uint16_t>(v ^ 0x8000u),
                                static_cast<uint16_t>(v & 0x8000u), v};
    HWY_ALIGN uint8_t bytes[16] = {};
    for (size_t i = 0; i < 3; ++i) {
      bytes[i] = static_cast<uint8_t>(values[i] & 0xFF);
      bytes[8 + i] = static_cast<uint8_t>(values[i] >> 8);
    }
    const hn::Repartition<uint8_t, decltype(d16)> d8;
    const auto table = hn::LoadDup128(d8, bytes);
    for (size_t l = 0; l < 32; l += n) Tq1Table16Digits(d16, b + kQs + l, 5, 32, table, y + l);
    for (size_t l = 0; l < 16; l += n) {
      Tq1Table16Digits(d16, b + kQs + 32 + l, 5, 16, table, y + 160 + l);
    }
    HWY_ALIGN uint16_t rows[4][8];
    Tq1Table16Digits(d16x8, qh, 4, 8, hn::LoadDup128(hn::Full128<uint8_t>(), bytes), &rows[0][0]);
    for (size_t k = 0; k < 4; ++k) std::memcpy(y + 240 + 4 * k, rows[k], 4 * sizeof(uint16_t));
  }
}

#endif  // HWY_TARGET != HWY_SCALAR

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GGML_TQ1_TABLE_INL_H_
