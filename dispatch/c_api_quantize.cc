// The C ABI (amn/amn.h), part 5: the encoders of amn/quantize.h. Each entry
// point checks its spans (non-NULL when non-empty, no wrap, the input
// exactly its shape's bytes, every output at least what the call writes and
// overlapping neither the input nor another output), then runs the checked
// C++ call, whose own refusals (NaN/Inf input, bad given scales) come back
// as AMN_ERR_INVALID_ARGUMENT with its message.
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>

#include "amn/amn.h"
#include "amn/quantize.h"
#include "dispatch/c_api_internal.h"

namespace amn::capi {
namespace {

// One output span of a call: `need` bytes are written.
struct Output {
  const char* name;
  const void* data;
  size_t bytes;
  uint64_t need;
};

// The input's type, shape and span; *in gets the C++ view.
amn_status CheckSrc(const char* fn, const amn_quantize_src& src, FloatRows* in) {
  if (!FloatType(src.type, &in->type)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "src.type must be AMN_F32, AMN_F16 or AMN_BF16");
  }
  uint64_t n = 0, bytes = 0;
  if (!Mul(src.rows, src.cols, &n) || !Mul(n, ElemTypeBytes(in->type), &bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "src.rows * src.cols overflows");
  }
  if (!ValidSpan(src.data, src.data_bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "src.data is NULL or wraps the address space");
  }
  if (src.data_bytes != bytes) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "src.data_bytes is not rows * cols elements");
  }
  in->rows = src.rows;
  in->cols = src.cols;
  in->bytes = bytes == 0 ? std::span<const std::byte>()
                         : std::span<const std::byte>(static_cast<const std::byte*>(src.data),
                                                      src.data_bytes);
  return AMN_OK;
}

// Outputs: valid spans, large enough, disjoint from src and from each other.
amn_status CheckOutputs(const char* fn, const amn_quantize_src& src,
                        std::initializer_list<Output> outputs) {
  for (const Output& o : outputs) {
    if (!ValidSpan(o.data, o.bytes) || (o.need != 0 && o.data == nullptr)) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, fn, o.name);
    }
  }
  for (const Output& o : outputs) {
    if (o.bytes < o.need) return Fail(AMN_ERR_BUFFER_TOO_SMALL, fn, o.name);
  }
  for (const Output& o : outputs) {
    const size_t used = static_cast<size_t>(o.need);
    if (Overlaps(o.data, used, src.data, src.data_bytes)) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "an output overlaps src");
    }
    for (const Output& other : outputs) {
      if (&other != &o && Overlaps(o.data, used, other.data, static_cast<size_t>(other.need))) {
        return Fail(AMN_ERR_INVALID_ARGUMENT, fn, "two outputs overlap");
      }
    }
  }
  return CheckDispatch(fn);
}

void CopyError(const QuantError& e, amn_quant_error* out) {
  if (out == nullptr) return;
  *out = amn_quant_error{e.elements, e.sum_abs, e.max_abs, e.sum_sq_err, e.sum_sq_ref};
}

template <typename T>
std::span<T> Span(T* p, uint64_t n) {
  return n == 0 ? std::span<T>() : std::span<T>(p, static_cast<size_t>(n));
}

amn_status QuantizeFp8C(const amn_quantize_fp8_params* p, float* scales, size_t scales_len,
                        uint8_t* codes, size_t codes_bytes, amn_quant_error* error) {
  constexpr const char* kFn = "amn_quantize_fp8";
  if (p == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "params is NULL");
  FloatRows in;
  amn_status st = CheckSrc(kFn, p->src, &in);
  if (st != AMN_OK) return st;
  if (p->group_rows == 0 || p->group_cols == 0) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "group_rows and group_cols must be >= 1");
  }
  const int64_t format = EnumValue(p->format);
  if (format != AMN_E4M3 && format != AMN_E5M2) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "format must be AMN_E4M3 or AMN_E5M2");
  }
  const Fp8Format f = format == AMN_E5M2 ? Fp8Format::kE5m2 : Fp8Format::kE4m3;
  const uint64_t n = in.rows * in.cols;
  // Each factor is at most rows or cols, whose product was checked.
  const uint64_t grid = CeilDiv(in.rows, p->group_rows) * CeilDiv(in.cols, p->group_cols);
  uint64_t grid_bytes = 0;
  if (!Mul(grid, 4, &grid_bytes)) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "grid overflows");
  uint64_t scales_bytes = 0;
  if (!Mul(scales_len, 4, &scales_bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "scales_len overflows");
  }
  st = CheckOutputs(kFn, p->src,
                    {{"scales", scales, static_cast<size_t>(scales_bytes), grid_bytes},
                     {"codes", codes, codes_bytes, n}});
  if (st != AMN_OK) return st;
  const std::span<float> grid_span = Span(scales, grid);
  if (p->scales_given == 0) {
    const Status s = AbsMaxGrid(in, p->group_rows, p->group_cols, grid_span);
    if (!s.ok()) return FromStatus(kFn, s);
    for (float& v : grid_span) v = Fp8ScaleFromAmax(v, f);
  }
  QuantError e;
  const Status s =
      QuantizeFp8(in, p->group_rows, p->group_cols, f, grid_span,
                  Span(reinterpret_cast<std::byte*>(codes), n), error != nullptr ? &e : nullptr);
  if (!s.ok()) return FromStatus(kFn, s);
  CopyError(e, error);
  return Succeed();
}

amn_status QuantizeBnb4C(const amn_quantize_bnb4_params* p, float* absmax, size_t absmax_len,
                         uint8_t* packed, size_t packed_bytes, amn_quant_error* error) {
  constexpr const char* kFn = "amn_quantize_bnb4";
  if (p == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "params is NULL");
  FloatRows in;
  amn_status st = CheckSrc(kFn, p->src, &in);
  if (st != AMN_OK) return st;
  if (p->block_size < 2 || p->block_size % 2 != 0) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "block_size must be even and at least 2");
  }
  const int64_t type = EnumValue(p->type);
  if (type != AMN_BNB_NF4 && type != AMN_BNB_FP4) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "type must be AMN_BNB_NF4 or AMN_BNB_FP4");
  }
  const uint64_t n = in.rows * in.cols;
  const uint64_t nb = CeilDiv(n, p->block_size);
  uint64_t absmax_bytes = 0;
  if (!Mul(absmax_len, 4, &absmax_bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "absmax_len overflows");
  }
  st = CheckOutputs(kFn, p->src,
                    {{"absmax", absmax, static_cast<size_t>(absmax_bytes), 4 * nb},
                     {"packed", packed, packed_bytes, CeilDiv(n, 2)}});
  if (st != AMN_OK) return st;
  QuantError e;
  const Status s = QuantizeBnb4(
      in, p->block_size, type == AMN_BNB_FP4 ? Bnb4Type::kFp4 : Bnb4Type::kNf4,
      p->absmax_given != 0, Span(absmax, nb),
      Span(reinterpret_cast<std::byte*>(packed), CeilDiv(n, 2)), error != nullptr ? &e : nullptr);
  if (!s.ok()) return FromStatus(kFn, s);
  CopyError(e, error);
  return Succeed();
}

amn_status QuantizeBnbNestedC(const float* absmax, size_t absmax_len, uint64_t nested_block_size,
                              uint8_t* codes, size_t codes_len, float* nested_absmax,
                              size_t nested_absmax_len, float* offset) {
  constexpr const char* kFn = "amn_quantize_bnb_nested";
  if (nested_block_size == 0) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "nested_block_size must be >= 1");
  }
  if (offset == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "offset is NULL");
  uint64_t in_bytes = 0, nested_bytes = 0;
  if (!Mul(absmax_len, 4, &in_bytes) || !Mul(nested_absmax_len, 4, &nested_bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "a length overflows");
  }
  const uint64_t nn = CeilDiv(absmax_len, nested_block_size);
  const amn_quantize_src src{AMN_F32, 1, absmax_len, absmax, static_cast<size_t>(in_bytes)};
  if (!ValidSpan(absmax, static_cast<size_t>(in_bytes))) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "absmax is NULL or wraps the address space");
  }
  const amn_status st =
      CheckOutputs(kFn, src,
                   {{"codes", codes, codes_len, absmax_len},
                    {"nested_absmax", nested_absmax, static_cast<size_t>(nested_bytes), 4 * nn},
                    {"offset", offset, sizeof(float), sizeof(float)}});
  if (st != AMN_OK) return st;
  const Status s = QuantizeBnbNested(Span(absmax, absmax_len), nested_block_size,
                                     Span(codes, absmax_len), Span(nested_absmax, nn), offset);
  if (!s.ok()) return FromStatus(kFn, s);
  return Succeed();
}

amn_status QuantizeBnbInt8C(const amn_quantize_bnb_int8_params* p, float* scb, size_t scb_len,
                            int8_t* codes, size_t codes_len, amn_quant_error* error) {
  constexpr const char* kFn = "amn_quantize_bnb_int8";
  if (p == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "params is NULL");
  FloatRows in;
  amn_status st = CheckSrc(kFn, p->src, &in);
  if (st != AMN_OK) return st;
  uint64_t scb_bytes = 0, rows_bytes = 0;
  if (!Mul(scb_len, 4, &scb_bytes) || !Mul(in.rows, 4, &rows_bytes)) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "a length overflows");
  }
  const uint64_t n = in.rows * in.cols;
  st = CheckOutputs(kFn, p->src,
                    {{"scb", scb, static_cast<size_t>(scb_bytes), rows_bytes},
                     {"codes", codes, codes_len, n}});
  if (st != AMN_OK) return st;
  QuantError e;
  const Status s = QuantizeBnbInt8(in, p->scb_given != 0, Span(scb, in.rows), Span(codes, n),
                                   error != nullptr ? &e : nullptr);
  if (!s.ok()) return FromStatus(kFn, s);
  CopyError(e, error);
  return Succeed();
}

}  // namespace
}  // namespace amn::capi

using amn::capi::Fail;
using amn::capi::Guarded;

extern "C" {

amn_status amn_quantize_fp8(const amn_quantize_fp8_params* params, float* scales,
                            size_t scales_len, uint8_t* codes, size_t codes_bytes,
                            amn_quant_error* error) {
  return Guarded("amn_quantize_fp8", [&] {
    return amn::capi::QuantizeFp8C(params, scales, scales_len, codes, codes_bytes, error);
  });
}

amn_status amn_quantize_bnb4(const amn_quantize_bnb4_params* params, float* absmax,
                             size_t absmax_len, uint8_t* packed, size_t packed_bytes,
                             amn_quant_error* error) {
  return Guarded("amn_quantize_bnb4", [&] {
    return amn::capi::QuantizeBnb4C(params, absmax, absmax_len, packed, packed_bytes, error);
  });
}

amn_status amn_quantize_bnb_nested(const float* absmax, size_t absmax_len,
                                   uint64_t nested_block_size, uint8_t* codes, size_t codes_len,
                                   float* nested_absmax, size_t nested_absmax_len,
                                   float* offset) {
  return Guarded("amn_quantize_bnb_nested", [&] {
    return amn::capi::QuantizeBnbNestedC(absmax, absmax_len, nested_block_size, codes, codes_len,
                                         nested_absmax, nested_absmax_len, offset);
  });
}

amn_status amn_quantize_bnb_int8(const amn_quantize_bnb_int8_params* params, float* scb,
                                 size_t scb_len, int8_t* codes, size_t codes_len,
                                 amn_quant_error* error) {
  return Guarded("amn_quantize_bnb_int8", [&] {
    return amn::capi::QuantizeBnbInt8C(params, scb, scb_len, codes, codes_len, error);
  });
}

amn_status amn_bnb4_codebook(amn_bnb4_type type, float* out, size_t out_len) {
  constexpr const char* kFn = "amn_bnb4_codebook";
  const int64_t t = amn::capi::EnumValue(type);
  if (t != AMN_BNB_NF4 && t != AMN_BNB_FP4) {
    return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "type must be AMN_BNB_NF4 or AMN_BNB_FP4");
  }
  if (out == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "out is NULL");
  if (out_len < 16) return Fail(AMN_ERR_BUFFER_TOO_SMALL, kFn, "out needs 16 entries");
  amn::Bnb4Codebook(t == AMN_BNB_FP4 ? amn::Bnb4Type::kFp4 : amn::Bnb4Type::kNf4,
                    std::span<float, 16>(out, 16));
  return amn::capi::Succeed();
}

amn_status amn_bnb_dynamic_map(float* out, size_t out_len) {
  constexpr const char* kFn = "amn_bnb_dynamic_map";
  if (out == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "out is NULL");
  if (out_len < 256) return Fail(AMN_ERR_BUFFER_TOO_SMALL, kFn, "out needs 256 entries");
  amn::BnbDynamicMap(std::span<float, 256>(out, 256));
  return amn::capi::Succeed();
}

}  // extern "C"
