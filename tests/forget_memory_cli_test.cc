// `amn forget` (and forget --like) holds a bounded number of tensors' side
// values (issue 15: bounded memory): the peak RSS of the child process must
// not grow with the number of tensors. --block-size 2 makes the bnb absmax as large as the
// BF16 input (one F32 per two elements), so a plan holding every tensor's
// side values (the old statistics pass, 2 copies) would add 2x the model's
// size to the peak: 128 MiB on the larger model here, against a 16 MiB
// tolerance.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "tests/cli_files.h"
#include "tests/cli_runner.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;

constexpr size_t kRows = 512, kCols = 1024;  // 1 MiB of BF16 a weight

// `layers` Llama MLP weights of kRows x kCols BF16, small values of both
// signs, written as they are made: this process stays small, because a
// forked child starts with (and its ru_maxrss counts) the parent's memory.
void WriteModel(const fs::path& path, size_t layers) {
  std::vector<uint8_t> bytes(kRows * kCols * 2);
  for (size_t i = 0; i < kRows * kCols; ++i) {
    const float v = static_cast<float>(static_cast<int>((i * 2654435761u) % 2001) - 1000) / 8000.0f;
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16;
    bytes[2 * i] = static_cast<uint8_t>(bits);
    bytes[2 * i + 1] = static_cast<uint8_t>(bits >> 8);
  }
  std::string header = "{";
  for (size_t l = 0; l < layers; ++l) {
    header += std::string(l == 0 ? "" : ",") + "\"model.layers." + std::to_string(l) +
              ".mlp.up_proj.weight\":{\"dtype\":\"BF16\",\"shape\":[" + std::to_string(kRows) + "," +
              std::to_string(kCols) + "],\"data_offsets\":[" + std::to_string(l * bytes.size()) + "," +
              std::to_string((l + 1) * bytes.size()) + "]}";
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::ofstream out(path, std::ios::binary);
  const uint64_t length = header.size();
  for (int b = 0; b < 8; ++b) out.put(static_cast<char>(length >> (8 * b)));
  out << header;
  for (size_t l = 0; l < layers; ++l) {
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  ASSERT_TRUE(out.good());
}

struct MeasuredRun {
  int exit_code = -1;
  long max_rss_kib = 0;
};

// Runs amn with `args` (no shell between: the rusage is amn's own).
MeasuredRun RunMeasured(const std::vector<std::string>& args) {
  std::vector<std::string> argv_text = {AMN_CLI_PATH};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  MeasuredRun run;
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (pid < 0) return run;
  int status = 0;
  struct rusage usage {};
  if (wait4(pid, &status, 0, &usage) != pid) return run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.max_rss_kib = usage.ru_maxrss;  // Linux: KiB
  return run;
}

// Why the child's peak RSS cannot be measured here, or null when it can.
const char* CannotMeasure() {
#if !defined(__linux__)
  return "ru_maxrss is in KiB on Linux only";
#endif
  if (!EmulatorPrefix().empty()) return "the emulator's own memory is measured there";
#if defined(__SANITIZE_ADDRESS__)
  return "AddressSanitizer keeps freed memory in quarantine: the peak grows with everything "
         "allocated, not with what is held";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return "AddressSanitizer keeps freed memory in quarantine: the peak grows with everything "
         "allocated, not with what is held";
#endif
#endif
  return nullptr;
}

TEST(ForgetMemory, PeakDoesNotGrowWithTheNumberOfTensors) {
  if (const char* why = CannotMeasure()) GTEST_SKIP() << why;
  TempDir dir;
  WriteModel(dir.path() / "small.safetensors", 4);   // 4 MiB
  WriteModel(dir.path() / "large.safetensors", 64);  // 64 MiB
  for (const std::string scheme : {"nf4", "nf4-dq"}) {
    for (const std::string threads : {"1", "2"}) {
      long peak[2] = {};
      for (int large = 0; large < 2; ++large) {
        const fs::path in = dir.path() / (large ? "large.safetensors" : "small.safetensors");
        const fs::path out = dir.path() / "out.safetensors";
        const MeasuredRun r = RunMeasured({"forget", "-q", "--force", "--scheme", scheme, "--block-size", "2",
                                   "-j", threads, in.string(), "-o", out.string()});
        ASSERT_EQ(r.exit_code, 0) << scheme << " -j " << threads;
        peak[large] = r.max_rss_kib;
        fs::remove(out);
      }
      std::cout << scheme << " -j " << threads << ": peak " << peak[0] << " KiB for 4 tensors, "
                << peak[1] << " KiB for 64\n";
      // 60 MiB more of input; its side values held whole would be 120 MiB more.
      EXPECT_LT(peak[1] - peak[0], 16 * 1024)
          << scheme << " -j " << threads << ": " << peak[0] << " KiB for 4 tensors, " << peak[1]
          << " KiB for 64";
    }
  }
}

// forget --like reads each chunk's side values from the like-model as the
// chunk is encoded, never a whole model's: the like-models here are amn's
// own forget of the plain models with --block-size 2, whose absmax (and,
// with double quant, absmax codes) are as large as the BF16 input, so
// reading them all up front (before issue 15's fix) added about the model's
// size to the peak: 60 MiB more for the larger model, against 16 MiB.
TEST(ForgetMemory, LikePeakDoesNotGrowWithTheNumberOfTensors) {
  if (const char* why = CannotMeasure()) GTEST_SKIP() << why;
  TempDir dir;
  WriteModel(dir.path() / "small.safetensors", 4);   // 4 MiB
  WriteModel(dir.path() / "large.safetensors", 64);  // 64 MiB
  for (const std::string scheme : {"nf4", "nf4-dq"}) {
    for (int large = 0; large < 2; ++large) {
      const std::string size = large ? "large" : "small";
      const MeasuredRun made =
          RunMeasured({"forget", "-q", "--force", "--scheme", scheme, "--block-size", "2",
                       (dir.path() / (size + ".safetensors")).string(), "-o",
                       (dir.path() / (size + "-" + scheme + ".safetensors")).string()});
      ASSERT_EQ(made.exit_code, 0) << scheme << " " << size;
    }
    for (const std::string threads : {"1", "2"}) {
      long peak[2] = {};
      for (int large = 0; large < 2; ++large) {
        const std::string size = large ? "large" : "small";
        const fs::path out = dir.path() / "out.safetensors";
        const MeasuredRun r = RunMeasured(
            {"forget", "-q", "--force", "-j", threads, (dir.path() / (size + ".safetensors")).string(),
             "--like", (dir.path() / (size + "-" + scheme + ".safetensors")).string(), "-o",
             out.string()});
        ASSERT_EQ(r.exit_code, 0) << scheme << " -j " << threads << " " << size;
        peak[large] = r.max_rss_kib;
        fs::remove(out);
      }
      std::cout << "--like " << scheme << " -j " << threads << ": peak " << peak[0]
                << " KiB for 4 tensors, " << peak[1] << " KiB for 64\n";
      EXPECT_LT(peak[1] - peak[0], 16 * 1024)
          << "--like " << scheme << " -j " << threads << ": " << peak[0] << " KiB for 4 tensors, "
          << peak[1] << " KiB for 64";
    }
  }
}

}  // namespace
}  // namespace amn::test
