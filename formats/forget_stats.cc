// The statistics pass of forget, over chunks of every target on a few threads.
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

Status NotFinite(const OutputTensor& source) {
  return Status(StatusCode::kInvalid,
                "holds NaN or an infinity; forget encodes finite values only")
      .WithTensor(source.name);
}

}  // namespace

Status ComputeSideValues(const std::vector<std::filesystem::path>& input_files,
                         std::vector<StatsTarget>& targets, unsigned threads, size_t chunk_bytes,
                         bool use_mmap, const std::atomic<bool>* cancel) {
  std::vector<Piece> pieces;
  std::vector<std::vector<float>> chunk_max(targets.size());  // FP8 per-tensor: one per chunk
  uint64_t float_capacity = 0, scratch_capacity = 0;
  for (size_t t = 0; t < targets.size(); ++t) {
    EncodeJob& job = *targets[t].job;
    job.side.assign(SideCount(job), 0.0f);
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
    chunk_max[t].assign(index, 0.0f);
  }

  EngineInputs inputs(input_files, use_mmap);
  std::mutex mutex;
  size_t next = 0;
  Status failure;
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
      }
      const Piece& piece = pieces[p];
      StatsTarget& target = targets[piece.target];
      EncodeJob& job = *target.job;
      const uint64_t count = piece.end - piece.begin;
      const std::span<std::byte> in(floats.data(), count * DtypeBytes(target.source->dtype));
      Status status = ReadSourceElements(inputs, piece.target, *target.source, piece.begin, count,
                                         scratch, in);
      if (status.ok()) {
        // Each piece writes its own entries (chunks hold whole side groups).
        const uint64_t first = SideFirst(job, piece.begin);
        const std::span<float> amax =
            PerTensorFp8(job)
                ? std::span<float>(&chunk_max[piece.target][piece.index], 1)
                : std::span<float>(job.side).subspan(first, SideSpan(job, piece.begin, piece.end));
        status = AbsMaxChunk(job, piece.begin, piece.end, in, amax);
      }
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (failure.ok()) failure = std::move(status).WithTensor(target.source->name);
        return;
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
  AMN_RETURN_IF_ERROR(inputs.CheckUnchanged());

  for (size_t t = 0; t < targets.size(); ++t) {
    EncodeJob& job = *targets[t].job;
    if (PerTensorFp8(job) && !job.side.empty()) {
      // A max is exact, so the order of the chunks' maxima does not matter.
      float amax = 0.0f;
      for (const float m : chunk_max[t]) {
        if (!std::isfinite(m)) return NotFinite(*targets[t].source);
        amax = std::max(amax, m);
      }
      job.side[0] = amax;
    }
    for (float& v : job.side) {
      if (!std::isfinite(v)) return NotFinite(*targets[t].source);
      if (job.kind == EncodeKind::kFp8) v = Fp8ScaleFromAmax(v, job.fp8_format);
    }
  }
  return Status::Ok();
}

}  // namespace amn::formats
