// Staged, fsynced, atomically placed outputs and the cleaning of orphaned
// partials (Linux: O_TMPFILE, linkat, renameat2, flock).
#include "formats/staged_output.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "formats/byte_source.h"

namespace amn::formats {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kPartialTag = ".amn-partial-";
constexpr size_t kCopyBufferBytes = size_t{1} << 20;

std::string PathText(const fs::path& path) { return MessageSafe(path.string(), kMessagePathBytes); }

Status IoError(const fs::path& path, std::string_view what, int error) {
  return Status(StatusCode::kIo, PathText(path) + ": " + std::string(what) + ": " +
                                     std::error_code(error, std::generic_category()).message());
}

fs::path DirOf(const fs::path& path) {
  return path.parent_path().empty() ? fs::path(".") : path.parent_path();
}

// The PID of a partial's name, or 0 when `name` is not one.
pid_t PartialOwner(const std::string& name) {
  if (name.empty() || name[0] != '.') return 0;
  const size_t tag = name.rfind(kPartialTag);
  if (tag == std::string::npos || (tag != 0 && tag < 2)) return 0;
  const std::string digits = name.substr(tag + kPartialTag.size());
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return 0;
  }
  return static_cast<pid_t>(std::stol(digits));
}

bool ProcessRuns(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

Status WriteAllFd(int fd, const char* data, size_t size, const fs::path& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError(path, "write failed", n < 0 ? errno : EIO);
    data += n;
    size -= static_cast<size_t>(n);
  }
  return Status::Ok();
}

// fsync, then close; the first failure wins.
Status SyncAndClose(int fd, const fs::path& path) {
  Status status;
  if (::fsync(fd) != 0) status = IoError(path, "cannot sync", errno);
  if (::close(fd) != 0 && status.ok()) status = IoError(path, "cannot close", errno);
  return status;
}

// rename without replacing: renameat2(RENAME_NOREPLACE) where the file
// system has it, else a plain rename after an existence check.
int RenameNoReplace(const fs::path& from, const fs::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  struct stat st {};
  if (::lstat(to.c_str(), &st) == 0) return EEXIST;
  return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

Status Exists(const fs::path& target) {
  return Status(StatusCode::kInvalidArgument,
                PathText(target) + " already exists (use --force to replace it)");
}

// "P-00001-of-00003" -> "P"; any other stem is its own prefix.
std::string ShardPrefix(const std::string& stem) {
  const size_t of = stem.rfind("-of-");
  if (of == std::string::npos) return stem;
  const size_t dash = stem.rfind('-', of == 0 ? 0 : of - 1);
  auto digits = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (dash == std::string::npos || dash >= of) return stem;
  const std::string_view view(stem);
  if (!digits(view.substr(dash + 1, of - dash - 1)) || !digits(view.substr(of + 4))) return stem;
  return stem.substr(0, dash);
}

}  // namespace

fs::path PartialPathFor(const fs::path& target) {
  return DirOf(target) /
         ("." + target.filename().string() + std::string(kPartialTag) + std::to_string(::getpid()));
}

void RemoveOrphanedPartials(const fs::path& dir) {
  std::error_code error;
  std::vector<fs::path> orphans;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const pid_t pid = PartialOwner(it->path().filename().string());
    if (pid <= 0 || pid == ::getpid() || ProcessRuns(pid)) continue;
    orphans.push_back(it->path());
  }
  for (const fs::path& orphan : orphans) {
    struct stat st {};
    if (::lstat(orphan.c_str(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) continue;
    const int fd = ::open(orphan.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) continue;
    // A writer holds its partial locked for its whole life (even one whose
    // PID this process cannot see, in another PID namespace or host).
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) fs::remove_all(orphan, error);
    ::close(fd);
  }
}

Status CheckFreeSpace(const fs::path& dir, const std::vector<uint64_t>& file_sizes,
                      const fs::path& output) {
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) return IoError(dir, "cannot read free space", errno);
  const uint64_t block = vfs.f_frsize != 0 ? vfs.f_frsize : vfs.f_bsize;
  if (block == 0) return Status::Ok();
  uint64_t need_blocks = 1;  // the directory entries
  for (const uint64_t size : file_sizes) need_blocks += size / block + (size % block != 0 ? 1 : 0);
  const uint64_t have_blocks = vfs.f_bavail;
  if (need_blocks > have_blocks) {
    return Status(StatusCode::kIo,
                  PathText(output) + ": not enough free space: the output needs " +
                      std::to_string(need_blocks * block) + " bytes, the file system of " +
                      PathText(dir) + " has " + std::to_string(have_blocks * block) +
                      " bytes available");
  }
  // f_files == 0: the file system does not count inodes.
  if (vfs.f_files != 0 && file_sizes.size() + 1 > vfs.f_favail) {
    return Status(StatusCode::kIo, PathText(output) + ": not enough free inodes: the output needs " +
                                       std::to_string(file_sizes.size() + 1) + ", the file system of " +
                                       PathText(dir) + " has " + std::to_string(vfs.f_favail));
  }
  return Status::Ok();
}

Status SyncPath(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError(path, "cannot open to sync", errno);
  Status status;
  // EINVAL: this file system cannot sync a directory; nothing more to do.
  if (::fsync(fd) != 0 && errno != EINVAL) status = IoError(path, "cannot sync", errno);
  ::close(fd);
  return status;
}

Status WriteFileDurably(const fs::path& path, std::string_view text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(path, "cannot create", errno);
  Status status = WriteAllFd(fd, text.data(), text.size(), path);
  if (!status.ok()) {
    ::close(fd);
    return status;
  }
  return SyncAndClose(fd, path);
}

Status CopyFileDurably(const fs::path& from, const fs::path& to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return IoError(from, "cannot open", errno);
  struct stat st {};
  if (::fstat(in, &st) != 0) {
    const int error = errno;
    ::close(in);
    return IoError(from, "cannot stat", error);
  }
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) {
    const int error = errno;
    ::close(in);
    return IoError(to, "cannot create", error);
  }
  Status status;
  if (::fchmod(out, st.st_mode & 07777) != 0) status = IoError(to, "cannot set its mode", errno);
  std::vector<char> buffer(kCopyBufferBytes);
  while (status.ok()) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) status = IoError(from, "read failed", errno);
    if (n <= 0) break;
    status = WriteAllFd(out, buffer.data(), static_cast<size_t>(n), to);
  }
  ::close(in);
  if (!status.ok()) {
    ::close(out);
    return status;
  }
  return SyncAndClose(out, to);
}

// --- StagedFile --------------------------------------------------------------

Result<StagedFile> StagedFile::Create(const fs::path& target, Naming naming) {
  StagedFile file;
  file.target_ = target;
  // Read-write: the engine's mapped writer maps the file shared and
  // writable, which a write-only descriptor does not allow.
  int fd = naming == Naming::kUnnamedWherePossible
               ? ::open(DirOf(target).c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0644)
               : -1;
  if (fd >= 0) {
    file.unnamed_ = true;
  } else {
    file.partial_ = PartialPathFor(target);
    fd = ::open(file.partial_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int error = errno;
      file.partial_.clear();  // not ours to remove
      return IoError(target, "cannot create", error);
    }
  }
  file.fd_ = fd;
  // Tells RemoveOrphanedPartials that the partial is alive.
  (void)::flock(fd, LOCK_EX | LOCK_NB);
  return file;
}

StagedFile::StagedFile(StagedFile&& other) noexcept
    : target_(std::move(other.target_)),
      partial_(std::exchange(other.partial_, fs::path())),
      fd_(std::exchange(other.fd_, -1)),
      unnamed_(other.unnamed_),
      committed_(std::exchange(other.committed_, true)) {}

StagedFile::~StagedFile() {
  if (!committed_ && !partial_.empty()) ::unlink(partial_.c_str());
  if (fd_ >= 0) ::close(fd_);
}

Status StagedFile::Commit(bool overwrite) {
  if (::fsync(fd_) != 0) return IoError(target_, "cannot sync", errno);
  if (unnamed_) {
    // Give the unnamed file a name: through /proc, or AT_EMPTY_PATH where
    // /proc is missing (that one needs CAP_DAC_READ_SEARCH).
    const std::string self = "/proc/self/fd/" + std::to_string(fd_);
    auto link_to = [&](const fs::path& name) -> int {
      if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
      const int error = errno;
      if (error == ENOENT && ::linkat(fd_, "", AT_FDCWD, name.c_str(), AT_EMPTY_PATH) == 0) return 0;
      return error;
    };
    if (!overwrite) {
      const int error = link_to(target_);
      if (error == EEXIST) return Exists(target_);
      if (error != 0) return IoError(target_, "cannot link into place", error);
    } else {
      // Named for the instant between link and rename; locked through fd_.
      partial_ = PartialPathFor(target_);
      ::unlink(partial_.c_str());
      if (const int error = link_to(partial_); error != 0) {
        partial_.clear();
        return IoError(target_, "cannot link into place", error);
      }
    }
  }
  if (!partial_.empty()) {
    const int error = overwrite ? (::rename(partial_.c_str(), target_.c_str()) == 0 ? 0 : errno)
                                : RenameNoReplace(partial_, target_);
    if (error == EEXIST) return Exists(target_);
    if (error != 0) return IoError(target_, "cannot rename into place", error);
    partial_.clear();
  }
  committed_ = true;
  return SyncPath(DirOf(target_));
}

// --- StagedDir ---------------------------------------------------------------

Result<StagedDir> StagedDir::Create(const fs::path& target, bool overwrite) {
  StagedDir dir;
  dir.target_ = target;
  std::error_code error;
  if (fs::exists(fs::symlink_status(target, error))) {
    if (!overwrite) return Exists(target);
    if (!fs::is_directory(target, error)) {
      return Status(StatusCode::kInvalidArgument,
                    PathText(target) + " is not a directory; the output is a directory");
    }
    dir.merge_ = true;
    dir.staging_ = target / (std::string(kPartialTag) + std::to_string(::getpid()));
  } else {
    dir.staging_ = PartialPathFor(target);
  }
  if (::mkdir(dir.staging_.c_str(), 0755) != 0) {
    const int code = errno;
    dir.committed_ = true;  // not ours to remove
    return IoError(dir.staging_, "cannot create", code);
  }
  dir.lock_fd_ = ::open(dir.staging_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir.lock_fd_ >= 0) (void)::flock(dir.lock_fd_, LOCK_EX | LOCK_NB);
  return dir;
}

StagedDir::StagedDir(StagedDir&& other) noexcept
    : target_(std::move(other.target_)),
      staging_(std::move(other.staging_)),
      lock_fd_(std::exchange(other.lock_fd_, -1)),
      merge_(other.merge_),
      committed_(std::exchange(other.committed_, true)) {}

StagedDir::~StagedDir() {
  if (!committed_) {
    std::error_code ignored;
    fs::remove_all(staging_, ignored);
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Status StagedDir::Commit(const std::vector<std::string>& files,
                         const std::vector<std::string>& shards, const std::string& index) {
  AMN_RETURN_IF_ERROR(SyncPath(staging_));
  if (!merge_) {
    const int error = RenameNoReplace(staging_, target_);
    if (error == EEXIST || error == ENOTEMPTY) return Exists(target_);
    if (error != 0) return IoError(target_, "cannot rename into place", error);
    committed_ = true;
    return SyncPath(DirOf(target_));
  }
  if (!index.empty()) {
    const fs::path old_index = target_ / index;
    if (::unlink(old_index.c_str()) == 0) {
      AMN_RETURN_IF_ERROR(SyncPath(target_));
    } else if (errno != ENOENT) {
      return IoError(old_index, "cannot remove", errno);
    }
  }
  bool has_index = false;
  for (const std::string& name : files) {
    if (name == index) {
      has_index = true;
      continue;
    }
    if (::rename((staging_ / name).c_str(), (target_ / name).c_str()) != 0) {
      return IoError(target_ / name, "cannot rename into place", errno);
    }
  }
  std::error_code error;
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(target_, error), end; !error && it != end; it.increment(error)) {
    if (it->is_regular_file() && !it->is_symlink() &&
        IsStaleShard(it->path().filename().string(), shards)) {
      stale.push_back(it->path());
    }
  }
  if (error) return IoError(target_, "cannot list", error.value());
  for (const fs::path& path : stale) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return IoError(path, "cannot remove", errno);
  }
  if (has_index && ::rename((staging_ / index).c_str(), (target_ / index).c_str()) != 0) {
    return IoError(target_ / index, "cannot rename into place", errno);
  }
  committed_ = true;
  fs::remove_all(staging_, error);  // empty by now
  return SyncPath(target_);
}

bool IsStaleShard(const std::string& name, const std::vector<std::string>& written) {
  constexpr std::string_view kExt = ".safetensors";
  if (!name.ends_with(kExt) || std::find(written.begin(), written.end(), name) != written.end()) {
    return false;
  }
  const std::string prefix = ShardPrefix(name.substr(0, name.size() - kExt.size()));
  for (const std::string& w : written) {
    if (w.ends_with(kExt) && ShardPrefix(w.substr(0, w.size() - kExt.size())) == prefix) return true;
  }
  return false;
}

}  // namespace amn::formats
