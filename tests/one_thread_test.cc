// threads = 1 in RememberOptions, ForgetOptions and ConvertOptions runs the
// whole pipeline on the calling thread: no thread is created (an engine's
// single-threaded call; qemu-user, where pthread_create can hang). This
// binary interposes pthread_create to count every thread started (std::thread
// goes through it), and also counts /proc/self/task from the progress
// callback. Four threads must start some (the counter can fail) and write the
// same bytes as one. The outputs' bytes are also those recorded on x86.
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
#include "formats/sha256.h"
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
        test::RunBuilt(AMN_DEMO_GENERATOR_PATH, "'" + (dir_ / "demo-FP8").string() + "' 2");
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

// The bytes of the demo's outputs, recorded from the x86-64 run (g++,
// AVX3_DL and -j 2, the same as `amn remember`/`forget`/`convert` write):
// a cross build runs this on emulated NEON, SVE and SVE2 CPUs, so every
// target the engine dispatches there must write x86's bytes. The generator
// input is checked first (it draws from std::normal_distribution).
TEST_F(OneThread, DemoOutputsHaveTheBytesRecordedOnX86) {
  auto sha = [](const fs::path& path) {
    const auto digest = formats::Sha256OfFile(path);
    EXPECT_TRUE(digest.ok()) << path;
    return digest.ok() ? *digest : std::string();
  };
  const std::string shards[] = {"model-00001-of-00002.safetensors",
                                "model-00002-of-00002.safetensors"};
  struct Recorded {
    const char* dir;
    const char* digests[2];
  };
  const Recorded input = {"demo-FP8",
                          {"4125b91179ea447a572d4d4581336d5e516c85820b9ef3deddc1247f1b4471fe",
                           "ac6111cafb051274994cf0802e549972c3e55628939edf90d5134afd1d12b7db"}};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(sha(dir_ / input.dir / shards[i]), input.digests[i]) << "the generated input differs";
  }
  auto model = Model::Open(dir_ / "demo-bf16");
  ASSERT_TRUE(model.ok());
  for (const ForgetScheme scheme : {ForgetScheme::kNf4, ForgetScheme::kFp8}) {
    ForgetOptions options;
    options.scheme = scheme;
    options.threads = 1;
    const fs::path out = dir_ / (scheme == ForgetScheme::kNf4 ? "nf4" : "fp8");
    const auto report = model->Forget(out, options);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
  }
  auto quantized = Model::Open(dir_ / "demo-FP8");
  ASSERT_TRUE(quantized.ok());
  ConvertOptions convert;
  convert.format = ConvertFormat::kGguf;
  convert.scheme = "f16";
  convert.threads = 1;
  ASSERT_TRUE(quantized->Convert(dir_ / "demo.gguf", convert).ok());

  const Recorded outputs[] = {
      {"demo-bf16",
       {"03c94878af3b84d676bdd88a923dadb473cbfaefd15a34330410929a5f5e6e8a",
        "c4c846798fb0d1f062c253f68a54fc24cdf81ac71c4f641560e87c0fb052c02f"}},
      {"nf4",
       {"5c95dda22f203e9d1dfb0e35db58a742d99b50b95a774eab6983da75602b3708",
        "a9ff22325d340835c79df53fe9049c3ead7ff898e3235c3c9e9fa7e37c6f8457"}},
      {"fp8",
       {"f5feaaf9a272dc20f9316d42b021b1e4261d4513781da0505124bfcc506fcb01",
        "04ef5d0e3864bef3477c3d302bd7bf5899731d7c8d8674bb9e0714571e45d6ef"}},
  };
  for (const Recorded& r : outputs) {
    for (int i = 0; i < 2; ++i) EXPECT_EQ(sha(dir_ / r.dir / shards[i]), r.digests[i]) << r.dir;
  }
  EXPECT_EQ(sha(dir_ / "demo.gguf"),
            "dfbe41b627f69ea8ae458e6683200544588b489c8b289aa7b67d44ede49c4928");
}

}  // namespace
}  // namespace amn
