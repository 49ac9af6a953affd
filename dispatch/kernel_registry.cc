// The kernel table: one entry per kernel, with thunks from raw bytes to the
// typed unchecked rows (no function-pointer casts).
#include "amn/kernel_registry.h"

#include <array>
#include <type_traits>

#include "amn/awq_dequant.h"
#include "amn/convert.h"
#include "amn/fp8_dequant.h"
#include "amn/ggml_dequant.h"
#include "amn/packed_int_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/ggml_families.h"
#include "dispatch/kernel_rows.h"
#include "kernels/ggml_blocks.h"
#include "kernels/ggml_iq_blocks.h"
#include "kernels/ggml_kquant_blocks.h"
#include "kernels/ref/awq_ref.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/fp8_dequant_ref.h"
#include "kernels/ref/fp8_ref.h"
#include "kernels/ref/ggml_iquant_ref.h"
#include "kernels/ref/ggml_kquant_ref.h"
#include "kernels/ref/ggml_legacy_ref.h"
#include "kernels/ref/packed_int_ref.h"

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

// Packed-integer linear layers (AWQ, compressed-tensors pack-quantized):
// the input is whole rows of packed codes (block_elems outputs per input
// row), every other tensor is static here, so any input bytes are valid.

// AWQ: a layer with N = kAwqBenchN outputs and K = n_elems / N input rows in
// one group, dequantized in the nn.Linear [N, K] orientation (what `amn
// remember` writes: output row j reads one nibble of every input row;
// "awq4_to_*") or the GEMM-native [K, N] one ("awq4_inout_to_*").
constexpr size_t kAwqBenchN = 512;
// F16 scales 2^-6 .. 2^-2 with varied mantissas, some negative.
constexpr std::array<uint8_t, 2 * kAwqBenchN> kAwqBenchScales = [] {
  std::array<uint8_t, 2 * kAwqBenchN> bytes{};
  for (size_t j = 0; j < kAwqBenchN; ++j) {
    const uint32_t bits = static_cast<uint32_t>((((j * 7) % 5 + 9) << 10) | ((j * 97) % 1024) |
                                                (j % 3 == 0 ? 0x8000u : 0u));
    bytes[2 * j] = static_cast<uint8_t>(bits);
    bytes[2 * j + 1] = static_cast<uint8_t>(bits >> 8);
  }
  return bytes;
}();
constexpr std::array<uint8_t, kAwqBenchN / 2> kAwqBenchZeros = [] {
  std::array<uint8_t, kAwqBenchN / 2> bytes{};
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(0x78 + (i * 37) % 17);
  return bytes;
}();

ref::AwqMatrix AwqBenchMatrix(const void* in, size_t n_elems) {
  const size_t k = n_elems / kAwqBenchN;
  return ref::AwqMatrix{static_cast<const uint8_t*>(in), kAwqBenchZeros.data(),
                        kAwqBenchScales.data(), ElemType::kF16, k, kAwqBenchN, k == 0 ? 1 : k};
}

// kOutIn (rows = the N output features), or with kInOut the GEMM-native
// [K, N] (rows = the K input features).
template <typename TOut, void (*kRows)(const ref::AwqMatrix&, bool, size_t, size_t, TOut*),
          bool kOutIn = true>
void AwqThunk(const void* in, size_t n_elems, void* out) {
  (void)internal::PrepareDispatch();
  if (n_elems < kAwqBenchN) return;
  const size_t rows = kOutIn ? kAwqBenchN : n_elems / kAwqBenchN;
  kRows(AwqBenchMatrix(in, n_elems), kOutIn, 0, rows, static_cast<TOut*>(out));
}
template <ElemType kOut, bool kOutIn = true>
void AwqRefThunk(const void* in, size_t n_elems, void* out) {
  if (n_elems < kAwqBenchN) return;
  const size_t rows = kOutIn ? kAwqBenchN : n_elems / kAwqBenchN;
  ref::DequantAwqRows(AwqBenchMatrix(in, n_elems), kOutIn, 0, rows, kOut, out);
}

// compressed-tensors: rows of kCtBenchCols columns, BF16 scales cycling
// every 8 rows. int4: asymmetric, group 128 (packed zero points for 8 rows
// per word); int8: symmetric, per channel. Run 8 rows per call.
constexpr size_t kCtBenchCols = 512;
constexpr size_t kCtBenchRows = 8;
constexpr size_t kCtInt4Groups = kCtBenchCols / 128;
constexpr std::array<uint8_t, 2 * kCtBenchRows * kCtInt4Groups> kCtBenchScales = [] {
  std::array<uint8_t, 2 * kCtBenchRows * kCtInt4Groups> bytes{};
  for (size_t i = 0; i < kCtBenchRows * kCtInt4Groups; ++i) {
    // BF16 2^-9 .. 2^-5, varied mantissas, every third negative.
    const uint32_t bits = static_cast<uint32_t>(((118 + i % 5) << 7) | ((i * 41) % 128) |
                                                (i % 3 == 0 ? 0x8000u : 0u));
    bytes[2 * i] = static_cast<uint8_t>(bits);
    bytes[2 * i + 1] = static_cast<uint8_t>(bits >> 8);
  }
  return bytes;
}();
// int4 zero points [1][groups]: word g holds row r's zero in nibble r.
constexpr std::array<uint8_t, 4 * kCtInt4Groups> kCtBenchZeros = [] {
  std::array<uint8_t, 4 * kCtInt4Groups> bytes{};
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(0x97 + i * 29);
  return bytes;
}();

template <uint32_t kBits>
ref::PackedIntMatrix CtBenchMatrix(const uint8_t* rows_in, size_t rows) {
  ref::PackedIntMatrix m;
  m.weight_packed = rows_in;
  m.scales = kCtBenchScales.data();
  m.zero_points = kBits == 4 ? kCtBenchZeros.data() : nullptr;
  m.scale_type = ElemType::kBf16;
  m.rows = rows;
  m.cols = kCtBenchCols;
  m.group_size = kBits == 4 ? 128 : kCtBenchCols;
  m.bits = kBits;
  return m;
}

// Calls run(matrix, rows, out) for each run of up to 8 rows.
template <uint32_t kBits, typename TOut, class Run>
void ForCtBenchRows(const void* in, size_t n_elems, void* out, const Run& run) {
  const auto* bytes = static_cast<const uint8_t*>(in);
  auto* values = static_cast<TOut*>(out);
  const size_t rows = n_elems / kCtBenchCols;
  constexpr size_t kRowBytes = kCtBenchCols * kBits / 8;
  for (size_t r = 0; r < rows; r += kCtBenchRows) {
    const size_t count = rows - r < kCtBenchRows ? rows - r : kCtBenchRows;
    run(CtBenchMatrix<kBits>(bytes + r * kRowBytes, count), count,
        values + r * kCtBenchCols);
  }
}

template <uint32_t kBits, typename TOut,
          void (*kRows)(const ref::PackedIntMatrix&, size_t, size_t, TOut*)>
void CtThunk(const void* in, size_t n_elems, void* out) {
  (void)internal::PrepareDispatch();
  ForCtBenchRows<kBits, TOut>(in, n_elems, out,
                              [](const ref::PackedIntMatrix& m, size_t rows, TOut* values) {
                                kRows(m, 0, rows, values);
                              });
}
template <uint32_t kBits, ElemType kOut>
void CtRefThunk(const void* in, size_t n_elems, void* out) {
  using TOut = std::conditional_t<kOut == ElemType::kF32, float, uint16_t>;
  ForCtBenchRows<kBits, TOut>(in, n_elems, out,
                              [](const ref::PackedIntMatrix& m, size_t rows, TOut* values) {
                                ref::DequantPackedIntRows(m, 0, rows, kOut, values);
                              });
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
    // Packed-integer linear layers (in: the scale type; the input is whole
    // rows of packed codes).
    KernelInfo{"awq4_to_bf16", "awq", E::kF16, E::kBf16,
               AwqThunk<u16, internal::DequantAwqToBf16Rows>, AwqRefThunk<E::kBf16>, AwqTarget,
               kAwqBenchN / 2, kAwqBenchN},
    KernelInfo{"awq4_to_f16", "awq", E::kF16, E::kF16,
               AwqThunk<u16, internal::DequantAwqToF16Rows>, AwqRefThunk<E::kF16>, AwqTarget,
               kAwqBenchN / 2, kAwqBenchN},
    KernelInfo{"awq4_to_f32", "awq", E::kF16, E::kF32,
               AwqThunk<float, internal::DequantAwqToF32Rows>, AwqRefThunk<E::kF32>, AwqTarget,
               kAwqBenchN / 2, kAwqBenchN},
    KernelInfo{"awq4_inout_to_bf16", "awq", E::kF16, E::kBf16,
               AwqThunk<u16, internal::DequantAwqToBf16Rows, false>, AwqRefThunk<E::kBf16, false>,
               AwqTarget, kAwqBenchN / 2, kAwqBenchN},
    KernelInfo{"awq4_inout_to_f16", "awq", E::kF16, E::kF16,
               AwqThunk<u16, internal::DequantAwqToF16Rows, false>, AwqRefThunk<E::kF16, false>,
               AwqTarget, kAwqBenchN / 2, kAwqBenchN},
    KernelInfo{"awq4_inout_to_f32", "awq", E::kF16, E::kF32,
               AwqThunk<float, internal::DequantAwqToF32Rows, false>, AwqRefThunk<E::kF32, false>,
               AwqTarget, kAwqBenchN / 2, kAwqBenchN},
    KernelInfo{"ct_int4_to_bf16", "packed_int", E::kBf16, E::kBf16,
               CtThunk<4, u16, internal::DequantPackedIntToBf16Rows>, CtRefThunk<4, E::kBf16>,
               PackedIntTarget, kCtBenchCols / 2, kCtBenchCols},
    KernelInfo{"ct_int4_to_f16", "packed_int", E::kBf16, E::kF16,
               CtThunk<4, u16, internal::DequantPackedIntToF16Rows>, CtRefThunk<4, E::kF16>,
               PackedIntTarget, kCtBenchCols / 2, kCtBenchCols},
    KernelInfo{"ct_int4_to_f32", "packed_int", E::kBf16, E::kF32,
               CtThunk<4, float, internal::DequantPackedIntToF32Rows>, CtRefThunk<4, E::kF32>,
               PackedIntTarget, kCtBenchCols / 2, kCtBenchCols},
    KernelInfo{"ct_int8_to_bf16", "packed_int", E::kBf16, E::kBf16,
               CtThunk<8, u16, internal::DequantPackedIntToBf16Rows>, CtRefThunk<8, E::kBf16>,
               PackedIntTarget, kCtBenchCols, kCtBenchCols},
    KernelInfo{"ct_int8_to_f16", "packed_int", E::kBf16, E::kF16,
               CtThunk<8, u16, internal::DequantPackedIntToF16Rows>, CtRefThunk<8, E::kF16>,
               PackedIntTarget, kCtBenchCols, kCtBenchCols},
    KernelInfo{"ct_int8_to_f32", "packed_int", E::kBf16, E::kF32,
               CtThunk<8, float, internal::DequantPackedIntToF32Rows>, CtRefThunk<8, E::kF32>,
               PackedIntTarget, kCtBenchCols, kCtBenchCols},
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
