// Hostile inputs cost bounded work (issue 20), end to end through `amn`:
// JSON nesting bounds, limits on the planned output of every input kind,
// many tensors planned in O(n log n), and a signal during planning.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "formats/checked_math.h"
#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/gguf_writer.h"
#include "tests/torch_zips.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// A safetensors file: `header` (the JSON object, without padding) and
// `data_bytes` zero bytes of data.
std::string Safetensors(const std::string& header, uint64_t data_bytes) {
  std::string text = header;
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  return bytes + text + std::string(data_bytes, '\0');
}

// `n` BF16 tensors of 8x8 named t0000000..., tensor i filled with the byte i % 251.
std::string ManyTinyTensors(size_t n) {
  std::string header = "{";
  for (size_t i = 0; i < n; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "t%07zu", i);
    header += (i ? ",\"" : "\"") + std::string(name) +
              "\":{\"dtype\":\"BF16\",\"shape\":[8,8],\"data_offsets\":[" +
              std::to_string(i * 128) + "," + std::to_string(i * 128 + 128) + "]}";
  }
  header += "}";
  std::string file = Safetensors(header, 0);
  for (size_t i = 0; i < n; ++i) file.append(128, static_cast<char>(i % 251));
  return file;
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// --- 1. JSON nesting --------------------------------------------------------

std::string Nested(size_t levels) {
  return "{\"a\":" + std::string(levels, '[') + std::string(levels, ']') + "}";
}

// A model directory: one F32 tensor and `config` as config.json.
void WriteModelDir(const fs::path& dir, const std::string& config) {
  fs::create_directories(dir);
  WriteFile(dir / "model.safetensors",
            Safetensors(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8));
  WriteFile(dir / "config.json", config);
}

TEST(JsonNesting, ConfigNested100000DeepIsAnErrorNotACrash) {
  TempDir dir;
  WriteModelDir(dir.path() / "model", Nested(100000));
  const fs::path out = dir.path() / "out";
  const CliResult r = RunAmn("remember -q " + Quote(dir.path() / "model") + " -o " + Quote(out));
  EXPECT_EQ(r.exit_code, 1) << r.err;  // was SIGSEGV (exit_code -1)
  EXPECT_NE(r.err.find("config.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nested deeper than 512 levels"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  // inspect reads the config too (the quantization config): the same error.
  const CliResult inspect = RunAmn("inspect " + Quote(dir.path() / "model"));
  EXPECT_EQ(inspect.exit_code, 1) << inspect.err;
  EXPECT_NE(inspect.err.find("nested deeper than 512 levels"), std::string::npos) << inspect.err;
}

TEST(JsonNesting, ConfigWithinTheBoundIsKept) {
  TempDir dir;
  WriteModelDir(dir.path() / "model", Nested(500));
  const fs::path out = dir.path() / "out";
  const CliResult r = RunAmn("remember -q " + Quote(dir.path() / "model") + " -o " + Quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto config = nlohmann::json::parse(SlurpText(out / "config.json"));
  EXPECT_EQ(config.at("torch_dtype"), "bfloat16");
  EXPECT_EQ(config.at("a").dump().size(), 1000u);
}

TEST(JsonNesting, QuantizationConfigNestedDeepIsRefused) {
  TempDir dir;
  WriteModelDir(dir.path() / "model", "{\"quantization_config\":" + Nested(600) + "}");
  const fs::path out = dir.path() / "out";
  const CliResult r = RunAmn("remember -q " + Quote(dir.path() / "model") + " -o " + Quote(out));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("nested deeper than 512 levels"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// --- 2. Checked sizes -------------------------------------------------------

TEST(CheckedMath, ElementCountOverflowAndZeroDimensions) {
  using formats::ElementCount;
  const std::vector<uint64_t> empty_shape;
  EXPECT_EQ(ElementCount(empty_shape), 1u);  // a scalar
  EXPECT_EQ(ElementCount(std::vector<uint64_t>{3, 4}), 12u);
  EXPECT_EQ(ElementCount(std::vector<uint64_t>{1ull << 32, 1ull << 32}), std::nullopt);
  EXPECT_EQ(ElementCount(std::vector<uint64_t>{1ull << 40, 1ull << 40, 0}), 0u);  // empty
  EXPECT_EQ(ElementCount(std::vector<uint64_t>{1ull << 31, 1ull << 31, 2}), 1ull << 63);
  EXPECT_EQ(formats::ByteCount(std::vector<uint64_t>{1ull << 31, 1ull << 31, 2}, 2), std::nullopt);
  EXPECT_EQ(formats::CheckedAdd(UINT64_MAX, 1), std::nullopt);
  EXPECT_EQ(formats::CheckedMul(UINT64_MAX, 0), 0u);
}

// A stride-0 view whose sizes multiply to 2^63 elements: refused with a
// clear error, never planned with wrapped sizes.
TEST(CheckedMath, PytorchStrideZeroViewPast2To62Elements) {
  TempDir dir;
  const std::string pickle =
      TorchStateDict({{"w", {"ByteStorage", "0", 1, 0, {1u << 30, 1u << 30, 8}, {0, 0, 0}, ""}}});
  const fs::path in = dir.path() / "v.pth";
  WriteFile(in, TorchZip(pickle, {{"0", std::string(1, '\0')}}));
  const fs::path out = dir.path() / "out.safetensors";
  const CliResult r = RunAmn("remember -q --to f32 " + Quote(in) + " -o " + Quote(out));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_NE(r.err.find("limit exceeded"), std::string::npos) << r.err;
}

// --- 3. Limits measure the output --------------------------------------------

struct LimitCase {
  std::string label;
  std::string file_name;
  std::string bytes;
  std::string to;
};

// Each input declares under 1 MiB of data and plans over 1 MiB of output.
std::vector<LimitCase> OutputLimitCases() {
  std::vector<LimitCase> cases;
  const uint64_t n = 300000;  // F16 elements: 600 KB in, 1.2 MB as F32
  cases.push_back({"safetensors F16 to F32", "m.safetensors",
                   Safetensors("{\"w\":{\"dtype\":\"F16\",\"shape\":[" + std::to_string(n) +
                                   "],\"data_offsets\":[0," + std::to_string(2 * n) + "]}}",
                               2 * n),
                   "f32"});
  std::string npy_header =
      "{'descr': '<f2', 'fortran_order': False, 'shape': (" + std::to_string(n) + ",), }";
  npy_header.append(64 - (10 + npy_header.size() + 1) % 64, ' ');
  npy_header += '\n';
  std::string npy = "\x93NUMPY\x01\x00"s;
  npy += static_cast<char>(npy_header.size() & 0xFF);
  npy += static_cast<char>(npy_header.size() >> 8);
  cases.push_back({"NPY F16 to F32", "m.npy", npy + npy_header + std::string(2 * n, '\0'), "f32"});
  // A 2-byte F16 storage viewed 300,000 times (stride 0).
  const std::string pickle =
      TorchStateDict({{"w", {"HalfStorage", "0", 1, 0, {static_cast<uint32_t>(n)}, {0}, ""}}});
  cases.push_back(
      {"PyTorch stride-0 view", "m.pth", TorchZip(pickle, {{"0", std::string(2, '\0')}}), "f32"});
  // Q8_0 (34 bytes per 32 elements) dequantized to BF16 (64 bytes).
  const uint64_t blocks = 19000;
  GgufWriter g;
  g.Header(1, 0).Tensor("w", {32 * blocks}, /*Q8_0=*/8, 0).PadTo(32).Zeros(34 * blocks);
  cases.push_back(
      {"GGUF Q8_0 to BF16", "m.gguf", std::string(g.bytes().begin(), g.bytes().end()), "bf16"});
  return cases;
}

TEST(OutputLimit, MaxBytesBoundsThePlannedOutputOfEveryInputKind) {
  for (const LimitCase& c : OutputLimitCases()) {
    SCOPED_TRACE(c.label);
    TempDir dir;
    const fs::path in = dir.path() / c.file_name;
    WriteFile(in, c.bytes);
    const fs::path out = dir.path() / "out.safetensors";
    const auto start = Clock::now();
    const CliResult r =
        RunAmn("remember -q --max-bytes 1M --to " + c.to + " " + Quote(in) + " -o " + Quote(out));
    EXPECT_LT(SecondsSince(start), 1.0);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("limit exceeded"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--max-bytes"), std::string::npos) << r.err;
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{c.file_name});
    // Under a limit that holds the output, the same file is remembered.
    const CliResult ok =
        RunAmn("remember -q --max-bytes 2M --to " + c.to + " " + Quote(in) + " -o " + Quote(out));
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_TRUE(fs::exists(out));
  }
}

// --- 4. Many tensors --------------------------------------------------------

TEST(ManyTensors, HundredThousandTinyTensorsRememberedExactly) {
  constexpr size_t kTensors = 100000;
  TempDir dir;
  const fs::path in = dir.path() / "many.safetensors";
  WriteFile(in, ManyTinyTensors(kTensors));
  const fs::path out = dir.path() / "out.safetensors";
  const CliResult r = RunAmn("remember -q " + Quote(in) + " -o " + Quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReadBack back(out);
  ASSERT_EQ(back.header.size(), kTensors + 1);  // and __metadata__
  for (size_t i : {size_t{0}, size_t{1}, size_t{250}, size_t{251}, size_t{54321}, kTensors - 1}) {
    char name[16];
    std::snprintf(name, sizeof(name), "t%07zu", i);
    SCOPED_TRACE(name);
    EXPECT_EQ(back.header.at(name).at("dtype"), "BF16");
    EXPECT_EQ(back.header.at(name).at("shape"), nlohmann::json::array({8, 8}));
    // Name order is data order (one dtype): tensor i at byte 128 i.
    EXPECT_EQ(back.header.at(name).at("data_offsets"),
              nlohmann::json::array({i * 128, i * 128 + 128}));
    EXPECT_EQ(back.Data(name), std::vector<uint8_t>(128, static_cast<uint8_t>(i % 251)));
  }
}

TEST(ManyTensors, NpzOfManyMembers) {
  constexpr size_t kMembers = 20000;
  std::string npy_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  npy_header.append(64 - (10 + npy_header.size() + 1) % 64, ' ');
  npy_header += '\n';
  std::vector<fixtures::ZipMember> members;
  for (size_t i = 0; i < kMembers; ++i) {
    std::string npy = "\x93NUMPY\x01\x00"s;
    npy += static_cast<char>(npy_header.size());
    npy += '\0';
    npy += npy_header;
    const float values[2] = {static_cast<float>(i), 1.0f};
    npy.append(reinterpret_cast<const char*>(values), sizeof(values));
    members.push_back(fixtures::ZipMember::Stored("a" + std::to_string(i) + ".npy", npy));
  }
  TempDir dir;
  const fs::path in = dir.path() / "many.npz";
  WriteFile(in, fixtures::WriteZip(members));
  const fs::path out = dir.path() / "out.safetensors";
  const CliResult r = RunAmn("remember -q " + Quote(in) + " -o " + Quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const ReadBack back(out);
  ASSERT_EQ(back.header.size(), kMembers + 1);
  const std::vector<uint8_t> data = back.Data("a12345");
  float values[2];
  ASSERT_EQ(data.size(), sizeof(values));
  std::memcpy(values, data.data(), sizeof(values));
  EXPECT_EQ(values[0], 12345.0f);
  EXPECT_EQ(values[1], 1.0f);
}

// A DEFLATE member declaring a 3 GB array (ratio under the cap: its stream
// is the NPY header, then empty stored blocks up to 3.5 MB) under a 2 GiB
// address-space limit: allocating it fails, and the user reads one line
// saying out of memory, naming the file and member, instead of a bare
// std::bad_alloc. AddressSanitizer reserves terabytes of shadow, so no
// address-space limit can hold under it: skipped there.
TEST(Messages, OutOfMemoryIsNamedNotABareBadAlloc) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "no address-space limit under AddressSanitizer";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "no address-space limit under AddressSanitizer";
#endif
#endif
  constexpr uint64_t kElements = 750'000'000;  // f32: 3 GB
  std::string npy_header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(kElements) + ",), }";
  npy_header.append(64 - (10 + npy_header.size() + 1) % 64, ' ');
  npy_header += '\n';
  std::string npy = "\x93NUMPY\x01\x00"s;
  npy += static_cast<char>(npy_header.size());
  npy += '\0';
  npy += npy_header;
  // Raw DEFLATE of the header, flushed to a byte boundary, then empty
  // non-final stored blocks (LEN 0, NLEN 0xFFFF): a valid stream so far.
  z_stream z{};
  ASSERT_EQ(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string stream(npy.size() + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(npy.data());
  z.avail_in = static_cast<uInt>(npy.size());
  z.next_out = reinterpret_cast<Bytef*>(stream.data());
  z.avail_out = static_cast<uInt>(stream.size());
  ASSERT_EQ(deflate(&z, Z_SYNC_FLUSH), Z_OK);
  stream.resize(stream.size() - z.avail_out);
  deflateEnd(&z);
  const std::string empty_block("\x00\x00\x00\xff\xff", 5);
  while (stream.size() < 3'500'000) stream += empty_block;
  fixtures::ZipMember member{"w.npy", stream, true, npy.size() + 4 * kElements, 0};
  TempDir dir;
  const fs::path in = dir.path() / "huge.npz";
  WriteFile(in, fixtures::WriteZip({member}));
  const fs::path out = dir.path() / "out.safetensors";
  const CliResult r = RunAmn("remember -q -j 1 " + Quote(in) + " -o " + Quote(out),
                             "prlimit --as=" + std::to_string(uint64_t{2} << 30) + " --");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("out of memory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("huge.npz"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("w.npy"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("bad_alloc"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// --- 5. A signal during planning --------------------------------------------

// SIGTERM while `amn remember` reads and plans 300,000 tensors: the run ends
// within a second of the signal and leaves nothing behind.
TEST(Cancel, SigtermDuringPlanningEndsTheRunPromptly) {
  TempDir dir;
  const fs::path in = dir.path() / "many.safetensors";
  WriteFile(in, ManyTinyTensors(300000));
  const fs::path out = dir.path() / "out.safetensors";
  for (const int delay_ms : {100, 300, 600}) {
    SCOPED_TRACE(delay_ms);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      const std::string in_text = in.string(), out_text = out.string();
      ::execl(AMN_CLI_PATH, AMN_CLI_PATH, "remember", "-q", in_text.c_str(), "-o", out_text.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    const auto signalled = Clock::now();
    int status = 0;
    pid_t done = 0;
    while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 && SecondsSince(signalled) < 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (done == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    EXPECT_EQ(done, pid) << "still running 10 s after SIGTERM";
    EXPECT_LT(SecondsSince(signalled), 1.0);
    // Interrupted (exit 130), killed by the signal before the handler was
    // installed, or finished before the signal landed.
    const bool ended =
        (WIFEXITED(status) && (WEXITSTATUS(status) == 130 || WEXITSTATUS(status) == 0)) ||
        (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    EXPECT_TRUE(ended) << status;
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      EXPECT_EQ(dir.Entries(), std::vector<std::string>{"many.safetensors"});
    }
    fs::remove(out);
  }
}

}  // namespace
}  // namespace amn::test
