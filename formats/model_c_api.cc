// The model C ABI (amn/amn_model.h) over amn::Model's per-tensor API
// (formats/model_tensors.cc): the list made once at open, its strings owned
// by the handle; errors through the C ABI's per-thread last error
// (dispatch/c_api_internal.h).
#include "amn/amn_model.h"

#include <cstring>
#include <new>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "amn/model.h"
#include "dispatch/c_api_internal.h"

struct amn_model {
  explicit amn_model(amn::Model m) : model(std::move(m)) {}
  amn::Model model;
  std::vector<amn::TensorInfo> tensors;  // remember's default output type
  std::vector<uint64_t> elements;
  std::unordered_map<std::string, size_t> by_name;
};

namespace amn::capi {
namespace {

// A model's status as the C ABI reports it: the input's faults apart from
// the caller's (amn.h AMN_ERR_INVALID_INPUT, AMN_ERR_IO).
amn_status ModelStatus(const char* function, const Status& status) {
  if (status.ok()) return Succeed();
  amn_status code = AMN_ERR_INTERNAL;
  switch (status.code()) {
    case StatusCode::kOk: return Succeed();
    case StatusCode::kInvalidArgument: code = AMN_ERR_INVALID_ARGUMENT; break;
    case StatusCode::kTruncated:
    case StatusCode::kInvalid:
    case StatusCode::kLimitExceeded: code = AMN_ERR_INVALID_INPUT; break;
    case StatusCode::kUnsupported: code = AMN_ERR_UNSUPPORTED; break;
    case StatusCode::kIo: code = AMN_ERR_IO; break;
    case StatusCode::kCancelled: code = AMN_ERR_CANCELLED; break;
  }
  std::string text = status.message();
  if (!status.tensor().empty()) text += " (tensor '" + status.tensor() + "')";
  return Fail(code, function, text.c_str());
}

amn_status Dequantize(const char* function, const amn_model* model, size_t index,
                      const amn_dtype& dtype, void* dst, size_t dst_bytes, unsigned threads) {
  ElemType to;
  if (!FloatType(dtype, &to)) return Fail(AMN_ERR_INVALID_ARGUMENT, function, "dtype must be AMN_F32, AMN_F16 or AMN_BF16");
  const TensorInfo& t = model->tensors[index];
  uint64_t bytes = t.bytes;
  if (t.converts && !Mul(model->elements[index], ElemTypeBytes(to), &bytes)) {
    return Fail(AMN_ERR_INVALID_INPUT, function, "the tensor's size overflows");
  }
  if (dst_bytes < bytes) {
    const std::string text = "dst_bytes " + std::to_string(dst_bytes) + " is under the " +
                             std::to_string(bytes) + " bytes of tensor '" + t.name + "'";
    return Fail(AMN_ERR_BUFFER_TOO_SMALL, function, text.c_str());
  }
  if (dst == nullptr && bytes != 0) return Fail(AMN_ERR_INVALID_ARGUMENT, function, "dst is NULL");
  DequantizeOptions options;
  options.threads = threads;
  const std::span<std::byte> out(static_cast<std::byte*>(dst), static_cast<size_t>(bytes));
  return ModelStatus(function, model->model.DequantizeTensor(t.name, to, out, options));
}

}  // namespace
}  // namespace amn::capi

using amn::capi::Fail;
using amn::capi::Guarded;

amn_status amn_model_open(const char* path, amn_model** model) {
  static constexpr char kFn[] = "amn_model_open";
  return Guarded(kFn, [&]() -> amn_status {
    if (model == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "model is NULL");
    *model = nullptr;
    if (path == nullptr || *path == '\0') return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "path is NULL or empty");
    auto opened = amn::Model::Open(path, amn::ParseLimits{});
    if (!opened.ok()) return amn::capi::ModelStatus(kFn, opened.status());
    auto handle = std::make_unique<amn_model>(std::move(*opened));
    auto list = handle->model.OutputTensors();
    if (!list.ok()) return amn::capi::ModelStatus(kFn, list.status());
    handle->tensors = std::move(*list);
    for (size_t i = 0; i < handle->tensors.size(); ++i) {
      uint64_t n = 1;
      for (uint64_t d : handle->tensors[i].shape) {
        if (!amn::capi::Mul(n, d, &n)) return Fail(AMN_ERR_INVALID_INPUT, kFn, "a tensor's element count overflows");
      }
      handle->elements.push_back(n);
      handle->by_name.emplace(handle->tensors[i].name, i);
    }
    *model = handle.release();
    return amn::capi::Succeed();
  });
}

void amn_model_close(amn_model* model) { delete model; }

size_t amn_model_tensor_count(const amn_model* model) {
  return model == nullptr ? 0 : model->tensors.size();
}

amn_status amn_model_tensor_info(const amn_model* model, size_t index, amn_tensor_info* info) {
  static constexpr char kFn[] = "amn_model_tensor_info";
  if (model == nullptr || info == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "model or info is NULL");
  if (index >= model->tensors.size()) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "index is out of range");
  const amn::TensorInfo& t = model->tensors[index];
  info->name = t.name.c_str();
  info->source_dtype = t.source_dtype.c_str();
  info->scheme = t.scheme.c_str();
  info->dtype = t.dtype.c_str();
  info->shard = t.shard.c_str();
  info->quantized = t.quantized ? 1 : 0;
  info->converts = t.converts ? 1 : 0;
  info->rank = t.shape.size();
  info->shape = t.shape.data();
  info->elements = model->elements[index];
  info->bytes = t.bytes;
  return amn::capi::Succeed();
}

amn_status amn_model_find_tensor(const amn_model* model, const char* name, size_t* index) {
  static constexpr char kFn[] = "amn_model_find_tensor";
  return Guarded(kFn, [&]() -> amn_status {
    if (model == nullptr || name == nullptr || index == nullptr) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "model, name or index is NULL");
    }
    const auto it = model->by_name.find(name);
    if (it == model->by_name.end()) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "no tensor has this name");
    *index = it->second;
    return amn::capi::Succeed();
  });
}

amn_status amn_model_dequantize_tensor(const amn_model* model, const char* name, amn_dtype dtype,
                                       void* dst, size_t dst_bytes, unsigned threads) {
  static constexpr char kFn[] = "amn_model_dequantize_tensor";
  return Guarded(kFn, [&]() -> amn_status {
    if (model == nullptr || name == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "model or name is NULL");
    const auto it = model->by_name.find(name);
    if (it == model->by_name.end()) {
      const std::string text = "no tensor named '" + std::string(name).substr(0, 512) +
                               "' (scales, zero points and other companions are part of their weight)";
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, text.c_str());
    }
    return amn::capi::Dequantize(kFn, model, it->second, dtype, dst, dst_bytes, threads);
  });
}

amn_status amn_model_dequantize_tensor_at(const amn_model* model, size_t index, amn_dtype dtype,
                                          void* dst, size_t dst_bytes, unsigned threads) {
  static constexpr char kFn[] = "amn_model_dequantize_tensor_at";
  return Guarded(kFn, [&]() -> amn_status {
    if (model == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "model is NULL");
    if (index >= model->tensors.size()) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "index is out of range");
    return amn::capi::Dequantize(kFn, model, index, dtype, dst, dst_bytes, threads);
  });
}

amn_status amn_model_dequantize_tensor_chunks(const amn_model* model, size_t index, amn_dtype dtype,
                                              size_t chunk_bytes, unsigned threads, amn_tensor_sink sink,
                                              void* user) {
  static constexpr char kFn[] = "amn_model_dequantize_tensor_chunks";
  return Guarded(kFn, [&]() -> amn_status {
    if (model == nullptr || sink == nullptr) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "model or sink is NULL");
    if (index >= model->tensors.size()) return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "index is out of range");
    amn::ElemType to;
    if (!amn::capi::FloatType(dtype, &to)) {
      return Fail(AMN_ERR_INVALID_ARGUMENT, kFn, "dtype must be AMN_F32, AMN_F16 or AMN_BF16");
    }
    amn::DequantizeOptions options;
    options.threads = threads;
    if (chunk_bytes != 0) options.chunk_bytes = chunk_bytes;
    const amn::TensorInfo& t = model->tensors[index];
    return amn::capi::ModelStatus(
        kFn, model->model.DequantizeTensorChunks(
                 t.name, to,
                 [&](uint64_t offset, std::span<const std::byte> bytes) {
                   const int rc = sink(user, offset, bytes.data(), bytes.size());
                   if (rc == 0) return amn::Status::Ok();
                   return amn::Status(amn::StatusCode::kCancelled,
                                      "the sink returned " + std::to_string(rc) + " at byte " +
                                          std::to_string(offset));
                 },
                 options));
  });
}
