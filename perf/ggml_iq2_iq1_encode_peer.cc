// ggml's own IQ2/IQ1 quantizers (ggml_quantize_chunk from the pinned
// libggml-base.so that tests/ggml_oracle.h opens) timed beside amn's
// IQ2_XXS/IQ2_XS/IQ2_S/IQ1_S/IQ1_M encoders (amn::QuantizeGgml: the
// dispatched neighbour scoring on the target dispatch picks, AMN_ISA caps
// it) and their scalar reference, on the same F32 input and importance
// vector in one process: ns per element, best and median of 5 batches, one
// thread, and ggml's best over amn's. Both sides build their grid index in the
// untimed warm-up call. Not a test.
//   ggml_iq2_iq1_encode_peer [n_elems]   (default 65536: 16 rows of 4096
//   columns sharing one random importance vector in [0.01, 4))
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "amn/ggml_type.h"
#include "amn/quantize.h"
#include "amn/targets.h"
#include "dispatch/ggml_iq2_iq1_encode.h"
#include "kernels/ref/ggml_iq2_iq1_encode_ref.h"
#include "perf/measure.h"
#include "tests/ggml_oracle.h"

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) / 4096 * 4096 : 65536;
  const amn::test::GgmlOracle* ggml = amn::test::GgmlOracle::Get();
  if (ggml == nullptr || n == 0) {
    std::fprintf(stderr, "ggml oracle absent: %s\n",
                 amn::test::GgmlOracle::MissingReason().c_str());
    return 1;
  }
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  const size_t cols = 4096;
  std::vector<float> imatrix(cols);
  std::uniform_real_distribution<float> uni(0.01f, 4.0f);
  for (float& v : imatrix) v = uni(rng);
  const struct {
    const char* name;
    amn::GgmlType type;
  } types[] = {{"iq2_xxs", amn::GgmlType::kIQ2_XXS}, {"iq2_xs", amn::GgmlType::kIQ2_XS},
               {"iq2_s", amn::GgmlType::kIQ2_S},     {"iq1_s", amn::GgmlType::kIQ1_S},
               {"iq1_m", amn::GgmlType::kIQ1_M}};
  std::printf("target %s, %zu elements, with imatrix, ns/element: best (median) of 5\n",
              std::string(amn::TargetName(amn::GgmlIq2Iq1EncodeTarget())).c_str(), n);
  std::printf("%-8s %18s %18s %18s %8s\n", "type", "amn", "amn_ref", "ggml", "ggml/amn");
  const amn::FloatRows in{amn::ElemType::kF32,
                          std::span(reinterpret_cast<const std::byte*>(x.data()), 4 * n),
                          n / cols, cols};
  for (const auto& t : types) {
    std::vector<std::byte> out(n / 256 * amn::ref::Iq2Iq1EncodeBlockBytes(t.type));
    const auto ours = amn::perf::TimeCalls(
        [&] { (void)amn::QuantizeGgml(t.type, in, imatrix, out, nullptr); }, 5);
    const amn::kernels::GgmlQuantArgs args{
        amn::kernels::EncodeInput{reinterpret_cast<const uint8_t*>(x.data()),
                                  amn::ElemType::kF32, n / cols, cols},
        t.type, imatrix.data(), reinterpret_cast<uint8_t*>(out.data())};
    const auto ref = amn::perf::TimeCalls(
        [&] { (void)amn::ref::EncodeGgmlIq2Iq1Quant(args, nullptr); }, 5);
    const auto theirs = amn::perf::TimeCalls(
        [&] {
          (void)ggml->Quantize(static_cast<int>(t.type), x, static_cast<int64_t>(cols),
                               imatrix.data());
        },
        5);
    const double nd = static_cast<double>(n);
    const double a = ours.min_ns / nd, r = ref.min_ns / nd, g = theirs.min_ns / nd;
    std::printf("%-8s %8.1f (%7.1f) %8.1f (%7.1f) %8.1f (%7.1f) %8.2f\n", t.name, a,
                ours.median_ns / nd, r, ref.median_ns / nd, g, theirs.median_ns / nd, g / a);
  }
  return 0;
}
