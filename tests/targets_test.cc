// The runtime target list, the cap (AMN_ISA / SetTargetCap), forcing, and the
// emulated-fleet check: with AMN_EXPECT_TARGET set (by the qemu tests), the
// binary must dispatch to exactly that target.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "amn/convert.h"
#include "amn/targets.h"

namespace amn {
namespace {

TEST(Targets, ListIsBestFirstAndNamed) {
  const std::vector<TargetInfo> list = ListTargets();
  ASSERT_FALSE(list.empty());
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_NE(list[i].name, "Unknown");
    EXPECT_TRUE(names.insert(list[i].name).second) << list[i].name;
    if (i > 0) {
      EXPECT_LT(list[i - 1].id, list[i].id);
    }
    EXPECT_FALSE(list[i].why.empty());
    EXPECT_EQ(FindTarget(list[i].name), list[i].id);
  }
  EXPECT_TRUE(list.back().supported) << "the baseline target runs everywhere";
}

// Whether this CPU's SVE vectors are 128 bits: Highway reports SVE2_128
// only there.
bool Sve128(const std::vector<TargetInfo>& list) {
  for (const TargetInfo& info : list) {
    if (info.name == "SVE2_128" && info.supported) return true;
  }
  return false;
}

TEST(Targets, ActiveIsBestSupportedWithoutCap) {
  if (TargetCap()) GTEST_SKIP() << "AMN_ISA is set";
  const std::vector<TargetInfo> list = ListTargets();
  TargetId best = 0;
  int active_count = 0;
  for (const TargetInfo& info : list) {
    // At 128-bit SVE vectors the best is NEON (the next test).
    const bool sve = info.name.rfind("SVE", 0) == 0;
    if (info.supported && best == 0 && !(sve && Sve128(list))) best = info.id;
    active_count += info.active ? 1 : 0;
  }
  EXPECT_EQ(ActiveTarget(), best);
  EXPECT_EQ(active_count, 1);
  EXPECT_EQ(FloatConvertTarget(), best);
  EXPECT_EQ(Fp8ConvertTarget(), best);
}

// On a CPU with 128-bit SVE vectors (the fleet's
// max,sve-default-vector-length=16 model) dispatch runs NEON unless a cap
// names an SVE target; the list says why.
TEST(Targets, Sve128RunsNeonUnlessCapped) {
  if (TargetCap()) GTEST_SKIP() << "AMN_ISA is set";
  if (!Sve128(ListTargets())) GTEST_SKIP() << "this CPU has no 128-bit SVE vectors";
  EXPECT_EQ(TargetName(ActiveTarget()), "NEON");
  EXPECT_EQ(TargetName(FloatConvertTarget()), "NEON");
  for (const TargetInfo& info : ListTargets()) {
    if (info.name.rfind("SVE", 0) != 0 || !info.supported) continue;
    EXPECT_TRUE(info.allowed) << info.name;
    EXPECT_FALSE(info.active) << info.name;
    EXPECT_NE(info.why.find("NEON runs fewer instructions"), std::string::npos) << info.why;
  }
  for (const char* sve : {"SVE2_128", "SVE2", "SVE"}) {
    ASSERT_TRUE(SetTargetCap(sve).ok());
    EXPECT_EQ(TargetName(ActiveTarget()), sve);
    EXPECT_EQ(TargetName(FloatConvertTarget()), sve);
  }
  ASSERT_TRUE(SetTargetCap("").ok());
  EXPECT_EQ(TargetName(ActiveTarget()), "NEON");
  EXPECT_EQ(TargetName(Fp8ConvertTarget()), "NEON");
}

TEST(Targets, FindIsCaseInsensitiveAndKnowsBaseline) {
  const std::vector<TargetInfo> list = ListTargets();
  std::string lower = list.front().name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  EXPECT_EQ(FindTarget(lower), list.front().id);
  EXPECT_EQ(FindTarget("baseline"), list.back().id);
  EXPECT_EQ(FindTarget("BASELINE"), list.back().id);
  EXPECT_FALSE(FindTarget("avx9000").has_value());
  EXPECT_FALSE(FindTarget("").has_value());
}

TEST(Targets, CapRestrictsDispatchAndClears) {
  const std::optional<TargetId> before = TargetCap();
  for (const TargetInfo& cap : ListTargets()) {
    ASSERT_TRUE(SetTargetCap(cap.name).ok());
    EXPECT_GE(ActiveTarget(), cap.id) << "cap " << cap.name;  // lower id = better
    EXPECT_GE(FloatConvertTarget(), cap.id);
    EXPECT_GE(Fp8ConvertTarget(), cap.id);
    if (cap.supported) {
      EXPECT_EQ(ActiveTarget(), cap.id);
    }
    for (const TargetInfo& info : ListTargets()) {
      if (info.id < cap.id) {
        EXPECT_FALSE(info.allowed) << info.name;
      }
    }
  }
  const Status bad = SetTargetCap("not-a-target");
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("not-a-target"), std::string::npos);
  ASSERT_TRUE(SetTargetCap(before ? std::string(TargetName(*before)) : "").ok());
}

TEST(Targets, ForceRunsExactlyThatTargetAndRefusesUnsupported) {
  for (const TargetInfo& info : ListTargets()) {
    const Status status = ForceTarget(info.id);
    if (!info.supported) {
      EXPECT_EQ(status.code(), StatusCode::kUnsupported) << info.name;
      continue;
    }
    ASSERT_TRUE(status.ok()) << status.ToString();
    EXPECT_EQ(FloatConvertTarget(), info.id);
    EXPECT_EQ(Fp8ConvertTarget(), info.id);
    ClearForcedTarget();
  }
  EXPECT_EQ(ForceTarget(3).code(), StatusCode::kInvalidArgument);  // two bits
}

// The emulated fleet (tests/CMakeLists.txt) runs this binary under qemu with
// the CPU model's expected best target in AMN_EXPECT_TARGET.
TEST(Fleet, DispatchesToExpectedTarget) {
  const char* expected = std::getenv("AMN_EXPECT_TARGET");
  if (expected == nullptr) GTEST_SKIP() << "AMN_EXPECT_TARGET is set only by the fleet tests";
  EXPECT_EQ(TargetName(ActiveTarget()), expected);
  EXPECT_EQ(TargetName(FloatConvertTarget()), expected);
  EXPECT_EQ(TargetName(Fp8ConvertTarget()), expected);
}

}  // namespace
}  // namespace amn
