// copy_file_range(2) in the remember engine: the helper's loop over partial
// copies and its early stops (formats/file_range_copy.h), where it is chosen
// (CopyRangeAvoidsCopy, the environment variables), and WriteShard's output
// with tensors copied file to file (forced with CopyRangeUse::kAlways, as
// this machine's ext4 or tmpfs would not choose it), with every kind of
// failure forced through EngineOptions::copy_range, with the copy turned
// off, and as chosen by default, by both writers (the ring and the mapped
// one) at -j 1 and -j 3: always the bytes worked out here from the input
// (header, ranges, zero padding, BF16 as the top half of F32 values that
// BF16 holds exactly).
#include "formats/file_range_copy.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "formats/remember_engine.h"
#include "tests/cli_files.h"
#include "tests/engine_shard_case.h"

namespace amn::formats {
namespace {

namespace fs = std::filesystem;

using test::ReadBytes;  // tests/fixtures.h, through tests/cli_files.h
using test::TempDir;  // tests/cli_files.h
using shard_case::Compare;  // tests/engine_shard_case.h
using shard_case::MakeCase;
using shard_case::Pattern;
using shard_case::RunShard;
using shard_case::ShardCase;
using shard_case::WriteFile;

// --- stand-ins for the system call ------------------------------------------

std::atomic<int> g_calls{0};

ssize_t Counting(int in, off64_t* in_off, int out, off64_t* out_off, size_t n, unsigned flags) {
  ++g_calls;
  return SystemCopyFileRange(in, in_off, out, out_off, n, flags);
}
ssize_t AlwaysExdev(int, off64_t*, int, off64_t*, size_t, unsigned) {
  ++g_calls;
  errno = EXDEV;
  return -1;
}
ssize_t AlwaysEnosys(int, off64_t*, int, off64_t*, size_t, unsigned) {
  ++g_calls;
  errno = ENOSYS;
  return -1;
}
// The first call copies 10 bytes (fewer when asked for fewer), every later
// one fails with EIO.
ssize_t TenThenEio(int in, off64_t* in_off, int out, off64_t* out_off, size_t n, unsigned flags) {
  if (g_calls++ == 0) return SystemCopyFileRange(in, in_off, out, out_off, std::min<size_t>(n, 10), flags);
  errno = EIO;
  return -1;
}
// Every odd call is interrupted, every even one copies at most 3 bytes.
ssize_t TinyAndInterrupted(int in, off64_t* in_off, int out, off64_t* out_off, size_t n,
                           unsigned flags) {
  if (g_calls++ % 2 == 0) {
    errno = EINTR;
    return -1;
  }
  return SystemCopyFileRange(in, in_off, out, out_off, std::min<size_t>(n, 3), flags);
}
// As if the input had ended.
ssize_t NothingCopied(int, off64_t*, int, off64_t*, size_t, unsigned) {
  ++g_calls;
  return 0;
}

// --- CopyRangeAvoidsCopy, CopyRangeUseFromEnvironment ----------------------

// statfs(2) f_type values, from the statfs(2) manual page.
constexpr int64_t kExt4 = 0xEF53, kTmpfs = 0x01021994, kNfs = 0x6969, kCifs = 0xFF534D42,
                  kSmb2 = 0xFE534D42, kCeph = 0x00C36400, kBtrfs = 0x9123683E,
                  kXfs = 0x58465342, kBcachefs = 0xCA451A4E, kOcfs2 = 0x7461636F,
                  kOverlay = 0x794C7630, kFuse = 0x65735546;

TEST(CopyRangeAvoidsCopy, NetworkFileSystemsCopyOnTheServerAtAnyOffset) {
  for (const int64_t fs : {kNfs, kCifs, kSmb2, kCeph}) {
    SCOPED_TRACE(fs);
    EXPECT_TRUE(CopyRangeAvoidsCopy(fs, fs, 0, 0, 4096));
    EXPECT_TRUE(CopyRangeAvoidsCopy(fs, fs, 1000, 3368, 4096));
    EXPECT_TRUE(CopyRangeAvoidsCopy(fs, fs, 1000, 3368, 0));  // no block size needed
  }
}

TEST(CopyRangeAvoidsCopy, ReflinkFileSystemsOnlyWhereBothOffsetsAreBlockAligned) {
  for (const int64_t fs : {kBtrfs, kXfs, kBcachefs, kOcfs2}) {
    SCOPED_TRACE(fs);
    EXPECT_TRUE(CopyRangeAvoidsCopy(fs, fs, 0, 0, 4096));
    EXPECT_TRUE(CopyRangeAvoidsCopy(fs, fs, 4096 * 3, 4096 * 7, 4096));
    EXPECT_TRUE(CopyRangeAvoidsCopy(fs, fs, 65536, 131072, 65536));
    EXPECT_FALSE(CopyRangeAvoidsCopy(fs, fs, 1000, 3368, 4096));  // an NPZ member into safetensors
    EXPECT_FALSE(CopyRangeAvoidsCopy(fs, fs, 4096, 4096 + 3368, 4096));  // the output's only
    EXPECT_FALSE(CopyRangeAvoidsCopy(fs, fs, 8192 + 64, 8192, 4096));    // the input's only
    EXPECT_FALSE(CopyRangeAvoidsCopy(fs, fs, 4096, 4096, 65536));  // aligned to 4 KiB, not 64
    EXPECT_FALSE(CopyRangeAvoidsCopy(fs, fs, 0, 0, 0));  // fstatfs failed: no block size
  }
}

TEST(CopyRangeAvoidsCopy, PageCacheCopiesAndMixedPairsAreNot) {
  // The kernel copies the bytes in the page cache on these, aligned or not.
  for (const int64_t fs : {kExt4, kTmpfs, kOverlay, kFuse, int64_t{0}}) {
    SCOPED_TRACE(fs);
    EXPECT_FALSE(CopyRangeAvoidsCopy(fs, fs, 0, 0, 4096));
    EXPECT_FALSE(CopyRangeAvoidsCopy(fs, fs, 1000, 3368, 4096));
  }
  // Two file systems: EXDEV or a copy in the page cache, never a shared
  // extent or a server's copy, even between two of the same kind's types.
  EXPECT_FALSE(CopyRangeAvoidsCopy(kXfs, kBtrfs, 0, 0, 4096));
  EXPECT_FALSE(CopyRangeAvoidsCopy(kNfs, kCifs, 0, 0, 4096));
  EXPECT_FALSE(CopyRangeAvoidsCopy(kNfs, kExt4, 0, 0, 4096));
  EXPECT_FALSE(CopyRangeAvoidsCopy(kExt4, kXfs, 0, 0, 4096));
  EXPECT_FALSE(CopyRangeAvoidsCopy(kTmpfs, kBtrfs, 0, 0, 4096));
}

// Sets (or with nullptr unsets) both variables for one scope.
class CopyVariables {
 public:
  CopyVariables(const char* no_copy, const char* copy) {
    Set("AMN_NO_COPY_FILE_RANGE", no_copy);
    Set("AMN_COPY_FILE_RANGE", copy);
  }
  ~CopyVariables() {
    ::unsetenv("AMN_NO_COPY_FILE_RANGE");
    ::unsetenv("AMN_COPY_FILE_RANGE");
  }

 private:
  static void Set(const char* name, const char* value) {
    if (value == nullptr) {
      ::unsetenv(name);
    } else {
      ::setenv(name, value, 1);
    }
  }
};

TEST(CopyRangeUseFromEnvironment, OffWinsThenOnThenTheDefault) {
  struct Case {
    const char* no_copy;
    const char* copy;
    CopyRangeUse use;
  };
  for (const Case& k : {Case{nullptr, nullptr, CopyRangeUse::kWhereItAvoidsCopy},
                        Case{"", "", CopyRangeUse::kWhereItAvoidsCopy},
                        Case{"0", "0", CopyRangeUse::kWhereItAvoidsCopy},
                        Case{"1", nullptr, CopyRangeUse::kNever},
                        Case{"yes", "0", CopyRangeUse::kNever},
                        Case{nullptr, "1", CopyRangeUse::kAlways},
                        Case{"0", "1", CopyRangeUse::kAlways},
                        Case{"", "on", CopyRangeUse::kAlways},
                        Case{"1", "1", CopyRangeUse::kNever}}) {
    SCOPED_TRACE(std::string(k.no_copy ? k.no_copy : "(unset)") + " " + (k.copy ? k.copy : "(unset)"));
    const CopyVariables set(k.no_copy, k.copy);
    EXPECT_EQ(CopyRangeUseFromEnvironment(), k.use);
  }
}

// --- CopyFileRange ----------------------------------------------------------

struct Fds {
  Fds(const fs::path& in_path, const fs::path& out_path, int out_flags = 0) {
    in = ::open(in_path.c_str(), O_RDONLY | O_CLOEXEC);
    out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | out_flags, 0644);
  }
  ~Fds() {
    ::close(in);
    ::close(out);
  }
  int in = -1, out = -1;
};

TEST(CopyFileRange, CopiesTheRangeAtTheOutputPosition) {
  TempDir dir;
  const std::vector<uint8_t> input = Pattern(100000);
  WriteFile(dir.path() / "in", input);
  {
    Fds fds(dir.path() / "in", dir.path() / "out");
    ASSERT_GE(fds.in, 0);
    ASSERT_EQ(::write(fds.out, "head", 4), 4);
    const RangeCopy copy = CopyFileRange(fds.in, 1234, fds.out, 70000);
    EXPECT_EQ(copy.copied, 70000u);
    EXPECT_EQ(copy.error, 0);
    EXPECT_TRUE(copy.complete(70000));
    EXPECT_EQ(::lseek(fds.out, 0, SEEK_CUR), 4 + 70000);  // the position moved past it
    ASSERT_EQ(::write(fds.out, "tail", 4), 4);
    EXPECT_EQ(::lseek(fds.in, 0, SEEK_CUR), 0);  // the input's position is left alone
  }
  std::vector<uint8_t> want = {'h', 'e', 'a', 'd'};
  want.insert(want.end(), input.begin() + 1234, input.begin() + 1234 + 70000);
  want.insert(want.end(), {'t', 'a', 'i', 'l'});
  EXPECT_EQ(ReadBytes(dir.path() / "out"), want);
}

// At an output offset (the mapped writer's workers): the output's position
// does not move, and ranges land where they are asked, in any order.
TEST(CopyFileRange, AtAnOffsetLeavesThePositionAlone) {
  TempDir dir;
  const std::vector<uint8_t> input = Pattern(100000);
  WriteFile(dir.path() / "in", input);
  {
    Fds fds(dir.path() / "in", dir.path() / "out");
    ASSERT_GE(fds.in, 0);
    RangeCopy copy = CopyFileRangeAt(fds.in, 50000, fds.out, 40000, 30000);
    EXPECT_TRUE(copy.complete(30000));
    copy = CopyFileRangeAt(fds.in, 7, fds.out, 3, 20, TinyAndInterrupted);
    EXPECT_TRUE(copy.complete(20));
    copy = CopyFileRangeAt(fds.in, 27, fds.out, 23, 39977);
    EXPECT_TRUE(copy.complete(39977));
    EXPECT_EQ(::lseek(fds.out, 0, SEEK_CUR), 0);
  }
  std::vector<uint8_t> want(3, 0);
  want.insert(want.end(), input.begin() + 7, input.begin() + 40004);
  want.insert(want.end(), input.begin() + 50000, input.begin() + 80000);
  EXPECT_EQ(Compare(ReadBytes(dir.path() / "out"), want), "same");
}

TEST(CopyFileRange, LoopsOverShortAndInterruptedCalls) {
  TempDir dir;
  const std::vector<uint8_t> input = Pattern(1000);
  WriteFile(dir.path() / "in", input);
  {
    Fds fds(dir.path() / "in", dir.path() / "out");
    g_calls = 0;
    const RangeCopy copy = CopyFileRange(fds.in, 5, fds.out, 20, TinyAndInterrupted);
    EXPECT_EQ(copy.copied, 20u);
    EXPECT_EQ(copy.error, 0);
    EXPECT_EQ(g_calls, 14);  // 7 copies of at most 3 bytes, each after an EINTR
  }
  EXPECT_EQ(ReadBytes(dir.path() / "out"), std::vector<uint8_t>(input.begin() + 5, input.begin() + 25));
}

TEST(CopyFileRange, StopsAtAFailureAndSaysHowFarItGot) {
  TempDir dir;
  WriteFile(dir.path() / "in", Pattern(1000));
  Fds fds(dir.path() / "in", dir.path() / "out");
  g_calls = 0;
  RangeCopy copy = CopyFileRange(fds.in, 0, fds.out, 500, AlwaysExdev);
  EXPECT_EQ(copy.copied, 0u);
  EXPECT_EQ(copy.error, EXDEV);
  EXPECT_FALSE(copy.complete(500));
  EXPECT_EQ(g_calls, 1);
  g_calls = 0;
  copy = CopyFileRange(fds.in, 0, fds.out, 500, TenThenEio);
  EXPECT_EQ(copy.copied, 10u);
  EXPECT_EQ(copy.error, EIO);
  g_calls = 0;
  copy = CopyFileRange(fds.in, 0, fds.out, 500, NothingCopied);
  EXPECT_EQ(copy.copied, 0u);
  EXPECT_EQ(copy.error, 0);
  EXPECT_EQ(g_calls, 1);
  EXPECT_EQ(::lseek(fds.out, 0, SEEK_CUR), 10);  // only what TenThenEio copied
}

// The kernel's own refusals and short copies, which the engine falls back on.
TEST(CopyFileRange, RealCallsThatStopEarly) {
  TempDir dir;
  WriteFile(dir.path() / "in", Pattern(1000));
  {  // the input ends 100 bytes into the range: what is there, then nothing
    Fds fds(dir.path() / "in", dir.path() / "out");
    const RangeCopy copy = CopyFileRange(fds.in, 900, fds.out, 300);
    EXPECT_EQ(copy.copied, 100u);
    EXPECT_EQ(copy.error, 0);
  }
  {  // an O_APPEND output is refused (EBADF)
    Fds fds(dir.path() / "in", dir.path() / "append", O_APPEND);
    const RangeCopy copy = CopyFileRange(fds.in, 0, fds.out, 300);
    EXPECT_EQ(copy.copied, 0u);
    EXPECT_NE(copy.error, 0);
  }
  {  // so is a pipe (EINVAL)
    int pipe_fds[2];
    ASSERT_EQ(::pipe(pipe_fds), 0);
    const int in = ::open((dir.path() / "in").c_str(), O_RDONLY | O_CLOEXEC);
    const RangeCopy copy = CopyFileRange(in, 0, pipe_fds[1], 300);
    EXPECT_EQ(copy.copied, 0u);
    EXPECT_NE(copy.error, 0);
    ::close(in);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
  }
}

// --- WriteShard ------------------------------------------------------------

// Every kept chunk through `call` (kAlways), whatever the temporary
// directory's file system would choose.
EngineOptions Options(unsigned threads, CopyRangeCall call,
                      std::optional<OutputWriter> writer = std::nullopt) {
  EngineOptions options;
  options.threads = threads;
  options.chunk_bytes = 64;  // many chunks: 16 + 6 + 79 copied
  options.copy_range = call;
  options.copy_range_use = CopyRangeUse::kAlways;
  options.writer = writer;
  return options;
}
constexpr int kCopiedChunks = 16 + 6 + 79;

// Both writers: the ring's writing thread copies in order; the mapped
// writer's workers copy at each chunk's offset, in any order.
constexpr OutputWriter kWriters[] = {OutputWriter::kRing, OutputWriter::kMapped};
const char* WriterName(OutputWriter w) { return w == OutputWriter::kRing ? "ring" : "mapped"; }

TEST(WriteShardCopy, CopiesFileToFileWithTheSameBytes) {
  TempDir dir;
  const ShardCase c = MakeCase(dir.path() / "in");
  ASSERT_EQ(c.expected.size(), 8 + 6656u);
  for (const OutputWriter writer : kWriters) {
    for (unsigned threads : {1u, 3u}) {
      SCOPED_TRACE(std::string(WriterName(writer)) + " -j " + std::to_string(threads));
      g_calls = 0;
      EngineOptions options = Options(threads, Counting, writer);
      OutputWriter used = OutputWriter::kRing;
      options.writer_used = &used;
      ASSERT_TRUE(RunShard(c, dir.path() / "out", options).ok());
      EXPECT_EQ(Compare(ReadBytes(dir.path() / "out"), c.expected), "same");
      EXPECT_EQ(g_calls, kCopiedChunks);  // every kCopy chunk, one call each
      EXPECT_EQ(used, writer) << "the temporary directory's file system refused fallocate?";
      ASSERT_TRUE(RunShard(c, dir.path() / "off", Options(threads, nullptr, writer)).ok());
      EXPECT_EQ(Compare(ReadBytes(dir.path() / "off"), c.expected), "same");
    }
  }
}

TEST(WriteShardCopy, FallsBackToReadAndWrite) {
  TempDir dir;
  const ShardCase c = MakeCase(dir.path() / "in");
  struct Case {
    const char* name;
    CopyRangeCall call;
    int calls_one_thread;  // at -j 1 the first failure ends the copying
  };
  for (const Case& k : {Case{"EXDEV", AlwaysExdev, 1}, Case{"ENOSYS", AlwaysEnosys, 1},
                        Case{"10 bytes then EIO", TenThenEio, 2},
                        Case{"nothing copied", NothingCopied, 1},
                        Case{"tiny and interrupted", TinyAndInterrupted, -1}}) {
    for (const OutputWriter writer : kWriters) {
      for (unsigned threads : {1u, 3u}) {
        SCOPED_TRACE(std::string(k.name) + " " + WriterName(writer) + " -j " + std::to_string(threads));
        g_calls = 0;
        ASSERT_TRUE(RunShard(c, dir.path() / "out", Options(threads, k.call, writer)).ok());
        EXPECT_EQ(Compare(ReadBytes(dir.path() / "out"), c.expected), "same");
        if (threads == 1 && k.calls_one_thread >= 0) {
          EXPECT_EQ(g_calls, k.calls_one_thread);
        }
      }
    }
  }
}

TEST(WriteShardCopy, OffWithTheEnvironmentVariableOrWhenChunksAreWatched) {
  TempDir dir;
  const ShardCase c = MakeCase(dir.path() / "in");
  EngineOptions from_environment = Options(2, Counting);
  from_environment.copy_range_use.reset();
  {
    const CopyVariables set("1", "1");  // off wins over on
    g_calls = 0;
    ASSERT_TRUE(RunShard(c, dir.path() / "out", from_environment).ok());
  }
  EXPECT_EQ(Compare(ReadBytes(dir.path() / "out"), c.expected), "same");
  EXPECT_EQ(g_calls, 0);

  {
    const CopyVariables set("0", "1");  // "0" leaves it on; the second forces it
    g_calls = 0;
    from_environment.threads = 1;
    ASSERT_TRUE(RunShard(c, dir.path() / "out", from_environment).ok());
  }
  EXPECT_EQ(g_calls, kCopiedChunks);

  // kNever in the options, whatever the environment says.
  {
    const CopyVariables set(nullptr, "1");
    EngineOptions never = Options(1, Counting);
    never.copy_range_use = CopyRangeUse::kNever;
    g_calls = 0;
    ASSERT_TRUE(RunShard(c, dir.path() / "out", never).ok());
  }
  EXPECT_EQ(Compare(ReadBytes(dir.path() / "out"), c.expected), "same");
  EXPECT_EQ(g_calls, 0);

  // on_chunk needs every chunk's bytes (NPZ output's CRC-32): no copying.
  EngineOptions watched = Options(1, Counting);
  uint64_t seen = 0;
  watched.on_chunk = [&](size_t, std::span<const std::byte> bytes) { seen += bytes.size(); };
  g_calls = 0;
  ASSERT_TRUE(RunShard(c, dir.path() / "out", watched).ok());
  EXPECT_EQ(Compare(ReadBytes(dir.path() / "out"), c.expected), "same");
  EXPECT_EQ(g_calls, 0);
  EXPECT_EQ(seen, 1000u + 200 + 333 + 5000);
}

// By default (no variable set) the engine copies file to file only where
// CopyRangeAvoidsCopy says the kernel need not move the bytes. The case's
// kept tensors sit at offsets that are not block-aligned, so only a network
// file system would take them; on ext4 or tmpfs none is copied. The bytes
// are the same either way.
TEST(WriteShardCopy, DefaultChoosesByFileSystem) {
  TempDir dir;
  const ShardCase c = MakeCase(dir.path() / "in");
  const CopyVariables set(nullptr, nullptr);
  const int fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const FileSystemKind here = FileSystemOf(fd);
  ::close(fd);
  ASSERT_NE(here.type, 0) << "fstatfs failed";
  // Misaligned (the output's data starts after an 8-byte header) and aligned.
  const bool misaligned_pays = CopyRangeAvoidsCopy(here.type, here.type, 1, 9, here.block_size);
  const bool page_cache_only = !CopyRangeAvoidsCopy(here.type, here.type, 0, 0, here.block_size);
  for (const OutputWriter writer : kWriters) {
    for (unsigned threads : {1u, 3u}) {
      SCOPED_TRACE(std::string(WriterName(writer)) + " -j " + std::to_string(threads));
      EngineOptions options = Options(threads, Counting, writer);
      options.copy_range_use.reset();
      g_calls = 0;
      ASSERT_TRUE(RunShard(c, dir.path() / "out", options).ok());
      EXPECT_EQ(Compare(ReadBytes(dir.path() / "out"), c.expected), "same");
      if (page_cache_only) {
        EXPECT_EQ(g_calls, 0);  // ext4, tmpfs: pread + write
      }
      if (misaligned_pays) {
        EXPECT_EQ(g_calls, kCopiedChunks);  // a network file system
      }
    }
  }
}

// An input cut short after planning: the copy stops at its end and the read
// that follows reports it, rather than leaving the rest of the output unset.
TEST(WriteShardCopy, ShrunkInputIsAnError) {
  TempDir dir;
  const ShardCase c = MakeCase(dir.path() / "in");
  fs::resize_file(dir.path() / "in", 500);  // inside tensor "a"
  for (CopyRangeCall call : {Counting, static_cast<CopyRangeCall>(nullptr)}) {
    for (const OutputWriter writer : kWriters) {
      for (unsigned threads : {1u, 3u}) {
        SCOPED_TRACE(std::string(WriterName(writer)) + " -j " + std::to_string(threads));
        const Status status = RunShard(c, dir.path() / "out", Options(threads, call, writer));
        EXPECT_FALSE(status.ok());
        EXPECT_EQ(status.code(), StatusCode::kTruncated) << status.message();
      }
    }
  }
}

}  // namespace
}  // namespace amn::formats
