// A known extension never overrides the bytes: a .gguf that is a ZIP, a
// .safetensors that is GGUF, an .npz that is no ZIP, a .pth that is neither a
// ZIP nor a torch pickle are refused with one line naming the file and what
// it looks like; the same bytes under .bin are detected and read.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fixtures/safetensors_builder.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/gguf_writer.h"
#include "tests/torch_zips.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;

void WriteBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string TorchBytes() {
  const std::string pickle = TorchStateDict({{"w", {"FloatStorage", "0", 6, 0, {2, 3}, {3, 1}, ""}}});
  return TorchZip(pickle, {{"0", SixFloats()}});
}

std::string GgufBytes() {
  GgufWriter g;
  g.Header(1, 1).KvU32("general.alignment", 32).Tensor("w", {4}, 0, 0).PadTo(32).Zeros(16);
  return {g.bytes().begin(), g.bytes().end()};
}

std::string SafetensorsBytes() {
  fixtures::SafetensorsBuilder b;
  b.Add("w", "F32", {2}, {0, 0, 128, 63, 0, 0, 0, 64});
  const std::vector<uint8_t> bytes = b.Bytes();
  return {bytes.begin(), bytes.end()};
}

std::string NpzBytes() {
  std::string npy = "\x93NUMPY\x01";
  npy += '\0';
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  npy += static_cast<char>(header.size());
  npy += '\0';
  npy += header + std::string("\0\0\x80\x3f\0\0\0\x40", 8);
  return fixtures::WriteZip({fixtures::ZipMember::Stored("a.npy", npy)});
}

struct Case {
  std::string file;   // name with the claimed extension
  std::string bytes;  // what it really holds
  std::string looks;  // what the error must say it looks like
};

TEST(FileMagicCli, ExtensionThatLiesIsRefusedNamingWhatTheBytesAre) {
  const std::string pickle_list = std::string("\x80\x02]q\x00.", 6);  // pickle.dumps([], 2)
  const std::vector<Case> cases = {
      {"model.gguf", TorchBytes(), "a ZIP archive with data.pkl (a PyTorch checkpoint)"},
      {"model.gguf", SafetensorsBytes(), "a safetensors file"},
      {"model.gguf", NpzBytes(), "a ZIP archive without data.pkl (an NPZ)"},
      {"model.safetensors", GgufBytes(), "a GGUF file"},
      {"model.safetensors", TorchBytes(), "a ZIP archive with data.pkl"},
      {"arrays.npz", "plain text, not an archive\n", "none of the formats amn reads"},
      {"arrays.npz", TorchBytes(), "a ZIP archive with data.pkl (a PyTorch checkpoint)"},
      {"arrays.npy", GgufBytes(), "a GGUF file"},
      {"weights.pth", SafetensorsBytes(), "a safetensors file"},
      {"weights.pth", pickle_list, "a raw pickle stream"},
      {"weights.pt", GgufBytes(), "a GGUF file"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file + " holding " + c.looks);
    TempDir dir;
    const fs::path path = dir.path() / c.file;
    WriteBytes(path, c.bytes);
    for (const std::string verb : {"parse", "inspect", "remember -q"}) {
      const CliResult r = RunAmn(verb + " " + Quote(path) +
                                 (verb == "remember -q" ? " -o " + Quote(dir.path() / "out") : ""));
      EXPECT_EQ(r.exit_code, 1) << verb << ": " << r.out << r.err;
      EXPECT_NE(r.err.find(path.string()), std::string::npos) << r.err;
      EXPECT_NE(r.err.find("its bytes are " + c.looks), std::string::npos) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
    EXPECT_FALSE(fs::exists(dir.path() / "out"));
  }
}

TEST(FileMagicCli, SameBytesUnderBinAreDetected) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {TorchBytes(), "pytorch"}, {GgufBytes(), "gguf"}, {SafetensorsBytes(), "safetensors"},
      {NpzBytes(), "npz"}};
  for (const auto& [bytes, format] : cases) {
    SCOPED_TRACE(format);
    TempDir dir;
    WriteBytes(dir.path() / "model.bin", bytes);
    const CliResult r = RunAmn("inspect --json " + Quote(dir.path() / "model.bin"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\"format\": \"" + format + "\""), std::string::npos) << r.out;
  }
}

// The right extension still works (the check costs a few bytes of reading).
TEST(FileMagicCli, MatchingExtensionsAreRead) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"w.pth", TorchBytes()}, {"w.gguf", GgufBytes()}, {"w.safetensors", SafetensorsBytes()},
      {"w.npz", NpzBytes()}};
  for (const auto& [name, bytes] : cases) {
    SCOPED_TRACE(name);
    TempDir dir;
    WriteBytes(dir.path() / name, bytes);
    const CliResult r = RunAmn("remember -q " + Quote(dir.path() / name) + " -o " +
                               Quote(dir.path() / "out.safetensors"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
}

}  // namespace
}  // namespace amn::test
