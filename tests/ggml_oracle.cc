#include "tests/ggml_oracle.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace amn::test {
namespace {

using QuantizeChunkFn = size_t (*)(int, const float*, void*, int64_t, int64_t, int64_t,
                                   const float*);
using RowSizeFn = size_t (*)(int, int64_t);
using RequiresImatrixFn = bool (*)(int);

#if defined(__x86_64__)
// AMN_GGML_ORACLE, else where `.ci/install-deps oracles` installs it.
std::filesystem::path LibraryPath() {
  if (const char* env = std::getenv("AMN_GGML_ORACLE"); env != nullptr && *env != '\0') {
    return env;
  }
  return std::filesystem::path(AMN_PROJECT_ROOT) / "build" / "oracles" / "node_modules" /
         "@node-llama-cpp" / "linux-x64" / "bins" / "linux-x64" / "libggml-base.so";
}
#endif

std::string& Reason() {
  static std::string reason;
  return reason;
}

template <typename Fn>
Fn Resolve(void* handle, const char* name) {
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) throw std::runtime_error(std::string("ggml oracle lacks ") + name);
  return reinterpret_cast<Fn>(symbol);
}

}  // namespace

const GgmlOracle* GgmlOracle::Get() {
  static const GgmlOracle* oracle = [] () -> const GgmlOracle* {
#if !defined(__x86_64__)
    Reason() = "the pinned ggml prebuilt is opened on x86-64 hosts only";
    return nullptr;
#else
    const std::filesystem::path path = LibraryPath();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      Reason() = path.string() + ": " + (error != nullptr ? error : "dlopen failed") +
                 " (bash .ci/install-deps oracles, or set AMN_GGML_ORACLE)";
      return nullptr;
    }
    auto* opened = new GgmlOracle();  // lives for the process, like the library
    opened->handle_ = handle;
    return opened;
#endif
  }();
  return oracle;
}

const std::string& GgmlOracle::MissingReason() { return Reason(); }

bool GgmlOracle::Required() {
#if !defined(__x86_64__)
  return false;  // no prebuilt is opened on other hosts
#endif
  const char* env = std::getenv("AMN_REQUIRE_ORACLES");
  return env != nullptr && std::string(env) == "1";
}

void* GgmlOracle::Symbol(const char* name) const { return dlsym(handle_, name); }

size_t GgmlOracle::RowSize(int ggml_type, int64_t n) const {
  return Resolve<RowSizeFn>(handle_, "ggml_row_size")(ggml_type, n);
}

bool GgmlOracle::RequiresImatrix(int ggml_type) const {
  return Resolve<RequiresImatrixFn>(handle_, "ggml_quantize_requires_imatrix")(ggml_type);
}

std::vector<uint8_t> GgmlOracle::Quantize(int ggml_type, std::span<const float> src,
                                          int64_t n_per_row, const float* imatrix) const {
  if (n_per_row <= 0 || src.size() % static_cast<size_t>(n_per_row) != 0) {
    throw std::invalid_argument("ggml oracle: src is not a whole number of rows");
  }
  const auto rows = static_cast<int64_t>(src.size()) / n_per_row;
  std::vector<uint8_t> out(RowSize(ggml_type, n_per_row) * static_cast<size_t>(rows));
  const size_t written = Resolve<QuantizeChunkFn>(handle_, "ggml_quantize_chunk")(
      ggml_type, src.data(), out.data(), 0, rows, n_per_row, imatrix);
  if (written != out.size()) throw std::runtime_error("ggml oracle: unexpected output size");
  return out;
}

}  // namespace amn::test
