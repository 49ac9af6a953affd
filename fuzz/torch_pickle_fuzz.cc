// libFuzzer target: the pickle VM with tensor views, as the PyTorch reader
// runs it. The input is data.pkl of a torch.save zip that also holds four
// storages, archive/data/0 .. 3 (64 bytes each), so a fuzzed pickle that
// names them reaches _rebuild_tensor_v2/_v3, storage dtypes, sizes, strides
// and offsets, and the checks of every view against its storage; the result
// is then planned as a remember. (pytorch_fuzz mutates the ZIP itself and
// rarely gets a new pickle through it.) Errors are expected; crashes,
// sanitizer reports, leaks, hangs and a view outside its storage are bugs.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fixtures/zip_writer.h"
#include "formats/array_file.h"
#include "formats/byte_source.h"
#include "formats/pytorch.h"
#include "formats/remember_plan.h"
#include "formats/zip_archive.h"
#include "fuzz/fuzz_limits.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace amn::formats;
  using amn::fixtures::ZipMember;
  const amn::ParseLimits limits = amn::fuzz::SmallLimits();
  std::vector<ZipMember> members;
  members.push_back(ZipMember::Stored("archive/data.pkl", std::string(reinterpret_cast<const char*>(data), size)));
  members.push_back(ZipMember::Stored("archive/byteorder", "little"));
  for (char key = '0'; key < '4'; ++key) {
    members.push_back(ZipMember::Stored(std::string("archive/data/") + key, std::string(64, key)));
  }
  members.push_back(ZipMember::Stored("archive/version", "3\n"));
  const std::string zip = amn::fixtures::WriteZip(members);
  const std::span bytes(reinterpret_cast<const std::byte*>(zip.data()), zip.size());
  auto archive = ZipArchive::Open(std::make_unique<MemorySource>(bytes, "fuzz.pth"), limits);
  if (!archive.ok()) return 0;  // e.g. a data.pkl over the limits
  const auto file = ReadPytorch(**archive, limits);
  if (!file.ok()) return 0;
  for (const auto& array : file->arrays) {
    if (array.member >= file->members.size()) __builtin_trap();
    if (!CheckArrayBounds(array, file->members[array.member]).ok()) __builtin_trap();
  }
  (void)PlanArrayRemember("fuzz.pth", *file, std::nullopt);
  (void)PlanArrayRemember("fuzz.pth", *file, amn::ElemType::kBf16);
  return 0;
}
