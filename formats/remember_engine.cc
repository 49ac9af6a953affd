// Chunked, multi-threaded shard writer: the ordered ring writer and the
// mapped writer (formats/remember_engine.h).
#include "formats/remember_engine.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "amn/array_copy.h"
#include "amn/convert.h"
#include "amn/ggml_dequant.h"
#include "formats/engine_chunks.h"
#include "formats/engine_inputs.h"
#include "formats/like_side.h"
#include "formats/mapped_output.h"
#include "formats/source_reads.h"

namespace amn::formats {
namespace {

static_assert(std::endian::native == std::endian::little,
              "tensor bytes are little-endian and are used in place");

ElemType OutType(Dtype d) {
  return d == Dtype::kF16 ? ElemType::kF16 : d == Dtype::kBf16 ? ElemType::kBf16 : ElemType::kF32;
}

Status WriteAll(int fd, const std::byte* data, size_t size, uint64_t offset, const std::string& name) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status(StatusCode::kIo, name + ": write failed: " + std::strerror(n < 0 ? errno : EIO))
          .WithByteOffset(offset);
    }
    data += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

// Writes zeros from `written` up to `offset` (nothing when already there).
Status PadTo(int fd, uint64_t offset, uint64_t& written, const std::string& name) {
  static constexpr std::byte kZeros[4096] = {};
  while (written < offset) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof(kZeros), offset - written));
    AMN_RETURN_IF_ERROR(WriteAll(fd, kZeros, n, written, name));
    written += n;
  }
  return Status::Ok();
}

// The ring of chunk buffers shared by the workers and the writer. Chunk c
// uses slot c % slots; a worker may fill it once the writer has written
// chunk c - slots, and the writer takes chunks strictly in order. Each slot
// has its own condition variable and the writer another, so a chunk wakes
// only the thread that waits for it: with one shared variable every chunk
// woke every worker, and at 16 threads those wake-ups slowed the writer,
// the pipeline's one sequential stage, below its 4-thread speed.
class Pipeline {
 public:
  Pipeline(size_t slots, uint64_t in_capacity, uint64_t out_capacity, uint64_t scratch_capacity)
      : slots_(slots) {
    for (size_t s = 0; s < slots; ++s) {
      slots_[s].in = Buffer(in_capacity);
      slots_[s].scratch = Buffer(scratch_capacity);
      slots_[s].out = Buffer(out_capacity);
      slots_[s].free_for = s;
    }
  }

  // Left uninitialised: every chunk fills what it uses, and a buffer no
  // chunk touches (a shard copied file to file) never takes its pages.
  struct Buffer {
    Buffer() = default;
    explicit Buffer(uint64_t n) : bytes(std::make_unique_for_overwrite<std::byte[]>(n)), size(n) {}
    std::byte* data() const { return bytes.get(); }
    operator std::span<std::byte>() const { return {bytes.get(), size}; }
    std::unique_ptr<std::byte[]> bytes;
    size_t size = 0;
  };

  struct Slot {
    Buffer in, out, scratch;
    QuantError error;              // encode chunks: what quantization took
    bool deferred = false;         // a kCopy chunk the writer copies itself (CopyChunk)
    size_t free_for = 0;           // the next chunk allowed to fill this slot
    size_t ready = SIZE_MAX;       // the chunk filled and waiting to be written
    std::condition_variable freed;  // free_for changed (workers wait on it)
  };

  // Blocks until chunk `c` may use its slot; nullptr when the run failed.
  Slot* Acquire(size_t c) {
    std::unique_lock<std::mutex> lock(mutex_);
    Slot& slot = slots_[c % slots_.size()];
    slot.freed.wait(lock, [&] { return failed_ || slot.free_for == c; });
    return failed_ ? nullptr : &slot;
  }
  void MarkReady(size_t c) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      slots_[c % slots_.size()].ready = c;
    }
    filled_.notify_one();  // only the writer waits on it
  }
  Slot* AwaitReady(size_t c) {
    std::unique_lock<std::mutex> lock(mutex_);
    Slot& slot = slots_[c % slots_.size()];
    filled_.wait(lock, [&] { return failed_ || slot.ready == c; });
    return failed_ ? nullptr : &slot;
  }
  void Release(size_t c) {
    Slot& slot = slots_[c % slots_.size()];
    {
      std::lock_guard<std::mutex> lock(mutex_);
      slot.free_for = c + slots_.size();
    }
    // Rarely more than one waiter (chunks c + slots, c + 2 slots, ... when
    // the writer lags); each rechecks its own chunk number.
    slot.freed.notify_all();
  }
  void Fail(Status status) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failed_) error_ = std::move(status);
      failed_ = true;
    }
    filled_.notify_all();
    for (Slot& slot : slots_) slot.freed.notify_all();
  }
  Status error() {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable filled_;  // some slot became ready (the writer waits)
  std::vector<Slot> slots_;
  bool failed_ = false;
  Status error_;
};

// Reads and decodes single chunks of one shard into caller-given buffers;
// shared by every worker (EngineInputs locks what it caches).
class ChunkDecoder {
 public:
  ChunkDecoder(const OutputShard& shard, EngineInputs& inputs) : shard_(shard), inputs_(inputs) {}

  // Fills `out_bytes` (chunk.out_bytes long) with chunk `chunk`: read, then
  // decode. `in_buf` and `scratch_buf` hold at least the chunk's in_bytes
  // and scratch_bytes; `error` receives what an encode chunk's quantization
  // took.
  Status Produce(const Chunk& chunk, std::span<std::byte> in_buf, std::span<std::byte> scratch_buf,
                 std::span<std::byte> out_bytes, QuantError* error) const {
    const OutputTensor& out = shard_.tensors[chunk.tensor];
    if (chunk.out_bytes == 0) return Status::Ok();  // an empty tensor
    const uint64_t at = out.input_offset + chunk.in_begin;
    if (out.permute_heads != 0) {
      // llama.cpp's q/k rows: output row r is input row LlamaPermutedRow(r).
      const uint64_t rows = out.shape[0];
      const uint64_t out_row = out.bytes / rows, cols = out_row / DtypeBytes(out.dtype);
      const std::span<std::byte> scratch(scratch_buf.data(), chunk.scratch_bytes);
      for (uint64_t r = chunk.row_begin; r < chunk.row_end; ++r) {
        const uint64_t from = LlamaPermutedRow(r, rows, out.permute_heads);
        AMN_RETURN_IF_ERROR(ReadSourceElements(inputs_, chunk.tensor, out, from * cols, cols, scratch,
                                               out_bytes.subspan((r - chunk.row_begin) * out_row,
                                                                 out_row)));
      }
      return Status::Ok();
    }
    if (out.decode == Decode::kCopy) return inputs_.Read(out.input_file, at, out_bytes);
    if (out.decode == Decode::kInline) {
      std::memcpy(out_bytes.data(), out.inline_bytes->data() + chunk.in_begin, chunk.out_bytes);
      return Status::Ok();
    }
    if (out.decode == Decode::kEncode) {
      const std::span<std::byte> floats(in_buf.data(), chunk.in_bytes);
      AMN_RETURN_IF_ERROR(ReadEncodeFloats(chunk.tensor, out, chunk.row_begin, chunk.row_end,
                                           std::span(scratch_buf.data(), chunk.scratch_bytes), floats));
      *error = QuantError{};
      const EncodeJob& job = *out.encode;
      if (!job.like) return EncodeChunk(job, chunk.row_begin, chunk.row_end, floats, out_bytes, error);
      // --like: this chunk's share of the like-model's side values, read now.
      std::vector<float> side(SideSpan(job, chunk.row_begin, chunk.row_end));
      AMN_RETURN_IF_ERROR(ReadLikeSide(inputs_, *job.like, SideFirst(job, chunk.row_begin), side));
      return EncodeChunkWithSide(job, chunk.row_begin, chunk.row_end, floats, side, out_bytes, error);
    }
    if (out.decode == Decode::kSide) return ProduceSide(chunk, in_buf, scratch_buf, out_bytes);
    // Views may point into a map: a fault while reading it (the file
    // shrank) leaves zeros behind and is reported here, not written.
    if (out.decode == Decode::kPacked) {
      AMN_ASSIGN_OR_RETURN(const PackedViews views, inputs_.Views(chunk.tensor, out.packed));
      AMN_RETURN_IF_ERROR(DecodePackedRows(out.packed, views, chunk.row_begin, chunk.row_end,
                                           OutType(out.dtype), out_bytes));
      return inputs_.CheckMaps();
    }
    if (out.decode == Decode::kArray) {
      AMN_ASSIGN_OR_RETURN(const std::span<const std::byte> storage,
                           inputs_.Storage(chunk.tensor, out.input_file, out.array));
      AMN_RETURN_IF_ERROR(GatherArrayChunk(out, storage, chunk.row_begin,
                                           chunk.row_end - chunk.row_begin,
                                           std::span(in_buf.data(), chunk.in_bytes), out_bytes));
      return inputs_.CheckMaps();
    }
    const std::span<std::byte> in(in_buf.data(), chunk.in_bytes);
    AMN_RETURN_IF_ERROR(inputs_.Read(out.input_file, at, in));
    if (out.decode == Decode::kConvert) {
      return ConvertFloats(FloatTypeOf(out.source_dtype), in, FloatTypeOf(out.dtype), out_bytes);
    }
    const std::span<const uint8_t> in_u8(reinterpret_cast<const uint8_t*>(in.data()), in.size());
    if (out.decode == Decode::kFp8) {
      AMN_ASSIGN_OR_RETURN(const std::span<const float> scales, inputs_.Scales(chunk.tensor, out));
      return DequantFp8Elements(out.fp8_layout, scales, out.code_type, chunk.in_begin,
                                in_u8, OutType(out.dtype), out_bytes);
    }
    return DequantGgml(static_cast<GgmlType>(out.ggml_type), in_u8, OutType(out.dtype), out_bytes);
  }

 private:
  // Elements [begin, end) of an encoded weight's floats (`out`'s source),
  // into `floats` ((end - begin) source elements).
  Status ReadEncodeFloats(size_t tensor, const OutputTensor& out, uint64_t begin, uint64_t end,
                          std::span<std::byte> scratch, std::span<std::byte> floats) const {
    if (out.source->permute_heads == 0) {
      return ReadSourceElements(inputs_, tensor, *out.source, begin, end - begin, scratch, floats);
    }
    // GGUF q/k rows in llama.cpp's order: each row read from where the
    // permutation takes it (chunks hold whole rows).
    const uint64_t cols = out.encode->cols, rows = out.encode->rows;
    const uint64_t elem = DtypeBytes(out.source->dtype);
    for (uint64_t e = begin; e < end; e += cols) {
      const uint64_t from = LlamaPermutedRow(e / cols, rows, out.source->permute_heads);
      AMN_RETURN_IF_ERROR(ReadSourceElements(inputs_, tensor, *out.source, from * cols, cols, scratch,
                                             floats.subspan((e - begin) * elem, cols * elem)));
    }
    return Status::Ok();
  }

  // A side tensor's chunk (AddSideChunks): its side values measured from
  // the chunk's floats, or double quant's nested codes of them, or its
  // nested absmax copied from the statistics pass.
  Status ProduceSide(const Chunk& chunk, std::span<std::byte> in_buf,
                     std::span<std::byte> scratch_buf, std::span<std::byte> out_bytes) const {
    const OutputTensor& out = shard_.tensors[chunk.tensor];
    const EncodeJob& job = *out.encode;
    if (out.side_part == SidePart::kNestedAbsmax) {
      // The statistics pass made them (EncodeJob::nested_absmax).
      const uint64_t first = SideFirst(job, chunk.row_begin) / kBnbNestedBlock;
      const uint64_t count = out_bytes.size() / sizeof(float);
      if (first + count > job.nested_absmax.size()) {
        return Status(StatusCode::kInvalidArgument, "nested absmax do not cover the chunk");
      }
      std::memcpy(out_bytes.data(), job.nested_absmax.data() + first, count * sizeof(float));
      return Status::Ok();
    }
    const std::span<std::byte> floats(in_buf.data(), chunk.in_bytes);
    AMN_RETURN_IF_ERROR(ReadEncodeFloats(chunk.tensor, out, chunk.row_begin, chunk.row_end,
                                         std::span(scratch_buf.data(), chunk.scratch_bytes), floats));
    std::vector<float> side(SideSpan(job, chunk.row_begin, chunk.row_end));
    AMN_RETURN_IF_ERROR(ChunkSideValues(job, chunk.row_begin, chunk.row_end, floats, side));
    if (out.side_part == SidePart::kValues) {
      std::memcpy(out_bytes.data(), side.data(), side.size() * sizeof(float));
      return Status::Ok();
    }
    // The nested codes (with the nested absmax they need, already written
    // from the statistics pass).
    std::vector<uint8_t> codes(side.size());
    std::vector<float> nested((side.size() + kBnbNestedBlock - 1) / kBnbNestedBlock);
    AMN_RETURN_IF_ERROR(
        QuantizeBnbNestedBlocks(side, kBnbNestedBlock, job.nested_offset, codes, nested));
    std::memcpy(out_bytes.data(), codes.data(), codes.size());
    return Status::Ok();
  }

  const OutputShard& shard_;
  EngineInputs& inputs_;
};

// The largest input, output and scratch buffer any of `chunks` needs.
struct Capacity {
  uint64_t in = 0, out = 0, scratch = 0;
};
Capacity ChunkCapacity(const OutputShard& shard, const std::vector<Chunk>& chunks) {
  Capacity cap;
  for (const Chunk& c : chunks) {
    const Decode decode = shard.tensors[c.tensor].decode;
    if (decode == Decode::kFp8 || decode == Decode::kGgml || decode == Decode::kArray ||
        decode == Decode::kConvert || decode == Decode::kEncode || decode == Decode::kSide) {
      cap.in = std::max(cap.in, c.in_bytes);
    }
    cap.out = std::max(cap.out, c.out_bytes);
    cap.scratch = std::max(cap.scratch, c.scratch_bytes);
  }
  return cap;
}

// Produces chunks [0, n) into the ring and consumes them in order on the
// calling thread. threads 1 creates no thread: each chunk is produced just
// before it is consumed. Chunks `on_caller` names (when given) are left by
// the workers and produced on the calling thread too, in turn, so a run of
// them costs no hand-over between threads. The first failure (of either)
// stops both and is returned.
using SlotStep = std::function<Status(size_t c, Pipeline::Slot& slot)>;
Status RunOrdered(size_t n, unsigned threads, Pipeline& pipeline, const SlotStep& produce,
                  const SlotStep& consume,
                  const std::function<bool(size_t c)>& on_caller = nullptr) {
  auto finish = [&](size_t c, Pipeline::Slot* slot) {
    Status status = consume(c, *slot);
    if (!status.ok()) {
      pipeline.Fail(std::move(status));
      return false;
    }
    pipeline.Release(c);
    return true;
  };
  // Chunk c produced and consumed here; false once the run failed. The ring
  // is in order, so c's slot is free by now.
  auto here = [&](size_t c) {
    Pipeline::Slot* slot = pipeline.Acquire(c);
    if (slot == nullptr) return false;
    Status status = produce(c, *slot);
    if (!status.ok()) {
      pipeline.Fail(std::move(status));
      return false;
    }
    return finish(c, slot);
  };
  if (threads <= 1) {
    for (size_t c = 0; c < n; ++c) {
      if (!here(c)) break;
    }
    return pipeline.error();
  }
  std::mutex next_mutex;
  size_t next_chunk = 0;
  auto work = [&] {
    for (;;) {
      size_t c;
      {
        std::lock_guard<std::mutex> lock(next_mutex);
        while (next_chunk < n && on_caller && on_caller(next_chunk)) ++next_chunk;
        if (next_chunk >= n) return;
        c = next_chunk++;
      }
      Pipeline::Slot* slot = pipeline.Acquire(c);
      if (slot == nullptr) return;
      Status status = produce(c, *slot);
      if (!status.ok()) {
        pipeline.Fail(std::move(status));
        return;
      }
      pipeline.MarkReady(c);
    }
  };
  std::vector<std::thread> workers;
  for (unsigned i = 0; i < threads; ++i) workers.emplace_back(work);
  for (size_t c = 0; c < n; ++c) {
    if (on_caller && on_caller(c)) {
      if (!here(c)) break;
      continue;
    }
    Pipeline::Slot* slot = pipeline.AwaitReady(c);
    if (slot == nullptr || !finish(c, slot)) break;
  }
  for (std::thread& t : workers) t.join();
  return pipeline.error();
}

// A shard holding only `tensor`, at data offset 0 (no header).
OutputShard SingleTensorShard(const OutputTensor& tensor) {
  OutputShard one;
  one.tensors.push_back(tensor);
  one.tensors.back().data_begin = 0;
  one.data_bytes = tensor.bytes;
  return one;
}

bool Cancelled(const std::atomic<bool>* cancel) {
  return cancel != nullptr && cancel->load(std::memory_order_relaxed);
}

// Which kCopy chunks WriteShard copies file to file (copy_file_range):
// none when the caller gives no call or needs every chunk's bytes
// (on_chunk), or the use (EngineOptions::copy_range_use, else the
// environment) is kNever; all with kAlways; else the chunks whose copy lets
// the kernel skip moving the bytes (CopyRangeAvoidsCopy, from the input's
// and the output's file systems and the two offsets). The others are read
// and written (on ext4 and tmpfs that is faster than the kernel's copy
// through the page cache: docs/performance/remember-vs-cp.md).
class KernelCopies {
 public:
  KernelCopies(const OutputShard& shard, EngineInputs& inputs, int out_fd,
               const EngineOptions& options)
      : use_(options.copy_range == nullptr || options.on_chunk
                 ? CopyRangeUse::kNever
                 : options.copy_range_use.value_or(CopyRangeUseFromEnvironment())) {
    if (use_ != CopyRangeUse::kWhereItAvoidsCopy) return;
    out_ = FileSystemOf(out_fd);
    for (const OutputTensor& t : shard.tensors) {
      if (t.decode != Decode::kCopy) continue;
      if (t.input_file >= in_types_.size()) in_types_.resize(t.input_file + 1, 0);
      // A file that cannot be opened is the reads' error to report; 0: no copy.
      const Result<FileSystemKind> in = inputs.FileSystem(t.input_file);
      if (in.ok()) in_types_[t.input_file] = in->type;
    }
  }

  bool Any() const { return use_ != CopyRangeUse::kNever; }

  // Chunk `chunk` of `out`, written at `out_offset` in the output file.
  bool Take(const OutputTensor& out, const Chunk& chunk, uint64_t out_offset) const {
    if (use_ == CopyRangeUse::kNever || out.decode != Decode::kCopy || out.permute_heads != 0 ||
        chunk.out_bytes == 0) {
      return false;
    }
    return use_ == CopyRangeUse::kAlways ||
           CopyRangeAvoidsCopy(in_types_[out.input_file], out_.type,
                               out.input_offset + chunk.in_begin, out_offset, out_.block_size);
  }

 private:
  CopyRangeUse use_;
  FileSystemKind out_;
  std::vector<int64_t> in_types_;  // by input file; 0 for files with no kept tensor
};

// Writes kCopy chunk `chunk` of `out` at the output's position (`written`)
// file to file while `in_kernel` holds; what that leaves (the call failed or
// stopped short) is read into `buffer` and written, and `in_kernel` is
// cleared so the chunks after it are read and written here too.
Status CopyChunk(EngineInputs& inputs, const OutputTensor& out, const Chunk& chunk, int out_fd,
                 uint64_t written, const std::string& out_name, CopyRangeCall call,
                 bool& in_kernel, std::span<std::byte> buffer) {
  const uint64_t at = out.input_offset + chunk.in_begin;
  uint64_t copied = 0;
  if (in_kernel) {
    AMN_ASSIGN_OR_RETURN(const RangeCopy copy,
                         inputs.CopyRange(out.input_file, at, chunk.out_bytes, out_fd, call));
    if (copy.complete(chunk.out_bytes)) return Status::Ok();
    in_kernel = false;
    copied = copy.copied;
  }
  const std::span<std::byte> rest = buffer.first(chunk.out_bytes - copied);
  Status status = inputs.Read(out.input_file, at + copied, rest);
  if (!status.ok()) return std::move(status).WithTensor(out.name);
  return WriteAll(out_fd, rest.data(), rest.size(), written + copied, out_name);
}

// The ring writer: the header, then every chunk written in order by the
// calling thread (RunOrdered).
Status WriteShardRing(const OutputShard& shard, const std::vector<Chunk>& chunks,
                      EngineInputs& inputs, int out_fd, const std::string& out_name,
                      const EngineOptions& options) {
  const Capacity cap = ChunkCapacity(shard, chunks);
  const unsigned threads = std::max(1u, options.threads);
  Pipeline pipeline(std::max<size_t>(2, 2 * size_t{threads}), cap.in, cap.out, cap.scratch);
  const ChunkDecoder decoder(shard, inputs);

  AMN_RETURN_IF_ERROR(WriteAll(out_fd, reinterpret_cast<const std::byte*>(shard.header_bytes.data()),
                               shard.header_bytes.size(), 0, out_name));
  uint64_t written = shard.header_bytes.size();
  size_t tensors_done = 0;
  // Chunks of tensors kept as stored that KernelCopies takes are the
  // writer's own: it copies them file to file (CopyChunk) in turn, with no
  // worker and no hand-over.
  const KernelCopies kernel_copies(shard, inputs, out_fd, options);
  bool in_kernel = kernel_copies.Any();  // the writer's; cleared by the first copy that fails
  auto writer_copies = [&](size_t c) {
    const OutputTensor& out = shard.tensors[chunks[c].tensor];
    // A kept tensor's chunk lands as far into it as it starts in the input.
    return kernel_copies.Take(out, chunks[c],
                              shard.header_bytes.size() + out.data_begin + chunks[c].in_begin);
  };
  auto produce = [&](size_t c, Pipeline::Slot& slot) -> Status {
    const Chunk& chunk = chunks[c];
    slot.deferred = writer_copies(c);
    if (slot.deferred) return Status::Ok();  // CopyChunk in consume
    Status status = decoder.Produce(chunk, slot.in, slot.scratch,
                                    std::span(slot.out.data(), chunk.out_bytes), &slot.error);
    // A side tensor's failure (a NaN in the weight) names the weight.
    const OutputTensor& out = shard.tensors[chunk.tensor];
    if (!status.ok()) {
      return std::move(status).WithTensor(out.decode == Decode::kSide ? out.source->name : out.name);
    }
    return status;
  };
  auto consume = [&](size_t c, Pipeline::Slot& slot) -> Status {
    // A tensor starts at its planned offset: GGUF aligns each one, so the
    // bytes between the last tensor's end and it are written as zeros
    // (safetensors plans them back to back and never pads).
    AMN_RETURN_IF_ERROR(PadTo(out_fd, shard.header_bytes.size() + shard.tensors[chunks[c].tensor].data_begin,
                              written, out_name));
    if (slot.deferred) {
      AMN_RETURN_IF_ERROR(CopyChunk(inputs, shard.tensors[chunks[c].tensor], chunks[c], out_fd,
                                    written, out_name, options.copy_range, in_kernel,
                                    std::span(slot.out.data(), chunks[c].out_bytes)));
    } else {
      AMN_RETURN_IF_ERROR(WriteAll(out_fd, slot.out.data(), chunks[c].out_bytes, written, out_name));
    }
    if (options.on_chunk) {  // never with a deferred chunk (KernelCopies)
      options.on_chunk(chunks[c].tensor,
                       std::span<const std::byte>(slot.out.data(), chunks[c].out_bytes));
    }
    written += chunks[c].out_bytes;
    // In chunk order, whatever the thread count: the same sums for any -j.
    const OutputTensor& done = shard.tensors[chunks[c].tensor];
    if (done.decode == Decode::kEncode && chunks[c].out_bytes > 0) {
      Accumulate(done.encode->error, slot.error);
    }
    if (chunks[c].last_of_tensor) {
      ++tensors_done;
      const bool sourced = done.decode == Decode::kEncode || done.decode == Decode::kSide;
      inputs.Release(chunks[c].tensor, sourced ? *done.source : done);
    }
    if (options.on_progress) options.on_progress(written, tensors_done);
    if (Cancelled(options.cancel)) return Status(StatusCode::kCancelled, out_name + ": interrupted");
    return Status::Ok();
  };
  AMN_RETURN_IF_ERROR(RunOrdered(chunks.size(), threads, pipeline, produce, consume, writer_copies));
  // GGUF pads the last tensor to the alignment too (its loader reads the
  // padded size of every tensor).
  return PadTo(out_fd, shard.header_bytes.size() + shard.data_bytes, written, out_name);
}

// Which writer WriteShard tries first (EngineOptions::writer). The ring by
// default: the mapped writer has not been measured faster where it counts
// (docs/performance/multi-thread.md, "The mapped output writer").
OutputWriter ChosenWriter(const EngineOptions& options) {
  if (options.on_chunk) return OutputWriter::kRing;  // it needs the bytes in order
  if (options.writer) return *options.writer;
  if (const std::optional<OutputWriter> env = OutputWriterFromEnvironment()) return *env;
  return OutputWriter::kRing;
}

// The mapped writer, into an output ReserveForMapping made ready: the header
// with pwrite, then workers claim chunks in any order and put each at its
// planned offset: decoded straight into its pages of one OutputMap of the
// whole output (or into a buffer written with pwrite, where the map or a
// page of it could not be had), a kept tensor's chunk copied file to file
// there. The calling thread reports progress as chunks finish and turns a
// cancel into the run's error (with one thread it is the worker and starts
// none); the first error stops every worker after its current chunk.
// Padding is left as the reserved blocks' zeros.
Status WriteShardMapped(const OutputShard& shard, const std::vector<Chunk>& chunks,
                        EngineInputs& inputs, int out_fd, const std::string& out_name,
                        const EngineOptions& options) {
  const uint64_t header = shard.header_bytes.size();
  const uint64_t total = header + shard.data_bytes;
  AMN_RETURN_IF_ERROR(PwriteAll(out_fd, std::as_bytes(std::span(shard.header_bytes)), 0, out_name));
  // Where each chunk goes, and what finishing it adds to the progress: its
  // bytes and, for a tensor's first chunk, the padding before the tensor, so
  // the sum over all chunks is what the ring writer reports after its last.
  std::vector<uint64_t> at(chunks.size()), credit(chunks.size());
  std::vector<std::atomic<size_t>> left(shard.tensors.size());  // chunks of a tensor not done
  uint64_t end = 0;  // of the chunk before, from the data's start
  for (size_t c = 0; c < chunks.size(); ++c) {
    const uint64_t begin = shard.tensors[chunks[c].tensor].data_begin;
    const bool first = c == 0 || chunks[c - 1].tensor != chunks[c].tensor;
    at[c] = first ? header + begin : at[c - 1] + chunks[c - 1].out_bytes;
    credit[c] = (first && begin > end ? begin - end : 0) + chunks[c].out_bytes;
    end = at[c] - header + chunks[c].out_bytes;
    if (at[c] + chunks[c].out_bytes > total) {
      return Status(StatusCode::kInvalid, "planned chunks run past the end of the output")
          .WithTensor(shard.tensors[chunks[c].tensor].name);
    }
    left[chunks[c].tensor].fetch_add(1, std::memory_order_relaxed);
  }
  const Capacity cap = ChunkCapacity(shard, chunks);
  const ChunkDecoder decoder(shard, inputs);
  const KernelCopies kernel_copies(shard, inputs, out_fd, options);
  std::atomic<bool> in_kernel{kernel_copies.Any()};  // cleared by the first copy that fails
  std::vector<QuantError> errors(chunks.size());  // encode chunks', summed in order at the end
  const OutputMap map = OutputMap::Map(out_fd, total);

  // Chunk c at its offset, with the calling worker's buffers (`buffer` is
  // made the first time a chunk cannot be mapped).
  auto write_chunk = [&](size_t c, std::span<std::byte> in, std::span<std::byte> scratch,
                         std::unique_ptr<std::byte[]>& buffer) -> Status {
    const Chunk& chunk = chunks[c];
    const OutputTensor& out = shard.tensors[chunk.tensor];
    if (chunk.out_bytes == 0) return Status::Ok();
    const uint64_t from = out.input_offset + chunk.in_begin;  // kept tensors
    uint64_t copied = 0;
    if (kernel_copies.Take(out, chunk, at[c]) && in_kernel.load(std::memory_order_relaxed)) {
      AMN_ASSIGN_OR_RETURN(const RangeCopy copy,
                           inputs.CopyRange(out.input_file, from, chunk.out_bytes, out_fd,
                                            options.copy_range, at[c]));
      if (copy.complete(chunk.out_bytes)) return Status::Ok();
      in_kernel.store(false, std::memory_order_relaxed);  // later chunks are read and written
      copied = copy.copied;
    }
    const uint64_t bytes = chunk.out_bytes - copied;
    const std::span<std::byte> pages = map.Prepare(at[c] + copied, bytes);
    const bool mapped = !pages.empty();
    if (!mapped && !buffer) buffer = std::make_unique_for_overwrite<std::byte[]>(cap.out);
    const std::span<std::byte> dest =
        mapped ? pages : std::span(buffer.get(), static_cast<size_t>(bytes));
    Status status = copied > 0 ? inputs.Read(out.input_file, from + copied, dest)
                               : decoder.Produce(chunk, in, scratch, dest, &errors[c]);
    if (mapped) map.Release(at[c] + copied, bytes);
    if (!status.ok()) {
      // A side tensor's failure (a NaN in the weight) names the weight.
      return std::move(status).WithTensor(out.decode == Decode::kSide ? out.source->name : out.name);
    }
    if (mapped) return map.Check(out_name);
    return PwriteAll(out_fd, dest, at[c] + copied, out_name);
  };

  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::atomic<uint64_t> done_bytes{header};
  std::atomic<size_t> tensors_done{0};
  std::mutex mutex;  // guards what follows; the calling thread waits on `changed`
  std::condition_variable changed;
  Status first_error;
  size_t finished = 0;  // chunks
  const unsigned threads =
      static_cast<unsigned>(std::min<size_t>(std::max(1u, options.threads),
                                             std::max<size_t>(1, chunks.size())));
  unsigned running = threads;
  auto fail = [&](Status status) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!failed.load(std::memory_order_relaxed)) first_error = std::move(status);
      failed.store(true, std::memory_order_relaxed);
    }
    changed.notify_one();
  };
  // Progress, then the cancel flag (looked at once more after the last
  // chunk, as the ring writer does); on the calling thread only.
  auto report = [&](bool progressed) {
    if (progressed && options.on_progress) {
      options.on_progress(done_bytes.load(std::memory_order_relaxed),
                          tensors_done.load(std::memory_order_relaxed));
    }
    if (Cancelled(options.cancel)) fail(Status(StatusCode::kCancelled, out_name + ": interrupted"));
  };
  // One thread: the calling thread is the worker and reports after each
  // chunk itself, so -j 1 starts no thread with this writer either.
  const bool on_caller = threads == 1;
  auto work = [&] {
    const Pipeline::Buffer in(cap.in), scratch(cap.scratch);
    std::unique_ptr<std::byte[]> buffer;
    while (!failed.load(std::memory_order_relaxed)) {
      const size_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks.size()) break;
      Status status = write_chunk(c, in, scratch, buffer);
      if (!status.ok()) {
        fail(std::move(status));
        break;
      }
      done_bytes.fetch_add(credit[c], std::memory_order_relaxed);
      if (left[chunks[c].tensor].fetch_sub(1, std::memory_order_acq_rel) == 1) {
        const OutputTensor& done = shard.tensors[chunks[c].tensor];
        const bool sourced = done.decode == Decode::kEncode || done.decode == Decode::kSide;
        inputs.Release(chunks[c].tensor, sourced ? *done.source : done);
        tensors_done.fetch_add(1, std::memory_order_relaxed);
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        ++finished;
      }
      changed.notify_one();
      if (on_caller) report(true);
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      --running;
    }
    changed.notify_one();
  };
  std::vector<std::thread> workers;
  if (on_caller) work();
  for (unsigned i = 0; i < threads && !on_caller; ++i) workers.emplace_back(work);
  if (!on_caller) {
    // The calling thread: progress as chunks finish, and the cancel flag
    // looked at least every 50 ms even while none does.
    std::unique_lock<std::mutex> lock(mutex);
    size_t seen = 0;
    for (bool over = false; !over;) {
      changed.wait_for(lock, std::chrono::milliseconds(50),
                       [&] { return running == 0 || finished != seen; });
      over = running == 0;
      const bool progressed = finished != seen;
      seen = finished;
      lock.unlock();
      report(progressed);
      lock.lock();
    }
  }
  for (std::thread& t : workers) t.join();
  if (failed.load(std::memory_order_relaxed)) return first_error;
  AMN_RETURN_IF_ERROR(map.Check(out_name));
  // In chunk order, as the ring writer sums them: the same sums for any -j.
  for (size_t c = 0; c < chunks.size(); ++c) {
    const OutputTensor& done = shard.tensors[chunks[c].tensor];
    if (done.decode == Decode::kEncode && chunks[c].out_bytes > 0) {
      Accumulate(done.encode->error, errors[c]);
    }
  }
  return Status::Ok();
}

}  // namespace

Status WriteShard(const RememberPlan& plan, const OutputShard& shard, int out_fd,
                  const std::string& out_name, const EngineOptions& options) {
  EngineInputs inputs(plan.input_files, options.use_mmap);
  const std::vector<Chunk> chunks = MakeChunks(shard, options.chunk_bytes);
  OutputWriter writer = ChosenWriter(options);
  if (writer == OutputWriter::kMapped) {
    // Padding needs no writing: the reserved blocks read as zeros.
    AMN_ASSIGN_OR_RETURN(const bool reserved,
                         ReserveForMapping(out_fd, shard.header_bytes.size() + shard.data_bytes,
                                           options.fallocate, out_name));
    if (!reserved) writer = OutputWriter::kRing;
  }
  if (options.writer_used != nullptr) *options.writer_used = writer;
  AMN_RETURN_IF_ERROR(writer == OutputWriter::kMapped
                          ? WriteShardMapped(shard, chunks, inputs, out_fd, out_name, options)
                          : WriteShardRing(shard, chunks, inputs, out_fd, out_name, options));
  if (options.finish) AMN_RETURN_IF_ERROR(options.finish(out_fd));
  // What was read is what the header described only if no input changed.
  return inputs.CheckUnchanged();
}

Status DecodeTensor(const RememberPlan& plan, const OutputTensor& tensor, std::span<std::byte> out,
                    const EngineOptions& options) {
  if (out.size() < tensor.bytes) {
    return Status(StatusCode::kInvalidArgument,
                  "the buffer holds " + std::to_string(out.size()) + " bytes, the tensor needs " +
                      std::to_string(tensor.bytes))
        .WithTensor(tensor.name);
  }
  const OutputShard shard = SingleTensorShard(tensor);
  EngineInputs inputs(plan.input_files, options.use_mmap);
  const std::vector<Chunk> chunks = MakeChunks(shard, options.chunk_bytes);
  // Where each chunk goes: chunks cover the tensor in order, back to back.
  std::vector<uint64_t> offsets(chunks.size());
  uint64_t total = 0;
  for (size_t c = 0; c < chunks.size(); ++c) {
    offsets[c] = total;
    total += chunks[c].out_bytes;
  }
  if (total != tensor.bytes) {
    return Status(StatusCode::kInvalid, "planned chunks do not cover the tensor").WithTensor(tensor.name);
  }
  const Capacity cap = ChunkCapacity(shard, chunks);
  const ChunkDecoder decoder(shard, inputs);
  const unsigned threads =
      static_cast<unsigned>(std::min<size_t>(std::max(1u, options.threads), std::max<size_t>(1, chunks.size())));

  std::mutex mutex;
  size_t next_chunk = 0;
  Status first_error;
  bool failed = false;
  auto work = [&] {
    std::vector<std::byte> in(cap.in), scratch(cap.scratch);
    QuantError error;
    for (;;) {
      size_t c;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (failed || next_chunk >= chunks.size()) return;
        c = next_chunk++;
      }
      Status status = Cancelled(options.cancel)
                          ? Status(StatusCode::kCancelled, "interrupted")
                          : decoder.Produce(chunks[c], in, scratch,
                                            out.subspan(offsets[c], chunks[c].out_bytes), &error);
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!failed) first_error = std::move(status).WithTensor(tensor.name);
        failed = true;
        return;
      }
    }
  };
  std::vector<std::thread> workers;
  for (unsigned i = 1; i < threads; ++i) workers.emplace_back(work);
  work();  // the calling thread is one of the workers
  for (std::thread& t : workers) t.join();
  if (failed) return first_error;
  return inputs.CheckUnchanged();
}

Status StreamTensor(const RememberPlan& plan, const OutputTensor& tensor,
                    const EngineOptions& options, const TensorSink& sink) {
  const OutputShard shard = SingleTensorShard(tensor);
  EngineInputs inputs(plan.input_files, options.use_mmap);
  const std::vector<Chunk> chunks = MakeChunks(shard, options.chunk_bytes);
  const Capacity cap = ChunkCapacity(shard, chunks);
  const unsigned threads =
      static_cast<unsigned>(std::min<size_t>(std::max(1u, options.threads), std::max<size_t>(1, chunks.size())));
  Pipeline pipeline(std::max<size_t>(2, 2 * size_t{threads}), cap.in, cap.out, cap.scratch);
  const ChunkDecoder decoder(shard, inputs);
  uint64_t offset = 0;
  auto produce = [&](size_t c, Pipeline::Slot& slot) -> Status {
    Status status = decoder.Produce(chunks[c], slot.in, slot.scratch,
                                    std::span(slot.out.data(), chunks[c].out_bytes), &slot.error);
    if (!status.ok()) return std::move(status).WithTensor(tensor.name);
    return status;
  };
  auto consume = [&](size_t c, Pipeline::Slot& slot) -> Status {
    if (chunks[c].out_bytes > 0) {
      AMN_RETURN_IF_ERROR(sink(offset, std::span<const std::byte>(slot.out.data(), chunks[c].out_bytes)));
    }
    offset += chunks[c].out_bytes;
    if (Cancelled(options.cancel)) return Status(StatusCode::kCancelled, tensor.name + ": interrupted");
    return Status::Ok();
  };
  AMN_RETURN_IF_ERROR(RunOrdered(chunks.size(), threads, pipeline, produce, consume));
  if (offset != tensor.bytes) {
    return Status(StatusCode::kInvalid, "planned chunks do not cover the tensor").WithTensor(tensor.name);
  }
  return inputs.CheckUnchanged();
}

}  // namespace amn::formats
