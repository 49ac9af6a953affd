// llama.cpp's own llama-quantize as the test oracle for the mixtures: the
// libllama of the pinned node-llama-cpp prebuilt (`bash .ci/install-deps
// oracles`, next to tests/ggml_oracle.h's libggml-base.so), opened with
// dlopen, and its llama_model_quantize run on a GGUF file. Its quantizers
// are ggml's reference C, so without an importance matrix its tensor
// bytes are what amn's encoders must write, and its per-tensor types are
// llama_tensor_get_type's. Same skip/fail rule as the ggml oracle
// (AMN_REQUIRE_ORACLES=1 turns a missing library into a failure).
#ifndef AMN_TESTS_LLAMA_QUANT_ORACLE_H_
#define AMN_TESTS_LLAMA_QUANT_ORACLE_H_

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tests/ggml_oracle.h"

namespace amn::test {

class LlamaQuantOracle {
 public:
  static const LlamaQuantOracle* Get();  // nullptr: MissingReason() says why
  static const std::string& MissingReason();

  // llama_model_quantize(in, out) with llama_model_quantize_default_params
  // but `ftype` (llama.h LlamaFileType), `nthread` (0: all cores), the
  // --tensor-type overrides (regex, ggml type id) and --pure. True when it
  // returned 0.
  bool Quantize(const std::filesystem::path& in, const std::filesystem::path& out, int ftype,
                int nthread = 1, const std::vector<std::pair<std::string, int>>& overrides = {},
                bool pure = false) const;

 private:
  void* handle_ = nullptr;
};

}  // namespace amn::test

#define AMN_LLAMA_QUANT_ORACLE_OR_SKIP()                                                       \
  ::amn::test::LlamaQuantOracle::Get();                                                        \
  if (::amn::test::LlamaQuantOracle::Get() == nullptr) {                                       \
    if (::amn::test::GgmlOracle::Required()) {                                                 \
      FAIL() << "llama oracle required: " << ::amn::test::LlamaQuantOracle::MissingReason();   \
    }                                                                                          \
    GTEST_SKIP() << "llama oracle absent: " << ::amn::test::LlamaQuantOracle::MissingReason(); \
  }

#endif  // AMN_TESTS_LLAMA_QUANT_ORACLE_H_
