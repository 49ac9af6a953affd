// threads = 1 in RememberOptions, ForgetOptions and ConvertOptions runs the
// whole pipeline on the calling thread: no thread is created (an engine's
// single-threaded call; qemu-user, where pthread_create can hang). This
// binary interposes pthread_create to count every thread started (std::thread
// goes through it), and also counts /proc/self/task from the progress
// callback. Four threads must start some (the counter can fail) and write the
// same bytes as one.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "amn/model.h"
#include "tests/cli_runner.h"

namespace {
std::atomic<int> g_threads_created{0};
}  // namespace

// Every std::thread of the process comes through here (libstdc++ calls
// pthread_create, and the executable's definition comes first in symbol
// lookup).
extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                              void* (*start)(void*), void* arg) noexcept {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const Create real = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
  g_threads_created.fetch_add(1);
  return real(thread, attr, start, arg);
}

namespace amn {
namespace {

namespace fs = std::filesystem;

size_t TaskCount() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// Every file under `dir` (or `dir` itself when it is a file), by relative path.
std::map<std::string, std::string> Files(const fs::path& dir) {
  std::map<std::string, std::string> files;
  if (fs::is_regular_file(dir)) {
    files[dir.filename()] = test::SlurpText(dir);
    return files;
  }
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[fs::relative(e.path(), dir)] = test::SlurpText(e.path());
  }
  return files;
}

// qemu-user (AMN_TEST_EMULATED) may hang in pthread_create: the runs with
// four threads are native only.
bool Emulated() {
  const char* value = std::getenv("AMN_TEST_EMULATED");
  return value != nullptr && std::string(value) == "1";
}

class OneThread : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("amn_one_thread_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const test::CliResult r =
        test::RunCommand(AMN_DEMO_GENERATOR_PATH, "'" + (dir_ / "demo-FP8").string() + "' 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // A float model for forget: the demo remembered to BF16, one thread.
    auto model = Model::Open(dir_ / "demo-FP8");
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    RememberOptions options;
    options.threads = 1;
    ASSERT_TRUE(model->Remember(dir_ / "demo-bf16", options).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `write` with a progress callback that records the largest
  // /proc/self/task count seen; returns the threads created during it.
  template <typename Options, typename Write>
  int ThreadsStarted(Options& options, Write write, size_t& max_tasks, int& calls) {
    max_tasks = 0;
    calls = 0;
    options.progress = [&](const RememberProgress&) {
      max_tasks = std::max(max_tasks, TaskCount());
      ++calls;
    };
    const int before = g_threads_created.load();
    write();
    return g_threads_created.load() - before;
  }

  fs::path dir_;
};

TEST_F(OneThread, RememberStartsNoThread) {
  auto model = Model::Open(dir_ / "demo-FP8");
  ASSERT_TRUE(model.ok());
  const size_t tasks_before = TaskCount();
  for (const unsigned threads : {1u, 4u}) {
    if (threads > 1 && Emulated()) continue;
    RememberOptions options;
    options.threads = threads;
    size_t max_tasks = 0;
    int calls = 0;
    const fs::path out = dir_ / ("remember-j" + std::to_string(threads));
    const int started = ThreadsStarted(options, [&] {
      const Status status = model->Remember(out, options);
      EXPECT_TRUE(status.ok()) << status.ToString();
    }, max_tasks, calls);
    EXPECT_GT(calls, 0);
    if (threads == 1) {
      EXPECT_EQ(started, 0);
      EXPECT_EQ(max_tasks, tasks_before);
    } else {
      EXPECT_GE(started, 4);
      EXPECT_GT(max_tasks, tasks_before);
      EXPECT_EQ(Files(out), Files(dir_ / "remember-j1"));
    }
  }
}

TEST_F(OneThread, ForgetStartsNoThread) {
  auto model = Model::Open(dir_ / "demo-bf16");
  ASSERT_TRUE(model.ok());
  const size_t tasks_before = TaskCount();
  // FP8 per tensor and NF4: both take the statistics pass (forget_stats.cc).
  for (const ForgetScheme scheme : {ForgetScheme::kFp8, ForgetScheme::kNf4}) {
    const std::string name = scheme == ForgetScheme::kFp8 ? "fp8" : "nf4";
    for (const unsigned threads : {1u, 4u}) {
      if (threads > 1 && Emulated()) continue;
      ForgetOptions options;
      options.scheme = scheme;
      options.threads = threads;
      size_t max_tasks = 0;
      int calls = 0;
      const fs::path out = dir_ / (name + "-j" + std::to_string(threads));
      const int started = ThreadsStarted(options, [&] {
        const auto report = model->Forget(out, options);
        EXPECT_TRUE(report.ok()) << report.status().ToString();
      }, max_tasks, calls);
      EXPECT_GT(calls, 0) << name;
      if (threads == 1) {
        EXPECT_EQ(started, 0) << name;
        EXPECT_EQ(max_tasks, tasks_before) << name;
      } else {
        EXPECT_GE(started, 4) << name;
        EXPECT_EQ(Files(out), Files(dir_ / (name + "-j1"))) << name;
      }
    }
  }
}

TEST_F(OneThread, ConvertStartsNoThread) {
  auto model = Model::Open(dir_ / "demo-FP8");
  ASSERT_TRUE(model.ok());
  const size_t tasks_before = TaskCount();
  // GGUF F16 from FP8 (the demo's rows of 1700 take no ggml block type).
  for (const unsigned threads : {1u, 4u}) {
    if (threads > 1 && Emulated()) continue;
    ConvertOptions options;
    options.format = ConvertFormat::kGguf;
    options.scheme = "f16";
    options.threads = threads;
    size_t max_tasks = 0;
    int calls = 0;
    const fs::path out = dir_ / ("convert-j" + std::to_string(threads) + ".gguf");
    const int started = ThreadsStarted(options, [&] {
      const auto report = model->Convert(out, options);
      EXPECT_TRUE(report.ok()) << report.status().ToString();
    }, max_tasks, calls);
    EXPECT_GT(calls, 0);
    if (threads == 1) {
      EXPECT_EQ(started, 0);
      EXPECT_EQ(max_tasks, tasks_before);
    } else {
      EXPECT_GE(started, 4);
      EXPECT_EQ(test::SlurpText(out), test::SlurpText(dir_ / "convert-j1.gguf"));
    }
  }
}

}  // namespace
}  // namespace amn
