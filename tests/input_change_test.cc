// Inputs that change while they are read: the SIGBUS guard on its own (in
// forked children, so a signal death is observed, not suffered), and
// amn::Model::Remember on an input truncated or rewritten from its progress
// callback (deterministic: the callback runs after the first chunk, and
// later chunks read the file after the change), with and without mmap.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "amn/model.h"
#include "formats/sigbus_guard.h"
#include "tests/fixtures.h"
#include "tests/in_child.h"
#include "tests/npy_writer.h"
#include "tests/temp_dir.h"

namespace amn {
namespace {

namespace fs = std::filesystem;

using test::InChild;
using test::TempDir;

void WriteNpy(const fs::path& path, size_t n) { ASSERT_TRUE(test::WriteF32Npy(path, n)); }

// 6M elements: 6 chunks of 4 MiB (F32 in, BF16 out: elements per chunk are
// bounded by the input size). With one thread, when the callback runs after
// chunk 0 the worker may be reading chunk 2, never chunk 3 (its ring slot is
// freed after the callback), so chunks 3..5 read the changed file.
constexpr size_t kElements = size_t{6} << 20;

// Maps `path` (two pages), truncates it to nothing and reads its second page.
int ReadAfterTruncate(const fs::path& path, bool guard, bool fault_elsewhere) {
  const long page = sysconf(_SC_PAGESIZE);
  const int fd = open(path.c_str(), O_RDWR);
  std::vector<char> data(static_cast<size_t>(2 * page), 'x');
  if (fd < 0 || write(fd, data.data(), data.size()) != static_cast<ssize_t>(data.size())) return 2;
  auto* map = static_cast<volatile char*>(mmap(nullptr, 2 * page, PROT_READ, MAP_PRIVATE, fd, 0));
  if (map == MAP_FAILED) return 2;
  // A second mapping of the same file, never guarded.
  auto* other = static_cast<volatile char*>(mmap(nullptr, 2 * page, PROT_READ, MAP_PRIVATE, fd, 0));
  formats::MappingGuard g;
  if (guard) g = formats::MappingGuard::Register(const_cast<char*>(map), 2 * page);
  if (guard && !g.active()) return 3;
  if (ftruncate(fd, 0) != 0) return 2;
  const char c = fault_elsewhere ? other[page] : map[page];  // SIGBUS unless guarded
  return c == 0 && g.faulted() ? 0 : 4;
}

TEST(SigbusGuard, UnguardedReadOfATruncatedMapDiesOfSigbus) {
  TempDir dir;
  const fs::path file = dir.path() / "mapped";
  std::ofstream(file).close();
  EXPECT_EQ(InChild([&] { return ReadAfterTruncate(file, false, false); }), 128 + SIGBUS);
}

TEST(SigbusGuard, GuardedReadSeesZerosAndReportsTheFault) {
  TempDir dir;
  const fs::path file = dir.path() / "mapped";
  std::ofstream(file).close();
  EXPECT_EQ(InChild([&] { return ReadAfterTruncate(file, true, false); }), 0);
}

TEST(SigbusGuard, FaultsOutsideGuardedRangesStillDie) {
  TempDir dir;
  const fs::path file = dir.path() / "mapped";
  std::ofstream(file).close();
  EXPECT_EQ(InChild([&] { return ReadAfterTruncate(file, true, true); }), 128 + SIGBUS);
}

TEST(SigbusGuard, HandlerIsRestoredAfterTheLastGuard) {
  struct sigaction before = {};
  ASSERT_EQ(sigaction(SIGBUS, nullptr, &before), 0);
  int x = 0;
  {
    formats::MappingGuard g = formats::MappingGuard::Register(&x, sizeof(x));
    ASSERT_TRUE(g.active());
    EXPECT_FALSE(g.faulted());
    struct sigaction during = {};
    ASSERT_EQ(sigaction(SIGBUS, nullptr, &during), 0);
    EXPECT_NE(during.sa_sigaction, before.sa_sigaction);
  }
  struct sigaction after = {};
  ASSERT_EQ(sigaction(SIGBUS, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

// Remember an .npy converted to BF16 (gathered from a map, or read whole
// without one), or kept as F32 (`to` empty: copied file to file), while
// `change` alters the input after the first chunk.
Status RememberWhileChanging(const fs::path& in, const fs::path& out, bool use_mmap,
                             void (*change)(const fs::path&),
                             std::optional<ElemType> to = ElemType::kBf16) {
  auto model = Model::Open(in);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return model.status();
  RememberOptions options;
  options.to = to;
  options.threads = 1;
  options.use_mmap = use_mmap;
  bool changed = false;
  options.progress = [&](const RememberProgress&) {
    if (!changed) change(in);
    changed = true;
  };
  return model->Remember(out, options);
}

void Truncate(const fs::path& in) { ASSERT_EQ(truncate(in.c_str(), 128), 0); }

void RewriteInPlace(const fs::path& in) {
  const int fd = open(in.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::vector<char> junk(4096, 0x7f);
  ASSERT_EQ(pwrite(fd, junk.data(), junk.size(), 1 << 24), static_cast<ssize_t>(junk.size()));
  close(fd);
}

TEST(InputChange, TruncatedWhileMappedIsAnErrorNamingTheFile) {
  TempDir dir;
  const fs::path in = dir.path() / "big.npy";
  WriteNpy(in, kElements);
  const Status status = RememberWhileChanging(in, dir.path() / "out.safetensors", true, Truncate);
  EXPECT_EQ(status.code(), StatusCode::kTruncated) << status.ToString();
  EXPECT_NE(status.message().find(in.string()), std::string::npos) << status.ToString();
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{"big.npy"});
}

TEST(InputChange, TruncatedWithoutMmapIsAnErrorNamingTheFile) {
  TempDir dir;
  const fs::path in = dir.path() / "big.npy";
  WriteNpy(in, kElements);
  const Status status = RememberWhileChanging(in, dir.path() / "out.safetensors", false, Truncate);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find(in.string()), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("changed while it was being read"), std::string::npos)
      << status.ToString();
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{"big.npy"});
}

TEST(InputChange, RewrittenInPlaceIsAnErrorNamingTheFile) {
  for (const bool use_mmap : {true, false}) {
    SCOPED_TRACE(use_mmap ? "mmap" : "no mmap");
    TempDir dir;
    const fs::path in = dir.path() / "big.npy";
    WriteNpy(in, kElements);
    const Status status =
        RememberWhileChanging(in, dir.path() / "out.safetensors", use_mmap, RewriteInPlace);
    EXPECT_EQ(status.code(), StatusCode::kIo) << status.ToString();
    EXPECT_NE(status.message().find(in.string()), std::string::npos) << status.ToString();
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{"big.npy"});
  }
}

// Kept F32 goes file to file (copy_file_range, forced: this machine's file
// system would not choose it): a copy that meets the shrunk end stops short
// and the read after it reports the truncation; a rewrite shows in the
// file's stamp.
TEST(InputChange, ChangedWhileCopiedFileToFileIsAnErrorNamingTheFile) {
  ::setenv("AMN_COPY_FILE_RANGE", "1", 1);
  struct Unset {
    ~Unset() { ::unsetenv("AMN_COPY_FILE_RANGE"); }
  } unset;
  for (void (*change)(const fs::path&) : {Truncate, RewriteInPlace}) {
    SCOPED_TRACE(change == Truncate ? "truncated" : "rewritten");
    TempDir dir;
    const fs::path in = dir.path() / "big.npy";
    WriteNpy(in, kElements);
    const Status status =
        RememberWhileChanging(in, dir.path() / "out.safetensors", true, change, std::nullopt);
    EXPECT_EQ(status.code(), change == Truncate ? StatusCode::kTruncated : StatusCode::kIo)
        << status.ToString();
    EXPECT_NE(status.message().find(in.string()), std::string::npos) << status.ToString();
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{"big.npy"});
  }
}

TEST(InputChange, UnchangedInputGivesTheSameBytesWithAndWithoutMmap) {
  TempDir dir;
  const fs::path in = dir.path() / "big.npy";
  WriteNpy(in, size_t{1} << 20);
  auto model = Model::Open(in);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  RememberOptions options;
  options.to = ElemType::kBf16;
  ASSERT_TRUE(model->Remember(dir.path() / "mapped.safetensors", options).ok());
  options.use_mmap = false;
  ASSERT_TRUE(model->Remember(dir.path() / "read.safetensors", options).ok());
  const std::vector<uint8_t> bytes_a = test::ReadBytes(dir.path() / "mapped.safetensors");
  const std::vector<uint8_t> bytes_b = test::ReadBytes(dir.path() / "read.safetensors");
  ASSERT_GT(bytes_a.size(), size_t{2} << 20);
  EXPECT_EQ(bytes_a, bytes_b);
  // 3.0f is BF16 0x4040: element 6 of the gathered array.
  const size_t data = 8 + (bytes_a[0] | bytes_a[1] << 8);
  EXPECT_EQ(bytes_a[data + 12], 0x40);
  EXPECT_EQ(bytes_a[data + 13], 0x40);
}

}  // namespace
}  // namespace amn
