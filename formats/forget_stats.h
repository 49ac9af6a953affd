// forget's statistics pass, for the only values a chunk cannot measure
// itself (formats/encode_job.h ChunkSideValues): the per-tensor FP8 scale
// (the whole tensor's amax) and bitsandbytes double quant's offset
// (mean(absmax) over the tensor, printed in the quant_state JSON the
// header lists). Read from the mapped input in chunks without holding a
// tensor; every other side value is measured again as it is written.
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

// A weight measured whole: its encode job and the source job making its
// floats. FP8 per-tensor: job->side becomes its one scale. `nested`
// (double quant): job->nested_offset becomes QuantizeBnbNested's offset of
// the tensor's absmax and job->nested_absmax its nested absmax (the only
// source of the `.nested_absmax` side tensor); job->side stays empty.
struct StatsTarget {
  std::shared_ptr<EncodeJob> job;
  std::shared_ptr<const OutputTensor> source;
  bool nested = false;
};

// Whether `job` needs this pass (FP8 per-tensor, or `nested`).
bool NeedsWholeTensorStats(const EncodeJob& job, bool nested);

// Measures `targets` (each one that NeedsWholeTensorStats). A NaN or
// infinity in a tensor is kInvalid naming it. `threads` workers share the
// chunks, taken tensor by tensor in order, so only the tensors the workers
// are in hold their block absmax (double quant), each freed when its last
// chunk is done; one thread: the calling thread alone, none started. The
// values do not depend on the thread count (a max is exact in any order,
// the offset is summed in block order).
Status ComputeSideValues(const std::vector<std::filesystem::path>& input_files,
                         std::vector<StatsTarget>& targets, unsigned threads, size_t chunk_bytes,
                         bool use_mmap, const std::atomic<bool>* cancel);

}  // namespace amn::formats

#endif  // AMN_FORMATS_FORGET_STATS_H_
