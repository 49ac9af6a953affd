// Internal to scheme detection: the tensors by name, the config, and the
// bookkeeping every per-scheme detector shares (claiming a weight and its
// companions, reading a companion's few bytes of metadata).
#ifndef AMN_FORMATS_SCHEME_BUILDER_H_
#define AMN_FORMATS_SCHEME_BUILDER_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "formats/quant_scheme.h"

namespace amn::formats {

std::string ShapeText(const std::vector<uint64_t>& shape);
uint64_t CeilDiv(uint64_t a, uint64_t b);
inline bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
// kInvalid naming the tensor.
Status TensorError(std::string_view tensor, const std::string& what);

class SchemeBuilder {
 public:
  SchemeBuilder(const ModelFiles& files, const QuantConfig& config, ModelScheme& scheme);

  const QuantConfig& config() const { return config_; }
  const ModelFiles& files() const { return files_; }
  const std::map<std::string, TensorRef, std::less<>>& by_name() const { return by_name_; }
  const TensorEntry& entry(TensorRef ref) const {
    return files_.shards[ref.shard].header.tensors[ref.index];
  }
  std::optional<TensorRef> Find(std::string_view name) const;
  // A companion that must exist, with one of `dtypes` (empty: any);
  // errors name the weight and the missing or mistyped companion.
  Result<TensorRef> Require(std::string_view weight, const std::string& name,
                            std::initializer_list<Dtype> dtypes) const;
  bool Claimed(TensorRef ref) const { return scheme_.RoleOf(ref) != TensorRole::kPassthrough; }
  // The tensor's data (at most max_bytes, else kLimitExceeded).
  Result<std::string> ReadData(TensorRef ref, uint64_t max_bytes) const;
  // Little-endian integers of an I32/I64 tensor of at most 8 elements.
  Result<std::vector<int64_t>> ReadInts(TensorRef ref) const;

  // Records a quantized weight: its codes become `output_name`, every part
  // is consumed. kInvalid when the output name collides with a tensor that
  // is written too, or a companion is already taken.
  Status Add(QuantWeight weight);
  void Drop(TensorRef ref) { scheme_.roles[ref.shard][ref.index] = TensorRole::kDropped; }
  void Unsupported(const std::string& why);

 private:
  const ModelFiles& files_;
  const QuantConfig& config_;
  ModelScheme& scheme_;
  std::map<std::string, TensorRef, std::less<>> by_name_;
  std::set<std::string> output_names_;
};

// The per-scheme detectors, each claiming the weights it recognises by name.
Status DetectFp8Weights(SchemeBuilder& b);
Status DetectGptqAwqWeights(SchemeBuilder& b);
Status DetectBnbWeights(SchemeBuilder& b);
Status DetectCompressedWeights(SchemeBuilder& b);  // pack-quantized int, NVFP4
Status DetectMxfp4Weights(SchemeBuilder& b);

}  // namespace amn::formats

#endif  // AMN_FORMATS_SCHEME_BUILDER_H_
