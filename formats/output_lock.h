// One writer per output: `remember` holds an exclusive flock on a lock file
// beside its output (".NAME.amn-lock" in the output's parent directory) for
// as long as it writes, with its PID in the file, so a second run into the
// same output fails at once, naming the first, instead of both "succeeding".
#ifndef AMN_FORMATS_OUTPUT_LOCK_H_
#define AMN_FORMATS_OUTPUT_LOCK_H_

#include <filesystem>

#include "amn/result.h"

namespace amn::formats {

class OutputLock {
 public:
  // Locks `target` (a file or directory output; it need not exist). Another
  // holder: kIo "TARGET: another amn (PID N) is writing this output". When
  // the lock file cannot be created at all (no such directory, read-only
  // file system), an unlocked OutputLock: creating the output itself then
  // fails with its own, clearer error.
  static Result<OutputLock> Acquire(const std::filesystem::path& target);
  // ".NAME.amn-lock" beside `target`.
  static std::filesystem::path LockPathFor(const std::filesystem::path& target);
  // Removes the lock files in `dir` that no process holds (left by a run
  // that was killed). Safe against a writer taking one meanwhile: Acquire
  // starts over when its file was unlinked under it.
  static void RemoveStale(const std::filesystem::path& dir);

  OutputLock(OutputLock&& other) noexcept;
  OutputLock& operator=(OutputLock&&) = delete;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  // Removes the lock file and releases the lock.
  ~OutputLock();

 private:
  OutputLock() = default;
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace amn::formats

#endif  // AMN_FORMATS_OUTPUT_LOCK_H_
