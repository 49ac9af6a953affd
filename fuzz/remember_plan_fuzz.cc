// libFuzzer target: parse any single-file input the way `amn remember` does
// (format by magic: safetensors, GGUF, NPY, NPZ, PyTorch) and plan its
// remember (scheme detection, one job per output tensor, output header
// sizes) for BF16 and with --keep-passthrough; nothing is written. The
// input goes through a scratch file because the readers open paths.
// Errors are expected; crashes, sanitizer reports, leaks and hangs are bugs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "formats/byte_source.h"
#include "formats/file_format.h"
#include "formats/gguf.h"
#include "formats/remember_plan.h"
#include "fuzz/fuzz_limits.h"
#include "fuzz/whole_input.h"

namespace {

namespace fs = std::filesystem;
using namespace amn::formats;


const fs::path& ScratchFile() {
  static const amn::fuzz::ScratchDir dir("amn_plan_fuzz");
  static const fs::path path = dir.path / "input.bin";
  return path;
}

void Plan(const fs::path& path, const amn::ParseLimits& limits) {
  const auto format = DetectFileFormat(path, limits);
  if (!format.ok()) return;
  for (const bool keep : {false, true}) {
    switch (*format) {
      case FileFormat::kGguf: {
        auto source = FileSource::Open(path);
        if (!source.ok()) return;
        const auto header = ReadGgufHeader(**source, limits);
        if (!header.ok()) return;
        (void)PlanGgufRemember(path, *header, amn::ElemType::kBf16, keep);
        break;
      }
      case FileFormat::kNpy:
      case FileFormat::kNpz:
      case FileFormat::kPytorch: {
        const auto arrays = ReadArrayFile(path, *format, limits);
        if (!arrays.ok()) return;
        (void)PlanArrayRemember(path, *arrays,
                                keep ? std::nullopt : std::optional(amn::ElemType::kBf16));
        break;
      }
      case FileFormat::kSafetensors:
        if (!keep) amn::fuzz::PlanSafetensorsModel(path, limits);  // plans both itself
        break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path& path = ScratchFile();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) std::abort();
  }
  Plan(path, amn::fuzz::SmallLimits());
  return 0;
}
