// Laying a remember plan out as one GGUF file (offsets as ggml's
// gguf_init_from_file checks them: each the padded sum of the ones before).
#include "formats/gguf_output_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "amn/ggml_dequant.h"
#include "formats/byte_source.h"
#include "formats/checked_math.h"
#include "formats/encode_job.h"
#include "formats/gguf_quant_choice.h"
#include "formats/gguf_quant_mixture.h"

namespace amn::formats {
namespace {

Status Overflow(const std::string& name) {
  return Status(StatusCode::kLimitExceeded, MessageSafe(name) + ": the output size overflows 64 bits");
}

// A float tensor made `to` instead of its planned float type (the engine
// decodes each job to whatever dtype it names).
Status Retype(OutputTensor& t, Dtype to) {
  if (t.dtype == to || !IsFloat(t.dtype)) return Status::Ok();
  if (t.decode == Decode::kCopy) return ConvertFloatTensor(t, to);
  if (t.decode == Decode::kConvert && t.source_dtype == to) {
    t.decode = Decode::kCopy;  // converting X to X is the copy
    t.dtype = to;
    t.bytes = t.input_bytes;
    return Status::Ok();
  }
  if (t.decode == Decode::kConvert || t.decode == Decode::kFp8 || t.decode == Decode::kGgml ||
      t.decode == Decode::kPacked || t.decode == Decode::kArray) {
    const uint64_t elements = t.bytes / DtypeBytes(t.dtype);
    t.dtype = to;
    if (!CheckedMul(elements, DtypeBytes(to), &t.bytes)) return Overflow(t.name);
  }
  return Status::Ok();
}

// `t` (planned as F32) made an encode job of ggml `type`, row by row; its
// source keeps the rows' permutation, if any.
Status MakeGgmlEncode(OutputTensor& t, GgmlType type, uint64_t heads) {
  if (t.dtype != Dtype::kF32 ||
      (t.decode != Decode::kCopy && t.decode != Decode::kConvert && t.decode != Decode::kArray)) {
    return Status(StatusCode::kUnsupported,
                  "tensor '" + MessageSafe(t.name) +
                      "': quantizing a quantized or packed input "
                      "to a quantized GGUF is not implemented yet; remember the model first "
                      "(amn remember --to f32), then convert the plain one");
  }
  auto source = std::make_shared<OutputTensor>(t);
  source->permute_heads = heads;
  auto job = std::make_shared<EncodeJob>();
  job->kind = EncodeKind::kGgml;
  job->ggml_type = type;
  job->source_type = ElemType::kF32;
  job->cols = t.shape.back();
  job->rows = t.bytes / 4 / job->cols;
  t.decode = Decode::kEncode;
  t.dtype = Dtype::kU8;
  t.ggml_type = static_cast<uint32_t>(type);
  t.bytes = EncodedBytes(*job, 0, Elements(*job));
  t.permute_heads = 0;
  t.source = std::move(source);
  t.encode = std::move(job);
  return Status::Ok();
}

// llama-quantize's lookup (src/llama-quant.cpp): by output name; no entry,
// no importance values; a size other than cols x the matrices above the
// rows is an error, except for token_embd.weight (quantized without).
Status GiveImatrix(OutputTensor& t, const GgufOutputOptions& options) {
  if (options.imatrix == nullptr) return Status::Ok();
  const auto it = options.imatrix->find(t.name);
  if (it == options.imatrix->end()) return Status::Ok();
  uint64_t mats = 1;
  for (size_t d = 0; d + 2 < t.shape.size(); ++d) mats *= t.shape[d];
  const uint64_t cols = t.encode->cols;
  if (it->second.size() != cols * mats) {
    if (t.name == "token_embd.weight") return Status::Ok();
    return Status(StatusCode::kInvalid,
                  MessageSafe(options.imatrix_file, kMessagePathBytes) + ": the entry for '" +
                      MessageSafe(t.name) + "' has " + std::to_string(it->second.size()) +
                      " values; the tensor needs " + std::to_string(cols * mats) + " (" +
                      std::to_string(cols) + " columns x " + std::to_string(mats) +
                      " matrices)");
  }
  t.encode->imatrix = std::move(it->second);  // output names are unique
  if (options.imatrix_used != nullptr) ++*options.imatrix_used;
  return Status::Ok();
}

// Checks that `t` can be streamed with its rows permuted (formats/
// remember_plan.h LlamaPermutedRow): a contiguous copy or conversion whose
// rows split into `heads` heads of even size.
Status CheckPermutable(const OutputTensor& t, const std::string& source_name, uint64_t heads) {
  if (t.decode != Decode::kCopy && t.decode != Decode::kConvert) {
    return Status(StatusCode::kUnsupported,
                  "tensor '" + MessageSafe(source_name) + "': llama.cpp's q/k row permutation of a "
                  "quantized or strided input is not implemented yet; remember the model first, "
                  "then convert the plain one");
  }
  const uint64_t rows = t.shape.empty() ? 0 : t.shape[0];
  if (rows == 0 || rows % heads != 0 || (rows / heads) % 2 != 0) {
    return Status(StatusCode::kInvalid, "tensor '" + MessageSafe(source_name) + "': " +
                                            std::to_string(rows) + " rows do not split into " +
                                            std::to_string(heads) + " heads of even size");
  }
  return Status::Ok();
}

}  // namespace

std::optional<uint32_t> GgmlTypeOfDtype(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF32: return 0;
    case Dtype::kF16: return 1;
    case Dtype::kBf16: return 30;
    case Dtype::kI8: return 24;
    case Dtype::kI16: return 25;
    case Dtype::kI32: return 26;
    case Dtype::kI64: return 27;
    case Dtype::kF64: return 28;
    default: return std::nullopt;
  }
}

Result<RememberPlan> PlanGgufOutput(RememberPlan plan, GgufMetadata metadata,
                                    const GgufOutputOptions& options,
                                    const std::atomic<bool>* cancel) {
  AMN_ASSIGN_OR_RETURN(const uint64_t alignment, GgufAlignment(metadata));
  OutputShard out;
  for (OutputShard& shard : plan.shards) {
    for (OutputTensor& t : shard.tensors) out.tensors.push_back(std::move(t));
  }
  plan.shards.clear();
  std::map<std::string, size_t> rank;
  for (size_t i = 0; i < options.order.size(); ++i) rank.emplace(options.order[i], i);
  std::stable_sort(out.tensors.begin(), out.tensors.end(),
                   [&](const OutputTensor& a, const OutputTensor& b) {
                     auto ra = rank.find(a.name), rb = rank.find(b.name);
                     const size_t ia = ra == rank.end() ? SIZE_MAX : ra->second;
                     const size_t ib = rb == rank.end() ? SIZE_MAX : rb->second;
                     return ia < ib;
                   });
  // llama-quantize decides each tensor's type knowing all of them.
  std::vector<GgufTypeChoice> choices(out.tensors.size());
  if (options.quantize) {
    std::vector<GgufTensorShape> shapes;
    shapes.reserve(out.tensors.size());
    for (const OutputTensor& t : out.tensors) {
      shapes.push_back({options.rename ? options.rename(t.name) : t.name, t.shape});
      if (t.bytes == 0) shapes.back().shape.assign(1, 0);  // empty: never quantized
    }
    AMN_ASSIGN_OR_RETURN(choices,
                         ChooseGgufTypes(shapes, *options.quantize, GgufQuantModelOf(metadata)));
  }
  std::vector<GgufTensorOut> infos;
  std::set<std::string, std::less<>> names;
  uint64_t offset = 0;
  for (size_t i = 0; i < out.tensors.size(); ++i) {
    AMN_RETURN_IF_ERROR(PollCancel(cancel, i));
    OutputTensor& t = out.tensors[i];
    if (t.shape.size() <= 1 && options.to != Dtype::kF32)
      AMN_RETURN_IF_ERROR(Retype(t, Dtype::kF32));
    const std::optional<uint32_t> type = GgmlTypeOfDtype(t.dtype);
    if (!type) {
      return Status(StatusCode::kUnsupported,
                    "tensor '" + MessageSafe(t.name) + "' is " + std::string(DtypeName(t.dtype)) +
                        ", which GGUF has no type for");
    }
    uint64_t heads = 0;
    if (options.permute_heads) {
      AMN_ASSIGN_OR_RETURN(heads, options.permute_heads(t));
    }
    const std::string source_name = t.name;
    if (options.rename) t.name = options.rename(t.name);
    if (!names.insert(t.name).second) {
      return Status(StatusCode::kInvalid, "two tensors would both be named '" + MessageSafe(t.name) +
                                              "' in the GGUF output");
    }
    if (choices[i].quantize) {
      if (heads != 0) AMN_RETURN_IF_ERROR(CheckPermutable(t, source_name, heads));
      const GgmlType row_type = choices[i].type;
      if (!choices[i].fallback.empty() && options.fallbacks != nullptr) {
        options.fallbacks->push_back(
            {t.name, std::string(FindGgmlType(static_cast<uint32_t>(row_type))->name),
             choices[i].fallback});
      }
      if (row_type == GgmlType::kF16 || row_type == GgmlType::kBF16) {
        AMN_RETURN_IF_ERROR(Retype(t, row_type == GgmlType::kF16 ? Dtype::kF16 : Dtype::kBf16));
      } else if (row_type != GgmlType::kF32) {
        AMN_RETURN_IF_ERROR(MakeGgmlEncode(t, row_type, heads));
        AMN_RETURN_IF_ERROR(GiveImatrix(t, options));
        if (t.encode->imatrix.empty() && GgufNeedsImatrix(row_type, t.name)) {
          return Status(StatusCode::kInvalid,
                        "tensor '" + MessageSafe(t.name) + "': " +
                            std::string(FindGgmlType(static_cast<uint32_t>(row_type))->name) +
                            " needs importance values and " +
                            (options.imatrix == nullptr
                                 ? std::string("no --imatrix was given")
                                 : MessageSafe(options.imatrix_file, kMessagePathBytes) +
                                       " has no usable entry for it") +
                            " (llama-quantize refuses it too)");
        }
        heads = 0;  // the encode job's source reads the rows permuted
      }
    }
    GgufTensorOut info;
    info.name = t.name;
    // GGUF lists the fastest-varying dimension first; ggml needs at least one.
    info.dims.assign(t.shape.rbegin(), t.shape.rend());
    if (info.dims.empty()) info.dims.push_back(1);
    // The type as written: a quantized one, or the dtype a fallback gave.
    info.ggml_type =
        t.decode == Decode::kEncode ? t.ggml_type : GgmlTypeOfDtype(t.dtype).value_or(*type);
    info.offset = offset;
    t.data_begin = offset;
    const uint64_t padded = GgufPad(t.bytes, alignment);
    if (padded < t.bytes || !CheckedAdd(offset, padded, &offset)) return Overflow(t.name);
    infos.push_back(std::move(info));
    if (heads != 0) {
      AMN_RETURN_IF_ERROR(CheckPermutable(t, source_name, heads));
      t.permute_heads = heads;
    }
  }
  out.data_bytes = offset;
  out.header_bytes = GgufHeaderBytes(std::move(metadata), infos, alignment);
  if (!CheckedAdd(uint64_t{out.header_bytes.size()}, out.data_bytes, &plan.total_bytes)) {
    return Overflow("the GGUF output");
  }
  plan.total_tensors = out.tensors.size();
  plan.shards.push_back(std::move(out));
  return plan;
}

}  // namespace amn::formats
