// The engine's reads of a plan's input files: positioned reads (pread) for
// copied and FP8/ggml chunks, and whole-tensor views for packed schemes and
// strided arrays, served from a guarded memory map (formats/sigbus_guard.h)
// or, without mmap, from buffers read once per tensor. A file that shrinks,
// grows or is written while it is read gives an error naming it (a fault in
// the map, a short read, or its stamp at the end), never a signal.
#ifndef AMN_FORMATS_ENGINE_INPUTS_H_
#define AMN_FORMATS_ENGINE_INPUTS_H_

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "amn/result.h"
#include "formats/byte_source.h"
#include "formats/file_range_copy.h"
#include "formats/packed_decode.h"
#include "formats/remember_plan.h"

namespace amn::formats {

class EngineInputs {
 public:
  // `use_mmap` false: never map; packed tensors and strided arrays are read
  // whole into memory, one tensor at a time per worker.
  EngineInputs(const std::vector<std::filesystem::path>& paths, bool use_mmap);
  ~EngineInputs();

  // Fills `out` from `file` at `offset`.
  Status Read(size_t file, uint64_t offset, std::span<std::byte> out);
  // Copies `bytes` of `file` from `offset` to `out_fd` inside the kernel
  // with `call` (formats/file_range_copy.h), at `out_offset` when given, else
  // at the output's position: what it could not copy is left to the caller,
  // which writes it after a Read.
  Result<RangeCopy> CopyRange(size_t file, uint64_t offset, uint64_t bytes, int out_fd,
                              CopyRangeCall call,
                              std::optional<uint64_t> out_offset = std::nullopt);

  // The file system `file` is on (fstatfs), for choosing where CopyRange
  // pays (CopyRangeAvoidsCopy).
  Result<FileSystemKind> FileSystem(size_t file);

  // The views of packed tensor `tensor` (its codes and parts); kTruncated
  // when the file is now shorter than its header said.
  Result<PackedViews> Views(size_t tensor, const PackedJob& job);
  // The storage an array job reads: the stored member's bytes (mapped or
  // read) or the member inflated once; kept until Release.
  Result<std::span<const std::byte>> Storage(size_t tensor, size_t file, const ArrayJob& job);
  // The scales of FP8 weight `fp8` (tensor `tensor`) widened to F32, read
  // once and kept until Release; kLimitExceeded past 256 MiB of them.
  Result<std::span<const float>> Scales(size_t tensor, const OutputTensor& fp8);
  // Frees what Views/Storage/Scales kept for a finished tensor and drops its
  // mapped pages from the resident set.
  void Release(size_t tensor, const OutputTensor& out);

  // kTruncated naming the file when a read of a mapping faulted (its file
  // shrank under it). Cheap: call after every chunk read from a map.
  Status CheckMaps();
  // CheckMaps, then kIo naming any file whose stamp changed since it was
  // opened (written, resized or replaced while being read).
  Status CheckUnchanged();

 private:
  struct Buffers;
  Result<FileSource*> Source(size_t file);
  // The guarded mapping of `file`, or nullptr when reads go through pread.
  Result<const MappedFile*> Map(size_t file);
  Result<std::span<const std::byte>> MappedSpan(size_t file, uint64_t offset, uint64_t bytes,
                                                const std::string& what);
  Result<std::vector<std::byte>> ReadWhole(size_t file, uint64_t offset, uint64_t bytes);

  const std::vector<std::filesystem::path>& paths_;
  const bool use_mmap_;
  std::mutex open_mutex_;
  std::vector<std::unique_ptr<FileSource>> sources_;
  std::vector<std::optional<MappedFile>> maps_;
  std::vector<bool> unmappable_;  // guard table full: read this file instead
  std::mutex buffers_mutex_;
  std::map<size_t, std::shared_ptr<const Buffers>> buffers_;  // by tensor
};

}  // namespace amn::formats

#endif  // AMN_FORMATS_ENGINE_INPUTS_H_
