// ggml's own K-quant quantizers (ggml_quantize_chunk without importance
// matrix, or with one given `imatrix`: the same random positive importance
// vector for both sides; from the pinned libggml-base.so that tests/ggml_oracle.h opens)
// timed beside amn's GgmlKQuantQuant encoders on the same F32 input in one
// process: thread CPU time (CLOCK_THREAD_CPUTIME_ID, which a shared
// machine's other jobs disturb far less than wall time) per element, best
// and median of 15 calls after one warm-up call, one thread, and the ratio
// of the best times.
// amn runs on the target dispatch picks (AMN_ISA caps it). Not a test.
//   ggml_encode_peer [n_elems] [imatrix|plain] [type]   (default 65536, the
//   cache-resident size; `imatrix`: rows of 4096 columns sharing one
//   importance vector; type, e.g. q3_k: that type only)
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "amn/ggml_type.h"
#include "amn/targets.h"
#include "dispatch/encoders.h"
#include "kernels/ref/ggml_kquant_encode_ref.h"
#include "perf/thread_cpu_time.h"
#include "tests/ggml_oracle.h"

using amn::perf::TimeCpu;

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) / 256 * 256 : 65536;
  const amn::test::GgmlOracle* ggml = amn::test::GgmlOracle::Get();
  if (ggml == nullptr) {
    std::fprintf(stderr, "ggml oracle absent: %s\n",
                 amn::test::GgmlOracle::MissingReason().c_str());
    return 1;
  }
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  const bool with_imatrix = argc > 2 && std::string(argv[2]) == "imatrix";
  const size_t cols = with_imatrix && n % 4096 == 0 ? 4096 : n;
  std::vector<float> imatrix(cols);
  std::uniform_real_distribution<float> uni(0.01f, 4.0f);
  for (float& v : imatrix) v = uni(rng);
  const float* qw = with_imatrix ? imatrix.data() : nullptr;
  const struct {
    const char* name;
    amn::GgmlType type;
  } types[] = {{"q4_k", amn::GgmlType::kQ4_K}, {"q6_k", amn::GgmlType::kQ6_K},
               {"q5_k", amn::GgmlType::kQ5_K}, {"q2_k", amn::GgmlType::kQ2_K},
               {"q3_k", amn::GgmlType::kQ3_K}, {"iq4_xs", amn::GgmlType::kIQ4_XS}};
  const std::string only = argc > 3 ? argv[3] : "";
  std::printf("target %s, %zu elements, %s, thread CPU ns/element: best (median) of 15\n",
              std::string(amn::TargetName(amn::GgmlKQuantEncodeTarget())).c_str(), n,
              with_imatrix ? "with imatrix" : "no imatrix");
  std::printf("%-8s %18s %18s %18s %8s\n", "type", "amn", "amn_ref", "ggml", "ggml/amn");
  for (const auto& t : types) {
    if (!only.empty() && only != t.name) continue;
    std::vector<uint8_t> out(n / 256 * amn::ref::KQuantEncodeBlockBytes(t.type));
    const amn::kernels::GgmlQuantArgs args{
        amn::kernels::EncodeInput{reinterpret_cast<const uint8_t*>(x.data()), amn::ElemType::kF32,
                                  n / cols, cols},
        t.type, qw, out.data()};
    const auto ours =
        TimeCpu([&] { (void)amn::internal::EncodeGgmlKQuantQuant(args, nullptr); }, 15);
    const auto ref = TimeCpu([&] { (void)amn::ref::EncodeGgmlKQuantQuant(args, nullptr); }, 15);
    const auto theirs = TimeCpu(
        [&] { (void)ggml->Quantize(static_cast<int>(t.type), x, static_cast<int64_t>(cols), qw); },
        15);
    const double nd = static_cast<double>(n);
    const double a = ours.min_ns / nd, r = ref.min_ns / nd, g = theirs.min_ns / nd;
    std::printf("%-8s %8.2f (%7.2f) %8.2f (%7.2f) %8.2f (%7.2f) %8.2f\n", t.name, a,
                ours.median_ns / nd, r, ref.median_ns / nd, g, theirs.median_ns / nd, g / a);
  }
  return 0;
}
