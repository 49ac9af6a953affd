// Runs test code that may die of a signal in a forked child, so that a
// SIGBUS death becomes a value the test compares instead of a crash of the
// test binary (the SIGBUS guard tests: tests/input_change_test.cc,
// tests/mapped_output_test.cc).
#ifndef AMN_TESTS_IN_CHILD_H_
#define AMN_TESTS_IN_CHILD_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace amn::test {

// Runs `body` (returning an exit code) in a forked child; returns how the
// child ended: its exit code, or 128 + the signal that ended it. SIGBUS
// starts at its default action there (a sanitizer runtime may have its own).
template <typename F>
int InChild(F body) {
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGBUS, SIG_DFL);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace amn::test

#endif  // AMN_TESTS_IN_CHILD_H_
