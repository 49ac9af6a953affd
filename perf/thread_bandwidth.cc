// The team, slicing and copy floor of perf/thread_bandwidth.h.
#include "perf/thread_bandwidth.h"

#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace amn::perf {

double NowSeconds() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

ThreadTeam::ThreadTeam(unsigned size)
    : size_(std::max(size, 1u)), start_(size_), done_(size_), started_(size_), finished_(size_) {
  for (unsigned t = 1; t < size_; ++t) threads_.emplace_back(&ThreadTeam::Member, this, t);
}

ThreadTeam::~ThreadTeam() {
  stop_ = true;
  start_.arrive_and_wait();
  for (std::thread& thread : threads_) thread.join();
}

void ThreadTeam::Member(unsigned t) {
  for (;;) {
    start_.arrive_and_wait();
    if (stop_) return;
    Step(t);
  }
}

// The barriers order body_, active_ and the times between the members.
void ThreadTeam::Step(unsigned t) {
  if (t < active_) {
    started_[t] = NowSeconds();
    (*body_)(t);
    finished_[t] = NowSeconds();
  }
  done_.arrive_and_wait();
}

double ThreadTeam::Run(unsigned active, const std::function<void(unsigned)>& body) {
  body_ = &body;
  active_ = std::min(std::max(active, 1u), size_);
  start_.arrive_and_wait();
  Step(0);
  const double first = *std::min_element(started_.begin(), started_.begin() + active_);
  const double last = *std::max_element(finished_.begin(), finished_.begin() + active_);
  return last - first;
}

Slice SliceOf(size_t total, size_t granule, unsigned t, unsigned n) {
  const size_t granules = total / granule;
  Slice slice{granules * t / n * granule, granules * (t + 1) / n * granule};
  if (t + 1 == n) slice.end = total;
  return slice;
}

void TouchSlices(ThreadTeam& team, const std::vector<UntouchedBytes*>& buffers) {
  team.Run(team.size(), [&](unsigned t) {
    for (UntouchedBytes* buffer : buffers) {
      const Slice s = SliceOf(buffer->size(), 4096, t, team.size());
      std::memset(buffer->data() + s.begin, 0, s.end - s.begin);
    }
  });
}

double TimeSlicedCopy(ThreadTeam& team, unsigned threads, const unsigned char* src,
                      unsigned char* dst, size_t bytes) {
  return team.Run(threads, [&](unsigned t) {
    const Slice s = SliceOf(bytes, 4096, t, threads);
    std::memcpy(dst + s.begin, src + s.begin, s.end - s.begin);
  });
}

size_t DefaultFloorMib(size_t llc_bytes) {
  return std::max<size_t>(1024, 4 * llc_bytes / 1048576 + 1);
}

std::vector<unsigned> ParseThreadList(const char* text) {
  std::vector<unsigned> out;
  for (const char* p = text; *p;) {
    if (*p == ' ' || *p == ',') {
      ++p;
      continue;
    }
    char* end = nullptr;
    const unsigned long v = std::strtoul(p, &end, 10);
    if (end == p || v == 0 || v > 4096 || (*end && *end != ' ' && *end != ',')) return {};
    out.push_back(static_cast<unsigned>(v));
    p = end;
  }
  return out;
}

std::vector<unsigned> DefaultThreadCounts() {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::vector<unsigned> counts;
  for (unsigned n = 1; n < cores; n *= 2) counts.push_back(n);
  counts.push_back(cores);
  return counts;
}

}  // namespace amn::perf
