// Building the remember plan and each output shard's safetensors header.
#include "formats/remember_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <string_view>

#include "amn/ggml_dequant.h"
#include "formats/byte_source.h"
#include "formats/utf8.h"
#include "formats/checked_math.h"

namespace amn::formats {
namespace {

// The safetensors reference writer's dtype order: its Dtype enum, declared
// in increasing alignment; `prepare` writes the highest rank first.
int WriteRank(Dtype d) {
  switch (d) {
    case Dtype::kBool: return 0;
    case Dtype::kU8: return 1;
    case Dtype::kI8: return 2;
    case Dtype::kF8E5m2: return 3;
    case Dtype::kF8E4m3: return 4;
    case Dtype::kF8E8m0: return 5;
    case Dtype::kI16: return 6;
    case Dtype::kU16: return 7;
    case Dtype::kF16: return 8;
    case Dtype::kBf16: return 9;
    case Dtype::kI32: return 10;
    case Dtype::kU32: return 11;
    case Dtype::kF32: return 12;
    case Dtype::kF64: return 13;
    case Dtype::kI64: return 14;
    case Dtype::kU64: return 15;
  }
  return 0;
}

Status SizeOverflow(const std::string& name) {
  return Status(StatusCode::kLimitExceeded, "the output size overflows 64 bits")
      .WithTensor(MessageSafe(name));
}

// safetensors header: {"__metadata__": {...}, name: {dtype, shape,
// data_offsets}, ...} in data order, padded with spaces to 8-byte alignment.
// Written entry by entry, as nlohmann's dump() writes the same object (an
// ordered_json object would look every name up linearly: quadratic).
std::string HeaderBytes(const OutputShard& shard, const std::atomic<bool>* cancel, Status* status) {
  std::string text = "{";
  if (!shard.metadata.empty()) {
    text += "\"__metadata__\":" + nlohmann::json(shard.metadata).dump();
  }
  for (size_t i = 0; i < shard.tensors.size(); ++i) {
    if (Status polled = PollCancel(cancel, i); !polled.ok()) {
      *status = std::move(polled);
      return std::string();
    }
    const OutputTensor& t = shard.tensors[i];
    if (text.size() > 1) text += ',';
    text += nlohmann::json(t.name).dump();
    text += ":{\"dtype\":\"";
    text += DtypeName(t.dtype);
    text += "\",\"shape\":[";
    for (size_t k = 0; k < t.shape.size(); ++k) {
      if (k != 0) text += ',';
      text += std::to_string(t.shape[k]);
    }
    text += "],\"data_offsets\":[" + std::to_string(t.data_begin) + "," +
            std::to_string(t.data_begin + t.bytes) + "]}";
  }
  text += '}';
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');
  std::string bytes(8, '\0');
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return bytes + text;
}

}  // namespace

Dtype DtypeOf(ElemType type) {
  switch (type) {
    case ElemType::kF16: return Dtype::kF16;
    case ElemType::kBf16: return Dtype::kBf16;
    default: return Dtype::kF32;
  }
}

Status PollCancel(const std::atomic<bool>* cancel, size_t i) {
  if (i % kCancelPollTensors == 0 && cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
    return Status(StatusCode::kCancelled, "interrupted while planning the output");
  }
  return Status::Ok();
}

Status AddOnlyShard(RememberPlan& plan, OutputShard shard, const std::atomic<bool>* cancel) {
  AMN_RETURN_IF_ERROR(FinishShard(shard, cancel));
  if (!CheckedAdd(shard.header_bytes.size(), shard.data_bytes, &plan.total_bytes)) {
    return Status(StatusCode::kLimitExceeded, "the output size overflows 64 bits");
  }
  plan.total_tensors = shard.tensors.size();
  plan.shards.push_back(std::move(shard));
  return Status::Ok();
}

Status ConvertFloatTensor(OutputTensor& t, Dtype to) {
  if (t.decode != Decode::kCopy || !IsFloat(t.dtype) || t.dtype == to) return Status::Ok();
  const uint64_t elements = t.input_bytes / DtypeBytes(t.dtype);
  t.decode = Decode::kConvert;
  t.source_dtype = t.dtype;
  t.dtype = to;
  if (!CheckedMul(elements, DtypeBytes(to), &t.bytes)) return SizeOverflow(t.name);
  return Status::Ok();
}

Dtype OutputFloatDtype(const RememberPlan& plan) {
  std::map<Dtype, uint64_t> float_bytes;
  bool dequantized = false;
  for (const OutputShard& shard : plan.shards) {
    for (const OutputTensor& t : shard.tensors) {
      if (IsFloat(t.dtype)) float_bytes[t.dtype] += t.bytes;
      dequantized |=
          t.decode == Decode::kFp8 || t.decode == Decode::kGgml || t.decode == Decode::kPacked;
    }
  }
  if (float_bytes.size() == 1) return float_bytes.begin()->first;
  if (dequantized || float_bytes.empty()) return plan.to;
  const auto most = std::max_element(
      float_bytes.begin(), float_bytes.end(), [](const auto& a, const auto& b) {
        return a.second != b.second ? a.second < b.second : WriteRank(a.first) < WriteRank(b.first);
      });
  return most->first;
}

Status FinishShard(OutputShard& shard, const std::atomic<bool>* cancel) {
  // Sorted through indices, then each tensor moved once: an OutputTensor is
  // over a kilobyte, and sorting the tensors themselves moves each O(log n)
  // times.
  std::vector<size_t> order(shard.tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) {
    const OutputTensor& a = shard.tensors[i];
    const OutputTensor& b = shard.tensors[j];
    const int ra = WriteRank(a.dtype), rb = WriteRank(b.dtype);
    return ra != rb ? ra > rb : a.name < b.name;
  });
  // One name twice would make a header with a duplicate key.
  std::vector<std::string_view> names;
  names.reserve(shard.tensors.size());
  for (const OutputTensor& t : shard.tensors) names.push_back(t.name);
  std::sort(names.begin(), names.end());
  if (const auto twice = std::adjacent_find(names.begin(), names.end()); twice != names.end()) {
    return Status(StatusCode::kInvalid, "two output tensors are named '" + MessageSafe(*twice) + "'")
        .WithTensor(MessageSafe(*twice));
  }
  // Position k takes tensor order[k]: applied in place, cycle by cycle (no
  // second array of tensors to allocate and fault in).
  for (size_t start = 0; start < order.size(); ++start) {
    if (order[start] == start) continue;
    OutputTensor held = std::move(shard.tensors[start]);
    size_t k = start;
    while (order[k] != start) {
      const size_t from = order[k];
      shard.tensors[k] = std::move(shard.tensors[from]);
      order[k] = k;
      k = from;
    }
    shard.tensors[k] = std::move(held);
    order[k] = k;
  }
  shard.metadata["format"] = "pt";
  shard.data_bytes = 0;
  for (OutputTensor& t : shard.tensors) {
    t.data_begin = shard.data_bytes;
    if (!CheckedAdd(shard.data_bytes, t.bytes, &shard.data_bytes)) return SizeOverflow(t.name);
  }
  Status status;
  shard.header_bytes = HeaderBytes(shard, cancel, &status);
  return status;
}

Result<RememberPlan> PlanRemember(const ModelFiles& files, const ModelScheme& scheme, ElemType to,
                                  bool keep_passthrough, const std::atomic<bool>* cancel) {
  if (to != ElemType::kF32 && to != ElemType::kF16 && to != ElemType::kBf16) {
    return Status(StatusCode::kInvalidArgument, "remember writes F32, F16 or BF16");
  }
  RememberPlan plan;
  plan.to = DtypeOf(to);
  for (const Shard& shard : files.shards) plan.input_files.push_back(shard.path);
  auto offset_of = [&](TensorRef ref) {
    const SafetensorsHeader& h = files.shards[ref.shard].header;
    return h.data_offset + h.tensors[ref.index].data_begin;
  };
  for (size_t s = 0; s < files.shards.size(); ++s) {
    const Shard& in = files.shards[s];
    OutputShard out;
    out.file_name = files.is_directory ? in.path.filename().string() : std::string();
    out.input_shard = s;
    out.metadata = in.header.metadata;
    out.tensors.reserve(in.header.tensors.size());
    for (size_t i = 0; i < in.header.tensors.size(); ++i) {
      AMN_RETURN_IF_ERROR(PollCancel(cancel, i));
      const TensorEntry& entry = in.header.tensors[i];
      const TensorRole role = scheme.roles[s][i];
      if (role == TensorRole::kCompanion || role == TensorRole::kDropped) continue;
      OutputTensor t;
      t.name = entry.name;
      t.shape = entry.shape;
      t.input_file = s;
      t.input_offset = offset_of(TensorRef{s, i});
      t.input_bytes = entry.bytes();
      if (role == TensorRole::kQuantized) {
        const QuantWeight& w = scheme.weights[static_cast<size_t>(scheme.weight_index[s][i])];
        t.name = w.output_name;
        t.shape = w.output_shape;
        t.dtype = plan.to;
        if (!CheckedMul(w.output_elements, DtypeBytes(plan.to), &t.bytes)) return SizeOverflow(t.name);
        if (w.kind == QuantKind::kFp8) {
          const TensorEntry& scale = files.shards[w.fp8.scale.shard].header.tensors[w.fp8.scale.index];
          t.decode = Decode::kFp8;
          t.fp8_layout = w.fp8;
          t.code_type = entry.dtype == Dtype::kF8E5m2 ? ElemType::kF8E5m2 : ElemType::kF8E4m3;
          t.scale_file = w.fp8.scale.shard;
          t.scale_offset = offset_of(w.fp8.scale);
          t.scale_dtype = scale.dtype;
          t.scale_elements = scale.elements;
        } else {
          auto span_of = [&](TensorRef ref) {
            const TensorEntry& e = files.shards[ref.shard].header.tensors[ref.index];
            return InputSpan{ref.shard, offset_of(ref), e.bytes(), e.dtype};
          };
          std::array<std::optional<InputSpan>, kPartCount> parts;
          for (size_t p = 0; p < kPartCount; ++p) {
            if (w.parts[p]) parts[p] = span_of(*w.parts[p]);
          }
          t.decode = Decode::kPacked;
          t.packed = MakePackedJob(w, span_of(w.weight), parts);
        }
      } else {
        t.dtype = entry.dtype;
        t.bytes = entry.bytes();
        if (!keep_passthrough) AMN_RETURN_IF_ERROR(ConvertFloatTensor(t, plan.to));
      }
      out.tensors.push_back(std::move(t));
    }
    if (out.tensors.empty()) continue;  // a shard of scales only
    AMN_RETURN_IF_ERROR(FinishShard(out, cancel));
    if (!CheckedAdd(plan.total_bytes, out.header_bytes.size(), &plan.total_bytes) ||
        !CheckedAdd(plan.total_bytes, out.data_bytes, &plan.total_bytes)) {
      return Status(StatusCode::kLimitExceeded, "the output size overflows 64 bits");
    }
    plan.total_tensors += out.tensors.size();
    plan.shards.push_back(std::move(out));
  }
  return plan;
}

namespace {

// The safetensors dtype of a plain (unquantized) ggml type.
std::optional<Dtype> PlainDtype(GgmlType type) {
  switch (type) {
    case GgmlType::kF32: return Dtype::kF32;
    case GgmlType::kF16: return Dtype::kF16;
    case GgmlType::kBF16: return Dtype::kBf16;
    case GgmlType::kF64: return Dtype::kF64;
    case GgmlType::kI8: return Dtype::kI8;
    case GgmlType::kI16: return Dtype::kI16;
    case GgmlType::kI32: return Dtype::kI32;
    case GgmlType::kI64: return Dtype::kI64;
    default: return std::nullopt;
  }
}

}  // namespace

Result<RememberPlan> PlanGgufRemember(const std::filesystem::path& file, const GgufHeader& header,
                                      ElemType to, bool keep_passthrough,
                                      const std::atomic<bool>* cancel) {
  if (to != ElemType::kF32 && to != ElemType::kF16 && to != ElemType::kBf16) {
    return Status(StatusCode::kInvalidArgument, "remember writes F32, F16 or BF16");
  }
  RememberPlan plan;
  plan.to = DtypeOf(to);
  plan.input_files = {file};
  OutputShard out;
  // Names and strings that are not UTF-8 are written by the \xNN rule
  // (utf8.h): a safetensors header is JSON, which must be UTF-8.
  for (const GgufKeyValue& kv : header.metadata) {
    if (kv.value.type == GgufValueType::kString) {
      out.metadata[EscapeInvalidUtf8(kv.key)] = EscapeInvalidUtf8(kv.value.s);
    }
  }
  std::set<std::string> names;
  out.tensors.reserve(header.tensors.size());
  for (size_t i = 0; i < header.tensors.size(); ++i) {
    AMN_RETURN_IF_ERROR(PollCancel(cancel, i));
    const GgufTensorInfo& t = header.tensors[i];
    const GgmlTypeInfo* info = FindGgmlType(t.type);  // known: the parser checked
    OutputTensor o;
    o.name = EscapeInvalidUtf8(t.name);
    if (o.name == "__metadata__" || !names.insert(o.name).second) {
      return Status(StatusCode::kInvalid, file.string() + ": two tensors would be written as '" +
                                              MessageSafe(o.name) +
                                              "' (or the name is reserved by safetensors)")
          .WithTensor(MessageSafe(o.name));
    }
    o.shape.assign(t.dims.rbegin(), t.dims.rend());
    o.input_offset = header.data_offset + t.offset;
    o.input_bytes = t.bytes;
    if (info->quantized) {
      if (!GgmlTypeDecodable(info->type)) {
        return Status(StatusCode::kUnsupported, file.string() + ": " + std::string(info->name) +
                                                    " blocks cannot be dequantized by this build yet")
            .WithTensor(MessageSafe(t.name));
      }
      o.decode = Decode::kGgml;
      o.ggml_type = t.type;
      o.dtype = plan.to;
      if (!CheckedMul(t.elements, DtypeBytes(plan.to), &o.bytes)) return SizeOverflow(t.name);
    } else {
      o.dtype = *PlainDtype(info->type);
      o.bytes = t.bytes;
      if (!keep_passthrough) AMN_RETURN_IF_ERROR(ConvertFloatTensor(o, plan.to));
    }
    out.tensors.push_back(std::move(o));
  }
  AMN_RETURN_IF_ERROR(AddOnlyShard(plan, std::move(out), cancel));
  return plan;
}

}  // namespace amn::formats
