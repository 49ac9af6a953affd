// ShapedCopy (perf/shaped_copy.h), one Highway body compiled per target.
#include "perf/shaped_copy.h"

#include <algorithm>
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "perf/shaped_copy.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace amn::perf::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Before each output vector, the input up to the same fraction of in_bytes
// is read (XORed into the vector stored), so reads and writes advance
// together at the kernel's ratio, vector by vector, as a kernel's loop does.
void ShapedCopyImpl(const unsigned char* in, size_t in_bytes, unsigned char* out,
                    size_t out_bytes) {
  using Wide = unsigned __int128;  // products of two byte counts
  const hn::ScalableTag<uint8_t> d;
  const size_t lanes = hn::Lanes(d);
  auto acc = hn::Zero(d);
  size_t in_pos = 0;
  size_t o = 0;
  for (; o + lanes <= out_bytes; o += lanes) {
    // Input vectors that end at or before (o + lanes) / out_bytes of the input.
    while (static_cast<Wide>(in_pos + lanes) * out_bytes <=
           static_cast<Wide>(o + lanes) * in_bytes) {
      acc = hn::Xor(acc, hn::LoadU(d, in + in_pos));
      in_pos += lanes;
    }
    hn::Store(acc, d, out + o);
  }
  // The input after its last whole vector, into the output after its last
  // whole vector, or into the last byte when there is none.
  uint8_t tail = 0;
  for (; in_pos < in_bytes; ++in_pos) tail ^= in[in_pos];
  if (o < out_bytes) {
    for (; o < out_bytes; ++o) out[o] = tail;
  } else if (out_bytes > 0) {
    out[out_bytes - 1] ^= tail;
  }
}

size_t VectorBytesImpl() { return hn::Lanes(hn::ScalableTag<uint8_t>()); }

}  // namespace amn::perf::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <limits>
#include <vector>

#include "amn/targets.h"
#include "perf/measure.h"

namespace amn::perf {

HWY_EXPORT(ShapedCopyImpl);
HWY_EXPORT(VectorBytesImpl);

namespace {

// The targets the shaped copy is timed on: of those dispatch may run (at or
// below the cap), the best of each vector width of 16 bytes or more. The
// widest is not always the fastest at moving memory: on a Zen 4 the 256-bit
// copy moved 28.6-31.3 GB/s where the 512-bit one moved 24.8-26.4, and
// AVX2 kernels beat the floor it gave (docs/performance/floors.md).
std::vector<TargetId> OneTargetPerWidth() {
  std::vector<TargetId> targets;
  std::vector<size_t> widths;
  for (const TargetInfo& info : ListTargets()) {
    if (!info.allowed || !ForceTarget(info.id).ok()) continue;
    const size_t bytes = HWY_DYNAMIC_DISPATCH(VectorBytesImpl)();
    ClearForcedTarget();
    if (bytes >= 16 && std::find(widths.begin(), widths.end(), bytes) == widths.end()) {
      widths.push_back(bytes);
      targets.push_back(info.id);
    }
  }
  return targets;
}

}  // namespace

void ShapedCopy(const unsigned char* in, size_t in_bytes, unsigned char* out, size_t out_bytes) {
  HWY_DYNAMIC_DISPATCH(ShapedCopyImpl)(in, in_bytes, out, out_bytes);
}

double MeasureShapedTrafficGbps(size_t in_bytes, size_t out_bytes, int reps) {
  AlignedBytes in(std::max<size_t>(in_bytes, 1)), out(std::max<size_t>(out_bytes, 1));
  const auto fastest_ns = [&] {
    return TimeCalls(
               [&] {
                 ShapedCopy(in.data(), in_bytes, out.data(), out_bytes);
                 asm volatile("" : : "r"(out.data()) : "memory");
               },
               reps)
        .min_ns;
  };
  const std::vector<TargetId> targets = OneTargetPerWidth();
  double best_ns = targets.empty() ? fastest_ns() : std::numeric_limits<double>::infinity();
  for (TargetId target : targets) {
    if (!ForceTarget(target).ok()) continue;
    best_ns = std::min(best_ns, fastest_ns());
    ClearForcedTarget();
  }
  return best_ns > 0 && best_ns < std::numeric_limits<double>::infinity()
             ? static_cast<double>(in_bytes + out_bytes) / best_ns
             : 0;
}

}  // namespace amn::perf
#endif  // HWY_ONCE
