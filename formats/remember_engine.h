// The streaming engine (DESIGN.md §6): writes one planned output shard,
// header first, then tensor data chunk by chunk. Peak memory is
// O(threads x chunk) and the bytes are identical for any thread count and
// either writer:
// * the ring writer: worker threads read and dequantize chunks into a
//   bounded ring of buffers; the calling thread writes them in order. With
//   one thread, no worker starts: the calling thread fills each chunk itself
//   before writing it. Chunks of tensors kept as stored that are copied
//   file to file (EngineOptions::copy_range, where copy_range_use picks
//   them) skip the workers: the writing thread copies them in their turn.
// * the mapped writer (formats/mapped_output.h; AMN_OUTPUT_WRITER=mapped or
//   EngineOptions::writer, not the default: see ChosenWriter): the output
//   is sized and its space reserved up front and mapped once, and the
//   workers take chunks in any order and decode each straight into its own
//   pages of that map (kept tensors at their offset, by copy_file_range
//   where CopyRangeAvoidsCopy says so), while the calling thread reports
//   progress and watches for cancellation.
//   One thread's write(2) no longer bounds the speed (docs/performance/multi-thread.md).
#ifndef AMN_FORMATS_REMEMBER_ENGINE_H_
#define AMN_FORMATS_REMEMBER_ENGINE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "amn/status.h"
#include "dispatch/packed_chunk_rows.h"
#include "formats/file_range_copy.h"
#include "formats/mapped_output.h"
#include "formats/remember_plan.h"

namespace amn::formats {

struct EngineOptions {
  unsigned threads = 1;            // worker threads (>= 1; 1: none, all inline)
  size_t chunk_bytes = internal::kDefaultChunkBytes;  // output bytes per chunk (at most)
  // Called from the calling thread after each chunk (the mapped writer: as
  // chunks finish, in any order): bytes and tensors of this shard finished
  // so far.
  std::function<void(uint64_t bytes_written, size_t tensors_done)> on_progress;
  // When set and true, the shard stops after the chunks in flight (kCancelled).
  const std::atomic<bool>* cancel = nullptr;
  // Packed schemes and strided arrays view a guarded memory map of their
  // input; false reads them with pread instead (formats/engine_inputs.h).
  bool use_mmap = true;
  // Called from the writing thread with each chunk's bytes, in file order
  // (NPZ output sums each member's CRC-32 this way).
  std::function<void(size_t tensor, std::span<const std::byte> bytes)> on_chunk;
  // Called once every byte is written, before the output is synced: may
  // pwrite what was only known after the data (NPZ's CRC-32 fields).
  std::function<Status(int fd)> finish;
  // WriteShard: a chunk whose output bytes are a contiguous range of the
  // input (Decode::kCopy: a tensor kept as stored) goes file to file through
  // this (copy_file_range(2)) instead of pread + write where copy_range_use
  // says so. What it does not copy (it fails, e.g. EXDEV across file
  // systems, or stops short) is read and written, and the shard's later
  // chunks are read and written too. The bytes are the same either way.
  // nullptr or a set on_chunk (it needs the bytes): pread + write.
  CopyRangeCall copy_range = SystemCopyFileRange;
  // Which of those chunks go through copy_range. Unset: from the
  // environment (CopyRangeUseFromEnvironment: AMN_NO_COPY_FILE_RANGE=1 none,
  // AMN_COPY_FILE_RANGE=1 all), by default kWhereItAvoidsCopy: only where
  // the kernel need not move the bytes (a network file system's copy on the
  // server, a reflink file system at block-aligned offsets:
  // CopyRangeAvoidsCopy); on ext4 or tmpfs pread + write, which measured
  // faster there than the kernel's copy through the page cache
  // (docs/performance/remember-vs-cp.md, "Choosing copy_file_range per file system").
  std::optional<CopyRangeUse> copy_range_use;
  // WriteShard's writer. Unset: AMN_OUTPUT_WRITER=ring|mapped when the
  // environment says one, else the ring (the mapped writer is slower where
  // measured: docs/performance/multi-thread.md, "The mapped output writer"). A set on_chunk (it
  // needs the bytes in order) always gets the ring; so does an output the
  // mapped writer cannot take (ReserveForMapping: fallocate refused, a
  // write-only or non-empty file, ...).
  std::optional<OutputWriter> writer;
  // The mapped writer reserves the output's blocks with this (fallocate(2));
  // tests put a refusing one in its place.
  FallocateCall fallocate = SystemFallocate;
  // When set, receives the writer WriteShard ran.
  OutputWriter* writer_used = nullptr;
};

// Writes `shard` of `plan` to the open file descriptor `out_fd` (positioned
// at 0), naming `out_name` in errors.
Status WriteShard(const RememberPlan& plan, const OutputShard& shard, int out_fd,
                  const std::string& out_name, const EngineOptions& options);

// One planned tensor decoded without a file (amn::Model::DequantizeTensor):
// the same chunks and per-chunk decode as WriteShard, so the bytes are the
// ones remember writes for it. options.threads 1 decodes on the calling
// thread and creates none; on_progress is not called.
//
// Into `out` (at least tensor.bytes; the rest is left alone): each chunk is
// decoded straight into its place, in any order, so the only memory taken
// besides `out` is one chunk's input (and scratch) per thread (packed
// schemes and strided arrays without mmap: the tensor's input bytes).
Status DecodeTensor(const RememberPlan& plan, const OutputTensor& tensor, std::span<std::byte> out,
                    const EngineOptions& options);

// Receives consecutive byte ranges of the output tensor, in order, from the
// calling thread; a failed status stops the decode and is returned.
using TensorSink = std::function<Status(uint64_t offset, std::span<const std::byte> bytes)>;

// In order to `sink`, chunk by chunk, holding at most 2 x threads chunks of
// output (options.chunk_bytes each) at a time.
Status StreamTensor(const RememberPlan& plan, const OutputTensor& tensor,
                    const EngineOptions& options, const TensorSink& sink);

}  // namespace amn::formats

#endif  // AMN_FORMATS_REMEMBER_ENGINE_H_
