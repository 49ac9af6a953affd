// Per-target parameterisation for kernel tests: every compiled target this CPU
// supports becomes one instance whose name ends in the target ("…/AVX2"),
// and the fixture forces dispatch to exactly that target for the test body.
#ifndef AMN_TESTS_TARGET_PARAM_H_
#define AMN_TESTS_TARGET_PARAM_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "amn/targets.h"

namespace amn::test {

// Compiled targets this CPU supports, best first; with AMN_TEST_TARGETS set
// (a comma-separated list of target names: the fleet, tests/CMakeLists.txt)
// only those. There every lower target has a CPU model of its own (or runs
// natively), and rerunning them under richer models was most of the
// fleet's time (fleet/AVX2/ggml_kquant_encode_target_test: 168 of 209 s on
// SSE4, SSSE3 and SCALAR). When none of the named targets is supported, all
// of them run and Fleet.DispatchesToExpectedTarget fails.
inline std::vector<TargetId> SupportedTargets() {
  const char* list = std::getenv("AMN_TEST_TARGETS");
  const std::string named = "," + std::string(list == nullptr ? "" : list) + ",";
  std::vector<TargetId> ids;
  std::vector<TargetId> listed;
  for (const TargetInfo& info : ListTargets()) {
    if (!info.supported) continue;
    ids.push_back(info.id);
    if (named.find("," + std::string(TargetName(info.id)) + ",") != std::string::npos) {
      listed.push_back(info.id);
    }
  }
  return listed.empty() ? ids : listed;
}

inline std::string TargetParamName(const testing::TestParamInfo<TargetId>& info) {
  return std::string(TargetName(info.param));
}

class PerTarget : public testing::TestWithParam<TargetId> {
 protected:
  void SetUp() override {
    const Status forced = ForceTarget(GetParam());
    ASSERT_TRUE(forced.ok()) << forced.ToString();
    ASSERT_EQ(ActiveTarget(), GetParam());
  }
  void TearDown() override { ClearForcedTarget(); }
};

// Under an emulator (the fleet, the aarch64 cross build: tests/CMakeLists.txt
// sets AMN_TEST_EMULATED=1 there) a SIMD instruction costs 20-80 times its
// native time. The big loops of generated cases then run a fixed subset
// (RunCase), the same cases on every run; natively every case runs.
// RapidCheck's case count under emulation comes from RC_PARAMS, set beside it.
inline bool Emulated() {
  const char* value = std::getenv("AMN_TEST_EMULATED");
  return value != nullptr && value[0] == '1';
}

// Whether generated case number k runs: always natively, one in `stride`
// under emulation.
inline bool RunCase(uint64_t k, uint64_t stride) { return !Emulated() || k % stride == 0; }

}  // namespace amn::test

#define AMN_INSTANTIATE_PER_TARGET(suite)                                       \
  INSTANTIATE_TEST_SUITE_P(Targets, suite,                                      \
                           testing::ValuesIn(::amn::test::SupportedTargets()), \
                           ::amn::test::TargetParamName)

#endif  // AMN_TESTS_TARGET_PARAM_H_
