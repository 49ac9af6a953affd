// Runs one command and prints how long it took, for perf/thread_scaling.sh on
// machines where `date +%N`, bc and /usr/bin/time may all be missing:
//
//   timed_run [--sync] [--log FILE] -- COMMAND [ARGS...]
//
// prints one line: wall_ns sync_ns maxrss_kib status
//   wall_ns     the command's wall time (CLOCK_MONOTONIC, fork to exit)
//   sync_ns     with --sync, the time of the sync(2) that follows it, else 0
//   maxrss_kib  the command's peak resident set (wait4's ru_maxrss)
//   status      its exit code (128 + N if killed by signal N; 127: no exec)
// The command's stdout and stderr go to FILE (appended), or /dev/null.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

int64_t NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

int Usage() {
  std::fprintf(stderr, "usage: timed_run [--sync] [--log FILE] -- COMMAND [ARGS...]\n"
                       "prints: wall_ns sync_ns maxrss_kib status\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool do_sync = false;
  const char* log = "/dev/null";
  int i = 1;
  for (; i < argc; ++i) {
    if (std::strcmp(argv[i], "--sync") == 0) do_sync = true;
    else if (std::strcmp(argv[i], "--log") == 0 && i + 1 < argc) log = argv[++i];
    else if (std::strcmp(argv[i], "--") == 0) { ++i; break; }
    else return Usage();
  }
  if (i >= argc) return Usage();
  const int out = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (out < 0) {
    std::fprintf(stderr, "timed_run: cannot open %s: %s\n", log, std::strerror(errno));
    return 1;
  }
  const int64_t start = NowNs();
  const pid_t pid = fork();
  if (pid < 0) {
    std::fprintf(stderr, "timed_run: fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (pid == 0) {
    dup2(out, 1);
    dup2(out, 2);
    execvp(argv[i], argv + i);
    std::fprintf(stderr, "timed_run: cannot run %s: %s\n", argv[i], std::strerror(errno));
    _exit(127);
  }
  int wstatus = 0;
  rusage usage{};
  while (wait4(pid, &wstatus, 0, &usage) < 0) {
    if (errno != EINTR) {
      std::fprintf(stderr, "timed_run: wait4: %s\n", std::strerror(errno));
      return 1;
    }
  }
  const int64_t end = NowNs();
  int64_t sync_ns = 0;
  if (do_sync) {
    sync();
    sync_ns = NowNs() - end;
  }
  const int status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  std::printf("%lld %lld %ld %d\n", static_cast<long long>(end - start),
              static_cast<long long>(sync_ns), usage.ru_maxrss, status);
  return 0;
}
