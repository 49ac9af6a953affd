// What the whole-input harnesses (model_dir_fuzz, remember_plan_fuzz) share:
// a private scratch directory the readers can open paths in, and the
// safetensors model path of `amn remember` up to its plan.
#ifndef AMN_FUZZ_WHOLE_INPUT_H_
#define AMN_FUZZ_WHOLE_INPUT_H_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "amn/limits.h"
#include "formats/model_files.h"
#include "formats/quant_scheme.h"
#include "formats/remember_plan.h"

namespace amn::fuzz {

// A directory of its own under $TMPDIR, removed when the fuzzer exits.
struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const char* prefix) {
    std::string dir = (std::filesystem::temp_directory_path() / prefix).string() + "_XXXXXX";
    if (::mkdtemp(dir.data()) == nullptr) std::abort();
    path = dir;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

// OpenModelFiles, DetectScheme, then PlanRemember for BF16 with and without
// --keep-passthrough; errors end it quietly (they are expected).
inline void PlanSafetensorsModel(const std::filesystem::path& path, const ParseLimits& limits) {
  const auto files = formats::OpenModelFiles(path, limits);
  if (!files.ok()) return;
  const auto scheme = formats::DetectScheme(*files);
  if (!scheme.ok()) return;
  for (const bool keep : {false, true}) {
    (void)formats::PlanRemember(*files, *scheme, ElemType::kBf16, keep);
  }
}

}  // namespace amn::fuzz

#endif  // AMN_FUZZ_WHOLE_INPUT_H_
