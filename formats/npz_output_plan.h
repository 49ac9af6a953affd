// A remember plan re-laid as one .npz file (docs/arrays.md "Writing NPZ"):
// a ZIP of stored (uncompressed) .npy members, one per tensor, as
// numpy.savez writes it (zipfile with force_zip64: every local header
// carries the ZIP64 sizes; the central directory and end record use ZIP64
// only where a size, offset or count needs it). Each member's local header
// and .npy header are a Decode::kInline piece before its data, the central
// directory one after the last; the engine streams the data and NpzCrcs
// sums each member's CRC-32 as it is written, then patches the CRC fields
// (only known after the data) in place before the output is synced.
#ifndef AMN_FORMATS_NPZ_OUTPUT_PLAN_H_
#define AMN_FORMATS_NPZ_OUTPUT_PLAN_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "amn/result.h"
#include "formats/remember_plan.h"

namespace amn::formats {

// The CRC-32 of every member, summed from the engine's chunks
// (EngineOptions::on_chunk) and written into the local headers and the
// central directory (EngineOptions::finish).
class NpzCrcs {
 public:
  struct Member {
    size_t data_tensor = 0;      // the plan's tensor index of the array data
    uint32_t crc = 0;            // so far: starts as the CRC of the .npy header
    uint64_t local_crc_at = 0;   // file offsets of the two CRC fields
    uint64_t central_crc_at = 0;
  };
  void OnChunk(size_t tensor, std::span<const std::byte> bytes);
  Status Patch(int fd) const;
  std::vector<Member> members;
  std::vector<size_t> member_of;  // by tensor index; SIZE_MAX for the headers
};

// The .npy header numpy writes for `dtype` and `shape` (format.py
// _write_array_header: the dict's keys sorted, room for the first dimension
// to grow to 21 digits, padded with spaces and '\n' so the data starts at a
// multiple of 64 bytes; version 1.0, or 2.0 when the header needs more than
// 65535 bytes). kUnsupported for dtypes numpy has no type for (BF16, FP8).
Result<std::string> NpyHeader(Dtype dtype, const std::vector<uint64_t>& shape);

// Every tensor of every shard of `plan` (floats already of a numpy type),
// as members NAME.npy in name order, with `crcs` set up for the engine.
// kUnsupported naming a tensor numpy has no dtype for; kInvalid for two
// tensors of one name.
Result<RememberPlan> PlanNpzOutput(RememberPlan plan, NpzCrcs& crcs,
                                   const std::atomic<bool>* cancel = nullptr);

}  // namespace amn::formats

#endif  // AMN_FORMATS_NPZ_OUTPUT_PLAN_H_
