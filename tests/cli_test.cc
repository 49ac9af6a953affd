// `amn` end to end: runs the built binary and checks exit codes, JSON output
// and error lines. No timing is asserted (bench output is only parsed).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
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
  const Result r = RunAmn("bench --quick --json --reps 1 --kernel e4m3_to_bf16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_GT(json["floors"]["write_gbps"].get<double>(), 0);
  EXPECT_GT(json["floors"]["l2_write_gbps"].get<double>(), 0);
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
  const std::string args = "bench --quick --reps 1 --kernel e4m3_to_bf16";

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
  for (const char* key : {"write_gbps", "copy_traffic_gbps", "l2_write_gbps"}) {
    EXPECT_GT(floors[key].get<double>(), 0) << key;
    EXPECT_TRUE(floors["method"][key].is_string()) << key;
  }
  EXPECT_GT(floors["floor_bytes"].get<size_t>(), 0u);
  EXPECT_GT(floors["l2_bytes"].get<size_t>(), 0u);
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

}  // namespace
