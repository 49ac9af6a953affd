// `amn remember` leaves a complete output or none: killed mid-write
// (SIGKILL, SIGTERM, SIGHUP), out of space before or while writing,
// replacing an existing directory with --force (amn's files only), refusing
// outputs that are or hold the input, and cleaning partials of dead runs.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/npy_writer.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kShard1 = "model-00001-of-00002.safetensors";
constexpr const char* kShard2 = "model-00002-of-00002.safetensors";

// Names in `dir` that do not start with a dot.
std::vector<std::string> Visible(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename();
    if (name[0] != '.') names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> All(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// A demo model big enough that writing it takes a while (about 40 MB of
// BF16 output); generated once for the whole suite.
class OutputSafety : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const CliResult r = RunBuilt(AMN_DEMO_GENERATOR_PATH, Quote(Input()) + " 2 1024 2816");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static fs::path Input() { return dir_->path() / "demo-FP8"; }
  // A fresh directory for one test's outputs, beside nothing else.
  void SetUp() override { ASSERT_NE(dir_, nullptr); }
  TempDir out_dir_;

 private:
  static inline TempDir* dir_ = nullptr;
};

// `amn remember -q -j 1 IN -o OUT` in a child whose SIGINT/SIGTERM/SIGHUP
// are at their defaults whatever the test runner ignores.
pid_t SpawnRemember(const fs::path& in, const fs::path& out) {
  const pid_t pid = fork();
  if (pid == 0) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(null, 2);
    execl(AMN_CLI_PATH, AMN_CLI_PATH, "remember", "-q", "-j", "1", in.c_str(), "-o", out.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// Whether `pid` has a file open for writing under `dir` with data in it
// (named or unnamed: /proc shows O_TMPFILE files as "dir/#ino (deleted)").
bool WritingUnder(pid_t pid, const fs::path& dir) {
  std::error_code error;
  const fs::path fds = "/proc/" + std::to_string(pid) + "/fd";
  for (fs::directory_iterator it(fds, error), end; !error && it != end; it.increment(error)) {
    std::error_code link_error;
    const std::string target = fs::read_symlink(it->path(), link_error).string();
    if (link_error || target.rfind(dir.string() + "/", 0) != 0) continue;
    struct stat st {};
    if (stat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) return true;
  }
  return false;
}

// Starts remember, stops it while it writes `out` (not yet in place), sends
// `sig` and returns the wait status. Retries if a run finished before it
// could be stopped (the model takes far longer to write than one poll).
int KillMidWrite(const fs::path& in, const fs::path& out, int sig) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    const pid_t pid = SpawnRemember(in, out);
    int status = 0;
    bool stopped = false;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (WritingUnder(pid, out.parent_path())) {
        kill(pid, SIGSTOP);
        stopped = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (!stopped || fs::exists(out)) {  // finished, or placed just before the stop
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      std::error_code ignored;
      fs::remove_all(out, ignored);
      continue;
    }
    kill(pid, sig);
    kill(pid, SIGCONT);
    waitpid(pid, &status, 0);
    return status;
  }
  ADD_FAILURE() << "remember always finished before it could be stopped";
  return -1;
}

TEST_F(OutputSafety, SigkillLeavesNothingVisibleAndTheNextRunCleansUp) {
  for (const char* name : {"out-dir", "out.safetensors"}) {
    SCOPED_TRACE(name);
    const bool file = std::string(name).ends_with(".safetensors");
    const fs::path in = file ? Input() / kShard1 : Input();
    const fs::path out = out_dir_.path() / name;
    const int status = KillMidWrite(in, out, SIGKILL);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
    EXPECT_EQ(Visible(out_dir_.path()), std::vector<std::string>{});
    // A later run into the same directory removes what the dead one left
    // hidden (a staging directory; an unnamed file leaves nothing at all).
    const CliResult again = RunAmn("remember -q " + Quote(in) + " -o " + Quote(out_dir_.path() / "again"));
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(All(out_dir_.path()), std::vector<std::string>{"again"});
    fs::remove_all(out_dir_.path() / "again");
  }
}

TEST_F(OutputSafety, SigtermSighupAndSigintStopAndRemoveEverything) {
  for (const int sig : {SIGTERM, SIGHUP, SIGINT}) {
    for (const char* name : {"out-dir", "out.safetensors"}) {
      SCOPED_TRACE(std::string(strsignal(sig)) + " " + name);
      const bool file = std::string(name).ends_with(".safetensors");
      const int status = KillMidWrite(file ? Input() / kShard1 : Input(), out_dir_.path() / name, sig);
      ASSERT_TRUE(WIFEXITED(status)) << "died of signal " << WTERMSIG(status);
      EXPECT_EQ(WEXITSTATUS(status), 130);
      EXPECT_EQ(All(out_dir_.path()), std::vector<std::string>{});
    }
  }
}

TEST_F(OutputSafety, ForceReplacesOnlyWhatAmnWrites) {
  const fs::path out = out_dir_.path() / "out";
  ASSERT_EQ(RunAmn("remember -q " + Quote(Input()) + " -o " + Quote(out)).exit_code, 0);
  const std::vector<uint8_t> shard1 = ReadBytes(out / kShard1);
  // The user's files, and leftovers of amn's naming from an older output.
  WriteText(out / "notes.txt", "mine");
  WriteText(out / "adapter.safetensors", "not a shard of this model");
  WriteText(out / "model-extra.safetensors", "not of the shard naming");
  fs::create_directory(out / "eval");
  WriteText(out / "eval" / "results.json", "{}");
  WriteText(out / "model-00003-of-00003.safetensors", "stale shard");
  WriteText(out / "model.safetensors", "stale single-file shard");
  WriteText(out / kShard1, "old");
  WriteText(out / "config.json", "old");
  const CliResult r = RunAmn("remember -q --force " + Quote(Input()) + " -o " + Quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(All(out), (std::vector<std::string>{"adapter.safetensors", "config.json", "eval",
                                                "generation_config.json", kShard1, kShard2,
                                                "model-extra.safetensors",
                                                "model.safetensors.index.json", "notes.txt",
                                                "tokenizer_config.json"}));
  EXPECT_EQ(SlurpText(out / "notes.txt"), "mine");
  EXPECT_EQ(SlurpText(out / "adapter.safetensors"), "not a shard of this model");
  EXPECT_EQ(SlurpText(out / "eval" / "results.json"), "{}");
  EXPECT_EQ(ReadBytes(out / kShard1), shard1);
  EXPECT_NE(SlurpText(out / "config.json"), "old");
  EXPECT_EQ(All(out_dir_.path()), std::vector<std::string>{"out"});
}

TEST_F(OutputSafety, ForceOverAFileOutputReplacesIt) {
  const fs::path out = out_dir_.path() / "out.safetensors";
  WriteText(out, "old");
  const CliResult r = RunAmn("remember -q --force " + Quote(Input() / kShard1) + " -o " + Quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(fs::file_size(out), 1000u);
  EXPECT_EQ(All(out_dir_.path()), std::vector<std::string>{"out.safetensors"});
}

// Runs `script` in new user and mount namespaces (so the tmpfs it mounts
// vanishes with it); exit 77 from the script means the mount was refused.
CliResult RunInMountNamespace(const std::string& script) {
  return RunCommand("unshare", "-rm sh -c " + Quote(script));
}

TEST_F(OutputSafety, TooLittleFreeSpaceIsRefusedBeforeWriting) {
  const fs::path small = out_dir_.path() / "small";
  fs::create_directory(small);
  for (const char* name : {"out-dir", "out.safetensors"}) {
    SCOPED_TRACE(name);
    const fs::path in = std::string(name) == "out-dir" ? Input() : Input() / kShard1;
    const CliResult r = RunInMountNamespace(
        "mount -t tmpfs -o size=1m tmpfs " + small.string() + " || exit 77; " AMN_CLI_PATH
        " remember -q " + in.string() + " -o " + (small / name).string() +
        "; code=$?; ls -A " + small.string() + "; exit $code");
    if (r.exit_code == 77 || r.err.find("unshare") != std::string::npos) {
      GTEST_SKIP() << "cannot mount a small tmpfs here: " << r.err;
    }
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("not enough free space"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find((small / name).string()), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "left in the file system: " << r.out;
  }
}

TEST_F(OutputSafety, DiskFullWhileWritingLeavesNothing) {
  // RLIMIT_FSIZE with SIGXFSZ ignored: writes past 1 MiB fail with EFBIG,
  // as they would on a full disk, after the free-space check passed.
  for (const char* name : {"out-dir", "out.safetensors"}) {
    SCOPED_TRACE(name);
    const fs::path in = std::string(name) == "out-dir" ? Input() : Input() / kShard1;
    const CliResult r = RunAmn("remember -q " + Quote(in) + " -o " + Quote(out_dir_.path() / name),
                               "trap '' XFSZ; ulimit -f 2048;");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("write failed"), std::string::npos) << r.err;
    EXPECT_EQ(All(out_dir_.path()), std::vector<std::string>{});
  }
}

TEST_F(OutputSafety, OutputThatIsOrHoldsTheInputIsRefused) {
  const std::vector<std::string> before = All(Input());
  fs::create_directory_symlink(Input(), out_dir_.path() / "link");
  const std::vector<std::pair<fs::path, const char*>> cases = {
      {Input(), "--force"},
      {Input() / "sub", ""},
      {Input() / kShard1, "--force"},
      {Input().parent_path(), "--force"},
      {out_dir_.path() / "link" / "sub", ""},
  };
  for (const auto& [out, flags] : cases) {
    SCOPED_TRACE(out.string());
    const CliResult r = RunAmn("remember -q " + std::string(flags) + " " + Quote(Input()) + " -o " + Quote(out));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("the input"), std::string::npos) << r.err;
  }
  const CliResult file = RunAmn("remember -q --force " + Quote(Input() / kShard1) + " -o " +
                                Quote(out_dir_.path() / "link" / kShard1));
  EXPECT_EQ(file.exit_code, 2) << file.err;
  // A hard link is the input under another name.
  fs::create_hard_link(Input() / kShard1, out_dir_.path() / "hard.safetensors");
  const CliResult hard = RunAmn("remember -q --force " + Quote(Input() / kShard1) + " -o " +
                                Quote(out_dir_.path() / "hard.safetensors"));
  EXPECT_EQ(hard.exit_code, 2) << hard.err;
  EXPECT_NE(hard.err.find("the input"), std::string::npos) << hard.err;
  EXPECT_EQ(All(Input()), before);
}

TEST_F(OutputSafety, OutputInsideTheInputThroughABindMountIsRefused) {
  const fs::path bound = out_dir_.path() / "bound";
  fs::create_directory(bound);
  const CliResult r = RunInMountNamespace(
      "mount --bind " + Input().string() + " " + bound.string() + " || exit 77; " AMN_CLI_PATH
      " remember -q " + Input().string() + " -o " + (bound / "sub").string());
  if (r.exit_code == 77 || r.err.find("unshare") != std::string::npos) {
    GTEST_SKIP() << "cannot bind-mount here: " << r.err;
  }
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("the input"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Input() / "sub"));
}

TEST_F(OutputSafety, PartialsOfDeadRunsAreRemovedOthersKept) {
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string tag = ".amn-partial-";
  const fs::path dir = out_dir_.path();
  WriteText(dir / (".old.safetensors" + tag + std::to_string(dead)), "dead file");
  fs::create_directory(dir / (".old-dir" + tag + std::to_string(dead)));
  WriteText(dir / (".old-dir" + tag + std::to_string(dead)) / kShard1, "dead dir");
  // Alive: this process's PID; and a dead PID whose partial is locked by a
  // living process (here, this one).
  WriteText(dir / (".live.safetensors" + tag + std::to_string(getpid())), "live");
  const fs::path locked = dir / (".locked.safetensors" + tag + std::to_string(dead));
  WriteText(locked, "locked");
  const int fd = open(locked.c_str(), O_RDONLY);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  WriteText(dir / ".hidden-but-not-ours", "keep");
  const CliResult r = RunAmn("remember -q " + Quote(Input() / kShard1) + " -o " + Quote(dir / "x.safetensors"));
  close(fd);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> kept = {".hidden-but-not-ours", locked.filename().string(),
                                   ".live.safetensors" + tag + std::to_string(getpid()),
                                   "x.safetensors"};
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(All(dir), kept);
}

TEST_F(OutputSafety, NoMmapWritesTheSameBytes) {
  // An array converted to BF16 is gathered from a memory map by default.
  const fs::path in = out_dir_.path() / "x.npy";
  ASSERT_TRUE(WriteF32Npy(in, size_t{3} << 20));
  const fs::path a = out_dir_.path() / "a.safetensors", b = out_dir_.path() / "b.safetensors";
  ASSERT_EQ(RunAmn("remember -q --to bf16 " + Quote(in) + " -o " + Quote(a)).exit_code, 0);
  const CliResult r = RunAmn("remember -q --no-mmap --to bf16 " + Quote(in) + " -o " + Quote(b));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(fs::file_size(a), size_t{6} << 20);
  EXPECT_EQ(ReadBytes(a), ReadBytes(b));
}

}  // namespace
}  // namespace amn::test

namespace amn::test {
namespace {

// Whether `pid` has `path` memory-mapped.
bool Maps(pid_t pid, const fs::path& path) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.size() >= path.string().size() && line.ends_with(path.string())) return true;
  }
  return false;
}

// The CLI end of input_change_test: stopped while it reads a mapped input,
// the input truncated, then continued. Exit 1, one line naming the file,
// nothing written.
TEST(InputChangeCli, TruncatedWhileMappedExitsOneNamingTheFile) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    TempDir dir;
    const fs::path in = dir.path() / "big.npy", err = dir.path() / "err.txt";
    ASSERT_TRUE(WriteF32Npy(in, size_t{6} << 20));
    const pid_t pid = fork();
    if (pid == 0) {
      const int fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 2);
      execl(AMN_CLI_PATH, AMN_CLI_PATH, "remember", "-q", "-j", "1", "--to", "bf16", in.c_str(),
            "-o", (dir.path() / "out.safetensors").c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    bool stopped = false;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (Maps(pid, in)) {
        kill(pid, SIGSTOP);
        stopped = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (stopped) {
      ASSERT_EQ(truncate(in.c_str(), 128), 0);
      kill(pid, SIGCONT);
      waitpid(pid, &status, 0);
    }
    ASSERT_TRUE(WIFEXITED(status)) << "died of signal " << WTERMSIG(status);
    if (!stopped || WEXITSTATUS(status) == 0) continue;  // finished before it was stopped
    EXPECT_EQ(WEXITSTATUS(status), 1);
    const std::string message = SlurpText(err);
    EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
    EXPECT_NE(message.find(in.string()), std::string::npos) << message;
    EXPECT_EQ(All(dir.path()), (std::vector<std::string>{"big.npy", "err.txt"}));
    return;
  }
  ADD_FAILURE() << "remember always finished before it could be stopped";
}

// Packed schemes view their codes through a map by default; --no-mmap reads
// each packed tensor whole instead. Same bytes either way.
TEST(NoMmapCli, PackedSchemesWriteTheSameBytes) {
  const fs::path dir_in = FixturesDir() / "safetensors_reference";
  if (!fs::is_directory(dir_in)) GTEST_SKIP() << "fixtures not found at " << dir_in << "; set AMN_FIXTURES_DIR";
  for (const char* file : {"gptq.safetensors", "awq.safetensors", "bnb_nf4.safetensors"}) {
    SCOPED_TRACE(file);
    TempDir dir;
    const fs::path a = dir.path() / "a.safetensors", b = dir.path() / "b.safetensors";
    const CliResult mapped = RunAmn("remember -q " + Quote(dir_in / file) + " -o " + Quote(a));
    ASSERT_EQ(mapped.exit_code, 0) << mapped.err;
    const CliResult read = RunAmn("remember -q --no-mmap " + Quote(dir_in / file) + " -o " + Quote(b));
    ASSERT_EQ(read.exit_code, 0) << read.err;
    EXPECT_EQ(ReadBytes(a), ReadBytes(b));
  }
}

}  // namespace
}  // namespace amn::test
