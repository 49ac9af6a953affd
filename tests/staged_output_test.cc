// formats/staged_output.h on its own: both ways of writing a file (unnamed,
// hidden partial), what a killed writer leaves and who cleans it, the stale
// shard naming rule, and the free-space check.
#include <fcntl.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "formats/staged_output.h"
#include "tests/temp_dir.h"

namespace amn::formats {
namespace {

namespace fs = std::filesystem;
using Naming = StagedFile::Naming;

using test::TempDir;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void Write(int fd, const std::string& text) {
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
}

TEST(StagedFile, CommitPlacesTheFileAndRefusesToReplaceWithoutOverwrite) {
  for (const Naming naming : {Naming::kUnnamedWherePossible, Naming::kHiddenPartial}) {
    SCOPED_TRACE(naming == Naming::kHiddenPartial ? "hidden partial" : "unnamed");
    TempDir dir;
    const fs::path target = dir.path() / "out.safetensors";
    {
      auto file = StagedFile::Create(target, naming);
      ASSERT_TRUE(file.ok()) << file.status().ToString();
      Write(file->fd(), "first");
      ASSERT_TRUE(file->Commit(false).ok());
    }
    EXPECT_EQ(Slurp(target), "first");
    {
      auto file = StagedFile::Create(target, naming);
      ASSERT_TRUE(file.ok());
      Write(file->fd(), "second");
      EXPECT_EQ(file->Commit(false).code(), StatusCode::kInvalidArgument);
    }
    EXPECT_EQ(Slurp(target), "first");
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{"out.safetensors"});
    {
      auto file = StagedFile::Create(target, naming);
      ASSERT_TRUE(file.ok());
      Write(file->fd(), "third");
      ASSERT_TRUE(file->Commit(true).ok());
    }
    EXPECT_EQ(Slurp(target), "third");
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{"out.safetensors"});
  }
}

TEST(StagedFile, DestroyedWithoutCommitLeavesNothing) {
  for (const Naming naming : {Naming::kUnnamedWherePossible, Naming::kHiddenPartial}) {
    TempDir dir;
    {
      auto file = StagedFile::Create(dir.path() / "out.safetensors", naming);
      ASSERT_TRUE(file.ok());
      Write(file->fd(), "partial");
    }
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{});
  }
}

// A child writes a partial, reports on `ready`, then waits to be killed.
pid_t WriterThatWaits(const fs::path& dir, int ready, bool directory) {
  const pid_t pid = fork();
  if (pid == 0) {
    bool ok = false;
    if (directory) {
      auto staged = StagedDir::Create(dir / "model", false);
      ok = staged.ok() && std::ofstream(staged->path() / "model.safetensors") << "partial";
      if (ok) {
        (void)!write(ready, "x", 1);
        pause();
      }
    } else {
      auto staged = StagedFile::Create(dir / "out.safetensors", Naming::kHiddenPartial);
      ok = staged.ok() && write(staged->fd(), "partial", 7) == 7;
      if (ok) {
        (void)!write(ready, "x", 1);
        pause();
      }
    }
    _exit(1);
  }
  return pid;
}

TEST(RemoveOrphanedPartials, KeepsPartialsOfLiveWritersAndRemovesDeadOnes) {
  for (const bool directory : {false, true}) {
    SCOPED_TRACE(directory ? "directory" : "file");
    TempDir dir;
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    const pid_t writer = WriterThatWaits(dir.path(), pipe_fds[1], directory);
    close(pipe_fds[1]);  // a writer that fails closes the last write end
    char c = 0;
    const ssize_t got = read(pipe_fds[0], &c, 1);
    close(pipe_fds[0]);
    ASSERT_EQ(got, 1) << "the writer failed";
    const std::string partial =
        std::string(directory ? ".model" : ".out.safetensors") + ".amn-partial-" + std::to_string(writer);
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{partial});
    RemoveOrphanedPartials(dir.path());  // the writer is alive
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{partial});
    kill(writer, SIGKILL);
    waitpid(writer, nullptr, 0);
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{partial}) << "SIGKILL leaves the partial";
    RemoveOrphanedPartials(dir.path());
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{});
  }
}

TEST(RemoveOrphanedPartials, LeavesEverythingElseAlone) {
  TempDir dir;
  for (const char* name : {".amn-partial-", ".x.amn-partial-12a", "x.amn-partial-999999999",
                           ".x.amn-partial", ".notes", "model.safetensors"}) {
    std::ofstream(dir.path() / name) << "keep";
  }
  const std::vector<std::string> before = dir.Entries();
  RemoveOrphanedPartials(dir.path());
  EXPECT_EQ(dir.Entries(), before);
}

TEST(IsStaleShard, SameNamingOnly) {
  const std::vector<std::string> sharded = {"model-00001-of-00002.safetensors",
                                            "model-00002-of-00002.safetensors"};
  EXPECT_TRUE(IsStaleShard("model-00003-of-00003.safetensors", sharded));
  EXPECT_TRUE(IsStaleShard("model-00001-of-00001.safetensors", sharded));
  EXPECT_TRUE(IsStaleShard("model.safetensors", sharded));
  EXPECT_FALSE(IsStaleShard("model-00001-of-00002.safetensors", sharded));  // written now
  EXPECT_FALSE(IsStaleShard("adapter.safetensors", sharded));
  EXPECT_FALSE(IsStaleShard("model-extra.safetensors", sharded));
  EXPECT_FALSE(IsStaleShard("model-1-of-x.safetensors", sharded));
  EXPECT_FALSE(IsStaleShard("other-00001-of-00002.safetensors", sharded));
  EXPECT_FALSE(IsStaleShard("model.safetensors.index.json", sharded));
  EXPECT_FALSE(IsStaleShard("model-00003-of-00003.bin", sharded));
  const std::vector<std::string> single = {"model.safetensors"};
  EXPECT_TRUE(IsStaleShard("model-00001-of-00002.safetensors", single));
  EXPECT_FALSE(IsStaleShard("model.safetensors", single));
  EXPECT_FALSE(IsStaleShard("weights.safetensors", single));
}

TEST(CheckFreeSpace, RefusesMoreThanTheFileSystemHas) {
  TempDir dir;
  struct statvfs vfs {};
  ASSERT_EQ(statvfs(dir.path().c_str(), &vfs), 0);
  const uint64_t available = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  EXPECT_TRUE(CheckFreeSpace(dir.path(), {1000, 2000}, dir.path() / "out").ok());
  const Status status = CheckFreeSpace(dir.path(), {available, available}, dir.path() / "out");
  EXPECT_EQ(status.code(), StatusCode::kIo);
  EXPECT_NE(status.message().find("not enough free space"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find((dir.path() / "out").string()), std::string::npos);
}

}  // namespace
}  // namespace amn::formats
