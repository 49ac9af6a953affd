// ggml itself as the test oracle for the write side: the libggml-base.so of
// the pinned node-llama-cpp prebuilt (`bash .ci/install-deps oracles` puts
// it under build/oracles/), opened with dlopen so the build never links
// ggml. Its quantizers are ggml's reference C (no FMA, no vector code in
// that library), so what ggml_quantize_chunk returns is what llama.cpp's
// tools write without an importance matrix. Its GGUF reader is ggml's own
// loader. Tests skip when the library is absent, or fail when the
// environment says it must be present (AMN_REQUIRE_ORACLES=1, set by CI).
#ifndef AMN_TESTS_GGML_ORACLE_H_
#define AMN_TESTS_GGML_ORACLE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace amn::test {

class GgmlOracle {
 public:
  // The opened library, or nullptr; MissingReason() then says why.
  static const GgmlOracle* Get();
  static const std::string& MissingReason();
  static bool Required();  // AMN_REQUIRE_ORACLES=1

  // ggml_row_size(type, n): bytes of n elements of a block type.
  size_t RowSize(int ggml_type, int64_t n) const;
  bool RequiresImatrix(int ggml_type) const;
  // ggml_quantize_chunk over src.size() / n_per_row rows; imatrix is
  // n_per_row floats or null.
  std::vector<uint8_t> Quantize(int ggml_type, std::span<const float> src, int64_t n_per_row,
                                const float* imatrix = nullptr) const;
  // Any other exported symbol (e.g. the gguf_* reader), or nullptr.
  void* Symbol(const char* name) const;

 private:
  void* handle_ = nullptr;
};

}  // namespace amn::test

// In a TEST body: `const auto* ggml = AMN_GGML_ORACLE_OR_SKIP();`
#define AMN_GGML_ORACLE_OR_SKIP()                                                       \
  ::amn::test::GgmlOracle::Get();                                                       \
  if (::amn::test::GgmlOracle::Get() == nullptr) {                                      \
    if (::amn::test::GgmlOracle::Required()) {                                          \
      FAIL() << "ggml oracle required: " << ::amn::test::GgmlOracle::MissingReason();   \
    }                                                                                   \
    GTEST_SKIP() << "ggml oracle absent: " << ::amn::test::GgmlOracle::MissingReason(); \
  }

#endif  // AMN_TESTS_GGML_ORACLE_H_
