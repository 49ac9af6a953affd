// Registry samples (dispatch/kernel_samples.h) of the integer-code
// families: bitsandbytes, GPTQ, AWQ and compressed-tensors pack-quantized.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "dispatch/kernel_samples.h"
#include "dispatch/sample_layers.h"
#include "kernels/bnb_layout.h"
#include "kernels/gptq_layout.h"

namespace amn::internal {
namespace {

// out + n_elems elements of out_type.
void* OutAt(void* out, size_t n_elems, ElemType out_type) {
  return static_cast<uint8_t*>(out) + n_elems * ElemTypeBytes(out_type);
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


bnb::Bnb4View BnbSyntheticView(uint32_t kind, const uint8_t* packed) {
  bnb::Bnb4View view;
  view.packed = packed;
  view.quant_map = kind == kBnbFp4 ? kFp4Bytes.data() : kNf4Bytes.data();
  view.block_size = kBnbBlock;
  if (kind == kBnbNf4Dq) {
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

// LLM.int8() entries ("int8_rowwise_to_bf16", ...): the input is int8
// weights, run as rows of kBnbInt8Cols (plus a remainder row) whose SCB
// cycles through kBnbScb (typical, tiny, large, zero).
constexpr size_t kBnbInt8Cols = 1024;
constexpr auto kBnbScbBytes =
    LeBytes(std::array<float, 8>{0.0734f, 1.25f, 127.0f, 3.0e-3f, 0.0f, 0.5f, 40.0f, 1e-20f});

// GPTQ entries ("gptq4_to_bf16", ...): the input bytes are the qweight of a
// layer with kGptqRegistryN output features and one group (group_size = K),
// written in the nn.Linear [N, K] orientation that `amn remember` uses
// ("gptq4_inout_to_bf16": the GEMM-native [K, N] one). A
// unit is 32 input features (a whole number of words for every bit width):
// 32 * N outputs from bits * N * 4 bytes, so K = 32 * units. The zeros
// cycle through every stored value; the F16 scales mix exact and inexact,
// negative, tiny and large values (all finite), so any qweight is valid.
// Inputs of a whole number of kLayerSlabElems decode a real-shaped layer
// instead (dispatch/sample_layers.h), in remember-sized calls.
// "gptq4_actorder_to_*": the same layers with an act-order g_idx
// (LayerActOrderGIdx), in groups of 32 (narrow) or 128 (real-shaped).
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

gptq::LayerView GptqRegistryLayer(uint32_t bits, const void* qweight, size_t n_elems) {
  const GptqRegistryTables* tables = nullptr;
  switch (bits) {
    case 2: tables = &kGptqRegistryTables<2>; break;
    case 3: tables = &kGptqRegistryTables<3>; break;
    case 8: tables = &kGptqRegistryTables<8>; break;
    default: tables = &kGptqRegistryTables<4>; break;
  }
  gptq::LayerView layer;
  layer.bits = bits;
  layer.k = n_elems / kGptqRegistryN;
  layer.n = kGptqRegistryN;
  layer.groups = 1;
  layer.group_size = layer.k > 0 ? layer.k : 1;
  layer.zeros_plus_one = true;
  layer.scale_type = ElemType::kF16;
  layer.qweight = static_cast<const uint8_t*>(qweight);
  layer.qzeros = tables->zeros.data();
  layer.scales = reinterpret_cast<const uint8_t*>(tables->scales.data());
  return layer;
}

// At streaming sizes (dispatch/sample_layers.h): kLayerOutFeatures outputs
// of K = n_elems / kLayerOutFeatures inputs in groups of kLayerGroupSize.
gptq::LayerView GptqRealShapedLayer(uint32_t bits, const void* qweight, size_t n_elems) {
  gptq::LayerView layer;
  layer.bits = bits;
  layer.n = kLayerOutFeatures;
  layer.k = n_elems / kLayerOutFeatures;
  layer.group_size = kLayerGroupSize;
  layer.groups = layer.k / kLayerGroupSize;
  layer.zeros_plus_one = true;
  layer.scale_type = ElemType::kF16;
  layer.qweight = static_cast<const uint8_t*>(qweight);
  layer.qzeros = LayerZeroBytes(layer.groups, layer.n * bits / 8);
  layer.scales = LayerF16Scales(layer.groups, layer.n);
  return layer;
}

// Packed-integer linear layers (AWQ, compressed-tensors pack-quantized):
// the input is whole rows of packed codes (block_elems outputs per input
// row), every other tensor is static here, so any input bytes are valid.

// AWQ: a layer with N = kAwqBenchN outputs and K = n_elems / N input rows in
// one group, dequantized in the nn.Linear [N, K] orientation (what `amn
// remember` writes: output row j reads one nibble of every input row;
// "awq4_to_*") or the GEMM-native [K, N] one ("awq4_inout_to_*"). Inputs of
// a whole number of kLayerSlabElems decode a real-shaped layer instead.
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
// At streaming sizes (dispatch/sample_layers.h), like GPTQ's.
ref::AwqMatrix AwqRealShapedMatrix(const void* in, size_t n_elems) {
  const size_t k = n_elems / kLayerOutFeatures, groups = k / kLayerGroupSize;
  return ref::AwqMatrix{static_cast<const uint8_t*>(in),
                        LayerZeroBytes(groups, kLayerOutFeatures / 2),
                        LayerF16Scales(groups, kLayerOutFeatures),
                        ElemType::kF16,
                        k,
                        kLayerOutFeatures,
                        kLayerGroupSize};
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


}  // namespace

// bitsandbytes 4-bit: `in` names the f32 absmax type; whole 64-element blocks.
SampleLayout Bnb4SampleLayout(uint32_t /*kind*/) {
  return {ElemType::kF32, kBnbBlock / 2, kBnbBlock};
}
void RunBnb4Sample(DecodeFn<kernels::Bnb4Args> decode, uint32_t kind, const void* in,
                   size_t n_elems, ElemType out_type, void* out) {
  const auto* packed = static_cast<const uint8_t*>(in);
  constexpr size_t kPiece = kBnbPieceBlocks * kBnbBlock;
  for (size_t done = 0; done < n_elems; done += kPiece) {
    const size_t n = n_elems - done < kPiece ? n_elems - done : kPiece;
    decode(BnbSyntheticView(kind, packed + done / 2), 0, n, out_type, OutAt(out, done, out_type));
  }
}

// LLM.int8(): `in` names the f32 SCB type; plain int8 weights.
SampleLayout BnbInt8SampleLayout(uint32_t /*variant*/) { return {ElemType::kF32, 1, 1}; }
void RunBnbInt8Sample(DecodeFn<kernels::BnbInt8Args> decode, uint32_t /*variant*/, const void* in,
                      size_t n_elems, ElemType out_type, void* out) {
  const auto* weight = static_cast<const uint8_t*>(in);
  constexpr size_t kRowsPerCall = kBnbScbBytes.size() / 4;
  constexpr size_t kCallElems = kRowsPerCall * kBnbInt8Cols;
  size_t done = 0;
  for (; done + kCallElems <= n_elems; done += kCallElems) {
    decode({weight + done, kBnbScbBytes.data(), kBnbInt8Cols}, 0, kRowsPerCall, out_type,
           OutAt(out, done, out_type));
  }
  const size_t rest_rows = (n_elems - done) / kBnbInt8Cols;
  if (rest_rows > 0) {
    decode({weight + done, kBnbScbBytes.data(), kBnbInt8Cols}, 0, rest_rows, out_type,
           OutAt(out, done, out_type));
    done += rest_rows * kBnbInt8Cols;
  }
  if (done < n_elems) {
    decode({weight + done, kBnbScbBytes.data(), n_elems - done}, 0, 1, out_type,
           OutAt(out, done, out_type));
  }
}

// GPTQ: `in` names the f16 scale type; a unit is 32 input features.
SampleLayout GptqSampleLayout(uint32_t variant) {
  const uint32_t bits = variant & 0xFF;
  return {ElemType::kF16, static_cast<uint32_t>(bits * kGptqRegistryN * 4),
          static_cast<uint32_t>(kGptqUnitRows * kGptqRegistryN)};
}
void RunGptqSample(DecodeFn<kernels::GptqArgs> decode, uint32_t variant, const void* in,
                   size_t n_elems, ElemType out_type, void* out) {
  const bool in_out = (variant & 0x100u) != 0;
  const bool act_order = (variant & 0x200u) != 0;
  const auto orientation = in_out ? WeightOrientation::kInOut : WeightOrientation::kOutIn;
  const uint32_t bits = variant & 0xFF;
  if (!IsLayerSized(n_elems)) {
    gptq::LayerView layer = GptqRegistryLayer(bits, in, n_elems);
    if (act_order && layer.k != 0) {  // groups of 32 (one per unit), in act order
      layer.groups = layer.k / kGptqUnitRows;
      layer.group_size = kGptqUnitRows;
      layer.qzeros = LayerZeroBytes(layer.groups, kGptqRegistryN * bits / 8);
      layer.scales = LayerF16Scales(layer.groups, kGptqRegistryN);
      layer.g_idx = LayerActOrderGIdx(layer.k, kGptqUnitRows);
    }
    // All rows of the orientation in one call: N of them for kOutIn, K for kInOut.
    const size_t rows = in_out ? n_elems / kGptqRegistryN : kGptqRegistryN;
    decode({layer, orientation}, 0, rows, out_type, out);
    return;
  }
  gptq::LayerView layer = GptqRealShapedLayer(bits, in, n_elems);
  if (act_order) layer.g_idx = LayerActOrderGIdx(layer.k, kLayerGroupSize);
  const size_t rows = in_out ? layer.k : layer.n;
  const size_t row_elems = n_elems / rows;
  const size_t per_call = RememberCallRows(row_elems, out_type);
  for (size_t r = 0; r < rows; r += per_call) {
    decode({layer, orientation}, r, std::min(rows, r + per_call), out_type,
           OutAt(out, r * row_elems, out_type));
  }
}

// AWQ: `in` names the f16 scale type; a unit is one input row of N codes.
SampleLayout AwqSampleLayout(uint32_t /*variant*/) {
  return {ElemType::kF16, kAwqBenchN / 2, kAwqBenchN};
}
void RunAwqSample(DecodeFn<kernels::AwqArgs> decode, uint32_t out_in, const void* in,
                  size_t n_elems, ElemType out_type, void* out) {
  if (n_elems < kAwqBenchN) return;
  if (!IsLayerSized(n_elems)) {
    // kOutIn: rows are the N output features; kInOut: the K input features.
    const size_t rows = out_in != 0 ? kAwqBenchN : n_elems / kAwqBenchN;
    decode({AwqBenchMatrix(in, n_elems), out_in != 0}, 0, rows, out_type, out);
    return;
  }
  const ref::AwqMatrix m = AwqRealShapedMatrix(in, n_elems);
  const size_t rows = out_in != 0 ? m.out_features : m.in_features;
  const size_t row_elems = n_elems / rows;
  const size_t per_call = RememberCallRows(row_elems, out_type);
  for (size_t r = 0; r < rows; r += per_call) {
    decode({m, out_in != 0}, r, std::min(rows, r + per_call), out_type,
           OutAt(out, r * row_elems, out_type));
  }
}

// compressed-tensors: `in` names the bf16 scale type; a unit is one row.
SampleLayout PackedIntSampleLayout(uint32_t bits) {
  return {ElemType::kBf16, static_cast<uint32_t>(kCtBenchCols * bits / 8),
          static_cast<uint32_t>(kCtBenchCols)};
}
void RunPackedIntSample(DecodeFn<kernels::PackedIntArgs> decode, uint32_t bits, const void* in,
                        size_t n_elems, ElemType out_type, void* out) {
  const auto* bytes = static_cast<const uint8_t*>(in);
  const size_t rows = n_elems / kCtBenchCols;
  const size_t row_bytes = kCtBenchCols * bits / 8;
  for (size_t r = 0; r < rows; r += kCtBenchRows) {
    const size_t count = rows - r < kCtBenchRows ? rows - r : kCtBenchRows;
    const auto m = bits == 4 ? CtBenchMatrix<4>(bytes + r * row_bytes, count)
                             : CtBenchMatrix<8>(bytes + r * row_bytes, count);
    decode(m, 0, count, out_type, OutAt(out, r * kCtBenchCols, out_type));
  }
}

}  // namespace amn::internal
