// Choosing forget's weights and laying out their codes and side tensors.
#include "formats/forget_plan.h"

#include <cstring>

#include "formats/checked_math.h"
#include "formats/forget_layout.h"
#include "formats/model_dir_output.h"
#include "formats/scheme_builder.h"
#include "formats/utf8.h"

namespace amn::formats {
namespace {

// transformers' FineGrainedFP8Config default weight_block_size.
constexpr uint64_t kFineBlock = 128;

Status Refuse(const std::string& name, const std::string& why) {
  return Status(StatusCode::kInvalidArgument, "'" + MessageSafe(name) + "' " + why)
      .WithTensor(MessageSafe(name));
}

ElemType ElemOf(Dtype d) {
  return d == Dtype::kF16 ? ElemType::kF16 : d == Dtype::kBf16 ? ElemType::kBf16 : ElemType::kF32;
}

template <typename T>
std::shared_ptr<const std::vector<std::byte>> BytesOf(const std::vector<T>& values) {
  auto bytes = std::make_shared<std::vector<std::byte>>(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes->data(), values.data(), bytes->size());
  return bytes;
}

OutputTensor Inline(std::string name, Dtype dtype, std::vector<uint64_t> shape,
                    std::shared_ptr<const std::vector<std::byte>> bytes) {
  OutputTensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.decode = Decode::kInline;
  t.bytes = bytes->size();
  t.inline_bytes = std::move(bytes);
  return t;
}

// A side tensor of `w` measured from its source as it is written.
OutputTensor Side(std::string name, Dtype dtype, std::vector<uint64_t> shape,
                  const ForgetWeight& w, SidePart part) {
  OutputTensor t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.decode = Decode::kSide;
  t.bytes = DtypeBytes(dtype);
  for (const uint64_t d : t.shape) t.bytes *= d;
  t.source = w.source;
  t.encode = w.job;
  t.side_part = part;
  return t;
}

std::string Fp8Text(const EncodeJob& job, ForgetScheme scheme) {
  const std::string codes = job.fp8_format == Fp8Format::kE5m2 ? " (E5M2)" : " (E4M3)";
  switch (scheme) {
    case ForgetScheme::kFp8: return "Per-tensor FP8" + codes;
    case ForgetScheme::kFp8PerChannel: return "Per-channel FP8" + codes;
    default: return "Fine-grained FP8, 128x128 blocks" + codes;
  }
}

}  // namespace

bool Chosen(const ForgetSelection& selection, const std::string& name,
            const std::vector<uint64_t>& shape) {
  const bool base = selection.only ? std::regex_search(name, *selection.only)
                                   : DefaultQuantized(name, shape);
  return base && !(selection.skip && std::regex_search(name, *selection.skip));
}

Result<ForgetWeight> MakeForgetWeight(const OutputTensor& t, size_t shard, size_t index,
                                      ForgetScheme scheme, Fp8Format format, uint64_t block_size) {
  // Plain floats as stored, or a quantized weight dequantized (F32).
  const bool dequantized =
      t.decode == Decode::kFp8 || t.decode == Decode::kGgml || t.decode == Decode::kPacked;
  if (!IsFloat(t.dtype) || (t.decode != Decode::kCopy && t.decode != Decode::kArray && !dequantized)) {
    return Refuse(t.name, "is " + std::string(DtypeName(t.dtype)) +
                              "; forget encodes float tensors (F32, F16, BF16, F64)");
  }
  auto source = std::make_shared<OutputTensor>(t);
  if (source->dtype == Dtype::kF64) {
    // The encoders take F32/F16/BF16: F64 is narrowed to F32 first.
    if (source->decode == Decode::kArray) {
      source->dtype = Dtype::kF32;
      source->bytes = source->array.entry.elements * 4;
    } else {
      AMN_RETURN_IF_ERROR(ConvertFloatTensor(*source, Dtype::kF32));
    }
  }
  const uint64_t elements = source->bytes / DtypeBytes(source->dtype);
  if (elements == 0) return Refuse(t.name, "has no elements to encode");
  const bool two_d = t.shape.size() == 2;
  const bool fp8 = scheme == ForgetScheme::kFp8 || scheme == ForgetScheme::kFp8PerChannel ||
                   scheme == ForgetScheme::kFp8FineGrained;
  if (!two_d && (scheme == ForgetScheme::kFp8PerChannel ||
                 scheme == ForgetScheme::kFp8FineGrained || scheme == ForgetScheme::kInt8)) {
    return Refuse(t.name, "has shape " + ShapeText(t.shape) + "; " + ForgetSchemeName(scheme) +
                              " takes 2-D weights [rows, cols]");
  }
  if (scheme == ForgetScheme::kInt8 && !t.name.ends_with("weight")) {
    return Refuse(t.name, "does not end in 'weight'; bitsandbytes INT8 stores MODULE.weight "
                          "with MODULE.SCB");
  }
  ForgetWeight w;
  w.shard = shard;
  w.index = index;
  w.scheme = scheme;
  w.torch_dtype = TorchDtypeName(source->dtype);
  auto job = std::make_shared<EncodeJob>();
  job->source_type = ElemOf(source->dtype);
  job->cols = t.shape.empty() ? 1 : t.shape.back();
  job->rows = elements / job->cols;
  if (fp8) {
    job->kind = EncodeKind::kFp8;
    job->fp8_format = format;
    job->group_rows = scheme == ForgetScheme::kFp8 ? job->rows
                      : scheme == ForgetScheme::kFp8PerChannel ? 1 : kFineBlock;
    job->group_cols = scheme == ForgetScheme::kFp8FineGrained ? kFineBlock : job->cols;
    w.description = Fp8Text(*job, scheme);
  } else if (scheme == ForgetScheme::kInt8) {
    job->kind = EncodeKind::kBnbInt8;
    w.description = "bitsandbytes INT8 (LLM.int8, row-wise SCB)";
  } else {
    if (block_size < 2 || block_size % 2 != 0) {
      return Status(StatusCode::kInvalidArgument,
                    "--block-size " + std::to_string(block_size) +
                        " is not an even number >= 2 (bitsandbytes packs two codes a byte)");
    }
    job->kind = EncodeKind::kBnb4;
    const bool fp4 = scheme == ForgetScheme::kFp4 || scheme == ForgetScheme::kFp4Dq;
    const bool dq = scheme == ForgetScheme::kNf4Dq || scheme == ForgetScheme::kFp4Dq;
    job->bnb_type = fp4 ? Bnb4Type::kFp4 : Bnb4Type::kNf4;
    job->block_size = block_size;
    w.description = std::string("bitsandbytes ") + (fp4 ? "FP4" : "NF4") + ", block " +
                    std::to_string(block_size) +
                    (dq ? ", double quant (nested block 256)" : "");
  }
  w.job = std::move(job);
  w.source = std::move(source);
  return w;
}

bool DoubleQuant(const ForgetWeight& w) {
  return w.scheme == ForgetScheme::kNf4Dq || w.scheme == ForgetScheme::kFp4Dq;
}

Status MakeSideTensors(ForgetWeight& w) {
  const EncodeJob& job = *w.job;
  const std::string& name = w.source->name;
  const std::vector<uint64_t>& shape = w.source->shape;
  w.sides.clear();
  switch (w.scheme) {
    case ForgetScheme::kFp8:
    case ForgetScheme::kFp8PerChannel:
    case ForgetScheme::kFp8FineGrained: {
      w.code_dtype = job.fp8_format == Fp8Format::kE5m2 ? Dtype::kF8E5m2 : Dtype::kF8E4m3;
      w.code_shape = shape;
      // compressed-tensors: weight_scale [1] per tensor, [rows, 1] per
      // channel; transformers/DeepSeek: weight_scale_inv [R/128, C/128].
      std::vector<uint64_t> scale_shape =
          w.scheme == ForgetScheme::kFp8             ? std::vector<uint64_t>{1}
          : w.scheme == ForgetScheme::kFp8PerChannel ? std::vector<uint64_t>{job.rows, 1}
                                                     : std::vector<uint64_t>{
                                                           CeilDiv(job.rows, kFineBlock),
                                                           CeilDiv(job.cols, kFineBlock)};
      const std::string suffix = w.scheme == ForgetScheme::kFp8FineGrained ? "_scale_inv" : "_scale";
      if (PerTensorFp8(job)) {
        if (job.side.size() != 1) {
          return Status(StatusCode::kInvalidArgument, "the per-tensor scale was not measured").WithTensor(name);
        }
        w.sides.push_back(Inline(name + suffix, Dtype::kF32, std::move(scale_shape), BytesOf(job.side)));
      } else {
        w.sides.push_back(Side(name + suffix, Dtype::kF32, std::move(scale_shape), w, SidePart::kValues));
      }
      return Status::Ok();
    }
    case ForgetScheme::kInt8: {
      w.code_dtype = Dtype::kI8;
      w.code_shape = shape;
      const std::string module = name.substr(0, name.size() - std::string("weight").size());
      w.sides.push_back(Side(module + "SCB", Dtype::kF32, {job.rows}, w, SidePart::kValues));
      w.sides.push_back(Inline(module + "weight_format", Dtype::kU8, {},
                               BytesOf(std::vector<uint8_t>{0})));
      return Status::Ok();
    }
    default: break;
  }
  const bool fp4 = job.bnb_type == Bnb4Type::kFp4;
  const bool dq = DoubleQuant(w);
  const uint64_t n = Elements(job), blocks = SideCount(job);
  w.code_dtype = Dtype::kU8;
  w.code_shape = {CeilDiv(n, 2), 1};  // Params4bit: quantize_4bit's [(n + 1) // 2, 1]
  std::vector<float> quant_map(16);
  Bnb4Codebook(job.bnb_type, std::span<float, 16>(quant_map.data(), 16));
  const float offset = dq ? job.nested_offset : 0.0f;
  if (dq) {
    std::vector<float> nested_map(256);
    BnbDynamicMap(std::span<float, 256>(nested_map.data(), 256));
    w.sides.push_back(Side(name + ".absmax", Dtype::kU8, {blocks}, w, SidePart::kNestedCodes));
    w.sides.push_back(Side(name + ".nested_absmax", Dtype::kF32, {CeilDiv(blocks, kBnbNestedBlock)},
                           w, SidePart::kNestedAbsmax));
    w.sides.push_back(Inline(name + ".nested_quant_map", Dtype::kF32, {256}, BytesOf(nested_map)));
  } else {
    w.sides.push_back(Side(name + ".absmax", Dtype::kF32, {blocks}, w, SidePart::kValues));
  }
  w.sides.push_back(Inline(name + ".quant_map", Dtype::kF32, {16}, BytesOf(quant_map)));
  const std::string state =
      Bnb4QuantStateJson(fp4, job.block_size, w.torch_dtype, shape, dq, kBnbNestedBlock, offset);
  w.sides.push_back(Inline(name + ".quant_state.bitsandbytes__" + (fp4 ? "fp4" : "nf4"),
                           Dtype::kU8, {state.size()},
                           BytesOf(std::vector<uint8_t>(state.begin(), state.end()))));
  return Status::Ok();
}

Result<RememberPlan> PlanForget(RememberPlan source, const std::vector<ForgetWeight>& weights,
                                const std::atomic<bool>* cancel) {
  // Each replaced tensor, by shard and index.
  std::vector<std::vector<const ForgetWeight*>> replaced(source.shards.size());
  for (size_t s = 0; s < source.shards.size(); ++s) {
    replaced[s].assign(source.shards[s].tensors.size(), nullptr);
  }
  for (const ForgetWeight& w : weights) replaced[w.shard][w.index] = &w;
  RememberPlan plan;
  plan.to = source.to;
  plan.input_files = std::move(source.input_files);
  for (size_t s = 0; s < source.shards.size(); ++s) {
    OutputShard& in = source.shards[s];
    OutputShard out;
    out.file_name = in.file_name;
    out.input_shard = in.input_shard;
    out.metadata = in.metadata;
    for (size_t i = 0; i < in.tensors.size(); ++i) {
      AMN_RETURN_IF_ERROR(PollCancel(cancel, i));
      const ForgetWeight* w = replaced[s][i];
      if (w == nullptr) {
        out.tensors.push_back(std::move(in.tensors[i]));
        continue;
      }
      OutputTensor codes;
      codes.name = w->source->name;
      codes.dtype = w->code_dtype;
      codes.shape = w->code_shape;
      codes.decode = Decode::kEncode;
      codes.bytes = EncodedBytes(*w->job, 0, Elements(*w->job));
      codes.source = w->source;
      codes.encode = w->job;
      out.tensors.push_back(std::move(codes));
      for (const OutputTensor& side : w->sides) out.tensors.push_back(side);
    }
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

}  // namespace amn::formats
