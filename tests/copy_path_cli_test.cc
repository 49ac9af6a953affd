// `amn remember` with tensors copied file to file (copy_file_range, forced
// with AMN_COPY_FILE_RANGE=1, since ext4 and tmpfs would not choose it)
// writes exactly the bytes it writes with AMN_NO_COPY_FILE_RANGE=1 (pread +
// write) and as it chooses by default, with either output writer
// (AMN_OUTPUT_WRITER=ring|mapped), at -j 1 and
// -j 3: on the .npz/.pth fixtures, on files numpy.savez and
// torch.save wrote (whose tensors are also checked against the bytes
// numpy.load / torch.load read, tests/copy_path_files.py), on GGUF and
// safetensors files with F32/F16/BF16 tensors kept as they are, and with
// the input on another file system than the output (/dev/shm: EXDEV, so the
// fallback runs).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/fixtures.h"
#include "tests/gguf_writer.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;

void WriteBytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Runs remember on `input` with `extra` flags, copy path forced on, off and
// as chosen, with the ring and the mapped output writer, -j 1 and -j 3;
// expects all twelve outputs to be the same bytes and returns them.
std::vector<uint8_t> RememberBothWays(const fs::path& input, const std::string& extra) {
  SCOPED_TRACE(input.filename().string() + " " + extra);
  TempDir dir;
  std::vector<uint8_t> first;
  for (const char* env : {"AMN_OUTPUT_WRITER=ring AMN_COPY_FILE_RANGE=1",
                          "AMN_OUTPUT_WRITER=mapped AMN_COPY_FILE_RANGE=1",
                          "AMN_OUTPUT_WRITER=ring AMN_NO_COPY_FILE_RANGE=1",
                          "AMN_OUTPUT_WRITER=mapped AMN_NO_COPY_FILE_RANGE=1",
                          "AMN_OUTPUT_WRITER=ring", "AMN_OUTPUT_WRITER=mapped"}) {
    for (const char* threads : {"-j 1", "-j 3"}) {
      const fs::path output = dir.path() / "out.safetensors";
      const CliResult r = RunAmn("remember -q --force " + std::string(threads) + " " + Quote(input) +
                                     " -o " + Quote(output) + " " + extra,
                                 env);
      EXPECT_EQ(r.exit_code, 0) << env << " " << threads << ": " << r.err;
      const std::vector<uint8_t> bytes = ReadBytes(output);
      if (first.empty()) {
        first = bytes;
        EXPECT_GT(first.size(), 8u);
      } else {
        EXPECT_TRUE(bytes == first) << env << " " << threads << " differs";
      }
    }
  }
  return first;
}

TEST(CopyPathCli, FixturesSameBytesOnAndOff) {
  auto files = FixtureFiles("npz_reference", ".npz");
  const auto pth = FixtureFiles("pth_reference", ".pth");
  files.insert(files.end(), pth.begin(), pth.end());
  if (files.empty()) GTEST_SKIP() << "no npz/pth fixtures in " << FixturesDir();
  for (const fs::path& file : files) {
    RememberBothWays(file, "");
    RememberBothWays(file, "--to f32");
  }
}

// The files numpy.savez and torch.save wrote, or empty when /usr/bin/python3
// (or python3) lacks numpy.
fs::path WriteWithPython(const TempDir& dir) {
  const std::string script = std::string(AMN_PROJECT_ROOT) + "/tests/copy_path_files.py";
  for (const char* python : {"/usr/bin/python3", "python3"}) {
    std::system((std::string(python) + " " + Quote(script) + " " + Quote(dir.path()) + " >/dev/null 2>&1")
                    .c_str());
    if (fs::exists(dir.path() / "big.npz")) return dir.path();
  }
  return {};
}

TEST(CopyPathCli, NumpyAndTorchFilesSameBytesOnAndOff) {
  TempDir dir;
  const fs::path made = WriteWithPython(dir);
  if (made.empty()) GTEST_SKIP() << "no python3 with numpy";
  struct Input {
    const char* file;
    std::vector<const char*> checked;  // tensors with NAME.FILE.bin references
  };
  std::vector<Input> inputs = {{"big.npz", {"big_f32", "wide_f16", "i64"}},
                               {"big_compressed.npz", {}}};
  if (fs::exists(made / "big.pth")) {
    inputs.push_back({"big.pth", {"big_f32", "rows", "bf16"}});
  } else {
    std::cerr << "torch missing: .pth part not run\n";
  }
  for (const Input& in : inputs) {
    const fs::path input = made / in.file;
    for (const char* extra : {"", "--to bf16"}) {
      const std::vector<uint8_t> bytes = RememberBothWays(input, extra);
      if (std::strlen(extra) != 0) continue;  // the references are the dtypes as stored
      const fs::path output = dir.path() / "check.safetensors";
      WriteBytes(output, bytes);
      const ReadBack back(output);
      for (const char* name : in.checked) {
        SCOPED_TRACE(std::string(in.file) + ": " + name);
        EXPECT_TRUE(back.Data(name) == ReadBytes(made / (std::string(name) + "." + in.file + ".bin")));
      }
    }
  }
}

// A GGUF file with F32, F16 and BF16 tensors (ggml types 0, 1, 30) over
// several chunks, aligned to 32 bytes: --to f16 copies the F16 one, and
// --keep-passthrough copies all three.
TEST(CopyPathCli, GgufFloatTensorsSameBytesOnAndOff) {
  TempDir dir;
  struct Plain {
    const char* name;
    uint32_t type;
    uint64_t elems, elem_bytes;
  };
  const std::vector<Plain> tensors = {{"a.weight", 0, 1'100'001, 4},
                                      {"b.weight", 1, 2'100'003, 2},
                                      {"c.weight", 30, 2'200'001, 2}};
  GgufWriter w;
  w.Header(tensors.size(), 1).KvStr("general.architecture", "llama");
  uint64_t offset = 0;
  std::vector<uint64_t> offsets;
  for (const Plain& t : tensors) {
    offsets.push_back(offset);
    w.Tensor(t.name, {t.elems}, t.type, offset);
    offset = (offset + t.elems * t.elem_bytes + 31) / 32 * 32;
  }
  w.PadTo(32);
  const size_t data_start = w.bytes().size();
  uint32_t state = 18;
  for (size_t i = 0; i < tensors.size(); ++i) {
    w.PadTo(32);
    for (uint64_t e = 0; e < tensors[i].elems * tensors[i].elem_bytes; ++e) {
      state = state * 1664525u + 1013904223u;
      // Halves whose exponent is never all ones: no NaN or Inf to convert.
      const uint8_t byte = static_cast<uint8_t>(state >> 24);
      w.Raw(&byte, 1);
      if (e % 2 == 1) w.bytes().back() &= 0x3f;
    }
  }
  const fs::path input = dir.path() / "plain.gguf";
  WriteBytes(input, w.bytes());
  for (const char* extra : {"--to f16", "--to bf16", "--to f32"}) {
    RememberBothWays(input, extra);
  }
  // With --keep-passthrough every tensor is the GGUF's bytes as stored.
  const std::vector<uint8_t> kept = RememberBothWays(input, "--keep-passthrough");
  const fs::path output = dir.path() / "kept.safetensors";
  WriteBytes(output, kept);
  const ReadBack back(output);
  for (size_t i = 0; i < tensors.size(); ++i) {
    SCOPED_TRACE(tensors[i].name);
    const auto begin = w.bytes().begin() + static_cast<long>(data_start + offsets[i]);
    const std::vector<uint8_t> want(begin, begin + static_cast<long>(tensors[i].elems * tensors[i].elem_bytes));
    EXPECT_TRUE(back.Data(tensors[i].name) == want);
  }
}

// A safetensors file with F32 and BF16 tensors: --to bf16 copies the BF16
// one, --keep-passthrough both.
TEST(CopyPathCli, SafetensorsFloatTensorsSameBytesOnAndOff) {
  TempDir dir;
  const uint64_t f32_bytes = 4 * 1'100'000, bf16_bytes = 2 * 2'200'000;
  const std::string json = R"({"x.weight":{"dtype":"F32","shape":[1100,1000],"data_offsets":[0,)" +
                           std::to_string(f32_bytes) + R"(]},"y.weight":{"dtype":"BF16","shape":[2200,1000],"data_offsets":[)" +
                           std::to_string(f32_bytes) + "," + std::to_string(f32_bytes + bf16_bytes) + "]}}";
  std::vector<uint8_t> file(8);
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) file[i] = static_cast<uint8_t>(n >> (8 * i));
  file.insert(file.end(), json.begin(), json.end());
  uint32_t state = 5;
  for (uint64_t e = 0; e < f32_bytes + bf16_bytes; ++e) {
    state = state * 1664525u + 1013904223u;
    file.push_back(static_cast<uint8_t>(state >> 24) & (e % 2 == 1 ? 0x3f : 0xff));
  }
  const fs::path input = dir.path() / "plain.safetensors";
  WriteBytes(input, file);
  for (const char* extra : {"--to bf16", "--to f16", "--keep-passthrough"}) RememberBothWays(input, extra);
}

// Input on tmpfs, output on the temporary directory's file system: Linux
// refuses copy_file_range across file systems (EXDEV) and the engine reads
// and writes instead; the bytes are those of a same-file-system run.
TEST(CopyPathCli, AcrossFileSystemsFallsBack) {
  const auto files = FixtureFiles("pth_reference", ".pth");
  if (files.empty()) GTEST_SKIP() << "no pth fixtures in " << FixturesDir();
  const fs::path shm = "/dev/shm";
  std::error_code error;
  if (!fs::is_directory(shm, error)) GTEST_SKIP() << "no /dev/shm";
  const fs::path input = shm / ("amn_copy_path_" + std::to_string(getpid()) + ".pth");
  fs::copy_file(files.front(), input, fs::copy_options::overwrite_existing, error);
  if (error) GTEST_SKIP() << "cannot write to /dev/shm: " << error.message();
  const std::vector<uint8_t> across = RememberBothWays(input, "");
  fs::remove(input);
  EXPECT_TRUE(across == RememberBothWays(files.front(), ""));
}

}  // namespace
}  // namespace amn::test
