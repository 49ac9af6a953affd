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

// Compiled targets this CPU supports, best first.
inline std::vector<TargetId> SupportedTargets() {
  std::vector<TargetId> ids;
  for (const TargetInfo& info : ListTargets()) {
    if (info.supported) ids.push_back(info.id);
  }
  return ids;
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
