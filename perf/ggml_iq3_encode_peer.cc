// ggml's own IQ3_XXS and IQ3_S quantizers (ggml_quantize_chunk from the
// pinned libggml-base.so that tests/ggml_oracle.h opens; with `imatrix` the
// same random positive importance vector for both sides) timed beside amn's
// GgmlIq3Quant encoders and their scalar reference on the same F32 input
// in one process: thread CPU time (CLOCK_THREAD_CPUTIME_ID, which a shared
// machine's other jobs disturb far less than wall time) per element, best
// and median of 7 calls after one warm-up call (which also builds both
// sides' search tables), one thread, and the ratio of the best times. amn
// runs on the target dispatch picks (AMN_ISA caps it). Not a test.
//   ggml_iq3_encode_peer [n_elems] [imatrix]   (default 65536; `imatrix`:
//   rows of 4096 columns sharing one importance vector)
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
#include "kernels/ref/ggml_iq3_encode_ref.h"
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
  } types[] = {{"iq3_xxs", amn::GgmlType::kIQ3_XXS}, {"iq3_s", amn::GgmlType::kIQ3_S}};
  std::printf("target %s, %zu elements, %s, thread CPU ns/element: best (median) of 7\n",
              std::string(amn::TargetName(amn::GgmlIq3EncodeTarget())).c_str(), n,
              with_imatrix ? "with imatrix" : "no imatrix");
  std::printf("%-8s %18s %18s %18s %8s\n", "type", "amn", "amn_ref", "ggml", "ggml/amn");
  for (const auto& t : types) {
    std::vector<uint8_t> out(n / 256 * amn::ref::Iq3EncodeBlockBytes(t.type));
    const amn::kernels::GgmlQuantArgs args{
        amn::kernels::EncodeInput{reinterpret_cast<const uint8_t*>(x.data()), amn::ElemType::kF32,
                                  n / cols, cols},
        t.type, qw, out.data()};
    const auto ours =
        TimeCpu([&] { (void)amn::internal::EncodeGgmlIq3Quant(args, nullptr); }, 7);
    const auto ref =
        TimeCpu([&] { (void)amn::ref::EncodeGgmlIq3Quant(args, nullptr); }, 7);
    const auto theirs = TimeCpu(
        [&] { (void)ggml->Quantize(static_cast<int>(t.type), x, static_cast<int64_t>(cols), qw); },
        7);
    const double nd = static_cast<double>(n);
    const double a = ours.min_ns / nd, r = ref.min_ns / nd, g = theirs.min_ns / nd;
    std::printf("%-8s %8.2f (%7.2f) %8.2f (%7.2f) %8.2f (%7.2f) %8.2f\n", t.name, a,
                ours.median_ns / nd, r, ref.median_ns / nd, g, theirs.median_ns / nd, g / a);
  }
  return 0;
}
