// A Google Benchmark reporter for perf/kernels_bench that judges each kernel
// row against the fastest floor up to just after its own rows, as `amn bench`
// does (DESIGN.md §8): it holds a kernel size's rows until that size's
// floor_after row is reported (its floor measured just before), sets their
// floor counters and x_floor again from the floor then, and passes them on
// to the reporter it wraps. Rows whose floor_after row does not follow
// (filtered out) pass on as they were judged when they finished.
#ifndef AMN_PERF_FLOOR_REJUDGING_REPORTER_H_
#define AMN_PERF_FLOOR_REJUDGING_REPORTER_H_

#include <benchmark/benchmark.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace amn::perf {

// The floor a kernel row is judged against: ns per element and the memory
// speeds behind it, in GB/s (copy 0 for cache-resident rows). Rows carry
// them as the counters floor_ns_per_el, write_GBps and copy_GBps, and their
// ratio ns_per_el / floor_ns_per_el as x_floor.
struct JudgedFloor {
  double ns_per_el = 0;
  double write_gbps = 0;
  double copy_gbps = 0;
  double shaped_gbps = 0;  // the shaped copy at the row's bytes; 0 for cache rows
};

// What the reporter asks about a run, by its benchmark's registered name.
struct FloorRows {
  // The kernel size a row belongs to (any value shared by its rows and its
  // floor rows), or nullptr for a row outside every group.
  std::function<const void*(const std::string& name)> group_of;
  // Whether the row is its group's floor_after row.
  std::function<bool(const std::string& name)> is_floor_after;
  // Whether the row is a kernel row (one to judge again).
  std::function<bool(const std::string& name)> is_kernel_row;
  // The floor to judge the kernel row against now.
  std::function<JudgedFloor(const std::string& name)> floor_of;
};

class FloorRejudgingReporter : public benchmark::BenchmarkReporter {
 public:
  // `inner` receives every run; owned when `owned` (a file reporter), not
  // when it is Google Benchmark's default display reporter.
  FloorRejudgingReporter(benchmark::BenchmarkReporter* inner, bool owned, FloorRows rows);
  ~FloorRejudgingReporter() override;

  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

 private:
  void Flush(bool rejudge);

  benchmark::BenchmarkReporter* inner_;
  std::unique_ptr<benchmark::BenchmarkReporter> owned_;
  FloorRows rows_;
  const void* held_group_ = nullptr;
  std::vector<std::vector<Run>> held_;  // ReportRuns calls, in order
};

}  // namespace amn::perf

#endif  // AMN_PERF_FLOOR_REJUDGING_REPORTER_H_
