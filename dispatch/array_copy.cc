// Strided copies, byte swaps and float conversions for plain arrays.
#include "amn/array_copy.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "amn/convert.h"

namespace amn {
namespace {

template <typename T>
void SwapEach(std::byte* data, uint64_t count) {
  for (uint64_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, data + i * sizeof(T), sizeof(T));
    if constexpr (sizeof(T) == 2) v = __builtin_bswap16(v);
    if constexpr (sizeof(T) == 4) v = __builtin_bswap32(v);
    if constexpr (sizeof(T) == 8) v = __builtin_bswap64(v);
    std::memcpy(data + i * sizeof(T), &v, sizeof(T));
  }
}

void SwapBytes(std::byte* data, size_t elem_bytes, uint64_t count) {
  switch (elem_bytes) {
    case 2: SwapEach<uint16_t>(data, count); break;
    case 4: SwapEach<uint32_t>(data, count); break;
    case 8: SwapEach<uint64_t>(data, count); break;
    default: break;  // single bytes have no order
  }
}

size_t FloatBytes(FloatType t) {
  switch (t) {
    case FloatType::kF64: return 8;
    case FloatType::kF32: return 4;
    case FloatType::kF8E4m3:
    case FloatType::kF8E5m2: return 1;
    default: return 2;
  }
}

template <typename T>
std::span<T> As(std::span<std::byte> bytes) {
  return {reinterpret_cast<T*>(bytes.data()), bytes.size() / sizeof(T)};
}
template <typename T>
std::span<const T> As(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
}

}  // namespace

Status CopyStridedElements(const StridedView& view, uint64_t first, uint64_t count,
                           bool swap_bytes, std::span<std::byte> out) {
  const size_t e = view.elem_bytes;
  if (e != 1 && e != 2 && e != 4 && e != 8) {
    return Status(StatusCode::kInvalidArgument, "element size must be 1, 2, 4 or 8 bytes");
  }
  if (view.shape.size() != view.strides.size()) {
    return Status(StatusCode::kInvalidArgument, "shape and strides have different ranks");
  }
  if (count > out.size() / e) {
    return Status(StatusCode::kInvalidArgument, "output span too small");
  }
  if (count == 0) return Status::Ok();
  const size_t rank = view.shape.size();
  if (rank == 0) {  // a scalar
    std::memcpy(out.data(), view.storage + view.offset * e, e);
    if (swap_bytes) SwapBytes(out.data(), e, 1);
    return Status::Ok();
  }
  // The multi-index of `first` and the storage element it names.
  std::vector<uint64_t> index(rank);
  uint64_t rest = first, at = view.offset;
  for (size_t k = rank; k-- > 0;) {
    index[k] = rest % view.shape[k];
    rest /= view.shape[k];
    at += index[k] * view.strides[k];
  }
  const uint64_t inner = view.shape[rank - 1], inner_stride = view.strides[rank - 1];
  std::byte* dst = out.data();
  uint64_t left = count;
  while (left > 0) {
    // One run along the last dimension.
    const uint64_t run = std::min(left, inner - index[rank - 1]);
    if (inner_stride == 1) {
      std::memcpy(dst, view.storage + at * e, run * e);
    } else {
      for (uint64_t i = 0; i < run; ++i) {
        std::memcpy(dst + i * e, view.storage + (at + i * inner_stride) * e, e);
      }
    }
    dst += run * e;
    left -= run;
    if (left == 0) break;
    // Step to the start of the next run: carry through the outer dimensions.
    at -= index[rank - 1] * inner_stride;
    index[rank - 1] = 0;
    for (size_t k = rank - 1; k-- > 0;) {
      at += view.strides[k];
      if (++index[k] < view.shape[k]) break;
      at -= index[k] * view.strides[k];
      index[k] = 0;
    }
  }
  if (swap_bytes) SwapBytes(out.data(), e, count);
  return Status::Ok();
}

Status ConvertFloats(FloatType from, std::span<const std::byte> in, FloatType to,
                     std::span<std::byte> out) {
  const uint64_t count = in.size() / FloatBytes(from);
  if (in.size() % FloatBytes(from) != 0 || out.size() < count * FloatBytes(to)) {
    return Status(StatusCode::kInvalidArgument, "spans do not hold whole elements of both types");
  }
  if (from == to) {
    if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
    return Status::Ok();
  }
  if (to == FloatType::kF64 || to == FloatType::kF8E4m3 || to == FloatType::kF8E5m2) {
    return Status(StatusCode::kInvalidArgument, "conversions to F64 or FP8 are not offered");
  }
  if (from == FloatType::kF8E4m3 || from == FloatType::kF8E5m2) {
    const std::span<const uint8_t> q = As<uint8_t>(in);
    const bool e4m3 = from == FloatType::kF8E4m3;
    if (to == FloatType::kF32) return e4m3 ? ConvertE4m3ToF32(q, As<float>(out)) : ConvertE5m2ToF32(q, As<float>(out));
    if (to == FloatType::kBf16) {
      return e4m3 ? ConvertE4m3ToBf16(q, As<uint16_t>(out)) : ConvertE5m2ToBf16(q, As<uint16_t>(out));
    }
    return e4m3 ? ConvertE4m3ToF16(q, As<uint16_t>(out)) : ConvertE5m2ToF16(q, As<uint16_t>(out));
  }
  if (from == FloatType::kF64) {
    const std::span<const double> d = As<double>(in);
    if (to == FloatType::kF32) {
      float* f = As<float>(out).data();
      for (uint64_t i = 0; i < count; ++i) f[i] = static_cast<float>(d[i]);
      return Status::Ok();
    }
    // Through F32 in blocks, so no buffer grows with the input.
    constexpr uint64_t kBlock = 4096;
    float block[kBlock];
    for (uint64_t i = 0; i < count; i += kBlock) {
      const uint64_t n = std::min(kBlock, count - i);
      for (uint64_t j = 0; j < n; ++j) block[j] = static_cast<float>(d[i + j]);
      AMN_RETURN_IF_ERROR(ConvertFloats(FloatType::kF32,
                                        std::as_bytes(std::span<const float>(block, n)), to,
                                        out.subspan(i * 2, n * 2)));
    }
    return Status::Ok();
  }
  if (from == FloatType::kF32) {
    const std::span<const float> f = As<float>(in);
    return to == FloatType::kBf16 ? ConvertF32ToBf16(f, As<uint16_t>(out))
                                  : ConvertF32ToF16(f, As<uint16_t>(out));
  }
  const std::span<const uint16_t> h = As<uint16_t>(in);
  if (from == FloatType::kF16) {
    return to == FloatType::kF32 ? ConvertF16ToF32(h, As<float>(out))
                                 : ConvertF16ToBf16(h, As<uint16_t>(out));
  }
  return to == FloatType::kF32 ? ConvertBf16ToF32(h, As<float>(out))
                               : ConvertBf16ToF16(h, As<uint16_t>(out));
}

}  // namespace amn
