// forget's statistics pass: the side values an encoder needs before the
// first code of its tensor is written (FP8 scales from each group's amax,
// bnb block absmax, INT8 row SCB), read from the mapped input in chunks
// without holding a tensor. The output header lists the side tensors before
// the codes (the safetensors writer's order: F32 before U8/I8/F8), so they
// are computed here, in a pass of their own.
#ifndef AMN_FORMATS_FORGET_STATS_H_
#define AMN_FORMATS_FORGET_STATS_H_

#include <atomic>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <vector>

#include "amn/status.h"
#include "formats/remember_plan.h"

namespace amn::formats {

// A weight whose side values are to be computed: its encode job (side
// resized and filled here) and the source job making its floats.
struct StatsTarget {
  std::shared_ptr<EncodeJob> job;
  std::shared_ptr<const OutputTensor> source;
};

// Fills every target's job->side: FP8 scales (Fp8ScaleFromAmax of each
// group's amax), bnb absmax, INT8 SCB. A NaN or infinity in a tensor is
// kInvalid naming it. `threads` workers share the chunks (one: the calling
// thread alone, none started); the values do not depend on their number (a
// max is exact in any order).
Status ComputeSideValues(const std::vector<std::filesystem::path>& input_files,
                         std::vector<StatsTarget>& targets, unsigned threads, size_t chunk_bytes,
                         bool use_mmap, const std::atomic<bool>* cancel);

}  // namespace amn::formats

#endif  // AMN_FORMATS_FORGET_STATS_H_
