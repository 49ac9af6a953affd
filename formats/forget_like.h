// forget --like MODEL: re-encode the input's weights with the scheme and the
// side tensors (FP8 scales, bnb absmax and nested state, INT8 SCB) of an
// existing quantized safetensors model. The side tensors are copied from it
// byte for byte; the encoders are given their values, so
// `forget (remember M) --like M` gives M's codes back exactly. Planning
// reads no side values (only the 16-entry bnb codebook, to check it): each
// encode chunk reads its own share while it is encoded (formats/like_side.h),
// so the memory held does not grow with the model.
#ifndef AMN_FORMATS_FORGET_LIKE_H_
#define AMN_FORMATS_FORGET_LIKE_H_

#include <string>
#include <vector>

#include "amn/result.h"
#include "formats/forget_plan.h"
#include "formats/model_files.h"
#include "formats/quant_scheme.h"

namespace amn::formats {

struct LikeWeights {
  std::vector<ForgetWeight> weights;
  ForgetScheme scheme = ForgetScheme::kFp8;  // of the first weight, for the report
};

// One ForgetWeight per tensor of `source` that `like` quantizes (by output
// name), its job->like placing its side values in `like`'s files, whose
// paths are appended to source.input_files. kInvalidArgument when `like` is not
// quantized in FP8 or bitsandbytes, when a weight's shape differs from the
// input's, or when no tensor matches.
Result<LikeWeights> WeightsLike(RememberPlan& source, const ModelFiles& like,
                                const ModelScheme& like_scheme);

}  // namespace amn::formats

#endif  // AMN_FORMATS_FORGET_LIKE_H_
