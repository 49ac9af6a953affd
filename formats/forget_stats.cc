// The statistics pass of forget, over chunks of the targets on a few threads.
#include "formats/forget_stats.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <thread>

#include "formats/engine_inputs.h"
#include "formats/source_reads.h"

namespace amn::formats {
namespace {

struct Piece {
  size_t target = 0;
  uint64_t begin = 0, end = 0;
  size_t index = 0;  // the chunk's number within its tensor (FP8 per-tensor maxima)
};

// What a target holds while its chunks are measured: one maximum a chunk
// (FP8 per-tensor) or its block absmax (double quant); freed at its end.
struct Measure {
  size_t pieces = 0, left = 0;
  std::vector<float> values;
  bool started = false;
};

Status NotFinite(const OutputTensor& source) {
  return Status(StatusCode::kInvalid,
                "holds NaN or an infinity; forget encodes finite values only")
      .WithTensor(source.name);
}

// The target's result from its measured values, which are then freed.
Status Finish(StatsTarget& target, Measure& m) {
  EncodeJob& job = *target.job;
  for (const float v : m.values) {
    if (!std::isfinite(v)) return NotFinite(*target.source);
  }
  if (PerTensorFp8(job)) {
    // A max is exact, so the order of the chunks' maxima does not matter.
    float amax = 0.0f;
    for (const float v : m.values) amax = std::max(amax, v);
    job.side.assign(1, Fp8ScaleFromAmax(amax, job.fp8_format));
  } else if (target.nested) {
    // The offset QuantizeBnbNested of the whole tensor would use; the
    // writer makes the codes with it, a few nested blocks at a time. The
    // nested absmax are made here, from these values (no codes: none asked).
    AMN_RETURN_IF_ERROR(BnbNestedOffset(m.values, &job.nested_offset));
    job.nested_absmax.assign((m.values.size() + kBnbNestedBlock - 1) / kBnbNestedBlock, 0.0f);
    AMN_RETURN_IF_ERROR(QuantizeBnbNestedBlocks(m.values, kBnbNestedBlock, job.nested_offset, {},
                                                job.nested_absmax));
  }
  std::vector<float>().swap(m.values);
  return Status::Ok();
}

}  // namespace

bool NeedsWholeTensorStats(const EncodeJob& job, bool nested) {
  return PerTensorFp8(job) || (nested && job.kind == EncodeKind::kBnb4);
}

Status ComputeSideValues(const std::vector<std::filesystem::path>& input_files,
                         std::vector<StatsTarget>& targets, unsigned threads, size_t chunk_bytes,
                         bool use_mmap, const std::atomic<bool>* cancel) {
  std::vector<Piece> pieces;
  std::vector<Measure> measures(targets.size());
  uint64_t float_capacity = 0, scratch_capacity = 0;
  for (size_t t = 0; t < targets.size(); ++t) {
    const EncodeJob& job = *targets[t].job;
    const uint64_t n = Elements(job), unit = EncodeUnitElems(job);
    const uint64_t elem = DtypeBytes(targets[t].source->dtype);
    const uint64_t units = std::max<uint64_t>(1, chunk_bytes / std::max<uint64_t>(elem, 4) / unit);
    size_t index = 0;
    for (uint64_t e = 0; e < n; e += units * unit) {
      const uint64_t end = std::min(n, e + units * unit);
      pieces.push_back({t, e, end, index++});
      float_capacity = std::max(float_capacity, (end - e) * elem);
      scratch_capacity = std::max(scratch_capacity, SourceScratchBytes(*targets[t].source, e, end - e));
    }
    measures[t].pieces = measures[t].left = index;
  }

  EngineInputs inputs(input_files, use_mmap);
  std::mutex mutex;
  size_t next = 0;
  Status failure;
  auto fail = [&](Status status) {
    std::lock_guard<std::mutex> lock(mutex);
    if (failure.ok()) failure = std::move(status);
  };
  auto work = [&] {
    std::vector<std::byte> floats(float_capacity), scratch(scratch_capacity);
    for (;;) {
      size_t p;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (!failure.ok() || next >= pieces.size()) return;
        if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
          failure = Status(StatusCode::kCancelled, "interrupted while measuring the input");
          return;
        }
        p = next++;
        // Pieces are taken in order: a target's first piece sizes its
        // values before any of its pieces writes them.
        Measure& m = measures[pieces[p].target];
        if (!m.started) {
          m.started = true;
          const EncodeJob& job = *targets[pieces[p].target].job;
          m.values.assign(PerTensorFp8(job) ? m.pieces : SideCount(job), 0.0f);
        }
      }
      const Piece& piece = pieces[p];
      StatsTarget& target = targets[piece.target];
      Measure& m = measures[piece.target];
      const EncodeJob& job = *target.job;
      const uint64_t count = piece.end - piece.begin;
      const std::span<std::byte> in(floats.data(), count * DtypeBytes(target.source->dtype));
      Status status = ReadSourceElements(inputs, piece.target, *target.source, piece.begin, count,
                                         scratch, in);
      if (status.ok()) {
        // Each piece writes its own entries (chunks hold whole side groups).
        const std::span<float> amax =
            PerTensorFp8(job) ? std::span<float>(&m.values[piece.index], 1)
                              : std::span<float>(m.values)
                                    .subspan(SideFirst(job, piece.begin),
                                             SideSpan(job, piece.begin, piece.end));
        status = AbsMaxChunk(job, piece.begin, piece.end, in, amax);
      }
      if (!status.ok()) return fail(std::move(status).WithTensor(target.source->name));
      bool last;
      {
        std::lock_guard<std::mutex> lock(mutex);
        last = --m.left == 0;
      }
      if (last) {
        status = Finish(target, m);
        if (!status.ok()) return fail(std::move(status));
      }
    }
  };
  const unsigned n_threads = std::max(1u, std::min<unsigned>(threads, pieces.size()));
  if (n_threads == 1) {
    work();  // on the calling thread: one thread starts none
  } else {
    std::vector<std::thread> workers;
    for (unsigned i = 0; i < n_threads; ++i) workers.emplace_back(work);
    for (std::thread& w : workers) w.join();
  }
  AMN_RETURN_IF_ERROR(failure);
  return inputs.CheckUnchanged();
}

}  // namespace amn::formats
