#include "tests/llama_quant_oracle.h"

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace amn::test {
namespace {

// llama.h's llama_model_quantize_params of the llama.cpp node-llama-cpp
// 3.21.1 ships (its gitRelease bundle): 64 bytes on x86-64. The
// default-params function of the library writes exactly these offsets
// (nthread 0, ftype 7, the two type overrides 43 = GGML_TYPE_COUNT, the
// bools with quantize_output_tensor true, four null pointers, then
// max_buf_size 8 GiB); the static_asserts pin the layout we rely on.
struct TensorOverride {  // llama_model_tensor_override
  const char* pattern;
  int type;  // enum ggml_type
};
struct QuantizeParams {
  int32_t nthread;
  int32_t ftype;                 // enum llama_ftype
  int32_t output_tensor_type;    // enum ggml_type
  int32_t token_embedding_type;  // enum ggml_type
  bool allow_requantize;
  bool quantize_output_tensor;
  bool only_copy;
  bool pure;
  bool keep_split;
  bool dry_run;
  const void* imatrix;
  const void* kv_overrides;
  const TensorOverride* tt_overrides;
  const int32_t* prune_layers;
  size_t max_buf_size;
};
static_assert(offsetof(QuantizeParams, allow_requantize) == 16);
static_assert(offsetof(QuantizeParams, imatrix) == 24);
static_assert(offsetof(QuantizeParams, tt_overrides) == 40);
static_assert(offsetof(QuantizeParams, max_buf_size) == 56);
static_assert(sizeof(QuantizeParams) == 64);

using DefaultParamsFn = QuantizeParams (*)();
using QuantizeFn = uint32_t (*)(const char*, const char*, const QuantizeParams*);
using LogFn = void (*)(int, const char*, void*);
using LogSetFn = void (*)(LogFn, void*);

std::string& Reason() {
  static std::string reason;
  return reason;
}

}  // namespace

const LlamaQuantOracle* LlamaQuantOracle::Get() {
  static const LlamaQuantOracle* oracle = []() -> const LlamaQuantOracle* {
#if !defined(__x86_64__)
    Reason() = "the pinned libllama prebuilt is opened on x86-64 hosts only";
    return nullptr;
#else
    std::filesystem::path path;
    if (const char* env = std::getenv("AMN_LLAMA_ORACLE"); env != nullptr && *env != '\0') {
      path = env;
    } else {
      path = std::filesystem::path(AMN_PROJECT_ROOT) / "build" / "oracles" / "node_modules" /
             "@node-llama-cpp" / "linux-x64" / "bins" / "linux-x64" / "libllama.v0.4.0.so";
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      Reason() = path.string() + ": " + (error != nullptr ? error : "dlopen failed") +
                 " (bash .ci/install-deps oracles, or set AMN_LLAMA_ORACLE)";
      return nullptr;
    }
    for (const char* name :
         {"llama_model_quantize", "llama_model_quantize_default_params", "llama_backend_init"}) {
      if (dlsym(handle, name) == nullptr) {
        Reason() = path.string() + " lacks " + name;
        return nullptr;
      }
    }
    if (auto log_set = reinterpret_cast<LogSetFn>(dlsym(handle, "llama_log_set"))) {
      log_set([](int, const char*, void*) {}, nullptr);  // quiet: tests print their own
    }
    reinterpret_cast<void (*)()>(dlsym(handle, "llama_backend_init"))();
    auto* opened = new LlamaQuantOracle();  // lives for the process, like the library
    opened->handle_ = handle;
    return opened;
#endif
  }();
  return oracle;
}

const std::string& LlamaQuantOracle::MissingReason() { return Reason(); }

bool LlamaQuantOracle::Quantize(const std::filesystem::path& in, const std::filesystem::path& out,
                                int ftype, int nthread,
                                const std::vector<std::pair<std::string, int>>& overrides,
                                bool pure) const {
  QuantizeParams params =
      reinterpret_cast<DefaultParamsFn>(dlsym(handle_, "llama_model_quantize_default_params"))();
  params.ftype = ftype;
  params.nthread = nthread;
  params.pure = pure;
  std::vector<TensorOverride> tt;
  for (const auto& [pattern, type] : overrides) tt.push_back({pattern.c_str(), type});
  tt.push_back({nullptr, 43});  // the terminator llama-quantize appends
  if (!overrides.empty()) params.tt_overrides = tt.data();
  const auto quantize = reinterpret_cast<QuantizeFn>(dlsym(handle_, "llama_model_quantize"));
  return quantize(in.c_str(), out.c_str(), &params) == 0;
}

}  // namespace amn::test
