// The checked encoder API of amn/quantize.h: every span size the layout
// implies, every side input (scales, given absmax / SCB) finite, then the
// encode kernels; a non-finite input element becomes kInvalidArgument naming
// its index within the call.
#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include "amn/quantize.h"
#include "dispatch/dispatch_policy.h"
#include "dispatch/encoders.h"
#include "kernels/bnb_layout.h"
#include "kernels/encode_common.h"
#include "kernels/ref/bnb_encode_ref.h"

namespace amn {

namespace {

Status InvalidArgument(const char* function, std::string message) {
  return Status(StatusCode::kInvalidArgument, std::string(function) + ": " + std::move(message));
}

// ceil(a / b) for b >= 1, without overflow.
uint64_t CeilDiv(uint64_t a, uint64_t b) { return a == 0 ? 0 : (a - 1) / b + 1; }

Status CheckCount(const char* function, const char* field, size_t got, uint64_t want) {
  if (got != want) {
    return InvalidArgument(function, std::string(field) + " holds " + std::to_string(got) +
                                         " entries, the layout needs " + std::to_string(want));
  }
  return Status::Ok();
}

// The input's type and size; *n gets rows * cols.
Status CheckRows(const char* function, const FloatRows& in, uint64_t* n) {
  if (in.type != ElemType::kBf16 && in.type != ElemType::kF16 && in.type != ElemType::kF32) {
    return InvalidArgument(function, "input type must be bf16, f16 or f32, not " +
                                         std::string(ElemTypeName(in.type)));
  }
  if (in.cols != 0 && in.rows > UINT64_MAX / 4 / in.cols) {
    return InvalidArgument(function, "rows * cols overflows");
  }
  *n = in.rows * in.cols;
  if (in.bytes.size() / ElemTypeBytes(in.type) != *n ||
      in.bytes.size() % ElemTypeBytes(in.type) != 0) {
    return InvalidArgument(function, "input holds " + std::to_string(in.bytes.size()) +
                                         " bytes, rows * cols needs " +
                                         std::to_string(*n * ElemTypeBytes(in.type)));
  }
  return Status::Ok();
}

// The group grid's entry count.
Status CheckGrid(const char* function, const FloatRows& in, uint64_t group_rows,
                 uint64_t group_cols, uint64_t* entries) {
  if (group_rows == 0 || group_cols == 0) {
    return InvalidArgument(function, "group_rows and group_cols must be at least 1");
  }
  // Each factor is at most rows or cols, whose product was checked.
  *entries = CeilDiv(in.rows, group_rows) * CeilDiv(in.cols, group_cols);
  return Status::Ok();
}

Status NonFinite(const char* function, uint64_t index) {
  return InvalidArgument(function, "input element " + std::to_string(index) +
                                       " is NaN or infinite; only finite values can be encoded");
}

// A side input read from a caller or a model: finite and not negative
// (-0.0 included: 1 / -0 would flip every sign).
Status CheckNonNegative(const char* function, const char* field, std::span<const float> v,
                        bool zero_allowed) {
  for (size_t i = 0; i < v.size(); ++i) {
    const float f = v[i];
    if (!std::isfinite(f) || std::signbit(f) || (!zero_allowed && f == 0.0f)) {
      return InvalidArgument(function, std::string(field) + "[" + std::to_string(i) + "] = " +
                                           std::to_string(f) + " must be finite and " +
                                           (zero_allowed ? ">= 0" : "> 0"));
    }
  }
  return Status::Ok();
}

const uint8_t* Bytes(std::span<const std::byte> s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

kernels::EncodeInput Input(const FloatRows& in) {
  return kernels::EncodeInput{Bytes(in.bytes), in.type, in.rows, in.cols};
}

void Report(const kernels::ErrorSums& sums, uint64_t n, QuantError* error) {
  if (error == nullptr) return;
  const kernels::ErrorTotals t = kernels::ReduceErrors(sums);
  *error = QuantError{n, t.sum_abs, t.max_abs, t.sum_sq_err, t.sum_sq_ref};
}

}  // namespace

Status AbsMaxGrid(const FloatRows& in, uint64_t group_rows, uint64_t group_cols,
                  std::span<float> amax) {
  constexpr const char* kFn = "AbsMaxGrid";
  uint64_t n = 0, entries = 0;
  AMN_RETURN_IF_ERROR(CheckRows(kFn, in, &n));
  AMN_RETURN_IF_ERROR(CheckGrid(kFn, in, group_rows, group_cols, &entries));
  AMN_RETURN_IF_ERROR(CheckCount(kFn, "amax", amax.size(), entries));
  AMN_RETURN_IF_ERROR(internal::PrepareDispatch());
  if (n == 0) return Status::Ok();
  const uint64_t bad = internal::EncodeAbsMaxGrid(
      kernels::AbsMaxGridArgs{Input(in), group_rows, group_cols, amax.data()}, nullptr);
  if (bad != kernels::kAllFinite) return NonFinite(kFn, bad);
  return Status::Ok();
}

Status QuantizeFp8(const FloatRows& in, uint64_t group_rows, uint64_t group_cols,
                   Fp8Format format, std::span<const float> scales, std::span<std::byte> codes,
                   QuantError* error) {
  constexpr const char* kFn = "QuantizeFp8";
  uint64_t n = 0, entries = 0;
  AMN_RETURN_IF_ERROR(CheckRows(kFn, in, &n));
  AMN_RETURN_IF_ERROR(CheckGrid(kFn, in, group_rows, group_cols, &entries));
  AMN_RETURN_IF_ERROR(CheckCount(kFn, "scales", scales.size(), entries));
  AMN_RETURN_IF_ERROR(CheckCount(kFn, "codes", codes.size(), n));
  if (format != Fp8Format::kE4m3 && format != Fp8Format::kE5m2) {
    return InvalidArgument(kFn, "unknown FP8 format");
  }
  AMN_RETURN_IF_ERROR(CheckNonNegative(kFn, "scales", scales, /*zero_allowed=*/false));
  AMN_RETURN_IF_ERROR(internal::PrepareDispatch());
  kernels::ErrorSums sums;
  if (n != 0) {
    const uint64_t bad = internal::EncodeFp8Quant(
        kernels::Fp8QuantArgs{Input(in), group_rows, group_cols, format == Fp8Format::kE5m2,
                              scales.data(), reinterpret_cast<uint8_t*>(codes.data())},
        error != nullptr ? &sums : nullptr);
    if (bad != kernels::kAllFinite) return NonFinite(kFn, bad);
  }
  Report(sums, n, error);
  return Status::Ok();
}

void Bnb4Codebook(Bnb4Type type, std::span<float, 16> out) {
  const auto& cb = type == Bnb4Type::kFp4 ? bnb::kFp4Codebook : bnb::kNf4Codebook;
  for (size_t i = 0; i < 16; ++i) out[i] = cb[i];
}

Status QuantizeBnb4(const FloatRows& in, uint64_t block_size, Bnb4Type type, bool absmax_given,
                    std::span<float> absmax, std::span<std::byte> packed, QuantError* error) {
  constexpr const char* kFn = "QuantizeBnb4";
  uint64_t n = 0;
  AMN_RETURN_IF_ERROR(CheckRows(kFn, in, &n));
  if (block_size < 2 || block_size % 2 != 0) {
    return InvalidArgument(
        kFn, "block_size must be even and at least 2, not " + std::to_string(block_size));
  }
  if (type != Bnb4Type::kNf4 && type != Bnb4Type::kFp4) {
    return InvalidArgument(kFn, "unknown 4-bit type");
  }
  AMN_RETURN_IF_ERROR(CheckCount(kFn, "absmax", absmax.size(), CeilDiv(n, block_size)));
  AMN_RETURN_IF_ERROR(CheckCount(kFn, "packed", packed.size(), CeilDiv(n, 2)));
  if (absmax_given) {
    AMN_RETURN_IF_ERROR(CheckNonNegative(kFn, "absmax", absmax, /*zero_allowed=*/true));
  }
  AMN_RETURN_IF_ERROR(internal::PrepareDispatch());
  kernels::ErrorSums sums;
  if (n != 0) {
    const uint64_t bad = internal::EncodeBnb4Quant(
        kernels::Bnb4QuantArgs{Input(in), block_size, type == Bnb4Type::kFp4, absmax_given,
                               absmax.data(), reinterpret_cast<uint8_t*>(packed.data())},
        error != nullptr ? &sums : nullptr);
    if (bad != kernels::kAllFinite) return NonFinite(kFn, bad);
  }
  Report(sums, n, error);
  return Status::Ok();
}

void BnbDynamicMap(std::span<float, 256> out) {
  static const std::array<float, 256> kMap = ref::BnbDynamicMapRef();
  for (size_t i = 0; i < 256; ++i) out[i] = kMap[i];
}

Status QuantizeBnbNested(std::span<const float> absmax, uint64_t nested_block_size,
                         std::span<uint8_t> codes, std::span<float> nested_absmax,
                         float* offset) {
  constexpr const char* kFn = "QuantizeBnbNested";
  if (nested_block_size == 0) return InvalidArgument(kFn, "nested_block_size must be at least 1");
  if (offset == nullptr) return InvalidArgument(kFn, "offset must not be null");
  AMN_RETURN_IF_ERROR(CheckCount(kFn, "codes", codes.size(), absmax.size()));
  AMN_RETURN_IF_ERROR(CheckCount(kFn, "nested_absmax", nested_absmax.size(),
                                 CeilDiv(absmax.size(), nested_block_size)));
  AMN_RETURN_IF_ERROR(CheckNonNegative(kFn, "absmax", absmax, /*zero_allowed=*/true));
  // A vector of n / block_size entries: the scalar reference is the kernel
  // (1/64 of the 4-bit pass, too little to dispatch).
  ref::QuantizeBnbNestedRef(absmax.data(), absmax.size(), nested_block_size, codes.data(),
                            nested_absmax.data(), offset);
  return Status::Ok();
}

Status QuantizeBnbNestedBlocks(std::span<const float> absmax, uint64_t nested_block_size,
                               float offset, std::span<uint8_t> codes,
                               std::span<float> nested_absmax) {
  constexpr const char* kFn = "QuantizeBnbNestedBlocks";
  if (nested_block_size == 0) return InvalidArgument(kFn, "nested_block_size must be at least 1");
  if (!std::isfinite(offset)) return InvalidArgument(kFn, "offset must be finite");
  if (!codes.empty()) AMN_RETURN_IF_ERROR(CheckCount(kFn, "codes", codes.size(), absmax.size()));
  AMN_RETURN_IF_ERROR(CheckCount(kFn, "nested_absmax", nested_absmax.size(),
                                 CeilDiv(absmax.size(), nested_block_size)));
  AMN_RETURN_IF_ERROR(CheckNonNegative(kFn, "absmax", absmax, /*zero_allowed=*/true));
  ref::QuantizeBnbNestedBlocksRef(absmax.data(), absmax.size(), nested_block_size, offset,
                                  codes.empty() ? nullptr : codes.data(), nested_absmax.data());
  return Status::Ok();
}

Status BnbNestedOffset(std::span<const float> absmax, float* offset) {
  constexpr const char* kFn = "BnbNestedOffset";
  if (offset == nullptr) return InvalidArgument(kFn, "offset must not be null");
  AMN_RETURN_IF_ERROR(CheckNonNegative(kFn, "absmax", absmax, /*zero_allowed=*/true));
  *offset = ref::BnbNestedOffsetRef(absmax.data(), absmax.size());
  return Status::Ok();
}

Status QuantizeBnbInt8(const FloatRows& in, bool scb_given, std::span<float> scb,
                       std::span<int8_t> codes, QuantError* error) {
  constexpr const char* kFn = "QuantizeBnbInt8";
  uint64_t n = 0;
  AMN_RETURN_IF_ERROR(CheckRows(kFn, in, &n));
  AMN_RETURN_IF_ERROR(CheckCount(kFn, "scb", scb.size(), in.rows));
  AMN_RETURN_IF_ERROR(CheckCount(kFn, "codes", codes.size(), n));
  if (scb_given) AMN_RETURN_IF_ERROR(CheckNonNegative(kFn, "scb", scb, /*zero_allowed=*/true));
  AMN_RETURN_IF_ERROR(internal::PrepareDispatch());
  kernels::ErrorSums sums;
  if (n != 0) {
    const uint64_t bad = internal::EncodeBnbInt8Quant(
        kernels::BnbInt8QuantArgs{Input(in), scb_given, scb.data(), codes.data()},
        error != nullptr ? &sums : nullptr);
    if (bad != kernels::kAllFinite) return NonFinite(kFn, bad);
  } else if (!scb_given) {
    // rows with no columns: the max of nothing is 0.
    for (float& s : scb) s = 0.0f;
  }
  Report(sums, n, error);
  return Status::Ok();
}

}  // namespace amn
