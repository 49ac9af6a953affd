// Side values and side tensors taken from an existing quantized model.
#include "formats/forget_like.h"

#include <cstring>
#include <map>
#include <memory>

#include "amn/array_copy.h"
#include "formats/byte_source.h"
#include "formats/like_side.h"
#include "formats/scheme_builder.h"
#include "formats/source_reads.h"
#include "formats/utf8.h"

namespace amn::formats {
namespace {

class LikeReader {
 public:
  LikeReader(const ModelFiles& files, size_t file_base) : files_(files), base_(file_base) {}

  const TensorEntry& Entry(TensorRef ref) const { return files_.shards[ref.shard].header.tensors[ref.index]; }

  uint64_t Offset(TensorRef ref) const {
    return files_.shards[ref.shard].header.data_offset + Entry(ref).data_begin;
  }

  // The tensor copied as it is into the output.
  OutputTensor Copy(TensorRef ref) const {
    const TensorEntry& e = Entry(ref);
    OutputTensor t;
    t.name = e.name;
    t.dtype = e.dtype;
    t.shape = e.shape;
    t.decode = Decode::kCopy;
    t.input_file = base_ + ref.shard;
    t.input_offset = Offset(ref);
    t.input_bytes = e.bytes();
    t.bytes = e.bytes();
    return t;
  }

  // A float tensor (F32, F16, BF16) as F32 values: small ones only (the
  // 16-entry codebook), read once while planning.
  Result<std::vector<float>> Floats(TensorRef ref) const {
    const TensorEntry& e = Entry(ref);
    AMN_ASSIGN_OR_RETURN(auto source, FileSource::Open(files_.shards[ref.shard].path));
    std::vector<std::byte> raw(e.bytes());
    AMN_RETURN_IF_ERROR(source->ReadAt(Offset(ref), raw));
    std::vector<float> values(e.elements);
    AMN_RETURN_IF_ERROR(ConvertFloats(FloatTypeOf(e.dtype), raw, FloatType::kF32,
                                      std::as_writable_bytes(std::span(values))));
    return values;
  }

  // Where the engine reads the tensor's values, chunk by chunk (formats/like_side.h).
  LikeSideTensor Side(TensorRef ref) const {
    const TensorEntry& e = Entry(ref);
    LikeSideTensor t;
    t.file = base_ + ref.shard;
    t.offset = Offset(ref);
    t.dtype = e.dtype;
    t.elements = e.elements;
    t.path = MessageSafe(files_.shards[ref.shard].path.string(), kMessagePathBytes);
    t.name = MessageSafe(e.name);
    return t;
  }

 private:
  const ModelFiles& files_;
  size_t base_;
};

Status Mismatch(const std::string& name, const std::string& why) {
  return Status(StatusCode::kInvalidArgument, "--like: '" + MessageSafe(name) + "' " + why)
      .WithTensor(MessageSafe(name));
}

}  // namespace

Result<LikeWeights> WeightsLike(RememberPlan& source, const ModelFiles& like,
                                const ModelScheme& like_scheme) {
  const std::string like_name = MessageSafe(like.input.string(), kMessagePathBytes);
  if (!like_scheme.quantized) {
    return Status(StatusCode::kInvalidArgument,
                  "--like " + like_name + " is not quantized; it must be a quantized model");
  }
  std::map<std::string, const QuantWeight*> by_name;
  for (const QuantWeight& q : like_scheme.weights) {
    if (q.kind != QuantKind::kFp8 && q.kind != QuantKind::kBnb4 && q.kind != QuantKind::kBnbInt8) {
      return Status(StatusCode::kUnsupported,
                    "--like " + like_name + " is " + q.description +
                        "; forget writes FP8 and bitsandbytes only");
    }
    by_name[q.output_name] = &q;
  }
  const LikeReader r(like, source.input_files.size());
  for (const Shard& shard : like.shards) source.input_files.push_back(shard.path);

  LikeWeights out;
  for (size_t s = 0; s < source.shards.size(); ++s) {
    const std::vector<OutputTensor>& tensors = source.shards[s].tensors;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const OutputTensor& t = tensors[i];
      const auto found = by_name.find(t.name);
      if (found == by_name.end()) continue;
      const QuantWeight& q = *found->second;
      if (q.output_shape != t.shape) {
        return Mismatch(t.name, "is " + ShapeText(t.shape) + " in the input but " +
                                    ShapeText(q.output_shape) + " in " + like_name);
      }
      ForgetScheme scheme = ForgetScheme::kInt8;
      Fp8Format format = Fp8Format::kE4m3;
      uint64_t block_size = 64;
      std::vector<Part> parts;
      if (q.kind == QuantKind::kFp8) {
        scheme = q.fp8.layout == Fp8Layout::kPerTensor    ? ForgetScheme::kFp8
                 : q.fp8.layout == Fp8Layout::kPerChannel ? ForgetScheme::kFp8PerChannel
                                                          : ForgetScheme::kFp8FineGrained;
        format = q.code_dtype == Dtype::kF8E5m2 ? Fp8Format::kE5m2 : Fp8Format::kE4m3;
        parts = {Part::kScale};
      } else if (q.kind == QuantKind::kBnb4) {
        const bool fp4 = r.Entry(*q.part(Part::kMeta)).name.ends_with("__fp4");
        scheme = fp4 ? (q.double_quant ? ForgetScheme::kFp4Dq : ForgetScheme::kFp4)
                     : (q.double_quant ? ForgetScheme::kNf4Dq : ForgetScheme::kNf4);
        block_size = q.block_size;
        parts = {Part::kAbsmax, Part::kQuantMap, Part::kNestedAbsmax, Part::kNestedQuantMap,
                 Part::kMeta};
      } else {
        parts = {Part::kScale, Part::kMeta};
      }
      AMN_ASSIGN_OR_RETURN(ForgetWeight w,
                           MakeForgetWeight(t, s, i, scheme, format, block_size));
      EncodeJob& job = *w.job;
      if (q.kind == QuantKind::kFp8) {
        // The model's own grid (compressed-tensors groups are 1 x G blocks).
        if (q.fp8.layout == Fp8Layout::kBlock) {
          job.group_rows = q.fp8.block_rows;
          job.group_cols = q.fp8.block_cols;
        }
      }
      auto side = std::make_shared<LikeSide>();
      if (q.kind == QuantKind::kBnb4) {
        // The encoders use bitsandbytes' own codebook: a model storing
        // another (a synthetic one) cannot have its codes reproduced.
        std::vector<float> stored;
        if (r.Entry(*q.part(Part::kQuantMap)).elements == 16) {
          AMN_ASSIGN_OR_RETURN(stored, r.Floats(*q.part(Part::kQuantMap)));
        }
        std::vector<float> codebook(16);
        Bnb4Codebook(job.bnb_type, std::span<float, 16>(codebook.data(), 16));
        if (stored.size() != 16 || std::memcmp(stored.data(), codebook.data(), 64) != 0) {
          return Mismatch(r.Entry(*q.part(Part::kQuantMap)).name,
                          "is not bitsandbytes' " +
                              std::string(job.bnb_type == Bnb4Type::kFp4 ? "FP4" : "NF4") +
                              " codebook; forget encodes with that codebook only");
        }
        side->values = r.Side(*q.part(Part::kAbsmax));
        if (q.double_quant) {
          side->nested = true;
          side->nested_absmax = r.Side(*q.part(Part::kNestedAbsmax));
          side->nested_map = r.Side(*q.part(Part::kNestedQuantMap));
          side->nested_block_size = q.nested_block_size;
          side->nested_offset = q.nested_offset;
        }
      } else {
        side->values = r.Side(*q.part(Part::kScale));
        side->positive = q.kind == QuantKind::kFp8;
      }
      // Read chunk by chunk as the weight is encoded; only their sizes now.
      if (side->values.elements != SideCount(job)) {
        return Mismatch(t.name, "has " + std::to_string(side->values.elements) +
                                    " side values in " + like_name + "; its layout needs " +
                                    std::to_string(SideCount(job)));
      }
      AMN_RETURN_IF_ERROR(CheckLikeSide(*side, SideCount(job)));
      job.like = std::move(side);
      w.description = q.description;
      w.code_dtype = r.Entry(q.weight).dtype;
      w.code_shape = r.Entry(q.weight).shape;
      for (const Part p : parts) {
        if (q.part(p)) w.sides.push_back(r.Copy(*q.part(p)));
      }
      if (out.weights.empty()) out.scheme = scheme;
      out.weights.push_back(std::move(w));
    }
  }
  if (out.weights.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "--like " + like_name + ": none of its quantized weights is in the input");
  }
  return out;
}

}  // namespace amn::formats
