// perf/kernels_bench's FloorRejudgingReporter on made-up runs: a kernel
// size's rows are held until its floor_after row, then judged against the
// floor at that moment (DESIGN.md §8: the fastest up to just after its own
// rows); rows without a floor_after pass on unchanged, in order. The floors
// and times are numbers chosen here; nothing is timed.
#include "perf/floor_rejudging_reporter.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace amn::perf {
namespace {

using BenchRun = benchmark::BenchmarkReporter::Run;

// Records what reaches it, in order.
class Recorder : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<BenchRun>& runs) override {
    for (const BenchRun& run : runs) seen.push_back(run);
  }
  void Finalize() override { finalized = true; }
  std::vector<BenchRun> seen;
  bool finalized = false;
};

// Two kernel sizes, "k/.../stream" (with floor rows) and "j/.../cache"; the
// floor each row would be judged against now is `floor_ns` of its group.
struct Fake {
  int k = 1, j = 2;  // group identities
  std::map<std::string, double> floor_ns = {{"k", 0.5}, {"j", 0.02}};

  const void* GroupOf(const std::string& name) const {
    if (name.rfind("k/", 0) == 0) return &k;
    if (name.rfind("j/", 0) == 0) return &j;
    return nullptr;
  }
  FloorRows Rows() {
    FloorRows rows;
    rows.group_of = [this](const std::string& name) { return GroupOf(name); };
    rows.is_floor_after = [](const std::string& name) {
      return name.find("/floor_after/") != std::string::npos;
    };
    rows.is_kernel_row = [](const std::string& name) {
      return name.find("/floor") == std::string::npos;
    };
    rows.floor_of = [this](const std::string& name) {
      const double ns = floor_ns.at(name.substr(0, 1));
      return JudgedFloor{ns, 8 / ns, 16 / ns, 24 / ns};  // speeds that give ns for 8 output bytes
    };
    return rows;
  }
};

BenchRun KernelRun(const std::string& name, double ns, double floor) {
  BenchRun run;
  run.run_name.function_name = name;
  run.counters["ns_per_el"] = benchmark::Counter(ns);
  run.counters["floor_ns_per_el"] = benchmark::Counter(floor);
  run.counters["x_floor"] = benchmark::Counter(ns / floor);
  run.counters["write_GBps"] = benchmark::Counter(8 / floor);
  run.counters["copy_GBps"] = benchmark::Counter(16 / floor);
  run.counters["shaped_GBps"] = benchmark::Counter(24 / floor);
  return run;
}

BenchRun FloorRun(const std::string& name) {
  BenchRun run;
  run.run_name.function_name = name;
  return run;
}

std::vector<std::string> Names(const Recorder& recorder) {
  std::vector<std::string> names;
  for (const BenchRun& run : recorder.seen) names.push_back(run.run_name.function_name);
  return names;
}

TEST(FloorRejudgingReporter, RowsAreJudgedAgainstTheFloorAfterThem) {
  Fake fake;
  Recorder* inner = new Recorder;
  FloorRejudgingReporter reporter(inner, true, fake.Rows());
  reporter.ReportRuns({FloorRun("k/floor/stream")});
  // Judged when they finished against 0.5 ns: 0.45 / 0.5 = 0.9, below 1.
  reporter.ReportRuns({KernelRun("k/A/stream", 0.45, 0.5)});
  reporter.ReportRuns({KernelRun("k/B/stream", 0.6, 0.5)});
  EXPECT_EQ(Names(*inner), std::vector<std::string>({"k/floor/stream"}));  // held
  fake.floor_ns["k"] = 0.4;  // floor_after found a faster memory
  reporter.ReportRuns({FloorRun("k/floor_after/stream")});
  ASSERT_EQ(Names(*inner), std::vector<std::string>({"k/floor/stream", "k/A/stream", "k/B/stream",
                                                     "k/floor_after/stream"}));
  EXPECT_DOUBLE_EQ(inner->seen[1].counters.at("floor_ns_per_el").value, 0.4);
  EXPECT_DOUBLE_EQ(inner->seen[1].counters.at("x_floor").value, 0.45 / 0.4);
  EXPECT_DOUBLE_EQ(inner->seen[1].counters.at("ns_per_el").value, 0.45);
  EXPECT_DOUBLE_EQ(inner->seen[1].counters.at("write_GBps").value, 20);
  EXPECT_DOUBLE_EQ(inner->seen[1].counters.at("copy_GBps").value, 40);
  EXPECT_DOUBLE_EQ(inner->seen[1].counters.at("shaped_GBps").value, 60);
  EXPECT_DOUBLE_EQ(inner->seen[2].counters.at("x_floor").value, 0.6 / 0.4);
  reporter.Finalize();
  EXPECT_TRUE(inner->finalized);
}

TEST(FloorRejudgingReporter, RowsWithoutTheirFloorAfterPassOnUnchanged) {
  Fake fake;
  Recorder* inner = new Recorder;
  FloorRejudgingReporter reporter(inner, true, fake.Rows());
  // A filter kept j's rows but not its floor rows, then k's floor row runs.
  reporter.ReportRuns({KernelRun("j/A/cache", 0.1, 0.02)});
  fake.floor_ns["j"] = 0.01;
  reporter.ReportRuns({FloorRun("k/floor/stream")});
  ASSERT_EQ(Names(*inner), std::vector<std::string>({"j/A/cache", "k/floor/stream"}));
  EXPECT_DOUBLE_EQ(inner->seen[0].counters.at("floor_ns_per_el").value, 0.02);
  EXPECT_DOUBLE_EQ(inner->seen[0].counters.at("x_floor").value, 5.0);
  EXPECT_DOUBLE_EQ(inner->seen[0].counters.at("write_GBps").value, 400);
  // Another group's floor_after does not judge them either; Finalize
  // passes on what is still held.
  reporter.ReportRuns({KernelRun("k/A/stream", 0.6, 0.5)});
  reporter.ReportRuns({KernelRun("j/B/cache", 0.1, 0.02)});
  reporter.ReportRuns({FloorRun("k/floor_after/stream")});
  reporter.ReportRuns({KernelRun("j/C/cache", 0.1, 0.02)});
  reporter.Finalize();
  ASSERT_EQ(Names(*inner),
            std::vector<std::string>({"j/A/cache", "k/floor/stream", "k/A/stream", "j/B/cache",
                                      "k/floor_after/stream", "j/C/cache"}));
  EXPECT_DOUBLE_EQ(inner->seen[2].counters.at("x_floor").value, 1.2);
  EXPECT_DOUBLE_EQ(inner->seen[3].counters.at("x_floor").value, 5.0);
  EXPECT_DOUBLE_EQ(inner->seen[5].counters.at("x_floor").value, 5.0);
}

TEST(FloorRejudgingReporter, AggregatesOfRepetitionsAndErrors) {
  Fake fake;
  Recorder* inner = new Recorder;
  FloorRejudgingReporter reporter(inner, true, fake.Rows());
  BenchRun mean = KernelRun("k/A/stream", 0.6, 0.5);
  mean.run_type = BenchRun::RT_Aggregate;
  mean.aggregate_name = "mean";
  BenchRun stddev = KernelRun("k/A/stream", 0.03, 0.5);
  stddev.run_type = BenchRun::RT_Aggregate;
  stddev.aggregate_name = "stddev";
  BenchRun cv = KernelRun("k/A/stream", 0.05, 0.5);  // ns_per_el's coefficient of variation
  cv.run_type = BenchRun::RT_Aggregate;
  cv.aggregate_name = "cv";
  cv.aggregate_unit = benchmark::kPercentage;
  BenchRun failed = KernelRun("k/B/stream", 0.6, 0.5);
  failed.error_occurred = true;
  reporter.ReportRuns({mean, stddev, cv});
  reporter.ReportRuns({failed});
  fake.floor_ns["k"] = 0.3;
  reporter.ReportRuns({FloorRun("k/floor_after/stream")});
  ASSERT_EQ(inner->seen.size(), 5u);
  EXPECT_DOUBLE_EQ(inner->seen[0].counters.at("x_floor").value, 2.0);  // 0.6 / 0.3
  EXPECT_DOUBLE_EQ(inner->seen[0].counters.at("floor_ns_per_el").value, 0.3);
  EXPECT_DOUBLE_EQ(inner->seen[1].counters.at("x_floor").value, 0.1);  // 0.03 / 0.3
  EXPECT_DOUBLE_EQ(inner->seen[0].counters.at("write_GBps").value, 8 / 0.3);
  EXPECT_DOUBLE_EQ(inner->seen[1].counters.at("floor_ns_per_el").value, 0);
  EXPECT_DOUBLE_EQ(inner->seen[1].counters.at("write_GBps").value, 0);
  EXPECT_DOUBLE_EQ(inner->seen[2].counters.at("x_floor").value, 0.05);
  EXPECT_DOUBLE_EQ(inner->seen[2].counters.at("floor_ns_per_el").value, 0);
  EXPECT_DOUBLE_EQ(inner->seen[3].counters.at("x_floor").value, 1.2);  // error: untouched
}

}  // namespace
}  // namespace amn::perf
