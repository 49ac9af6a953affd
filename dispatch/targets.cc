// Target enumeration, the AMN_ISA / --isa cap and test forcing, on top of
// Highway's runtime target mask. Compiled under the same target policy as
// every dispatch TU, so HWY_TARGETS here is the build's compiled set.
#include "amn/targets.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <atomic>
#include <mutex>
#include <string>

#include "dispatch/dispatch_policy.h"
#include "hwy/targets.h"

namespace amn {
namespace {

constexpr TargetId kCompiled = HWY_TARGETS;

struct PolicyState {
  std::mutex mutex;
  int64_t cpu_targets = 0;  // what the CPU supports, before any cap or mock
  std::optional<TargetId> cap;
  std::optional<TargetId> forced;
  std::string cap_source;  // "AMN_ISA=" or empty
  Status env_status;       // an invalid AMN_ISA, until a valid cap replaces it
  std::atomic<bool> env_error{false};
};

PolicyState& State() {
  static PolicyState* state = new PolicyState();  // never destroyed: used at exit
  return *state;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

TargetId LowestPriority(int64_t bits) {  // the highest set bit
  TargetId result = 0;
  for (int64_t rest = bits; rest != 0; rest &= rest - 1) result = rest & -rest;
  return result;
}

// hwy::SupportedTargets() in Highway 1.0.3 re-points the dispatch tables at
// every detected target (ignoring DisableTargets) as a side effect whenever no
// test mock is set. Re-sync the tables with the masked result after each call.
int64_t SupportedTargetsAndSync() {
  const int64_t targets = hwy::SupportedTargets();
  hwy::GetChosenTarget().Update(targets);
  return targets;
}

// The SVE targets dispatch passes over when no cap is set: all of them on a
// CPU whose SVE vectors are 128 bits (Highway reports SVE2_128 only there:
// Neoverse N2/V2 cores), where they run on the same 128-bit pipes as NEON
// and amn's NEON code, which takes the 128-bit x86 targets' byte tables,
// executes fewer instructions per element (SVE2_128 counts a median 1.29x
// NEON's over the 238 kernels, 1.46x after the NEON changes that followed;
// docs/performance/arm.md). An explicit cap (AMN_ISA=SVE2_128) still runs
// them.
int64_t SkippedWithoutCap(int64_t cpu_targets) {
  if ((cpu_targets & HWY_SVE2_128) == 0 || (kCompiled & HWY_NEON) == 0) return 0;
  return (HWY_SVE2_128 | HWY_SVE2 | HWY_SVE) & kCompiled;
}

// Re-derives Highway's runtime mask from cap and forcing. Caller holds mutex.
// Forcing overrides the cap; a cap disables every better target; without
// either, dispatch skips SkippedWithoutCap.
void ApplyLocked(PolicyState& s) {
  if (s.forced) {
    hwy::DisableTargets(0);
    hwy::SetSupportedTargetsForTest(*s.forced);
  } else {
    hwy::SetSupportedTargetsForTest(0);
    hwy::DisableTargets(s.cap ? (*s.cap - 1) : SkippedWithoutCap(s.cpu_targets));
  }
}

std::string CompiledNames() {
  std::string names;
  for (int64_t rest = kCompiled; rest != 0; rest &= rest - 1) {
    if (!names.empty()) names += ", ";
    names += hwy::TargetName(rest & -rest);
  }
  return names;
}

Status SetCapLocked(PolicyState& s, std::string_view name, std::string source) {
  if (name.empty()) {
    s.cap.reset();
    s.cap_source.clear();
    ApplyLocked(s);
    return Status::Ok();
  }
  const std::optional<TargetId> id = FindTarget(name);
  if (!id) {
    return Status(StatusCode::kInvalidArgument,
                  (source.empty() ? "" : source + "=") + "'" + std::string(name) +
                      "' names no target of this build (" + CompiledNames() +
                      ", or baseline)");
  }
  s.cap = *id;
  s.cap_source = source.empty() ? source : source + "=";
  ApplyLocked(s);
  return Status::Ok();
}

void ApplyEnvironment() {
  PolicyState& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  hwy::DisableTargets(0);
  hwy::SetSupportedTargetsForTest(0);
  s.cpu_targets = SupportedTargetsAndSync();
  ApplyLocked(s);
  const char* env = std::getenv("AMN_ISA");
  if (env == nullptr || *env == '\0') return;
  s.env_status = SetCapLocked(s, env, "AMN_ISA");
  s.env_error = !s.env_status.ok();
}

}  // namespace

namespace internal {

Status PrepareDispatch() {
  static std::once_flag once;
  std::call_once(once, ApplyEnvironment);
  PolicyState& s = State();
  if (!s.env_error.load(std::memory_order_acquire)) return Status::Ok();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.env_status;
}

Status CheckKernelCall(size_t in_elems, size_t out_elems) {
  AMN_RETURN_IF_ERROR(PrepareDispatch());
  if (out_elems < in_elems) {
    return Status(StatusCode::kInvalidArgument,
                  "output holds " + std::to_string(out_elems) + " elements, input has " +
                      std::to_string(in_elems));
  }
  return Status::Ok();
}

}  // namespace internal

std::string_view TargetName(TargetId id) { return hwy::TargetName(id); }

std::optional<TargetId> FindTarget(std::string_view name) {
  if (EqualsIgnoreCase(name, "baseline")) return LowestPriority(kCompiled);
  for (int64_t rest = kCompiled; rest != 0; rest &= rest - 1) {
    const TargetId id = rest & -rest;
    if (EqualsIgnoreCase(name, hwy::TargetName(id))) return id;
  }
  return std::nullopt;
}

TargetId ActiveTarget() {
  (void)internal::PrepareDispatch();
  const int64_t allowed = SupportedTargetsAndSync() & kCompiled;
  return allowed & -allowed;
}

std::vector<TargetInfo> ListTargets() {
  (void)internal::PrepareDispatch();
  PolicyState& s = State();
  const TargetId active = ActiveTarget();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::vector<TargetInfo> list;
  for (int64_t rest = kCompiled; rest != 0; rest &= rest - 1) {
    TargetInfo info;
    info.id = rest & -rest;
    info.name = hwy::TargetName(info.id);
    info.supported = (s.cpu_targets & info.id) != 0;
    const bool above_cap = s.cap && info.id < *s.cap;
    const bool skipped = !s.cap && (SkippedWithoutCap(s.cpu_targets) & info.id) != 0;
    info.allowed = info.supported && !above_cap;
    info.active = info.id == active;
    if (s.forced) {
      info.why = info.active ? "forced (tests/benchmarks)" : "not the forced target";
    } else if (!info.supported) {
      info.why = "this CPU lacks the instructions";
    } else if (above_cap) {
      info.why = "above the cap " + s.cap_source + std::string(TargetName(*s.cap));
    } else if (skipped) {
      info.why =
          "supported; NEON runs fewer instructions at this CPU's 128-bit vectors "
          "(--isa " +
          info.name + " runs it)";
    } else if (info.active && SkippedWithoutCap(s.cpu_targets) != 0 && !s.cap) {
      info.why =
          "best supported target at 128-bit vectors, where the SVE ones run more "
          "instructions";
    } else if (info.active) {
      info.why = s.cap ? "best supported target at or below the cap " + s.cap_source +
                             std::string(TargetName(*s.cap))
                       : "best supported target";
    } else {
      info.why = "supported; a better target is active";
    }
    list.push_back(std::move(info));
  }
  return list;
}

Status SetTargetCap(std::string_view name) {
  (void)internal::PrepareDispatch();
  PolicyState& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  Status status = SetCapLocked(s, name, "");
  if (status.ok() && s.env_error) {  // an explicit cap replaces a bad AMN_ISA
    s.env_status = Status::Ok();
    s.env_error = false;
  }
  return status;
}

std::optional<TargetId> TargetCap() {
  (void)internal::PrepareDispatch();
  PolicyState& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.cap;
}

Status ForceTarget(TargetId id) {
  (void)internal::PrepareDispatch();
  PolicyState& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  if ((id & kCompiled) == 0 || (id & (id - 1)) != 0) {
    return Status(StatusCode::kInvalidArgument, "not a target of this build");
  }
  if ((s.cpu_targets & id) == 0) {
    return Status(StatusCode::kUnsupported,
                  std::string("this CPU cannot run ") + hwy::TargetName(id));
  }
  s.forced = id;
  ApplyLocked(s);
  return Status::Ok();
}

void ClearForcedTarget() {
  (void)internal::PrepareDispatch();
  PolicyState& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.forced.reset();
  ApplyLocked(s);
}

Status EnvironmentTargetStatus() { return internal::PrepareDispatch(); }

}  // namespace amn
