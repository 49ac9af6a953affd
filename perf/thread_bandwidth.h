// Multi-thread memory measuring shared by perf/bandwidth_mt.cc (the
// machine's bandwidth floor) and perf/kernel_scaling.cc (kernels against
// that floor): a team of threads started once that runs one body per
// member between two barriers, the slicing of a buffer among them, untouched
// page-aligned buffers (perf/page_bytes.h; each member touches its own pages first: NUMA
// first touch) and the sliced memcpy that is the copy floor. Standard
// library only.
#ifndef AMN_PERF_THREAD_BANDWIDTH_H_
#define AMN_PERF_THREAD_BANDWIDTH_H_

#include <barrier>
#include <cstddef>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "perf/page_bytes.h"

namespace amn::perf {

double NowSeconds();  // CLOCK_MONOTONIC

// `size` members: the calling thread is member 0, the others are threads
// started by the constructor and kept until the destructor.
class ThreadTeam {
 public:
  explicit ThreadTeam(unsigned size);
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  unsigned size() const { return size_; }
  // Runs body(t) on members 0 .. active-1 at once (the rest wait; active <=
  // size) and returns the seconds from the first member's start to the last
  // one's finish.
  double Run(unsigned active, const std::function<void(unsigned)>& body);

 private:
  void Member(unsigned t);  // the loop of a started thread
  void Step(unsigned t);    // one Run, as member t

  unsigned size_;
  std::barrier<> start_, done_;
  const std::function<void(unsigned)>* body_ = nullptr;
  unsigned active_ = 0;
  bool stop_ = false;
  std::vector<double> started_, finished_;
  std::vector<std::thread> threads_;
};

// Member t's part of [0, total) among n members: whole granules, spread as
// evenly as they go; the last member also takes a tail shorter than a granule.
struct Slice {
  size_t begin = 0, end = 0;
};
Slice SliceOf(size_t total, size_t granule, unsigned t, unsigned n);

// Member t writes its own 4 KiB-granule slice of every buffer (zeros) with
// all of the team's members: the pages then belong to the member (NUMA node)
// that streams them with the same slicing.
void TouchSlices(ThreadTeam& team, const std::vector<UntouchedBytes*>& buffers);

// The copy floor, one run: members 0 .. threads-1 each memcpy their 4 KiB-
// granule slice of [0, bytes) from src to dst. Returns the seconds; the
// memory traffic is 2 x bytes (read + write).
double TimeSlicedCopy(ThreadTeam& team, unsigned threads, const unsigned char* src,
                      unsigned char* dst, size_t bytes);

// The default buffer size of the floor: 4 x the last-level cache (read as
// perf/cpu_description.h does; 0 = unknown) and at least 1 GiB, in MiB.
size_t DefaultFloorMib(size_t llc_bytes);

// Thread counts such as "1 2 4 8 16" or "1,2,4": 1 .. 4096 each, separated
// by commas or spaces; empty when the text is not such a list.
std::vector<unsigned> ParseThreadList(const char* text);
// 1, 2, 4, ... below the core count, then the core count.
std::vector<unsigned> DefaultThreadCounts();

}  // namespace amn::perf

#endif  // AMN_PERF_THREAD_BANDWIDTH_H_
