// Registry samples (dispatch/kernel_samples.h) of the float families:
// element conversions, scaled FP8, the ggml block types and FP4.
#include <algorithm>
#include <array>
#include <cstdint>

#include "dispatch/kernel_samples.h"
#include "dispatch/sample_layers.h"
#include "kernels/ggml_blocks.h"
#include "kernels/ggml_kquant_blocks.h"
#include "kernels/ref/fp4_ref.h"
#include "kernels/ref/ggml_iquant_ref.h"
#include "kernels/ref/ggml_kquant_ref.h"
#include "kernels/ref/ggml_legacy_ref.h"

namespace amn::internal {
namespace {

// out + n_elems elements of out_type.
void* OutAt(void* out, size_t n_elems, ElemType out_type) {
  return static_cast<uint8_t*>(out) + n_elems * ElemTypeBytes(out_type);
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
//     From one gpt-oss expert up (dispatch/sample_layers.h), whole experts
//     of 5760 rows x 90 groups come first, in remember-sized calls.
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

// ggml: whole blocks of the type; `in` names the scale type (f16 d, or
// Q8_K's f32 d).
SampleLayout GgmlLayout(uint32_t type) {
  const auto t = static_cast<GgmlType>(type);
  const ElemType scale = t == GgmlType::kQ8_K ? ElemType::kF32 : ElemType::kF16;
  if (const size_t bytes = ref::GgmlLegacyBlockBytes(t); bytes != 0) {
    return {t == GgmlType::kNVFP4 ? ElemType::kF8E4m3 : scale, static_cast<uint32_t>(bytes),
            static_cast<uint32_t>(ref::GgmlLegacyBlockElems(t))};
  }
  const size_t bytes = ref::KQuantBlockBytes(type) + ref::IQuantBlockBytes(type);
  return {scale, static_cast<uint32_t>(bytes), static_cast<uint32_t>(kq::kSuperBlockElems)};
}

void RunGgml(DecodeFn<kernels::GgmlArgs> decode, uint32_t type, const void* in, size_t n_elems,
             ElemType out_type, void* out) {
  const size_t n_blocks = n_elems / GgmlLayout(type).block_elems;
  decode(kernels::GgmlArgs{type, static_cast<const uint8_t*>(in)}, 0, n_blocks, out_type, out);
}

void RunConvert(DecodeFn<kernels::ConvertArgs> decode, uint32_t in_type, const void* in,
                size_t n_elems, ElemType out_type, void* out) {
  decode(kernels::ConvertArgs{static_cast<ElemType>(in_type), in}, 0, n_elems, out_type, out);
}

}  // namespace

SampleLayout FloatConvertSampleLayout(uint32_t in_type) {
  return {static_cast<ElemType>(in_type), 0, 1};
}
void RunFloatConvertSample(DecodeFn<kernels::ConvertArgs> decode, uint32_t in_type,
                           const void* in, size_t n_elems, ElemType out_type, void* out) {
  RunConvert(decode, in_type, in, n_elems, out_type, out);
}
SampleLayout Fp8ConvertSampleLayout(uint32_t in_type) {
  return {static_cast<ElemType>(in_type), 0, 1};
}
void RunFp8ConvertSample(DecodeFn<kernels::ConvertArgs> decode, uint32_t in_type, const void* in,
                         size_t n_elems, ElemType out_type, void* out) {
  RunConvert(decode, in_type, in, n_elems, out_type, out);
}

SampleLayout Fp8DequantSampleLayout(uint32_t code_type) {
  return {static_cast<ElemType>(code_type), 0, 1};
}
void RunFp8DequantSample(DecodeFn<kernels::Fp8ScaledArgs> decode, uint32_t code_type,
                         const void* in, size_t n_elems, ElemType out_type, void* out) {
  const auto* codes = static_cast<const uint8_t*>(in);
  const auto type = static_cast<ElemType>(code_type);
  const size_t full_rows = n_elems / kScaledRowCols;
  const size_t done = full_rows * kScaledRowCols;
  if (full_rows > 0) {
    decode({type, codes, kScaledRowCols, kScaledScales.data(), kScaledBlockCols}, 0, full_rows,
           out_type, out);
  }
  if (done < n_elems) {
    decode({type, codes + done, n_elems - done, kScaledScales.data(), kScaledBlockCols}, 0, 1,
           out_type, OutAt(out, done, out_type));
  }
}

SampleLayout GgmlLegacySampleLayout(uint32_t type) { return GgmlLayout(type); }
SampleLayout GgmlKQuantSampleLayout(uint32_t type) { return GgmlLayout(type); }
SampleLayout GgmlIQuantSampleLayout(uint32_t type) { return GgmlLayout(type); }
void RunGgmlLegacySample(DecodeFn<kernels::GgmlArgs> decode, uint32_t type, const void* in,
                         size_t n_elems, ElemType out_type, void* out) {
  RunGgml(decode, type, in, n_elems, out_type, out);
}
void RunGgmlKQuantSample(DecodeFn<kernels::GgmlArgs> decode, uint32_t type, const void* in,
                         size_t n_elems, ElemType out_type, void* out) {
  RunGgml(decode, type, in, n_elems, out_type, out);
}
void RunGgmlIQuantSample(DecodeFn<kernels::GgmlArgs> decode, uint32_t type, const void* in,
                         size_t n_elems, ElemType out_type, void* out) {
  RunGgml(decode, type, in, n_elems, out_type, out);
}

// NVFP4: `in` names the E4M3 scale type; the input is whole 16-element groups.
SampleLayout Nvfp4SampleLayout(uint32_t /*variant*/) {
  return {ElemType::kF8E4m3, ref::kNvfp4GroupElems / 2, ref::kNvfp4GroupElems};
}
void RunNvfp4Sample(DecodeFn<kernels::Nvfp4Args> decode, uint32_t /*variant*/, const void* in,
                    size_t n_elems, ElemType out_type, void* out) {
  const auto* codes = static_cast<const uint8_t*>(in);
  const uint8_t* scales = kNvfp4BenchScales().data();
  size_t done = 0;
  while (done < n_elems) {
    const size_t rows = std::min(kNvfp4BenchRows, (n_elems - done) / kNvfp4BenchCols);
    const size_t cols = rows > 0 ? kNvfp4BenchCols : n_elems - done;
    const size_t n_rows = rows > 0 ? rows : 1;
    decode({codes + done / 2, scales, kNvfp4BenchGlobal, cols}, 0, n_rows, out_type,
           OutAt(out, done, out_type));
    done += n_rows * cols;
  }
}

// gpt-oss MXFP4: `in` names F32, the type an E8M0 scale decodes to exactly;
// the input is whole 32-element groups.
SampleLayout Mxfp4StSampleLayout(uint32_t /*variant*/) {
  return {ElemType::kF32, ref::kMxfp4GroupBytes, ref::kMxfp4GroupElems};
}
void RunMxfp4StSample(DecodeFn<kernels::Mxfp4StArgs> decode, uint32_t /*variant*/, const void* in,
                      size_t n_elems, ElemType out_type, void* out) {
  const auto* blocks = static_cast<const uint8_t*>(in);
  size_t n_groups = n_elems / ref::kMxfp4GroupElems;
  size_t done = 0;
  if (n_elems >= kGptOssExpertElems) {
    // Whole gpt-oss experts (the rest below), in remember-sized calls of
    // whole groups (32 output rows of the transpose).
    const uint8_t* scales = GptOssExpertScales();
    const size_t per_call = RememberCallRows(kGptOssExpertRows, out_type) / 32 * 32;
    const size_t out_rows = kGptOssExpertGroups * ref::kMxfp4GroupElems;
    for (; n_groups >= kGptOssExpertRows * kGptOssExpertGroups;
         n_groups -= kGptOssExpertRows * kGptOssExpertGroups) {
      for (size_t c = 0; c < out_rows; c += per_call) {
        decode({blocks, scales, kGptOssExpertRows, kGptOssExpertGroups, true}, c,
               std::min(out_rows, c + per_call), out_type,
               OutAt(out, done + c * kGptOssExpertRows, out_type));
      }
      blocks += kGptOssExpertElems / 2;
      done += kGptOssExpertElems;
    }
  }
  const uint8_t* scales = kMxfp4BenchScales().data();
  while (n_groups > 0) {
    const size_t rows = std::min(kMxfp4BenchRows, n_groups);
    const size_t groups = std::min(kMxfp4BenchGroups, n_groups / rows);
    decode({blocks, scales, rows, groups, true}, 0, groups * ref::kMxfp4GroupElems, out_type,
           OutAt(out, done, out_type));
    blocks += rows * groups * ref::kMxfp4GroupBytes;
    done += rows * groups * ref::kMxfp4GroupElems;
    n_groups -= rows * groups;
  }
}

}  // namespace amn::internal
