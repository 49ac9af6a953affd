// The remember plan: for every output shard, the tensors it will hold (one
// job per output tensor: its dtype, shape, byte range and source), computed
// from the headers alone so the output header is known before any data is
// produced (DESIGN.md §6).
#ifndef AMN_FORMATS_REMEMBER_PLAN_H_
#define AMN_FORMATS_REMEMBER_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "amn/elem_type.h"
#include "amn/result.h"
#include "formats/fp8_scheme.h"

namespace amn::formats {

struct OutputTensor {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<uint64_t> shape;
  uint64_t data_begin = 0;  // in the output's data section
  uint64_t bytes = 0;
  TensorRef source;
  int64_t fp8 = -1;  // index into ModelScheme::fp8_weights when dequantized
};

struct OutputShard {
  std::string file_name;  // the input shard's file name (directories) or empty
  size_t input_shard = 0;
  std::vector<OutputTensor> tensors;  // in data order
  std::map<std::string, std::string> metadata;
  uint64_t data_bytes = 0;
  // The complete header: 8-byte length, JSON padded with spaces to a
  // multiple of 8 bytes so the data section starts aligned.
  std::string header_bytes;
};

struct RememberPlan {
  Dtype to = Dtype::kBf16;
  std::vector<OutputShard> shards;
  uint64_t total_bytes = 0;    // headers + data of every output shard
  size_t total_tensors = 0;
};

// Dtype for an ElemType output (kF32/kF16/kBf16).
Dtype DtypeOf(ElemType type);

// Quantized weights become `to` with their shape; passthrough tensors keep
// dtype and bytes; scales and dropped tensors are left out. Metadata is kept.
Result<RememberPlan> PlanRemember(const ModelFiles& files, const ModelScheme& scheme, ElemType to);

}  // namespace amn::formats

#endif  // AMN_FORMATS_REMEMBER_PLAN_H_
