// The kernel table: one entry per kernel, with thunks from raw bytes to the
// typed unchecked rows (no function-pointer casts).
#include "amn/kernel_registry.h"

#include <array>

#include "amn/convert.h"
#include "amn/fp8_dequant.h"
#include "amn/ggml_dequant.h"
#include "amn/gptq_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/ggml_families.h"
#include "dispatch/kernel_rows.h"
#include "kernels/ggml_blocks.h"
#include "kernels/ggml_iq_blocks.h"
#include "kernels/ggml_kquant_blocks.h"
#include "kernels/gptq_layout.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/fp8_dequant_ref.h"
#include "kernels/ref/fp8_ref.h"
#include "kernels/ref/ggml_iquant_ref.h"
#include "kernels/ref/ggml_kquant_ref.h"
#include "kernels/ref/ggml_legacy_ref.h"
#include "kernels/ref/gptq_ref.h"

namespace amn {
namespace {

template <typename TIn, typename TOut, void (*kRows)(const TIn*, size_t, TOut*)>
void Thunk(const void* in, size_t n_elems, void* out) {
  (void)internal::PrepareDispatch();
  kRows(static_cast<const TIn*>(in), n_elems, static_cast<TOut*>(out));
}

template <typename TIn, typename TOut, void (*kRows)(const TIn*, size_t, TOut*)>
void RefThunk(const void* in, size_t n_elems, void* out) {
  kRows(static_cast<const TIn*>(in), n_elems, static_cast<TOut*>(out));
}

// The scaled FP8 entries ("e4m3_scaled_to_bf16", ...) see their n codes as
// one row in column blocks of kScaledBlockCols, block b scaled by
// kScaledScales[b % 8]: exact and inexact scales, a negative one, one that
// takes large E4M3 codes past the F16 range, one that makes F16 subnormals,
// and zero (0 * Inf for E5M2's Inf codes). Run as rows of 8 blocks plus a
// remainder row, which is the same computation; run and run_reference use
// the same scales, so the fuzzer and `amn bench` cover per-block scales.
constexpr size_t kScaledBlockCols = 128;
constexpr std::array<float, 8> kScaledScales = {0.5f,    1.5f,      3.0e-3f, 448.0f,
                                                -2.0f,   1.0f / 3,  0x1p-20f, 0.0f};
constexpr size_t kScaledRowCols = kScaledBlockCols * kScaledScales.size();

template <typename TOut,
          void (*kRows)(const uint8_t*, size_t, size_t, const float*, size_t, TOut*)>
void RunScaled(const void* in, size_t n_elems, void* out) {
  const auto* codes = static_cast<const uint8_t*>(in);
  auto* values = static_cast<TOut*>(out);
  const size_t full_rows = n_elems / kScaledRowCols;
  const size_t done = full_rows * kScaledRowCols;
  if (full_rows > 0) {
    kRows(codes, full_rows, kScaledRowCols, kScaledScales.data(), kScaledBlockCols, values);
  }
  if (done < n_elems) {
    kRows(codes + done, 1, n_elems - done, kScaledScales.data(), kScaledBlockCols,
          values + done);
  }
}

template <typename TOut,
          void (*kRows)(const uint8_t*, size_t, size_t, const float*, size_t, TOut*)>
void ScaledThunk(const void* in, size_t n_elems, void* out) {
  (void)internal::PrepareDispatch();
  RunScaled<TOut, kRows>(in, n_elems, out);
}

// ggml legacy blocks: n_elems outputs from n_elems / 32 blocks.
template <typename TOut, void (*kRows)(const uint8_t*, size_t, TOut*)>
void BlockThunk(const void* in, size_t n_elems, void* out) {
  (void)internal::PrepareDispatch();
  kRows(static_cast<const uint8_t*>(in), n_elems / ggml::kQK, static_cast<TOut*>(out));
}

template <GgmlType kType, ElemType kOut>
void BlockRefThunk(const void* in, size_t n_elems, void* out) {
  ref::DequantGgmlLegacy(kType, static_cast<const uint8_t*>(in), n_elems / ggml::kQK, kOut, out);
}

// ggml super-block families (K-quants, I-quants): n_elems outputs from
// n_elems / 256 blocks through the family's dispatched entry point.
using FamilyRows = bool (*)(GgmlType, const uint8_t*, size_t, ElemType, void*);
template <FamilyRows kRows, GgmlType kType, ElemType kOut>
void SuperBlockThunk(const void* in, size_t n_elems, void* out) {
  (void)internal::PrepareDispatch();
  kRows(kType, static_cast<const uint8_t*>(in), n_elems / kq::kSuperBlockElems, kOut, out);
}
template <GgmlType kType, typename TOut, bool (*kRef)(uint32_t, const uint8_t*, size_t, TOut*)>
void SuperBlockRefThunk(const void* in, size_t n_elems, void* out) {
  kRef(static_cast<uint32_t>(kType), static_cast<const uint8_t*>(in),
       n_elems / kq::kSuperBlockElems, static_cast<TOut*>(out));
}
// The scalar reference rows of one family, per output type.
struct SuperBlockRefs {
  bool (*f32)(uint32_t, const uint8_t*, size_t, float*);
  bool (*bf16)(uint32_t, const uint8_t*, size_t, uint16_t*);
  bool (*f16)(uint32_t, const uint8_t*, size_t, uint16_t*);
};
constexpr SuperBlockRefs kKQuantRefs{ref::DequantKQuantToF32, ref::DequantKQuantToBf16,
                                     ref::DequantKQuantToF16};
constexpr SuperBlockRefs kIQuantRefs{ref::DequantIQuantToF32, ref::DequantIQuantToBf16,
                                     ref::DequantIQuantToF16};
// `in` names the scale type (f16 d, or Q8_K's f32 d), as the legacy entries.
template <FamilyRows kRows, const SuperBlockRefs& kRefs, GgmlType kType, ElemType kOut>
constexpr KernelInfo SuperBlockEntry(std::string_view name, std::string_view family,
                                     size_t block_bytes, TargetId (*probe)()) {
  constexpr ElemType kScale = kType == GgmlType::kQ8_K ? ElemType::kF32 : ElemType::kF16;
  RowFn reference = nullptr;
  if constexpr (kOut == ElemType::kF32) {
    reference = SuperBlockRefThunk<kType, float, kRefs.f32>;
  } else if constexpr (kOut == ElemType::kBf16) {
    reference = SuperBlockRefThunk<kType, uint16_t, kRefs.bf16>;
  } else {
    reference = SuperBlockRefThunk<kType, uint16_t, kRefs.f16>;
  }
  return KernelInfo{name, family, kScale, kOut, SuperBlockThunk<kRows, kType, kOut>, reference,
                    probe, static_cast<uint32_t>(block_bytes),
                    static_cast<uint32_t>(kq::kSuperBlockElems)};
}
template <GgmlType kType, ElemType kOut>
constexpr KernelInfo KQuantEntry(std::string_view name, size_t block_bytes) {
  return SuperBlockEntry<internal::DequantGgmlKQuant, kKQuantRefs, kType, kOut>(
      name, "ggml_kquant", block_bytes, GgmlKQuantTarget);
}
template <GgmlType kType, ElemType kOut>
constexpr KernelInfo IQuantEntry(std::string_view name, size_t block_bytes) {
  return SuperBlockEntry<internal::DequantGgmlIQuant, kIQuantRefs, kType, kOut>(
      name, "ggml_iquant", block_bytes, GgmlIQuantTarget);
}

// GPTQ entries ("gptq4_to_bf16", ...): the input bytes are the qweight of a
// layer with kGptqRegistryN output features and one group (group_size = K),
// written in the nn.Linear [N, K] orientation that `amn remember` uses
// ("gptq4_inout_to_bf16": the GEMM-native [K, N] one). A
// unit is 32 input features (a whole number of words for every bit width):
// 32 * N outputs from bits * N * 4 bytes, so K = 32 * units. The zeros
// cycle through every stored value; the F16 scales mix exact and inexact,
// negative, tiny and large values (all finite), so any qweight is valid.
constexpr size_t kGptqRegistryN = 64;  // small units (bits * 256 bytes) suit the fuzzer
constexpr size_t kGptqUnitRows = 32;

struct GptqRegistryTables {
  std::array<uint16_t, kGptqRegistryN> scales{};
  std::array<uint8_t, kGptqRegistryN * 4> zeros{};  // up to 8 bits per column
};
constexpr GptqRegistryTables MakeGptqRegistryTables(uint32_t bits) {
  constexpr std::array<uint16_t, 8> kScaleBits = {0x3800, 0x2E66, 0xB555, 0x1C00,
                                                  0x5640, 0x8400, 0x3C00, 0xA1EB};
  GptqRegistryTables t;
  const uint32_t mask = (1u << bits) - 1;
  for (size_t j = 0; j < kGptqRegistryN; ++j) {
    t.scales[j] = kScaleBits[(j * 3 + j / 8) % kScaleBits.size()];
    const uint32_t field = static_cast<uint32_t>(j * 7 + 3) & mask;
    for (uint32_t b = 0; b < bits; ++b) {  // LSB-first stream, bit by bit
      const size_t bit = j * bits + b;
      t.zeros[bit / 8] = static_cast<uint8_t>(t.zeros[bit / 8] | ((field >> b) & 1u) << (bit % 8));
    }
  }
  return t;
}
template <uint32_t kBits>
constexpr GptqRegistryTables kGptqRegistryTables = MakeGptqRegistryTables(kBits);

template <uint32_t kBits>
gptq::LayerView GptqRegistryLayer(const void* qweight, size_t n_elems) {
  gptq::LayerView layer;
  layer.bits = kBits;
  layer.k = n_elems / kGptqRegistryN;
  layer.n = kGptqRegistryN;
  layer.groups = 1;
  layer.group_size = layer.k > 0 ? layer.k : 1;
  layer.zeros_plus_one = true;
  layer.scale_type = ElemType::kF16;
  layer.qweight = static_cast<const uint8_t*>(qweight);
  layer.qzeros = kGptqRegistryTables<kBits>.zeros.data();
  layer.scales = reinterpret_cast<const uint8_t*>(kGptqRegistryTables<kBits>.scales.data());
  return layer;
}

// All rows of the orientation: N of them for kOutIn, K for kInOut.
constexpr size_t GptqRegistryRows(WeightOrientation orientation, size_t n_elems) {
  return orientation == WeightOrientation::kOutIn ? kGptqRegistryN : n_elems / kGptqRegistryN;
}
template <uint32_t kBits, WeightOrientation kOrientation, typename TOut,
          void (*kRows)(const gptq::LayerView&, WeightOrientation, size_t, size_t, TOut*)>
void GptqThunk(const void* in, size_t n_elems, void* out) {
  (void)internal::PrepareDispatch();
  kRows(GptqRegistryLayer<kBits>(in, n_elems), kOrientation, 0,
        GptqRegistryRows(kOrientation, n_elems), static_cast<TOut*>(out));
}
template <uint32_t kBits, WeightOrientation kOrientation, ElemType kOut>
void GptqRefThunk(const void* in, size_t n_elems, void* out) {
  ref::DequantGptq(GptqRegistryLayer<kBits>(in, n_elems), kOrientation, 0,
                   GptqRegistryRows(kOrientation, n_elems), kOut, out);
}
template <uint32_t kBits, ElemType kOut,
          WeightOrientation kOrientation = WeightOrientation::kOutIn>
constexpr KernelInfo GptqEntry(std::string_view name) {
  constexpr WeightOrientation kO = kOrientation;
  RowFn run = nullptr;
  if constexpr (kOut == ElemType::kF32) {
    run = GptqThunk<kBits, kO, float, internal::DequantGptqToF32Rows>;
  } else if constexpr (kOut == ElemType::kBf16) {
    run = GptqThunk<kBits, kO, uint16_t, internal::DequantGptqToBf16Rows>;
  } else {
    run = GptqThunk<kBits, kO, uint16_t, internal::DequantGptqToF16Rows>;
  }
  return KernelInfo{name, "gptq", ElemType::kF16, kOut, run, GptqRefThunk<kBits, kO, kOut>,
                    GptqTarget, static_cast<uint32_t>(kBits * kGptqRegistryN * 4),
                    static_cast<uint32_t>(kGptqUnitRows * kGptqRegistryN)};
}

using E = ElemType;
using u8 = uint8_t;
using u16 = uint16_t;

constexpr std::array kKernels = {
    KernelInfo{"f32_to_bf16", "float_convert", E::kF32, E::kBf16,
               Thunk<float, u16, internal::F32ToBf16Rows>, RefThunk<float, u16, ref::ConvertF32ToBf16>,
               FloatConvertTarget},
    KernelInfo{"f32_to_f16", "float_convert", E::kF32, E::kF16,
               Thunk<float, u16, internal::F32ToF16Rows>, RefThunk<float, u16, ref::ConvertF32ToF16>,
               FloatConvertTarget},
    KernelInfo{"bf16_to_f32", "float_convert", E::kBf16, E::kF32,
               Thunk<u16, float, internal::Bf16ToF32Rows>, RefThunk<u16, float, ref::ConvertBf16ToF32>,
               FloatConvertTarget},
    KernelInfo{"f16_to_f32", "float_convert", E::kF16, E::kF32,
               Thunk<u16, float, internal::F16ToF32Rows>, RefThunk<u16, float, ref::ConvertF16ToF32>,
               FloatConvertTarget},
    KernelInfo{"f16_to_bf16", "float_convert", E::kF16, E::kBf16,
               Thunk<u16, u16, internal::F16ToBf16Rows>, RefThunk<u16, u16, ref::ConvertF16ToBf16>,
               FloatConvertTarget},
    KernelInfo{"bf16_to_f16", "float_convert", E::kBf16, E::kF16,
               Thunk<u16, u16, internal::Bf16ToF16Rows>, RefThunk<u16, u16, ref::ConvertBf16ToF16>,
               FloatConvertTarget},
    KernelInfo{"e4m3_to_f32", "fp8_convert", E::kF8E4m3, E::kF32,
               Thunk<u8, float, internal::E4m3ToF32Rows>, RefThunk<u8, float, ref::ConvertE4m3ToF32>,
               Fp8ConvertTarget},
    KernelInfo{"e4m3_to_bf16", "fp8_convert", E::kF8E4m3, E::kBf16,
               Thunk<u8, u16, internal::E4m3ToBf16Rows>, RefThunk<u8, u16, ref::ConvertE4m3ToBf16>,
               Fp8ConvertTarget},
    KernelInfo{"e4m3_to_f16", "fp8_convert", E::kF8E4m3, E::kF16,
               Thunk<u8, u16, internal::E4m3ToF16Rows>, RefThunk<u8, u16, ref::ConvertE4m3ToF16>,
               Fp8ConvertTarget},
    KernelInfo{"e5m2_to_f32", "fp8_convert", E::kF8E5m2, E::kF32,
               Thunk<u8, float, internal::E5m2ToF32Rows>, RefThunk<u8, float, ref::ConvertE5m2ToF32>,
               Fp8ConvertTarget},
    KernelInfo{"e5m2_to_bf16", "fp8_convert", E::kF8E5m2, E::kBf16,
               Thunk<u8, u16, internal::E5m2ToBf16Rows>, RefThunk<u8, u16, ref::ConvertE5m2ToBf16>,
               Fp8ConvertTarget},
    KernelInfo{"e5m2_to_f16", "fp8_convert", E::kF8E5m2, E::kF16,
               Thunk<u8, u16, internal::E5m2ToF16Rows>, RefThunk<u8, u16, ref::ConvertE5m2ToF16>,
               Fp8ConvertTarget},
    KernelInfo{"e4m3_scaled_to_f32", "fp8_dequant", E::kF8E4m3, E::kF32,
               ScaledThunk<float, internal::DequantE4m3ToF32Rows>,
               RunScaled<float, ref::DequantE4m3ToF32>, Fp8DequantTarget},
    KernelInfo{"e4m3_scaled_to_bf16", "fp8_dequant", E::kF8E4m3, E::kBf16,
               ScaledThunk<u16, internal::DequantE4m3ToBf16Rows>,
               RunScaled<u16, ref::DequantE4m3ToBf16>, Fp8DequantTarget},
    KernelInfo{"e4m3_scaled_to_f16", "fp8_dequant", E::kF8E4m3, E::kF16,
               ScaledThunk<u16, internal::DequantE4m3ToF16Rows>,
               RunScaled<u16, ref::DequantE4m3ToF16>, Fp8DequantTarget},
    KernelInfo{"e5m2_scaled_to_f32", "fp8_dequant", E::kF8E5m2, E::kF32,
               ScaledThunk<float, internal::DequantE5m2ToF32Rows>,
               RunScaled<float, ref::DequantE5m2ToF32>, Fp8DequantTarget},
    KernelInfo{"e5m2_scaled_to_bf16", "fp8_dequant", E::kF8E5m2, E::kBf16,
               ScaledThunk<u16, internal::DequantE5m2ToBf16Rows>,
               RunScaled<u16, ref::DequantE5m2ToBf16>, Fp8DequantTarget},
    KernelInfo{"e5m2_scaled_to_f16", "fp8_dequant", E::kF8E5m2, E::kF16,
               ScaledThunk<u16, internal::DequantE5m2ToF16Rows>,
               RunScaled<u16, ref::DequantE5m2ToF16>, Fp8DequantTarget},
    // ggml legacy blocks (in: the f16 scale type; the input is whole blocks).
    KernelInfo{"q4_0_to_bf16", "ggml_legacy", E::kF16, E::kBf16,
               BlockThunk<u16, internal::DequantQ4_0ToBf16Rows>,
               BlockRefThunk<GgmlType::kQ4_0, E::kBf16>, GgmlLegacyTarget,
               ggml::kQ4_0Bytes, ggml::kQK},
    KernelInfo{"q4_0_to_f16", "ggml_legacy", E::kF16, E::kF16,
               BlockThunk<u16, internal::DequantQ4_0ToF16Rows>,
               BlockRefThunk<GgmlType::kQ4_0, E::kF16>, GgmlLegacyTarget,
               ggml::kQ4_0Bytes, ggml::kQK},
    KernelInfo{"q4_0_to_f32", "ggml_legacy", E::kF16, E::kF32,
               BlockThunk<float, internal::DequantQ4_0ToF32Rows>,
               BlockRefThunk<GgmlType::kQ4_0, E::kF32>, GgmlLegacyTarget,
               ggml::kQ4_0Bytes, ggml::kQK},
    KernelInfo{"q4_1_to_bf16", "ggml_legacy", E::kF16, E::kBf16,
               BlockThunk<u16, internal::DequantQ4_1ToBf16Rows>,
               BlockRefThunk<GgmlType::kQ4_1, E::kBf16>, GgmlLegacyTarget,
               ggml::kQ4_1Bytes, ggml::kQK},
    KernelInfo{"q4_1_to_f16", "ggml_legacy", E::kF16, E::kF16,
               BlockThunk<u16, internal::DequantQ4_1ToF16Rows>,
               BlockRefThunk<GgmlType::kQ4_1, E::kF16>, GgmlLegacyTarget,
               ggml::kQ4_1Bytes, ggml::kQK},
    KernelInfo{"q4_1_to_f32", "ggml_legacy", E::kF16, E::kF32,
               BlockThunk<float, internal::DequantQ4_1ToF32Rows>,
               BlockRefThunk<GgmlType::kQ4_1, E::kF32>, GgmlLegacyTarget,
               ggml::kQ4_1Bytes, ggml::kQK},
    KernelInfo{"q5_0_to_bf16", "ggml_legacy", E::kF16, E::kBf16,
               BlockThunk<u16, internal::DequantQ5_0ToBf16Rows>,
               BlockRefThunk<GgmlType::kQ5_0, E::kBf16>, GgmlLegacyTarget,
               ggml::kQ5_0Bytes, ggml::kQK},
    KernelInfo{"q5_0_to_f16", "ggml_legacy", E::kF16, E::kF16,
               BlockThunk<u16, internal::DequantQ5_0ToF16Rows>,
               BlockRefThunk<GgmlType::kQ5_0, E::kF16>, GgmlLegacyTarget,
               ggml::kQ5_0Bytes, ggml::kQK},
    KernelInfo{"q5_0_to_f32", "ggml_legacy", E::kF16, E::kF32,
               BlockThunk<float, internal::DequantQ5_0ToF32Rows>,
               BlockRefThunk<GgmlType::kQ5_0, E::kF32>, GgmlLegacyTarget,
               ggml::kQ5_0Bytes, ggml::kQK},
    KernelInfo{"q5_1_to_bf16", "ggml_legacy", E::kF16, E::kBf16,
               BlockThunk<u16, internal::DequantQ5_1ToBf16Rows>,
               BlockRefThunk<GgmlType::kQ5_1, E::kBf16>, GgmlLegacyTarget,
               ggml::kQ5_1Bytes, ggml::kQK},
    KernelInfo{"q5_1_to_f16", "ggml_legacy", E::kF16, E::kF16,
               BlockThunk<u16, internal::DequantQ5_1ToF16Rows>,
               BlockRefThunk<GgmlType::kQ5_1, E::kF16>, GgmlLegacyTarget,
               ggml::kQ5_1Bytes, ggml::kQK},
    KernelInfo{"q5_1_to_f32", "ggml_legacy", E::kF16, E::kF32,
               BlockThunk<float, internal::DequantQ5_1ToF32Rows>,
               BlockRefThunk<GgmlType::kQ5_1, E::kF32>, GgmlLegacyTarget,
               ggml::kQ5_1Bytes, ggml::kQK},
    KernelInfo{"q8_0_to_bf16", "ggml_legacy", E::kF16, E::kBf16,
               BlockThunk<u16, internal::DequantQ8_0ToBf16Rows>,
               BlockRefThunk<GgmlType::kQ8_0, E::kBf16>, GgmlLegacyTarget,
               ggml::kQ8_0Bytes, ggml::kQK},
    KernelInfo{"q8_0_to_f16", "ggml_legacy", E::kF16, E::kF16,
               BlockThunk<u16, internal::DequantQ8_0ToF16Rows>,
               BlockRefThunk<GgmlType::kQ8_0, E::kF16>, GgmlLegacyTarget,
               ggml::kQ8_0Bytes, ggml::kQK},
    KernelInfo{"q8_0_to_f32", "ggml_legacy", E::kF16, E::kF32,
               BlockThunk<float, internal::DequantQ8_0ToF32Rows>,
               BlockRefThunk<GgmlType::kQ8_0, E::kF32>, GgmlLegacyTarget,
               ggml::kQ8_0Bytes, ggml::kQK},
    KernelInfo{"q8_1_to_bf16", "ggml_legacy", E::kF16, E::kBf16,
               BlockThunk<u16, internal::DequantQ8_1ToBf16Rows>,
               BlockRefThunk<GgmlType::kQ8_1, E::kBf16>, GgmlLegacyTarget,
               ggml::kQ8_1Bytes, ggml::kQK},
    KernelInfo{"q8_1_to_f16", "ggml_legacy", E::kF16, E::kF16,
               BlockThunk<u16, internal::DequantQ8_1ToF16Rows>,
               BlockRefThunk<GgmlType::kQ8_1, E::kF16>, GgmlLegacyTarget,
               ggml::kQ8_1Bytes, ggml::kQK},
    KernelInfo{"q8_1_to_f32", "ggml_legacy", E::kF16, E::kF32,
               BlockThunk<float, internal::DequantQ8_1ToF32Rows>,
               BlockRefThunk<GgmlType::kQ8_1, E::kF32>, GgmlLegacyTarget,
               ggml::kQ8_1Bytes, ggml::kQK},
    KernelInfo{"iq4_nl_to_bf16", "ggml_legacy", E::kF16, E::kBf16,
               BlockThunk<u16, internal::DequantIq4NlToBf16Rows>,
               BlockRefThunk<GgmlType::kIQ4_NL, E::kBf16>, GgmlLegacyTarget,
               ggml::kIq4NlBytes, ggml::kQK},
    KernelInfo{"iq4_nl_to_f16", "ggml_legacy", E::kF16, E::kF16,
               BlockThunk<u16, internal::DequantIq4NlToF16Rows>,
               BlockRefThunk<GgmlType::kIQ4_NL, E::kF16>, GgmlLegacyTarget,
               ggml::kIq4NlBytes, ggml::kQK},
    KernelInfo{"iq4_nl_to_f32", "ggml_legacy", E::kF16, E::kF32,
               BlockThunk<float, internal::DequantIq4NlToF32Rows>,
               BlockRefThunk<GgmlType::kIQ4_NL, E::kF32>, GgmlLegacyTarget,
               ggml::kIq4NlBytes, ggml::kQK},
    KernelInfo{"mxfp4_to_bf16", "ggml_legacy", E::kF16, E::kBf16,
               BlockThunk<u16, internal::DequantMxfp4ToBf16Rows>,
               BlockRefThunk<GgmlType::kMXFP4, E::kBf16>, GgmlLegacyTarget,
               ggml::kMxfp4Bytes, ggml::kQK},
    KernelInfo{"mxfp4_to_f16", "ggml_legacy", E::kF16, E::kF16,
               BlockThunk<u16, internal::DequantMxfp4ToF16Rows>,
               BlockRefThunk<GgmlType::kMXFP4, E::kF16>, GgmlLegacyTarget,
               ggml::kMxfp4Bytes, ggml::kQK},
    KernelInfo{"mxfp4_to_f32", "ggml_legacy", E::kF16, E::kF32,
               BlockThunk<float, internal::DequantMxfp4ToF32Rows>,
               BlockRefThunk<GgmlType::kMXFP4, E::kF32>, GgmlLegacyTarget,
               ggml::kMxfp4Bytes, ggml::kQK},
    // ggml K-quant super-blocks (256 elements).
    KQuantEntry<GgmlType::kQ2_K, E::kBf16>("q2_k_to_bf16", kq::q2k::kBytes),
    KQuantEntry<GgmlType::kQ2_K, E::kF16>("q2_k_to_f16", kq::q2k::kBytes),
    KQuantEntry<GgmlType::kQ2_K, E::kF32>("q2_k_to_f32", kq::q2k::kBytes),
    KQuantEntry<GgmlType::kQ3_K, E::kBf16>("q3_k_to_bf16", kq::q3k::kBytes),
    KQuantEntry<GgmlType::kQ3_K, E::kF16>("q3_k_to_f16", kq::q3k::kBytes),
    KQuantEntry<GgmlType::kQ3_K, E::kF32>("q3_k_to_f32", kq::q3k::kBytes),
    KQuantEntry<GgmlType::kQ4_K, E::kBf16>("q4_k_to_bf16", kq::q4k::kBytes),
    KQuantEntry<GgmlType::kQ4_K, E::kF16>("q4_k_to_f16", kq::q4k::kBytes),
    KQuantEntry<GgmlType::kQ4_K, E::kF32>("q4_k_to_f32", kq::q4k::kBytes),
    KQuantEntry<GgmlType::kQ5_K, E::kBf16>("q5_k_to_bf16", kq::q5k::kBytes),
    KQuantEntry<GgmlType::kQ5_K, E::kF16>("q5_k_to_f16", kq::q5k::kBytes),
    KQuantEntry<GgmlType::kQ5_K, E::kF32>("q5_k_to_f32", kq::q5k::kBytes),
    KQuantEntry<GgmlType::kQ6_K, E::kBf16>("q6_k_to_bf16", kq::q6k::kBytes),
    KQuantEntry<GgmlType::kQ6_K, E::kF16>("q6_k_to_f16", kq::q6k::kBytes),
    KQuantEntry<GgmlType::kQ6_K, E::kF32>("q6_k_to_f32", kq::q6k::kBytes),
    KQuantEntry<GgmlType::kQ8_K, E::kBf16>("q8_k_to_bf16", kq::q8k::kBytes),
    KQuantEntry<GgmlType::kQ8_K, E::kF16>("q8_k_to_f16", kq::q8k::kBytes),
    KQuantEntry<GgmlType::kQ8_K, E::kF32>("q8_k_to_f32", kq::q8k::kBytes),
    KQuantEntry<GgmlType::kIQ4_XS, E::kBf16>("iq4_xs_to_bf16", kq::iq4xs::kBytes),
    KQuantEntry<GgmlType::kIQ4_XS, E::kF16>("iq4_xs_to_f16", kq::iq4xs::kBytes),
    KQuantEntry<GgmlType::kIQ4_XS, E::kF32>("iq4_xs_to_f32", kq::iq4xs::kBytes),
    KQuantEntry<GgmlType::kTQ1_0, E::kBf16>("tq1_0_to_bf16", kq::tq1::kBytes),
    KQuantEntry<GgmlType::kTQ1_0, E::kF16>("tq1_0_to_f16", kq::tq1::kBytes),
    KQuantEntry<GgmlType::kTQ1_0, E::kF32>("tq1_0_to_f32", kq::tq1::kBytes),
    KQuantEntry<GgmlType::kTQ2_0, E::kBf16>("tq2_0_to_bf16", kq::tq2::kBytes),
    KQuantEntry<GgmlType::kTQ2_0, E::kF16>("tq2_0_to_f16", kq::tq2::kBytes),
    KQuantEntry<GgmlType::kTQ2_0, E::kF32>("tq2_0_to_f32", kq::tq2::kBytes),
    // ggml I-quant super-blocks (256 elements, lattice codebooks).
    IQuantEntry<GgmlType::kIQ2_XXS, E::kBf16>("iq2_xxs_to_bf16", iq::iq2xxs::kBytes),
    IQuantEntry<GgmlType::kIQ2_XXS, E::kF16>("iq2_xxs_to_f16", iq::iq2xxs::kBytes),
    IQuantEntry<GgmlType::kIQ2_XXS, E::kF32>("iq2_xxs_to_f32", iq::iq2xxs::kBytes),
    IQuantEntry<GgmlType::kIQ2_XS, E::kBf16>("iq2_xs_to_bf16", iq::iq2xs::kBytes),
    IQuantEntry<GgmlType::kIQ2_XS, E::kF16>("iq2_xs_to_f16", iq::iq2xs::kBytes),
    IQuantEntry<GgmlType::kIQ2_XS, E::kF32>("iq2_xs_to_f32", iq::iq2xs::kBytes),
    IQuantEntry<GgmlType::kIQ2_S, E::kBf16>("iq2_s_to_bf16", iq::iq2s::kBytes),
    IQuantEntry<GgmlType::kIQ2_S, E::kF16>("iq2_s_to_f16", iq::iq2s::kBytes),
    IQuantEntry<GgmlType::kIQ2_S, E::kF32>("iq2_s_to_f32", iq::iq2s::kBytes),
    IQuantEntry<GgmlType::kIQ3_XXS, E::kBf16>("iq3_xxs_to_bf16", iq::iq3xxs::kBytes),
    IQuantEntry<GgmlType::kIQ3_XXS, E::kF16>("iq3_xxs_to_f16", iq::iq3xxs::kBytes),
    IQuantEntry<GgmlType::kIQ3_XXS, E::kF32>("iq3_xxs_to_f32", iq::iq3xxs::kBytes),
    IQuantEntry<GgmlType::kIQ3_S, E::kBf16>("iq3_s_to_bf16", iq::iq3s::kBytes),
    IQuantEntry<GgmlType::kIQ3_S, E::kF16>("iq3_s_to_f16", iq::iq3s::kBytes),
    IQuantEntry<GgmlType::kIQ3_S, E::kF32>("iq3_s_to_f32", iq::iq3s::kBytes),
    IQuantEntry<GgmlType::kIQ1_S, E::kBf16>("iq1_s_to_bf16", iq::iq1s::kBytes),
    IQuantEntry<GgmlType::kIQ1_S, E::kF16>("iq1_s_to_f16", iq::iq1s::kBytes),
    IQuantEntry<GgmlType::kIQ1_S, E::kF32>("iq1_s_to_f32", iq::iq1s::kBytes),
    IQuantEntry<GgmlType::kIQ1_M, E::kBf16>("iq1_m_to_bf16", iq::iq1m::kBytes),
    IQuantEntry<GgmlType::kIQ1_M, E::kF16>("iq1_m_to_f16", iq::iq1m::kBytes),
    IQuantEntry<GgmlType::kIQ1_M, E::kF32>("iq1_m_to_f32", iq::iq1m::kBytes),
    // GPTQ (the input is qweight; output rows are out_features).
    GptqEntry<4, E::kBf16>("gptq4_to_bf16"),
    GptqEntry<4, E::kF16>("gptq4_to_f16"),
    GptqEntry<4, E::kF32>("gptq4_to_f32"),
    GptqEntry<2, E::kBf16>("gptq2_to_bf16"),
    GptqEntry<2, E::kF16>("gptq2_to_f16"),
    GptqEntry<2, E::kF32>("gptq2_to_f32"),
    GptqEntry<3, E::kBf16>("gptq3_to_bf16"),
    GptqEntry<3, E::kF16>("gptq3_to_f16"),
    GptqEntry<3, E::kF32>("gptq3_to_f32"),
    GptqEntry<8, E::kBf16>("gptq8_to_bf16"),
    GptqEntry<8, E::kF16>("gptq8_to_f16"),
    GptqEntry<8, E::kF32>("gptq8_to_f32"),
    GptqEntry<4, E::kBf16, WeightOrientation::kInOut>("gptq4_inout_to_bf16"),
};

}  // namespace

std::string_view ElemTypeName(ElemType type) {
  switch (type) {
    case E::kF32: return "f32";
    case E::kF16: return "f16";
    case E::kBf16: return "bf16";
    case E::kF8E4m3: return "e4m3";
    case E::kF8E5m2: return "e5m2";
  }
  return "unknown";
}

size_t ElemTypeBytes(ElemType type) {
  switch (type) {
    case E::kF32: return 4;
    case E::kF16:
    case E::kBf16: return 2;
    case E::kF8E4m3:
    case E::kF8E5m2: return 1;
  }
  return 0;
}

std::span<const KernelInfo> Kernels() { return kKernels; }

}  // namespace amn
