// `amn` end to end: runs the built binary and checks exit codes, JSON output
// and error lines. No timing is asserted (bench output is only parsed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/cli_runner.h"

namespace {

using amn::test::CliResult;
using amn::test::RunAmn;
using Result = CliResult;

TEST(Cli, VersionAndHelp) {
  const Result version = RunAmn("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("amn ", 0), 0u) << version.out;
  const Result help = RunAmn("--help");
  EXPECT_EQ(help.exit_code, 0);
  for (const char* word : {"targets", "bench", "--isa", "AMN_ISA", "Exit codes"}) {
    EXPECT_NE(help.out.find(word), std::string::npos) << word;
  }
  const Result bench_help = RunAmn("bench --help");
  EXPECT_EQ(bench_help.exit_code, 0);
  for (const char* word : {"--quick", "--json", "--kernel", "--reps", "--isa-all"}) {
    EXPECT_NE(bench_help.out.find(word), std::string::npos) << word;
  }
  EXPECT_EQ(RunAmn("targets --help").exit_code, 0);
}

TEST(Cli, UsageErrorsExitTwoWithOneLine) {
  EXPECT_EQ(RunAmn("").exit_code, 2);
  EXPECT_EQ(RunAmn("no-such-command").exit_code, 2);
  const Result bad_isa = RunAmn("--isa avx9000 targets");
  EXPECT_EQ(bad_isa.exit_code, 2);
  EXPECT_NE(bad_isa.err.find("avx9000"), std::string::npos) << bad_isa.err;
  const Result bad_env = RunAmn("targets", "AMN_ISA=avx9000");
  EXPECT_EQ(bad_env.exit_code, 2);
  EXPECT_NE(bad_env.err.find("AMN_ISA='avx9000'"), std::string::npos) << bad_env.err;
  EXPECT_EQ(std::count(bad_env.err.begin(), bad_env.err.end(), '\n'), 1) << bad_env.err;
  EXPECT_EQ(RunAmn("bench --kernel no_such_kernel --quick").exit_code, 2);
}

TEST(Cli, TargetsJsonHasOneActiveBestTarget) {
  const Result r = RunAmn("targets --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  int active = 0;
  std::string first_supported;
  for (const auto& t : json["targets"]) {
    active += t["active"].get<bool>() ? 1 : 0;
    if (first_supported.empty() && t["supported"].get<bool>()) first_supported = t["name"];
  }
  EXPECT_EQ(active, 1);
  EXPECT_EQ(json["active"], first_supported);
  EXPECT_TRUE(json["cap"].is_null());
}

TEST(Cli, IsaCapsDispatchFromFlagAndEnvironment) {
  for (const auto& [args, env] : {std::pair<std::string, std::string>{"--isa baseline targets --json", ""},
                                  {"targets --json", "AMN_ISA=BASELINE"}}) {
    const Result r = RunAmn(args, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto json = nlohmann::json::parse(r.out);
    const std::string lowest = json["targets"].back()["name"];
    EXPECT_EQ(json["active"], lowest) << args << " " << env;
    EXPECT_EQ(json["cap"], lowest);
  }
}

TEST(Cli, BenchJsonCoversEveryTargetAndTheReference) {
  const Result targets = RunAmn("targets --json");
  ASSERT_EQ(targets.exit_code, 0);
  size_t supported = 0;
  const auto target_list = nlohmann::json::parse(targets.out);
  for (const auto& t : target_list["targets"]) {
    supported += t["supported"].get<bool>() ? 1 : 0;
  }
  // --llc 1M: the smallest sizes (the CPU's own cache may want GiB buffers).
  const Result r = RunAmn("bench --quick --llc 1M --json --reps 1 --kernel e4m3_to_bf16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_GT(json["floors"]["write_gbps"].get<double>(), 0);
  EXPECT_FALSE(json["floors"]["cache"].empty());
  size_t rows = 0;
  for (const auto& row : json["results"]) {
    EXPECT_EQ(row["kernel"], "e4m3_to_bf16");
    EXPECT_TRUE(row["size"] == "cache" || row["size"] == "stream");
    EXPECT_GT(row["ns_per_elem"].get<double>(), 0);
    ++rows;
  }
  EXPECT_EQ(rows, 2 * (supported + 1));  // targets + reference, two sizes
}

// --isa-all times every target the CPU supports even under a cap: with
// --isa baseline, the plain run times only the baseline, --isa-all all of
// them (the list anchored on `amn targets --json`). The JSON carries the
// floors, how they were measured, and the CPU. No time is asserted.
TEST(Cli, BenchIsaAllTimesEverySupportedTargetAndJsonHasFloors) {
  const Result targets = RunAmn("targets --json");
  ASSERT_EQ(targets.exit_code, 0);
  const auto target_list = nlohmann::json::parse(targets.out);
  std::vector<std::string> supported;
  for (const auto& t : target_list["targets"]) {
    if (t["supported"].get<bool>()) supported.push_back(t["name"]);
  }
  ASSERT_FALSE(supported.empty());
  const std::string args = "bench --quick --llc 1M --reps 1 --kernel e4m3_to_bf16";

  const Result capped = RunAmn("--isa baseline " + args + " --json");
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  EXPECT_EQ(nlohmann::json::parse(capped.out)["targets"],
            nlohmann::json(std::vector<std::string>{supported.back()}));

  const Result r = RunAmn("--isa baseline " + args + " --isa-all --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["isa_all"], true);
  EXPECT_EQ(json["targets"], nlohmann::json(supported));
  std::set<std::string> timed;
  for (const auto& row : json["results"]) {
    if (row["target"] != "reference") timed.insert(row["target"].get<std::string>());
  }
  EXPECT_EQ(timed, std::set<std::string>(supported.begin(), supported.end()));
  const auto& floors = json["floors"];
  for (const char* key : {"write_gbps", "copy_traffic_gbps"}) {
    EXPECT_GT(floors[key].get<double>(), 0) << key;
    EXPECT_TRUE(floors["method"][key].is_string()) << key;
  }
  EXPECT_TRUE(floors["method"]["cache_write_gbps"].is_string());
  EXPECT_GT(json["floor_min_bytes"].get<size_t>(), 0u);
  EXPECT_TRUE(floors["method"]["stream_floor"].is_string());
  EXPECT_TRUE(floors["method"]["cache_floor"].is_string());
  for (const char* key : {"model", "llc_bytes", "llc_level", "llc_source"}) {
    EXPECT_TRUE(json["cpu"].contains(key)) << key;  // null where the CPU does not say
  }
  EXPECT_TRUE(json["cpu"]["llc_bytes"].is_null() || json["cpu"]["llc_bytes"].get<size_t>() > 0);

  // The table names every supported target too.
  const Result table = RunAmn("--isa baseline " + args + " --isa-all -q");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const size_t header = table.out.find("targets (--isa-all");
  ASSERT_NE(header, std::string::npos) << table.out;
  const std::string header_line = table.out.substr(header, table.out.find('\n', header) - header);
  for (const std::string& name : supported) {
    EXPECT_NE(header_line.find(" " + name), std::string::npos) << name;
    EXPECT_NE(table.out.find(" " + name + " "), std::string::npos) << name;  // a table row
  }
}

// --targets: names as `amn targets` prints them (any case), each one the
// run would time; anything else is a usage error (exit 2, one line naming
// the target), found before anything is timed.
TEST(Cli, BenchTargetsRejectsUnknownUnsupportedAndCappedNames) {
  const auto target_list = nlohmann::json::parse(RunAmn("targets --json").out);
  std::vector<std::string> supported, unsupported;
  for (const auto& t : target_list["targets"]) {
    (t["supported"].get<bool>() ? supported : unsupported).push_back(t["name"]);
  }
  ASSERT_FALSE(supported.empty());
  const auto expect_usage = [](const std::string& args, const std::string& name,
                               const std::string& why) {
    const Result r = RunAmn(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("--targets: '" + name + "' " + why), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  };
  const std::string bench = "bench --quick --llc 1M --reps 1 --kernel e4m3_to_bf16 --targets ";
  expect_usage(bench + "AVX9000", "AVX9000", "is not a target compiled into this amn");
  expect_usage(bench + supported.back() + ",", "", "is not a target compiled into this amn");
  expect_usage(bench + supported.back() + ",nope", "nope", "is not a target");
  if (!unsupported.empty()) {
    expect_usage(bench + unsupported.front(), unsupported.front(), "is not supported by this CPU");
  }
  if (supported.size() > 1) {  // the best one is above a baseline cap unless --isa-all
    expect_usage("--isa baseline " + bench + supported.front(), supported.front(),
                 "is above the --isa / AMN_ISA cap");
    const Result r = RunAmn("--isa baseline " + bench + supported.front() + " --isa-all --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["targets"],
              nlohmann::json(std::vector<std::string>{supported.front()}));
  }
  // --llc is bounded (4 x 5 GiB buffers would be refused later, or worse).
  EXPECT_EQ(RunAmn("bench --quick --llc 5G --kernel e4m3_to_bf16").exit_code, 2);
}

// --targets limits the run (names in any case), and every --json row
// carries the floor it is judged against: the bytes of its kernel's own
// floor measurement (streaming: at least 4x the last-level cache, and the
// kernel's own bytes; the shaped copy's at the kernel's ratio), speeds > 0,
// the fastest of the whole run (the run's floors; the shaped copy's entry
// for its bytes; the cache floor of its output size), and floor_ns_per_elem
// / ratio_to_floor formed from them. --llc 16M sets the cache the sizes follow:
// 4 x 16 MiB / 3 bytes (E4M3 -> BF16, F16) = 22,369,621.3 elements, rounded
// up to 43 x 524,288; / 5 bytes (-> F32) = 13,421,772.8, up to 26 x 524,288.
// No time is asserted.
TEST(Cli, BenchTargetsLimitsTheRunAndEveryRowCarriesItsFloor) {
  const auto target_list = nlohmann::json::parse(RunAmn("targets --json").out);
  std::vector<std::string> supported;
  for (const auto& t : target_list["targets"]) {
    if (t["supported"].get<bool>()) supported.push_back(t["name"]);
  }
  ASSERT_FALSE(supported.empty());
  const std::string last = supported.back();
  std::string lower = last;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  const Result r =
      RunAmn("bench --quick --llc 16M --json --reps 1 --kernel e4m3_to_ --targets " + lower);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["targets"], nlohmann::json(std::vector<std::string>{last}));
  EXPECT_EQ(json["llc_bytes_used"], 16u << 20);
  EXPECT_EQ(json["llc_from"], "--llc");
  const size_t min_floor = json["floor_min_bytes"].get<size_t>();
  EXPECT_EQ(min_floor, 64u << 20);
  const std::map<std::string, size_t> stream_elems = {
      {"e4m3_to_bf16", 22544384}, {"e4m3_to_f16", 22544384}, {"e4m3_to_f32", 13631488}};
  std::set<std::string> kernels;
  const auto& floors = json["floors"];
  std::map<std::pair<double, double>, double> shaped_floors;
  for (const auto& f : floors["shaped"]) {
    shaped_floors[{f["in_bytes"].get<double>(), f["out_bytes"].get<double>()}] =
        f["traffic_gbps"].get<double>();
  }
  std::map<double, double> cache_floors;
  for (const auto& f : floors["cache"]) {
    cache_floors[f["bytes"].get<double>()] = f["write_gbps"].get<double>();
  }
  size_t rows = 0;
  for (const auto& row : json["results"]) {
    ++rows;
    kernels.insert(row["kernel"].get<std::string>());
    EXPECT_TRUE(row["target"] == "reference" || row["target"] == last) << row["target"];
    const auto& floor = row["floor"];
    const double n = row["n_elems"].get<double>();
    const double in = row["in_bytes"].get<double>(), out = row["out_bytes"].get<double>();
    const double write = floor["write_gbps"].get<double>();
    EXPECT_GT(write, 0);
    EXPECT_GT(row["ns_per_elem_min"].get<double>(), 0);
    EXPECT_LE(row["ns_per_elem_min"].get<double>(), row["ns_per_elem"].get<double>());
    double floor_ns = 0;
    if (row["size"] == "stream") {
      const double copy = floor["copy_traffic_gbps"].get<double>();
      EXPECT_GT(copy, 0);
      EXPECT_EQ(write, floors["write_gbps"].get<double>());  // the fastest of the run
      EXPECT_EQ(copy, floors["copy_traffic_gbps"].get<double>());
      EXPECT_GE(floor["write_bytes"].get<double>(), std::max<double>(out, min_floor));
      EXPECT_GE(floor["copy_bytes"].get<double>(), std::max<double>(in + out, min_floor));
      // The shaped copy: the kernel's own bytes at its full streaming size
      // (a compute-bound row, e.g. in a sanitizer build, runs fewer) times
      // a whole factor, at least the minimum, and the run's fastest there.
      const double shaped_in = floor["shaped_in_bytes"].get<double>();
      const double shaped_out = floor["shaped_out_bytes"].get<double>();
      const double full_out =
          out / n * static_cast<double>(stream_elems.at(row["kernel"].get<std::string>()));
      EXPECT_GE(shaped_in + shaped_out, static_cast<double>(min_floor));
      EXPECT_EQ(shaped_in / shaped_out, in / out);  // 1/2 or 1/4: exact
      EXPECT_EQ(std::fmod(shaped_out, full_out), 0);
      const double shaped = floor["shaped_traffic_gbps"].get<double>();
      EXPECT_GT(shaped, 0);
      EXPECT_EQ(shaped, shaped_floors.at({shaped_in, shaped_out}));
      const size_t expected = stream_elems.at(row["kernel"].get<std::string>());
      if (row["compute_bound_size"].get<bool>()) {  // a very slow build: fewer elements
        EXPECT_LT(n, expected);
      } else {
        EXPECT_EQ(n, expected) << row["kernel"];
      }
      floor_ns = std::min(std::max(out / n / write, (in / n + out / n) / copy),
                          (in / n + out / n) / shaped);
    } else {
      EXPECT_EQ(n, 65536);
      EXPECT_EQ(floor["write_bytes"].get<double>(), out);  // its own output, in L2
      EXPECT_EQ(write, cache_floors.at(out));
      EXPECT_FALSE(floor.contains("copy_traffic_gbps"));
      EXPECT_FALSE(floor.contains("shaped_traffic_gbps"));
      floor_ns = out / n / write;
    }
    EXPECT_NEAR(row["floor_ns_per_elem"].get<double>(), floor_ns, floor_ns * 1e-12);
    EXPECT_NEAR(row["ratio_to_floor"].get<double>(),
                row["ns_per_elem"].get<double>() / floor_ns,
                row["ratio_to_floor"].get<double>() * 1e-12);
  }
  EXPECT_EQ(kernels, (std::set<std::string>{"e4m3_to_bf16", "e4m3_to_f16", "e4m3_to_f32"}));
  EXPECT_EQ(rows, 3u * 2 * 2);  // kernels x (reference + one target) x sizes
  // E4M3 -> BF16 and -> F16 move the same bytes: one shaped entry for both.
  EXPECT_EQ(shaped_floors.size(), 2u);
}

}  // namespace
