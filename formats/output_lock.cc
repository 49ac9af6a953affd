// The per-output writer lock (flock on ".NAME.amn-lock", holding the PID).
#include "formats/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "formats/byte_source.h"

namespace amn::formats {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kLockTag = ".amn-lock";
// Retries when the lock file was removed by its holder between our open and
// our flock (the inode we locked is no longer the file at the path).
constexpr int kMaxAttempts = 8;

std::string PathText(const fs::path& path) { return MessageSafe(path.string(), kMessagePathBytes); }

// The PID a holder wrote into the lock file, as text ("?" when unreadable).
std::string HolderPid(int fd) {
  char buffer[24] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  std::string pid;
  for (ssize_t i = 0; i < n && buffer[i] >= '0' && buffer[i] <= '9'; ++i) pid += buffer[i];
  return pid.empty() ? "?" : pid;
}

bool SameFile(int fd, const fs::path& path) {
  struct stat held {}, named {};
  return ::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &named) == 0 &&
         held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

}  // namespace

fs::path OutputLock::LockPathFor(const fs::path& target) {
  const fs::path clean = target.has_filename() ? target : target.parent_path();  // "out/"
  const fs::path dir = clean.parent_path().empty() ? fs::path(".") : clean.parent_path();
  return dir / ("." + clean.filename().string() + std::string(kLockTag));
}

Result<OutputLock> OutputLock::Acquire(const fs::path& target) {
  OutputLock lock;
  const fs::path path = LockPathFor(target);
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return lock;  // see the header: the output's own creation reports why
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      const std::string pid = HolderPid(fd);
      const bool same = SameFile(fd, path);
      ::close(fd);
      if (error != EWOULDBLOCK) return lock;
      if (!same) continue;  // held by one removing it (a finished or stale lock)
      return Status(StatusCode::kIo, PathText(target) + ": another amn (PID " + pid +
                                         ") is writing this output (lock " + PathText(path) + ")");
    }
    if (!SameFile(fd, path)) {  // its holder removed it as we opened it
      ::close(fd);
      continue;
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    // Best effort: without the PID the lock still holds; a second run then
    // says "PID ?".
    const bool recorded = ::ftruncate(fd, 0) == 0 &&
                          ::pwrite(fd, pid.data(), pid.size(), 0) == static_cast<ssize_t>(pid.size());
    (void)recorded;
    lock.path_ = path;
    lock.fd_ = fd;
    return lock;
  }
  return lock;
}

void OutputLock::RemoveStale(const fs::path& dir) {
  std::error_code error;
  std::vector<fs::path> locks;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() > kLockTag.size() + 1 && name[0] == '.' && name.ends_with(kLockTag)) {
      locks.push_back(it->path());
    }
  }
  for (const fs::path& path : locks) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) continue;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        SameFile(fd, path)) {
      ::unlink(path.c_str());
    }
    ::close(fd);
  }
}

OutputLock::OutputLock(OutputLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  // Unlinked while still locked: a run that opened it meanwhile finds the
  // inode gone from the path (SameFile) and starts over.
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace amn::formats
