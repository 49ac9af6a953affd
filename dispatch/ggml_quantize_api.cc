// The checked ggml encoder API of amn/quantize.h (QuantizeGgml,
// CanQuantizeGgml): input type and size, cols a whole number of the type's
// blocks, out exactly rows * ggml's row size, imatrix empty or cols long;
// then the type's encoder family (GgmlEncoderFamilyOf: one line per type),
// whose kernel reports a NaN or infinity by its element index. A type ggml
// encodes only with an importance matrix is refused without one.
#include <cmath>
#include <cstdint>
#include <string>

#include "amn/ggml_dequant.h"
#include "amn/quantize.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/encoders.h"
#include "dispatch/ggml_iq2_iq1_encode.h"
#include "kernels/encode_common.h"
#include "kernels/ref/ggml_encode_ref.h"
#include "kernels/ref/ggml_iq2_iq1_encode_ref.h"
#include "kernels/ref/ggml_iq3_encode_ref.h"
#include "kernels/ref/ggml_kquant_ref.h"

namespace amn {

namespace {

constexpr const char* kFn = "QuantizeGgml";

// The encoder families of the ggml block types: GgmlLegacyQuant
// (dispatch/ggml_legacy_encode.cc), GgmlKQuantQuant
// (dispatch/ggml_kquant_encode.cc) and the IQ2/IQ1 encoders
// (dispatch/ggml_iq2_iq1_encode.cc: the reference's searches with the
// dispatched neighbour scoring; not in the kernel table) and GgmlIq3Quant
// (dispatch/ggml_iq3_encode.cc). A new family adds an enumerator, its
// types' lines in GgmlEncoderFamilyOf, and a case in ShapeOf and
// RunGgmlEncoder.
enum class GgmlEncoderFamily { kNone, kLegacy, kKQuant, kIq2Iq1, kIq3 };

GgmlEncoderFamily GgmlEncoderFamilyOf(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0: return GgmlEncoderFamily::kLegacy;
    case GgmlType::kQ4_1: return GgmlEncoderFamily::kLegacy;
    case GgmlType::kQ5_0: return GgmlEncoderFamily::kLegacy;
    case GgmlType::kQ5_1: return GgmlEncoderFamily::kLegacy;
    case GgmlType::kQ8_0: return GgmlEncoderFamily::kLegacy;
    case GgmlType::kIQ4_NL: return GgmlEncoderFamily::kLegacy;
    case GgmlType::kMXFP4: return GgmlEncoderFamily::kLegacy;
    case GgmlType::kTQ1_0: return GgmlEncoderFamily::kLegacy;
    case GgmlType::kTQ2_0: return GgmlEncoderFamily::kLegacy;
    case GgmlType::kNVFP4: return GgmlEncoderFamily::kLegacy;
    case GgmlType::kQ1_0: return GgmlEncoderFamily::kLegacy;
    case GgmlType::kQ2_0: return GgmlEncoderFamily::kLegacy;
    case GgmlType::kQ2_K: return GgmlEncoderFamily::kKQuant;
    case GgmlType::kQ3_K: return GgmlEncoderFamily::kKQuant;
    case GgmlType::kQ4_K: return GgmlEncoderFamily::kKQuant;
    case GgmlType::kQ5_K: return GgmlEncoderFamily::kKQuant;
    case GgmlType::kQ6_K: return GgmlEncoderFamily::kKQuant;
    case GgmlType::kIQ4_XS: return GgmlEncoderFamily::kKQuant;
    case GgmlType::kIQ2_XXS: return GgmlEncoderFamily::kIq2Iq1;
    case GgmlType::kIQ2_XS: return GgmlEncoderFamily::kIq2Iq1;
    case GgmlType::kIQ2_S: return GgmlEncoderFamily::kIq2Iq1;
    case GgmlType::kIQ1_S: return GgmlEncoderFamily::kIq2Iq1;
    case GgmlType::kIQ1_M: return GgmlEncoderFamily::kIq2Iq1;
    case GgmlType::kIQ3_XXS: return GgmlEncoderFamily::kIq3;
    case GgmlType::kIQ3_S: return GgmlEncoderFamily::kIq3;
    default: return GgmlEncoderFamily::kNone;
  }
}

// Block elements and bytes of an encodable type (0 otherwise).
struct BlockShape {
  uint64_t elems = 0, bytes = 0;
};
BlockShape ShapeOf(GgmlType type) {
  switch (GgmlEncoderFamilyOf(type)) {
    case GgmlEncoderFamily::kLegacy:
      return {ref::GgmlEncodeBlockElems(type), ref::GgmlEncodeBlockBytes(type)};
    case GgmlEncoderFamily::kKQuant:
      return {256, ref::KQuantBlockBytes(static_cast<uint32_t>(type))};
    case GgmlEncoderFamily::kIq2Iq1:
      return {256, ref::Iq2Iq1EncodeBlockBytes(type)};
    case GgmlEncoderFamily::kIq3:
      return {256, ref::Iq3EncodeBlockBytes(type)};
    default:
      return {};
  }
}

uint64_t RunGgmlEncoder(GgmlEncoderFamily family, const kernels::GgmlQuantArgs& args,
                        kernels::ErrorSums* errors) {
  switch (family) {
    case GgmlEncoderFamily::kLegacy: return internal::EncodeGgmlLegacyQuant(args, errors);
    case GgmlEncoderFamily::kKQuant: return internal::EncodeGgmlKQuantQuant(args, errors);
    case GgmlEncoderFamily::kIq2Iq1: return internal::EncodeGgmlIq2Iq1Quant(args, errors);
    case GgmlEncoderFamily::kIq3: return internal::EncodeGgmlIq3Quant(args, errors);
    default: return kernels::kAllFinite;  // not reached: checked by the caller
  }
}

Status InvalidArgument(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::string(kFn) + ": " + std::move(message));
}

}  // namespace

bool CanQuantizeGgml(GgmlType type) {
  return GgmlEncoderFamilyOf(type) != GgmlEncoderFamily::kNone;
}

bool GgmlQuantizeNeedsImatrix(GgmlType type) {
  return GgmlEncoderFamilyOf(type) == GgmlEncoderFamily::kIq2Iq1 &&
         ref::Iq2Iq1RequiresImatrix(type);
}

Status QuantizeGgml(GgmlType type, const FloatRows& in, std::span<const float> imatrix,
                    std::span<std::byte> out, QuantError* error) {
  const GgmlEncoderFamily family = GgmlEncoderFamilyOf(type);
  if (family == GgmlEncoderFamily::kNone) {
    return Status(StatusCode::kUnsupported, std::string(kFn) + ": ggml type " +
                                                std::to_string(static_cast<uint32_t>(type)) +
                                                " has no encoder in this build");
  }
  if (in.type != ElemType::kBf16 && in.type != ElemType::kF16 && in.type != ElemType::kF32) {
    return InvalidArgument("input type must be bf16, f16 or f32, not " +
                           std::string(ElemTypeName(in.type)));
  }
  const BlockShape block = ShapeOf(type);
  if (in.cols % block.elems != 0) {
    return InvalidArgument("cols = " + std::to_string(in.cols) + " is not a multiple of the " +
                           std::to_string(block.elems) + " elements of a block");
  }
  // 4 bytes per element bounds both the input and the (smaller) output.
  if (in.cols != 0 && in.rows > UINT64_MAX / 4 / in.cols) {
    return InvalidArgument("rows * cols overflows");
  }
  const uint64_t n = in.rows * in.cols;
  const uint64_t elem_bytes = ElemTypeBytes(in.type);
  if (in.bytes.size() % elem_bytes != 0 || in.bytes.size() / elem_bytes != n) {
    return InvalidArgument("input holds " + std::to_string(in.bytes.size()) +
                           " bytes, rows * cols needs " + std::to_string(n * elem_bytes));
  }
  const uint64_t want = n / block.elems * block.bytes;
  if (out.size() != want) {
    return InvalidArgument("out holds " + std::to_string(out.size()) + " bytes, " +
                           std::to_string(in.rows) + " rows of ggml's row size need " +
                           std::to_string(want));
  }
  if (imatrix.empty() && GgmlQuantizeNeedsImatrix(type)) {
    const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(type));
    return InvalidArgument(std::string(info != nullptr ? info->name : "this type") +
                           " needs an importance matrix (imatrix): ggml encodes it only with "
                           "one, and none was given");
  }
  if (!imatrix.empty()) {
    if (imatrix.size() != in.cols) {
      return InvalidArgument("imatrix holds " + std::to_string(imatrix.size()) +
                             " weights, one per column needs " + std::to_string(in.cols));
    }
    for (size_t i = 0; i < imatrix.size(); ++i) {
      if (!std::isfinite(imatrix[i])) {
        return InvalidArgument("imatrix[" + std::to_string(i) + "] is NaN or infinite");
      }
    }
  }
  AMN_RETURN_IF_ERROR(internal::PrepareDispatch());
  kernels::ErrorSums sums;
  if (n != 0) {
    const kernels::GgmlQuantArgs args{
        kernels::EncodeInput{reinterpret_cast<const uint8_t*>(in.bytes.data()), in.type, in.rows,
                             in.cols},
        type, imatrix.empty() ? nullptr : imatrix.data(),
        reinterpret_cast<uint8_t*>(out.data())};
    const uint64_t bad = RunGgmlEncoder(family, args, error != nullptr ? &sums : nullptr);
    if (bad != kernels::kAllFinite) {
      return InvalidArgument("input element " + std::to_string(bad) +
                             " is NaN or infinite; only finite values can be encoded");
    }
  }
  if (error != nullptr) {
    const kernels::ErrorTotals t = kernels::ReduceErrors(sums);
    *error = QuantError{n, t.sum_abs, t.max_abs, t.sum_sq_err, t.sum_sq_ref};
  }
  return Status::Ok();
}

}  // namespace amn
