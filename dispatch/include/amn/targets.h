// Runtime ISA targets: the named, enumerable list that dispatch, tests,
// benchmarks, fuzzers and the CLI share (DESIGN.md §4). A target is one
// Highway target compiled into this build (SCALAR/EMU128, SSSE3, SSE4, AVX2,
// AVX3, AVX3_DL; NEON, SVE, SVE2, SVE_256, SVE2_128). Dispatch picks the best
// one the CPU supports, at or below the cap set by AMN_ISA / SetTargetCap;
// without a cap, on a CPU with 128-bit SVE vectors, NEON over the SVE
// targets (docs/targets.md).
#ifndef AMN_TARGETS_H_
#define AMN_TARGETS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "amn/export.h"
#include "amn/status.h"

namespace amn {

// One Highway target bit. Lower values are better targets.
using TargetId = int64_t;

struct TargetInfo {
  TargetId id = 0;
  std::string name;        // Highway's name, e.g. "AVX2"
  bool supported = false;  // this CPU can run it
  bool allowed = false;    // supported and not above the cap
  bool active = false;     // what dispatch runs now
  std::string why;         // one line explaining the three flags
};

// Every target compiled into this build, best first.
AMN_API std::vector<TargetInfo> ListTargets();

// The target dispatch selects now (forced, capped or best supported).
AMN_API TargetId ActiveTarget();
AMN_API std::string_view TargetName(TargetId id);

// Case-insensitive lookup among compiled targets; "baseline" names the
// lowest one (SCALAR or EMU128 on x86, the floor every CPU runs).
AMN_API std::optional<TargetId> FindTarget(std::string_view name);

// Restricts dispatch to `name` or below (any target that dispatch would rank
// lower). An empty name removes the cap. The AMN_ISA environment variable is
// applied the same way before the first kernel call. Not thread-safe with
// kernels running concurrently.
AMN_API Status SetTargetCap(std::string_view name);
AMN_API std::optional<TargetId> TargetCap();

// Makes dispatch run exactly `id` (tests and benchmarks iterate targets this
// way); ClearForcedTarget returns to normal selection. Not thread-safe with
// kernels running concurrently.
AMN_API Status ForceTarget(TargetId id);
AMN_API void ClearForcedTarget();

// Status of the AMN_ISA variable: OK when unset or valid. Kernels refuse to
// run (kInvalidArgument) while it names no compiled target, until a valid
// SetTargetCap replaces it.
AMN_API Status EnvironmentTargetStatus();

}  // namespace amn

#endif  // AMN_TARGETS_H_
