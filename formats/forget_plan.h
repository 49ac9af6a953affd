// The forget plan: the plain model's plan (dtypes kept) with each chosen
// weight replaced by its codes (Decode::kEncode) and side tensors, named,
// typed and shaped as formats/forget_layout.h says.
#ifndef AMN_FORMATS_FORGET_PLAN_H_
#define AMN_FORMATS_FORGET_PLAN_H_

#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "amn/model.h"
#include "amn/result.h"
#include "formats/encode_job.h"
#include "formats/remember_plan.h"

namespace amn::formats {

// One weight forget encodes.
struct ForgetWeight {
  size_t shard = 0, index = 0;  // its place in the source plan
  std::shared_ptr<EncodeJob> job;
  std::shared_ptr<const OutputTensor> source;  // makes its floats (F32/F16/BF16)
  std::string torch_dtype;                     // of the floats, for bnb's quant_state
  ForgetScheme scheme = ForgetScheme::kFp8;
  std::string description;
  // The codes' dtype and shape, and the side tensors that go with them;
  // filled by MakeSideTensors (or by --like, from the model copied).
  Dtype code_dtype = Dtype::kU8;
  std::vector<uint64_t> code_shape;
  std::vector<OutputTensor> sides;
};

struct ForgetSelection {
  ForgetScheme scheme = ForgetScheme::kFp8;
  Fp8Format fp8_format = Fp8Format::kE4m3;
  uint64_t block_size = 64;
  std::optional<std::regex> only, skip;
};

// Whether `name` of `shape` is chosen: `only` replaces the default rule
// (DefaultQuantized), `skip` removes.
bool Chosen(const ForgetSelection& selection, const std::string& name,
            const std::vector<uint64_t>& shape);

// An encode job for source tensor `t` in `scheme` (side values not yet
// known). kInvalidArgument naming the tensor when it is not a float tensor,
// is empty, or has a shape the scheme cannot take (FP8 per-channel,
// fine-grained and INT8 need 2-D; INT8 a name ending in "weight").
Result<ForgetWeight> MakeForgetWeight(const OutputTensor& t, size_t shard, size_t index,
                                      ForgetScheme scheme, Fp8Format format, uint64_t block_size);

// Whether the weight is bitsandbytes double quant (nf4-dq, fp4-dq).
bool DoubleQuant(const ForgetWeight& w);

// The code dtype/shape and side tensors of a weight: FP8 `_scale` /
// `_scale_inv`, bnb `.absmax`, `.quant_map`, nested state and quant_state,
// INT8 `.SCB` and `.weight_format`. Side values are Decode::kSide, measured
// as they are written (double quant's nested codes by QuantizeBnbNested of
// the tensor's absmax then); constants and FP8 per-tensor's one scale
// (job->side, from the statistics pass) are Decode::kInline; double quant
// needs job->nested_offset measured.
Status MakeSideTensors(ForgetWeight& w);

// The final plan: `source` with every weight's tensor replaced by its codes
// and sides; shards finished (header laid out) again.
Result<RememberPlan> PlanForget(RememberPlan source, const std::vector<ForgetWeight>& weights,
                                const std::atomic<bool>* cancel);

}  // namespace amn::formats

#endif  // AMN_FORMATS_FORGET_PLAN_H_
