// Building the remember plan and each output shard's safetensors header.
#include "formats/remember_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "amn/ggml_dequant.h"
#include "formats/byte_source.h"
#include "formats/utf8.h"

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

// safetensors header: {"__metadata__": {...}, name: {dtype, shape,
// data_offsets}, ...} in data order, padded with spaces to 8-byte alignment.
std::string HeaderBytes(const OutputShard& shard) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  if (!shard.metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [key, value] : shard.metadata) meta[key] = value;
    json["__metadata__"] = std::move(meta);
  }
  for (const OutputTensor& t : shard.tensors) {
    json[t.name] = {{"dtype", std::string(DtypeName(t.dtype))},
                    {"shape", t.shape},
                    {"data_offsets", {t.data_begin, t.data_begin + t.bytes}}};
  }
  std::string text = json.dump();
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

void AddOnlyShard(RememberPlan& plan, OutputShard shard) {
  FinishShard(shard);
  plan.total_bytes = shard.header_bytes.size() + shard.data_bytes;
  plan.total_tensors = shard.tensors.size();
  plan.shards.push_back(std::move(shard));
}

void ConvertFloatTensor(OutputTensor& t, Dtype to) {
  if (t.decode != Decode::kCopy || !IsFloat(t.dtype) || t.dtype == to) return;
  const uint64_t elements = t.input_bytes / DtypeBytes(t.dtype);
  t.decode = Decode::kConvert;
  t.source_dtype = t.dtype;
  t.dtype = to;
  t.bytes = elements * DtypeBytes(to);
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

void FinishShard(OutputShard& shard) {
  std::stable_sort(shard.tensors.begin(), shard.tensors.end(),
                   [](const OutputTensor& a, const OutputTensor& b) {
                     const int ra = WriteRank(a.dtype), rb = WriteRank(b.dtype);
                     return ra != rb ? ra > rb : a.name < b.name;
                   });
  shard.metadata["format"] = "pt";
  shard.data_bytes = 0;
  for (OutputTensor& t : shard.tensors) {
    t.data_begin = shard.data_bytes;
    shard.data_bytes += t.bytes;
  }
  shard.header_bytes = HeaderBytes(shard);
}

Result<RememberPlan> PlanRemember(const ModelFiles& files, const ModelScheme& scheme, ElemType to,
                                  bool keep_passthrough) {
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
    for (size_t i = 0; i < in.header.tensors.size(); ++i) {
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
        t.bytes = w.output_elements * DtypeBytes(plan.to);  // at most 4 elements per code byte
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
        if (!keep_passthrough) ConvertFloatTensor(t, plan.to);
      }
      out.tensors.push_back(std::move(t));
    }
    if (out.tensors.empty()) continue;  // a shard of scales only
    FinishShard(out);
    plan.total_bytes += out.header_bytes.size() + out.data_bytes;
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
                                      ElemType to, bool keep_passthrough) {
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
  for (const GgufTensorInfo& t : header.tensors) {
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
      o.bytes = t.elements * DtypeBytes(plan.to);
    } else {
      o.dtype = *PlainDtype(info->type);
      o.bytes = t.bytes;
      if (!keep_passthrough) ConvertFloatTensor(o, plan.to);
    }
    out.tensors.push_back(std::move(o));
  }
  AddOnlyShard(plan, std::move(out));
  return plan;
}

}  // namespace amn::formats
