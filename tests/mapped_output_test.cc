// WriteShard's mapped writer (formats/mapped_output.h): which writer runs
// (the ring by default at any -j; EngineOptions::writer, AMN_OUTPUT_WRITER
// and on_chunk), the ring taking over with the same bytes where the output
// cannot be mapped (fallocate refused, a write-only or non-empty file), no
// room being a clean error, progress and cancellation from the calling
// thread; and its map of the output on its own: a store to a page the file
// lost is reported, not fatal (in forked children, so a signal death is
// observed, not suffered). Bytes are always those worked out from the input
// (tests/engine_shard_case.h).
#include "formats/mapped_output.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "formats/remember_engine.h"
#include "tests/cli_files.h"
#include "tests/engine_shard_case.h"
#include "tests/in_child.h"

namespace amn::formats {
namespace {

namespace fs = std::filesystem;

using shard_case::Compare;  // tests/engine_shard_case.h
using shard_case::MakeCase;
using shard_case::RunShard;
using shard_case::ShardCase;
using test::InChild;  // tests/in_child.h
using test::ReadBytes;  // tests/fixtures.h, through tests/cli_files.h
using test::TempDir;  // tests/cli_files.h

// --- stand-ins for fallocate(2) ---------------------------------------------

std::atomic<int> g_fallocate_calls{0};
int g_fallocate_errno = 0;

int Refusing(int, int, off_t, off_t) {
  ++g_fallocate_calls;
  errno = g_fallocate_errno;
  return -1;
}
int Counted(int fd, int mode, off_t offset, off_t len) {
  ++g_fallocate_calls;
  return SystemFallocate(fd, mode, offset, len);
}

// The case's engine options: chunks of 64 bytes (about 100 of them, the
// F32 -> BF16 tensor among them), threads as given, which writer ran
// reported into `used`.
EngineOptions Options(unsigned threads, OutputWriter* used) {
  EngineOptions options;
  options.threads = threads;
  options.chunk_bytes = 64;
  options.writer_used = used;
  options.fallocate = Counted;
  return options;
}

// Sets AMN_OUTPUT_WRITER for one scope.
class WriterVariable {
 public:
  explicit WriterVariable(const char* value) { ::setenv("AMN_OUTPUT_WRITER", value, 1); }
  ~WriterVariable() { ::unsetenv("AMN_OUTPUT_WRITER"); }
};

// Runs the case and returns the writer that ran, checking the bytes.
OutputWriter Ran(const ShardCase& c, const fs::path& out, EngineOptions options) {
  auto used = static_cast<OutputWriter>(-1);  // neither, unless WriteShard says
  options.writer_used = &used;
  const Status status = RunShard(c, out, options);
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(Compare(ReadBytes(out), c.expected), "same");
  return used;
}

TEST(MappedWriter, ChosenByOptionAndEnvironment) {
  TempDir dir;
  const ShardCase c = MakeCase(dir.path() / "in");
  const fs::path out = dir.path() / "out";
  ::unsetenv("AMN_OUTPUT_WRITER");
  EXPECT_EQ(Ran(c, out, Options(1, nullptr)), OutputWriter::kRing);
  EXPECT_EQ(Ran(c, out, Options(3, nullptr)), OutputWriter::kRing);  // the default at any -j
  {
    WriterVariable env("ring");
    EXPECT_EQ(Ran(c, out, Options(3, nullptr)), OutputWriter::kRing);
  }
  {
    WriterVariable env("mapped");
    EXPECT_EQ(Ran(c, out, Options(1, nullptr)), OutputWriter::kMapped);
    EngineOptions forced = Options(1, nullptr);
    forced.writer = OutputWriter::kRing;  // the option wins over the variable
    EXPECT_EQ(Ran(c, out, forced), OutputWriter::kRing);
  }
  {
    WriterVariable env("bogus");  // neither: the default
    EXPECT_EQ(Ran(c, out, Options(3, nullptr)), OutputWriter::kRing);
  }
  // on_chunk needs the bytes in file order (NPZ's CRC-32): always the ring.
  EngineOptions watched = Options(3, nullptr);
  watched.writer = OutputWriter::kMapped;
  uint64_t seen = 0;
  watched.on_chunk = [&](size_t, std::span<const std::byte> bytes) { seen += bytes.size(); };
  EXPECT_EQ(Ran(c, out, watched), OutputWriter::kRing);
  EXPECT_EQ(seen, 1000u + 200 + 333 + 5000);
}

TEST(MappedWriter, SameBytesForEveryThreadCount) {
  TempDir dir;
  const ShardCase c = MakeCase(dir.path() / "in");
  for (unsigned threads : {1u, 2u, 3u, 8u, 200u}) {  // 200: more threads than chunks
    SCOPED_TRACE(threads);
    EngineOptions options = Options(threads, nullptr);
    options.writer = OutputWriter::kMapped;
    g_fallocate_calls = 0;
    EXPECT_EQ(Ran(c, dir.path() / "out", options), OutputWriter::kMapped);
    EXPECT_EQ(g_fallocate_calls, 1);
  }
}

// With one thread the calling thread is the worker: every chunk (here its
// file-to-file copies) and every progress call run on it, as -j 1 promises.
std::vector<std::thread::id> g_copy_threads;
ssize_t RecordingCopy(int in, off64_t* in_off, int out, off64_t* out_off, size_t n,
                      unsigned flags) {
  g_copy_threads.push_back(std::this_thread::get_id());
  return SystemCopyFileRange(in, in_off, out, out_off, n, flags);
}

TEST(MappedWriter, OneThreadRunsOnTheCallingThread) {
  TempDir dir;
  const ShardCase c = MakeCase(dir.path() / "in");
  EngineOptions options = Options(1, nullptr);
  options.writer = OutputWriter::kMapped;
  options.copy_range = RecordingCopy;
  options.copy_range_use = CopyRangeUse::kAlways;  // whatever this file system would choose
  std::vector<std::thread::id> progress_threads;
  options.on_progress = [&](uint64_t, size_t) {
    progress_threads.push_back(std::this_thread::get_id());
  };
  g_copy_threads.clear();
  EXPECT_EQ(Ran(c, dir.path() / "out", options), OutputWriter::kMapped);
  EXPECT_EQ(g_copy_threads.size(), 16u + 6 + 79);  // every kept chunk, one call each
  // Every chunk: 16 + 7 converted (16 elements each) + 6 + the empty one + 79.
  EXPECT_EQ(progress_threads.size(), 16u + 7 + 6 + 1 + 79);
  for (const std::thread::id id : g_copy_threads) EXPECT_EQ(id, std::this_thread::get_id());
  for (const std::thread::id id : progress_threads) EXPECT_EQ(id, std::this_thread::get_id());
}

// A file system without fallocate: the ring writes the output instead, with
// the same bytes and nothing of the refused attempt left (the file stays
// empty until the ring writes it).
TEST(MappedWriter, FallocateRefusedFallsBackToTheRing) {
  TempDir dir;
  const ShardCase c = MakeCase(dir.path() / "in");
  for (const int error : {EOPNOTSUPP, ENOSYS, ENODEV, EPERM}) {
    SCOPED_TRACE(std::strerror(error));
    EngineOptions options = Options(3, nullptr);
    options.writer = OutputWriter::kMapped;
    options.fallocate = Refusing;
    g_fallocate_errno = error;
    g_fallocate_calls = 0;
    EXPECT_EQ(Ran(c, dir.path() / "out", options), OutputWriter::kRing);
    EXPECT_EQ(g_fallocate_calls, 1);
  }
}

// No room for the output is the run's error, naming the output.
TEST(MappedWriter, NoRoomIsACleanError) {
  TempDir dir;
  const ShardCase c = MakeCase(dir.path() / "in");
  EngineOptions options = Options(3, nullptr);
  options.writer = OutputWriter::kMapped;
  options.fallocate = Refusing;
  for (const int error : {ENOSPC, EDQUOT}) {
    g_fallocate_errno = error;
    const Status status = RunShard(c, dir.path() / "out", options);
    EXPECT_EQ(status.code(), StatusCode::kIo) << status.ToString();
    EXPECT_NE(status.message().find("cannot reserve 6664 bytes"), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find((dir.path() / "out").string()), std::string::npos);
    EXPECT_NE(status.message().find(std::strerror(error)), std::string::npos);
  }
}

// Outputs the writer cannot map are written by the ring without trying:
// write-only (a shared writable map needs a readable descriptor), opened
// for appending, or not empty.
TEST(MappedWriter, UnmappableOutputsTakeTheRing) {
  TempDir dir;
  const ShardCase c = MakeCase(dir.path() / "in");
  EngineOptions options = Options(3, nullptr);
  options.writer = OutputWriter::kMapped;
  OutputWriter used = OutputWriter::kMapped;
  options.writer_used = &used;
  g_fallocate_calls = 0;
  ASSERT_TRUE(RunShard(c, dir.path() / "wronly", options, O_WRONLY).ok());
  EXPECT_EQ(Compare(ReadBytes(dir.path() / "wronly"), c.expected), "same");
  EXPECT_EQ(used, OutputWriter::kRing);

  used = OutputWriter::kMapped;
  const fs::path longer = dir.path() / "longer";
  {
    std::ofstream junk(longer, std::ios::binary);
    junk << "xyz";
  }
  const int fd = ::open(longer.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const Status status = WriteShard(c.plan, c.plan.shards.front(), fd, longer.string(), options);
  ::close(fd);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(used, OutputWriter::kRing);
  EXPECT_EQ(Compare(ReadBytes(longer), c.expected), "same");
  EXPECT_EQ(g_fallocate_calls, 0);
}

// Progress comes from the calling thread as chunks finish, in any order:
// never backwards, and at the end what the ring reports after its last
// chunk (the header and the data up to the last tensor's end: 8 + 6600
// bytes; the padding after it is not a chunk) and all 5 tensors.
TEST(MappedWriter, ProgressEndsWhereTheRingsDoes) {
  TempDir dir;
  const ShardCase c = MakeCase(dir.path() / "in");
  for (const OutputWriter writer : {OutputWriter::kRing, OutputWriter::kMapped}) {
    EngineOptions options = Options(3, nullptr);
    options.writer = writer;
    std::vector<std::pair<uint64_t, size_t>> calls;
    options.on_progress = [&](uint64_t bytes, size_t tensors) {
      calls.emplace_back(bytes, tensors);
    };
    EXPECT_EQ(Ran(c, dir.path() / "out", options), writer);
    ASSERT_FALSE(calls.empty());
    for (size_t i = 1; i < calls.size(); ++i) {
      EXPECT_GE(calls[i].first, calls[i - 1].first);
      EXPECT_GE(calls[i].second, calls[i - 1].second);
    }
    EXPECT_EQ(calls.back(), (std::pair<uint64_t, size_t>{8 + 1600 + 5000, 5}));
  }
}

TEST(MappedWriter, CancelIsTheRunsError) {
  TempDir dir;
  const ShardCase c = MakeCase(dir.path() / "in");
  const std::atomic<bool> cancel{true};
  EngineOptions options = Options(3, nullptr);
  options.writer = OutputWriter::kMapped;
  options.cancel = &cancel;
  const Status status = RunShard(c, dir.path() / "out", options);
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
}

// --- OutputMap ----------------------------------------------------------------

// Prepares `path` as the mapped writer does (3 pages), takes 2 pages from
// byte 100, cuts the file to nothing (as another process could) and stores
// into them: through OutputMap (guarded), or through a plain shared map of
// the file (unguarded, to show the store faults).
int StoreAfterTruncate(const fs::path& path, bool guarded) {
  const long page = sysconf(_SC_PAGESIZE);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return 2;
  const Result<bool> ready = ReserveForMapping(fd, 3 * page, SystemFallocate, path.string());
  if (!ready.ok() || !*ready) return 3;
  std::optional<OutputMap> map;
  std::byte* bytes = nullptr;
  if (guarded) {
    map.emplace(OutputMap::Map(fd, 3 * page));
    if (!map->mapped()) return 4;
    const std::span<std::byte> pages = map->Prepare(100, 2 * page);
    if (pages.size() != static_cast<size_t>(2 * page)) return 4;
    bytes = pages.data();
    if (!map->Check(path.string()).ok()) return 8;  // nothing faulted yet
  } else {
    void* plain = mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (plain == MAP_FAILED) return 4;
    bytes = static_cast<std::byte*>(plain) + 100;
  }
  if (ftruncate(fd, 0) != 0) return 2;
  std::memset(bytes, 0x5a, 2 * page);  // SIGBUS unless guarded
  if (!guarded) return 5;
  const Status status = map->Check(path.string());
  if (status.code() != StatusCode::kIo) return 6;
  if (status.message().find("memory map") == std::string::npos) return 7;
  return 0;
}

TEST(OutputMap, UnguardedStoreToALostPageDiesOfSigbus) {
  TempDir dir;
  EXPECT_EQ(InChild([&] { return StoreAfterTruncate(dir.path() / "out", false); }), 128 + SIGBUS);
}

TEST(OutputMap, StoreToALostPageIsReportedNotFatal) {
  TempDir dir;
  EXPECT_EQ(InChild([&] { return StoreAfterTruncate(dir.path() / "out", true); }), 0);
}

// Where the kernel can fault pages in ahead (MADV_POPULATE_WRITE, Linux
// 5.14), pages the file does not have are refused up front: the engine
// then writes that chunk with pwrite, which says what is wrong.
TEST(OutputMap, PagesPastTheEndAreRefused) {
  const long page = sysconf(_SC_PAGESIZE);
  void* probe = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(probe, MAP_FAILED);
  const bool populate = madvise(probe, page, 23 /* MADV_POPULATE_WRITE */) == 0;
  munmap(probe, page);
  if (!populate) GTEST_SKIP() << "no MADV_POPULATE_WRITE in this kernel";
  TempDir dir;
  const fs::path path = dir.path() / "out";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  const Result<bool> ready = ReserveForMapping(fd, 4 * page, SystemFallocate, path.string());
  ASSERT_TRUE(ready.ok() && *ready);
  const OutputMap map = OutputMap::Map(fd, 4 * page);
  ASSERT_TRUE(map.mapped());
  EXPECT_EQ(map.Prepare(10, page).size(), static_cast<size_t>(page));
  map.Release(10, page);
  ASSERT_EQ(ftruncate(fd, page), 0);
  EXPECT_EQ(map.Prepare(10, 100).size(), 100u);
  EXPECT_TRUE(map.Prepare(page + 10, page).empty());
  EXPECT_TRUE(map.Prepare(4 * page - 1, 2).empty());  // past the map
  EXPECT_TRUE(map.Check(path.string()).ok());
  ::close(fd);
}

}  // namespace
}  // namespace amn::formats
