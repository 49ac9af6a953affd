// perf/kernels_bench's reporter: kernel rows judged again after their
// kernel size's floor_after row (see the header).
#include "perf/floor_rejudging_reporter.h"

#include <utility>

namespace amn::perf {
namespace {

// Sets the floor counters and x_floor of one run from `floor`. Aggregates of
// repetitions: against one floor, x_floor's mean, median and stddev are
// ns_per_el's over it, its coefficient of variation is ns_per_el's, and the
// floor's own stddev and variation are 0.
void Rejudge(benchmark::BenchmarkReporter::Run& run, const JudgedFloor& floor) {
  if (run.error_occurred || floor.ns_per_el <= 0) return;
  const auto ns = run.counters.find("ns_per_el");
  if (ns == run.counters.end()) return;
  using Run = benchmark::BenchmarkReporter::Run;
  const bool aggregate = run.run_type == Run::RT_Aggregate;
  const bool variation = aggregate && run.aggregate_unit == benchmark::kPercentage;
  const bool spread = variation || (aggregate && run.aggregate_name == "stddev");
  run.counters["x_floor"] = variation ? ns->second.value : ns->second.value / floor.ns_per_el;
  run.counters["floor_ns_per_el"] = spread ? 0 : floor.ns_per_el;
  run.counters["write_GBps"] = spread ? 0 : floor.write_gbps;
  run.counters["copy_GBps"] = spread ? 0 : floor.copy_gbps;
  run.counters["shaped_GBps"] = spread ? 0 : floor.shaped_gbps;
}

}  // namespace

FloorRejudgingReporter::FloorRejudgingReporter(benchmark::BenchmarkReporter* inner, bool owned,
                                               FloorRows rows)
    : inner_(inner), owned_(owned ? inner : nullptr), rows_(std::move(rows)) {}

FloorRejudgingReporter::~FloorRejudgingReporter() = default;

bool FloorRejudgingReporter::ReportContext(const Context& context) {
  // Google Benchmark gives this reporter its streams (the --benchmark_out
  // file for a file reporter); the wrapped one writes to them.
  inner_->SetOutputStream(&GetOutputStream());
  inner_->SetErrorStream(&GetErrorStream());
  return inner_->ReportContext(context);
}

void FloorRejudgingReporter::ReportRuns(const std::vector<Run>& runs) {
  if (runs.empty()) return;
  const std::string& name = runs.front().run_name.function_name;
  const void* group = rows_.group_of(name);
  if (group != nullptr && rows_.is_kernel_row(name)) {
    if (group != held_group_) Flush(false);
    held_group_ = group;
    held_.push_back(runs);
    return;
  }
  // The held rows' own floor_after: its floor was measured just now.
  Flush(group != nullptr && group == held_group_ && rows_.is_floor_after(name));
  inner_->ReportRuns(runs);
}

void FloorRejudgingReporter::Finalize() {
  Flush(false);
  inner_->Finalize();
}

void FloorRejudgingReporter::Flush(bool rejudge) {
  for (std::vector<Run>& runs : held_) {
    if (rejudge) {
      for (Run& run : runs) Rejudge(run, rows_.floor_of(run.run_name.function_name));
    }
    inner_->ReportRuns(runs);
  }
  held_.clear();
  held_group_ = nullptr;
}

}  // namespace amn::perf
