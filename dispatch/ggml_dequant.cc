// amn::DequantGgml: the ggml type table, argument checks, and the hand-off
// to the kernel family that decodes the type. No math here.
#include "amn/ggml_dequant.h"

#include <array>
#include <string>

#include "dispatch/dispatch_policy.h"
#include "dispatch/family_decoders.h"
#include "kernels/ref/ggml_iquant_ref.h"
#include "kernels/ref/ggml_kquant_ref.h"
#include "kernels/ref/ggml_legacy_ref.h"

namespace amn {
namespace {

using T = GgmlType;

// Block sizes from ggml-common.h (static_asserts there give the same bytes).
constexpr std::array<GgmlTypeInfo, 35> kTypes = {{
    {T::kF32, "F32", 1, 4, false},          {T::kF16, "F16", 1, 2, false},
    {T::kQ4_0, "Q4_0", 32, 18, true},       {T::kQ4_1, "Q4_1", 32, 20, true},
    {T::kQ5_0, "Q5_0", 32, 22, true},       {T::kQ5_1, "Q5_1", 32, 24, true},
    {T::kQ8_0, "Q8_0", 32, 34, true},       {T::kQ8_1, "Q8_1", 32, 36, true},
    {T::kQ2_K, "Q2_K", 256, 84, true},      {T::kQ3_K, "Q3_K", 256, 110, true},
    {T::kQ4_K, "Q4_K", 256, 144, true},     {T::kQ5_K, "Q5_K", 256, 176, true},
    {T::kQ6_K, "Q6_K", 256, 210, true},     {T::kQ8_K, "Q8_K", 256, 292, true},
    {T::kIQ2_XXS, "IQ2_XXS", 256, 66, true}, {T::kIQ2_XS, "IQ2_XS", 256, 74, true},
    {T::kIQ3_XXS, "IQ3_XXS", 256, 98, true}, {T::kIQ1_S, "IQ1_S", 256, 50, true},
    {T::kIQ4_NL, "IQ4_NL", 32, 18, true},   {T::kIQ3_S, "IQ3_S", 256, 110, true},
    {T::kIQ2_S, "IQ2_S", 256, 82, true},    {T::kIQ4_XS, "IQ4_XS", 256, 136, true},
    {T::kI8, "I8", 1, 1, false},            {T::kI16, "I16", 1, 2, false},
    {T::kI32, "I32", 1, 4, false},          {T::kI64, "I64", 1, 8, false},
    {T::kF64, "F64", 1, 8, false},          {T::kIQ1_M, "IQ1_M", 256, 56, true},
    {T::kBF16, "BF16", 1, 2, false},        {T::kTQ1_0, "TQ1_0", 256, 54, true},
    {T::kTQ2_0, "TQ2_0", 256, 66, true},    {T::kMXFP4, "MXFP4", 32, 17, true},
    {T::kNVFP4, "NVFP4", 64, 36, true},     {T::kQ1_0, "Q1_0", 128, 18, true},
    {T::kQ2_0, "Q2_0", 64, 18, true},
}};

}  // namespace

const GgmlTypeInfo* FindGgmlType(uint32_t id) {
  for (const GgmlTypeInfo& info : kTypes) {
    if (static_cast<uint32_t>(info.type) == id) return &info;
  }
  return nullptr;
}

bool GgmlTypeDecodable(GgmlType type) {
  const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(type));
  if (info == nullptr || !info->quantized) return false;
  // One all-zero block (the largest is 292 bytes, 256 elements) tells.
  std::array<uint8_t, 512> block{};
  std::array<float, 256> out{};
  return DequantGgml(type, std::span(block.data(), info->block_bytes), ElemType::kF32,
                     std::as_writable_bytes(std::span(out)))
      .ok();
}

Status DequantGgml(GgmlType type, std::span<const uint8_t> blocks, ElemType out_type,
                   std::span<std::byte> out) {
  const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(type));
  if (info == nullptr || !info->quantized) {
    return Status(StatusCode::kInvalidArgument, "not a quantized ggml type");
  }
  if (out_type != ElemType::kF32 && out_type != ElemType::kF16 && out_type != ElemType::kBf16) {
    return Status(StatusCode::kInvalidArgument, "ggml dequantization writes F32, F16 or BF16");
  }
  if (blocks.size() % info->block_bytes != 0) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(info->name) + ": " + std::to_string(blocks.size()) +
                      " bytes is not a whole number of " + std::to_string(info->block_bytes) +
                      "-byte blocks");
  }
  const size_t n_blocks = blocks.size() / info->block_bytes;
  const size_t n_elems = n_blocks * info->block_elems;
  if (out.size() / ElemTypeBytes(out_type) < n_elems) {
    return Status(StatusCode::kInvalidArgument,
                  "output holds " + std::to_string(out.size() / ElemTypeBytes(out_type)) +
                      " elements, " + std::string(info->name) + " blocks give " +
                      std::to_string(n_elems));
  }
  AMN_RETURN_IF_ERROR(internal::PrepareDispatch());
  if (n_blocks == 0) return Status::Ok();
  // The family of the kernel table that decodes `type`.
  using Decoder = void (*)(const kernels::GgmlArgs&, size_t, size_t, ElemType, void*);
  const uint32_t id = static_cast<uint32_t>(type);
  Decoder decode = nullptr;
  if (ref::GgmlLegacyBlockBytes(type) != 0) decode = internal::DecodeGgmlLegacy;
  if (ref::KQuantBlockBytes(id) != 0) decode = internal::DecodeGgmlKQuant;
  if (ref::IQuantBlockBytes(id) != 0) decode = internal::DecodeGgmlIQuant;
  if (decode != nullptr) {
    decode(kernels::GgmlArgs{id, blocks.data()}, 0, n_blocks, out_type, out.data());
    return Status::Ok();
  }
  return Status(StatusCode::kUnsupported,
                std::string(info->name) + " blocks cannot be dequantized by this build yet");
}

}  // namespace amn
