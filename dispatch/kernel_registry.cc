// The kernel table: one entry per kernel, with thunks from raw bytes to the
// typed unchecked rows (no function-pointer casts).
#include "amn/kernel_registry.h"

#include <algorithm>
#include <array>
#include <bit>
#include <type_traits>

#include "amn/awq_dequant.h"
#include "amn/bnb_dequant.h"
#include "amn/convert.h"
#include "amn/fp4_dequant.h"
#include "amn/fp8_dequant.h"
#include "amn/ggml_dequant.h"
#include "amn/gptq_dequant.h"
#include "amn/packed_int_dequant.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/ggml_families.h"
#include "dispatch/kernel_rows.h"
#include "kernels/bnb_layout.h"
#include "kernels/ggml_blocks.h"
#include "kernels/ggml_iq_blocks.h"
#include "kernels/ggml_kquant_blocks.h"
#include "kernels/gptq_layout.h"
#include "kernels/ref/awq_ref.h"
#include "kernels/ref/bnb_ref.h"
#include "kernels/ref/float_convert_ref.h"
#include "kernels/ref/fp4_ref.h"
#include "kernels/ref/fp8_dequant_ref.h"
#include "kernels/ref/fp8_ref.h"
#include "kernels/ref/ggml_iquant_ref.h"
#include "kernels/ref/ggml_kquant_ref.h"
#include "kernels/ref/ggml_legacy_ref.h"
#include "kernels/ref/gptq_ref.h"
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

// FP4 entries: the input bytes are the packed E2M1 codes; the group scales
// come from static tables in the order of a real tensor, so bench and the
// fuzzer run the real layouts.
//   nvfp4_to_*: rows of kNvfp4BenchCols elements (16-element groups, 8 code
//     bytes each) with E4M3 scales kNvfp4BenchScales()[row % 64][group] and
//     global scale kNvfp4BenchGlobal; a last shorter row takes the rest.
//   mxfp4_st_to_*: transformers' transposed gpt-oss layout, as "experts" of
//     kMxfp4BenchRows rows (fewer only for the last few groups) x up to
//     kMxfp4BenchGroups groups (gpt-oss: 2880 = 90 * 32), each written as
//     its [groups*32][rows] transpose; E8M0 scales kMxfp4BenchScales().
// Scales are mostly ordinary (finite, positive); a few per table are the
// edge classes (zero, subnormal, 448; E8M0 0, 254, 255) so the NaN/Inf
// paths are covered too.
constexpr size_t kNvfp4BenchCols = 1024;
constexpr size_t kNvfp4BenchRowGroups = kNvfp4BenchCols / ref::kNvfp4GroupElems;
constexpr size_t kNvfp4BenchRows = 64;
constexpr float kNvfp4BenchGlobal = 1234.5f;
constexpr size_t kMxfp4BenchGroups = 90;
constexpr size_t kMxfp4BenchRows = 256;

template <size_t kN, uint8_t (*kCode)(size_t)>
const std::array<uint8_t, kN>& BenchScaleTable() {
  static const std::array<uint8_t, kN> table = [] {
    std::array<uint8_t, kN> t{};
    for (size_t i = 0; i < kN; ++i) t[i] = kCode(i);
    return t;
  }();
  return table;
}
uint8_t Nvfp4BenchScale(size_t i) {
  switch (i % 997) {
    case 0: return 0x00;  // zero
    case 1: return 0x03;  // subnormal
    case 2: return 0x7E;  // 448
    default: return static_cast<uint8_t>(0x20 + (i * 5) % 0x58);
  }
}
uint8_t Mxfp4BenchScale(size_t i) {
  switch (i % 1999) {
    case 0: return 0;
    case 1: return 254;
    case 2: return 255;  // 2^128 = Inf
    default: return static_cast<uint8_t>(112 + (i * 7) % 24);
  }
}
const auto& kNvfp4BenchScales = BenchScaleTable<kNvfp4BenchRows * kNvfp4BenchRowGroups,
                                                Nvfp4BenchScale>;
const auto& kMxfp4BenchScales = BenchScaleTable<kMxfp4BenchRows * kMxfp4BenchGroups,
                                                Mxfp4BenchScale>;

template <typename TOut, void (*kRows)(const uint8_t*, const uint8_t*, float, size_t, size_t, TOut*)>
void RunNvfp4(const void* in, size_t n_elems, void* out) {
  const auto* codes = static_cast<const uint8_t*>(in);
  auto* values = static_cast<TOut*>(out);
  const uint8_t* scales = kNvfp4BenchScales().data();
  size_t done = 0;
  while (done < n_elems) {
    const size_t rows = std::min(kNvfp4BenchRows, (n_elems - done) / kNvfp4BenchCols);
    const size_t cols = rows > 0 ? kNvfp4BenchCols : n_elems - done;
    const size_t n_rows = rows > 0 ? rows : 1;
    kRows(codes + done / 2, scales, kNvfp4BenchGlobal, n_rows, cols, values + done);
    done += n_rows * cols;
  }
}
template <typename TOut, void (*kRows)(const uint8_t*, const uint8_t*, float, size_t, size_t, TOut*)>
void Nvfp4Thunk(const void* in, size_t n_elems, void* out) {
  (void)internal::PrepareDispatch();
  RunNvfp4<TOut, kRows>(in, n_elems, out);
}

template <typename TOut, void (*kRows)(const uint8_t*, const uint8_t*, size_t, size_t, size_t,
                                       size_t, TOut*)>
void RunMxfp4St(const void* in, size_t n_elems, void* out) {
  const auto* blocks = static_cast<const uint8_t*>(in);
  auto* values = static_cast<TOut*>(out);
  const uint8_t* scales = kMxfp4BenchScales().data();
  size_t n_groups = n_elems / ref::kMxfp4GroupElems;
  while (n_groups > 0) {
    const size_t rows = std::min(kMxfp4BenchRows, n_groups);
    const size_t groups = std::min(kMxfp4BenchGroups, n_groups / rows);
    kRows(blocks, scales, rows, groups, 0, groups * ref::kMxfp4GroupElems, values);
    blocks += rows * groups * ref::kMxfp4GroupBytes;
    values += rows * groups * ref::kMxfp4GroupElems;
    n_groups -= rows * groups;
  }
}
template <typename TOut, void (*kRows)(const uint8_t*, const uint8_t*, size_t, size_t, size_t,
                                       size_t, TOut*)>
void Mxfp4StThunk(const void* in, size_t n_elems, void* out) {
  (void)internal::PrepareDispatch();
  RunMxfp4St<TOut, kRows>(in, n_elems, out);
}

// bitsandbytes 4-bit entries ("nf4_to_bf16", ...): the input is the packed
// codes of a synthetic tensor in 64-element blocks (32 bytes per block, any
// bytes valid). Its absmax and codebooks are static tables: the tensor is
// run in pieces of kBnbPieceBlocks blocks that all reuse them, which is the
// same computation per piece. Plain absmax cycles through kBnbAbsmax (exact,
// inexact, tiny, large, negative and zero scales); double quant uses u8
// codes (b * 37 + 11) mod 256 into a 256-entry nested codebook, two nested
// blocks of 256 and a non-zero offset, as a real double-quant state has.
constexpr size_t kBnbBlock = 64;
constexpr size_t kBnbPieceBlocks = 512;
constexpr std::array<float, 8> kBnbAbsmax = {0.0421f, 1.0f, 0.5f,     3.0e-3f,
                                             0x1p-20f, 7.5f, -0.125f, 0.0f};

template <size_t kFloats>
constexpr std::array<uint8_t, 4 * kFloats> LeBytes(const std::array<float, kFloats>& values) {
  std::array<uint8_t, 4 * kFloats> bytes{};
  for (size_t i = 0; i < kFloats; ++i) {
    const uint32_t bits = std::bit_cast<uint32_t>(values[i]);
    for (size_t b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<uint8_t>(bits >> (8 * b));
  }
  return bytes;
}
constexpr std::array<float, kBnbPieceBlocks> BnbPlainAbsmax() {
  std::array<float, kBnbPieceBlocks> values{};
  for (size_t i = 0; i < values.size(); ++i) values[i] = kBnbAbsmax[i % kBnbAbsmax.size()];
  return values;
}
constexpr std::array<uint8_t, kBnbPieceBlocks> BnbDqCodes() {
  std::array<uint8_t, kBnbPieceBlocks> codes{};
  for (size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<uint8_t>(i * 37 + 11);
  return codes;
}
// A signed nested codebook spread over [-1, 1] (its exact values do not
// matter, only that the kernels and the reference read the same table).
constexpr std::array<float, bnb::kNestedCodebookSize> BnbNestedCodebook() {
  std::array<float, bnb::kNestedCodebookSize> values{};
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = (static_cast<float>(i) - 127.5f) / 127.5f;
  }
  return values;
}
constexpr auto kBnbPlainAbsmaxBytes = LeBytes(BnbPlainAbsmax());
constexpr auto kBnbDqCodes = BnbDqCodes();
constexpr auto kBnbNestedAbsmaxBytes = LeBytes(std::array<float, 2>{0.0137f, 0.0625f});
constexpr auto kBnbNestedCodebookBytes = LeBytes(BnbNestedCodebook());
constexpr auto kNf4Bytes = LeBytes(bnb::kNf4Codebook);
constexpr auto kFp4Bytes = LeBytes(bnb::kFp4Codebook);

enum class BnbKind { kNf4, kFp4, kNf4Dq };

template <BnbKind kKind>
bnb::Bnb4View BnbSyntheticView(const uint8_t* packed) {
  bnb::Bnb4View view;
  view.packed = packed;
  view.quant_map = kKind == BnbKind::kFp4 ? kFp4Bytes.data() : kNf4Bytes.data();
  view.block_size = kBnbBlock;
  if constexpr (kKind == BnbKind::kNf4Dq) {
    view.double_quant = true;
    view.absmax = kBnbDqCodes.data();
    view.nested_absmax = kBnbNestedAbsmaxBytes.data();
    view.nested_quant_map = kBnbNestedCodebookBytes.data();
    view.nested_block_size = 256;
    view.nested_offset_bits = std::bit_cast<uint32_t>(0.0305f);
  } else {
    view.absmax = kBnbPlainAbsmaxBytes.data();
  }
  return view;
}

template <BnbKind kKind, typename TOut,
          void (*kRows)(const bnb::Bnb4View&, size_t, size_t, TOut*)>
void RunBnb4(const void* in, size_t n_elems, void* out) {
  const auto* packed = static_cast<const uint8_t*>(in);
  auto* values = static_cast<TOut*>(out);
  constexpr size_t kPiece = kBnbPieceBlocks * kBnbBlock;
  for (size_t done = 0; done < n_elems; done += kPiece) {
    const size_t n = n_elems - done < kPiece ? n_elems - done : kPiece;
    kRows(BnbSyntheticView<kKind>(packed + done / 2), 0, n, values + done);
  }
}
template <BnbKind kKind, typename TOut,
          void (*kRows)(const bnb::Bnb4View&, size_t, size_t, TOut*)>
void Bnb4Thunk(const void* in, size_t n_elems, void* out) {
  (void)internal::PrepareDispatch();
  RunBnb4<kKind, TOut, kRows>(in, n_elems, out);
}

// LLM.int8() entries ("int8_rowwise_to_bf16", ...): the input is int8
// weights, run as rows of kBnbInt8Cols (plus a remainder row) whose SCB
// cycles through kBnbScb (typical, tiny, large, zero).
constexpr size_t kBnbInt8Cols = 1024;
constexpr auto kBnbScbBytes =
    LeBytes(std::array<float, 8>{0.0734f, 1.25f, 127.0f, 3.0e-3f, 0.0f, 0.5f, 40.0f, 1e-20f});

template <typename TOut,
          void (*kRows)(const uint8_t*, const uint8_t*, size_t, size_t, TOut*)>
void RunBnbInt8(const void* in, size_t n_elems, void* out) {
  const auto* weight = static_cast<const uint8_t*>(in);
  auto* values = static_cast<TOut*>(out);
  constexpr size_t kRowsPerCall = kBnbScbBytes.size() / 4;
  constexpr size_t kCallElems = kRowsPerCall * kBnbInt8Cols;
  size_t done = 0;
  for (; done + kCallElems <= n_elems; done += kCallElems) {
    kRows(weight + done, kBnbScbBytes.data(), kRowsPerCall, kBnbInt8Cols, values + done);
  }
  const size_t rest_rows = (n_elems - done) / kBnbInt8Cols;
  if (rest_rows > 0) {
    kRows(weight + done, kBnbScbBytes.data(), rest_rows, kBnbInt8Cols, values + done);
    done += rest_rows * kBnbInt8Cols;
  }
  if (done < n_elems) {
    kRows(weight + done, kBnbScbBytes.data(), 1, n_elems - done, values + done);
  }
}
template <typename TOut,
          void (*kRows)(const uint8_t*, const uint8_t*, size_t, size_t, TOut*)>
void BnbInt8Thunk(const void* in, size_t n_elems, void* out) {
  (void)internal::PrepareDispatch();
  RunBnbInt8<TOut, kRows>(in, n_elems, out);
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
    // NVFP4 (in: the E4M3 scale type) and gpt-oss MXFP4 (in: F32, the type
    // an E8M0 scale decodes to exactly); the input is whole groups of codes.
    KernelInfo{"nvfp4_to_bf16", "fp4", E::kF8E4m3, E::kBf16,
               Nvfp4Thunk<u16, internal::DequantNvfp4ToBf16Rows>,
               RunNvfp4<u16, ref::DequantNvfp4ToBf16>, Fp4Target,
               ref::kNvfp4GroupElems / 2, ref::kNvfp4GroupElems},
    KernelInfo{"nvfp4_to_f16", "fp4", E::kF8E4m3, E::kF16,
               Nvfp4Thunk<u16, internal::DequantNvfp4ToF16Rows>,
               RunNvfp4<u16, ref::DequantNvfp4ToF16>, Fp4Target,
               ref::kNvfp4GroupElems / 2, ref::kNvfp4GroupElems},
    KernelInfo{"nvfp4_to_f32", "fp4", E::kF8E4m3, E::kF32,
               Nvfp4Thunk<float, internal::DequantNvfp4ToF32Rows>,
               RunNvfp4<float, ref::DequantNvfp4ToF32>, Fp4Target,
               ref::kNvfp4GroupElems / 2, ref::kNvfp4GroupElems},
    KernelInfo{"mxfp4_st_to_bf16", "fp4", E::kF32, E::kBf16,
               Mxfp4StThunk<u16, internal::DequantMxfp4StTransposedToBf16Rows>,
               RunMxfp4St<u16, ref::DequantMxfp4StTransposedToBf16>, Fp4Target,
               ref::kMxfp4GroupBytes, ref::kMxfp4GroupElems},
    KernelInfo{"mxfp4_st_to_f16", "fp4", E::kF32, E::kF16,
               Mxfp4StThunk<u16, internal::DequantMxfp4StTransposedToF16Rows>,
               RunMxfp4St<u16, ref::DequantMxfp4StTransposedToF16>, Fp4Target,
               ref::kMxfp4GroupBytes, ref::kMxfp4GroupElems},
    KernelInfo{"mxfp4_st_to_f32", "fp4", E::kF32, E::kF32,
               Mxfp4StThunk<float, internal::DequantMxfp4StTransposedToF32Rows>,
               RunMxfp4St<float, ref::DequantMxfp4StTransposedToF32>, Fp4Target,
               ref::kMxfp4GroupBytes, ref::kMxfp4GroupElems},
    // bitsandbytes (in: the f32 absmax/SCB type; the input is packed codes or
    // int8 weights of a synthetic tensor with static scales).
    KernelInfo{"nf4_to_bf16", "bnb", E::kF32, E::kBf16,
               Bnb4Thunk<BnbKind::kNf4, u16, internal::DequantBnb4ToBf16Rows>,
               RunBnb4<BnbKind::kNf4, u16, ref::DequantBnb4ToBf16>, BnbTarget,
               kBnbBlock / 2, kBnbBlock},
    KernelInfo{"nf4_to_f16", "bnb", E::kF32, E::kF16,
               Bnb4Thunk<BnbKind::kNf4, u16, internal::DequantBnb4ToF16Rows>,
               RunBnb4<BnbKind::kNf4, u16, ref::DequantBnb4ToF16>, BnbTarget,
               kBnbBlock / 2, kBnbBlock},
    KernelInfo{"nf4_to_f32", "bnb", E::kF32, E::kF32,
               Bnb4Thunk<BnbKind::kNf4, float, internal::DequantBnb4ToF32Rows>,
               RunBnb4<BnbKind::kNf4, float, ref::DequantBnb4ToF32>, BnbTarget,
               kBnbBlock / 2, kBnbBlock},
    KernelInfo{"fp4_to_bf16", "bnb", E::kF32, E::kBf16,
               Bnb4Thunk<BnbKind::kFp4, u16, internal::DequantBnb4ToBf16Rows>,
               RunBnb4<BnbKind::kFp4, u16, ref::DequantBnb4ToBf16>, BnbTarget,
               kBnbBlock / 2, kBnbBlock},
    KernelInfo{"fp4_to_f16", "bnb", E::kF32, E::kF16,
               Bnb4Thunk<BnbKind::kFp4, u16, internal::DequantBnb4ToF16Rows>,
               RunBnb4<BnbKind::kFp4, u16, ref::DequantBnb4ToF16>, BnbTarget,
               kBnbBlock / 2, kBnbBlock},
    KernelInfo{"fp4_to_f32", "bnb", E::kF32, E::kF32,
               Bnb4Thunk<BnbKind::kFp4, float, internal::DequantBnb4ToF32Rows>,
               RunBnb4<BnbKind::kFp4, float, ref::DequantBnb4ToF32>, BnbTarget,
               kBnbBlock / 2, kBnbBlock},
    KernelInfo{"nf4_dq_to_bf16", "bnb", E::kF32, E::kBf16,
               Bnb4Thunk<BnbKind::kNf4Dq, u16, internal::DequantBnb4ToBf16Rows>,
               RunBnb4<BnbKind::kNf4Dq, u16, ref::DequantBnb4ToBf16>, BnbTarget,
               kBnbBlock / 2, kBnbBlock},
    KernelInfo{"nf4_dq_to_f16", "bnb", E::kF32, E::kF16,
               Bnb4Thunk<BnbKind::kNf4Dq, u16, internal::DequantBnb4ToF16Rows>,
               RunBnb4<BnbKind::kNf4Dq, u16, ref::DequantBnb4ToF16>, BnbTarget,
               kBnbBlock / 2, kBnbBlock},
    KernelInfo{"nf4_dq_to_f32", "bnb", E::kF32, E::kF32,
               Bnb4Thunk<BnbKind::kNf4Dq, float, internal::DequantBnb4ToF32Rows>,
               RunBnb4<BnbKind::kNf4Dq, float, ref::DequantBnb4ToF32>, BnbTarget,
               kBnbBlock / 2, kBnbBlock},
    KernelInfo{"int8_rowwise_to_bf16", "bnb", E::kF32, E::kBf16,
               BnbInt8Thunk<u16, internal::DequantBnbInt8ToBf16Rows>,
               RunBnbInt8<u16, ref::DequantBnbInt8ToBf16>, BnbTarget, 1, 1},
    KernelInfo{"int8_rowwise_to_f16", "bnb", E::kF32, E::kF16,
               BnbInt8Thunk<u16, internal::DequantBnbInt8ToF16Rows>,
               RunBnbInt8<u16, ref::DequantBnbInt8ToF16>, BnbTarget, 1, 1},
    KernelInfo{"int8_rowwise_to_f32", "bnb", E::kF32, E::kF32,
               BnbInt8Thunk<float, internal::DequantBnbInt8ToF32Rows>,
               RunBnbInt8<float, ref::DequantBnbInt8ToF32>, BnbTarget, 1, 1},
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
