// Outputs that are complete and durable, or absent (DESIGN.md §6). A file is
// written unnamed (O_TMPFILE) where the file system allows it, so a killed
// process leaves nothing; elsewhere, and for directories, it is written
// under a hidden partial name ".NAME.amn-partial-PID" that the writer holds
// locked (flock) and that a later run deletes once the writer is gone. Every
// file and the directories holding them are fsynced before a result is
// placed with one rename (or link), and fsynced again after.
#ifndef AMN_FORMATS_STAGED_OUTPUT_H_
#define AMN_FORMATS_STAGED_OUTPUT_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "amn/result.h"

namespace amn::formats {

// ".NAME.amn-partial-PID" beside `target`, PID being this process.
std::filesystem::path PartialPathFor(const std::filesystem::path& target);

// Deletes, in `dir`, partial outputs (files or directories named
// ".NAME.amn-partial-PID" or ".amn-partial-PID") left by a process that is
// gone: the PID runs no process and no process holds the partial locked.
// Best effort: a partial that cannot be removed stays hidden.
void RemoveOrphanedPartials(const std::filesystem::path& dir);

// kIo when the file system holding `dir` lacks the space (blocks, and one
// inode per file) for new files of `file_sizes` bytes; `output` names the
// result in the message.
Status CheckFreeSpace(const std::filesystem::path& dir, const std::vector<uint64_t>& file_sizes,
                      const std::filesystem::path& output);

// fsync of `path` (a file or a directory), opened read-only.
Status SyncPath(const std::filesystem::path& path);
// A new file (O_EXCL) holding `text`, fsynced.
Status WriteFileDurably(const std::filesystem::path& path, std::string_view text);
// A new file (O_EXCL) with the bytes of `from`, fsynced.
Status CopyFileDurably(const std::filesystem::path& from, const std::filesystem::path& to);

// One output file. Write it through fd(), then Commit; destroyed without a
// commit, it leaves nothing.
class StagedFile {
 public:
  enum class Naming {
    kUnnamedWherePossible,  // O_TMPFILE, else a hidden partial
    kHiddenPartial,         // always the hidden partial (tests of that path)
  };
  static Result<StagedFile> Create(const std::filesystem::path& target,
                                   Naming naming = Naming::kUnnamedWherePossible);
  StagedFile(StagedFile&& other) noexcept;
  StagedFile& operator=(StagedFile&&) = delete;
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;
  ~StagedFile();

  int fd() const { return fd_; }
  // fsyncs the file, places it at the target (replacing a file there only
  // when `overwrite`) and fsyncs the directory.
  Status Commit(bool overwrite);

 private:
  StagedFile() = default;
  std::filesystem::path target_;
  std::filesystem::path partial_;  // empty while the file is unnamed
  int fd_ = -1;
  bool unnamed_ = false;
  bool committed_ = false;
};

// One output directory: create its files in path(), then Commit.
// * `target` absent: path() is a hidden locked directory beside it, renamed
//   into place whole.
// * `target` an existing directory and `overwrite`: path() is a hidden locked
//   directory inside it; Commit moves each written file in with one rename
//   (replacing amn's files of the same name), removes the stale shards of the
//   same naming (see IsStaleShard) and nothing else. The index is removed
//   first and placed last, so an interrupted commit leaves no index
//   describing a mixture of old and new shards.
// Destroyed without a commit, it removes path().
class StagedDir {
 public:
  static Result<StagedDir> Create(const std::filesystem::path& target, bool overwrite);
  StagedDir(StagedDir&& other) noexcept;
  StagedDir& operator=(StagedDir&&) = delete;
  StagedDir(const StagedDir&) = delete;
  StagedDir& operator=(const StagedDir&) = delete;
  ~StagedDir();

  const std::filesystem::path& path() const { return staging_; }
  // Whether Commit merges into an existing directory.
  bool merging() const { return merge_; }
  // `files`: the names written in path(), placed in this order; `shards`:
  // those of them that are shards (their naming decides which old files are
  // stale); `index`, when not empty, is amn's index file name (placed last
  // when written; an old one is removed first either way).
  Status Commit(const std::vector<std::string>& files, const std::vector<std::string>& shards,
                const std::string& index);

 private:
  StagedDir() = default;
  std::filesystem::path target_;
  std::filesystem::path staging_;
  int lock_fd_ = -1;
  bool merge_ = false;
  bool committed_ = false;
};

// Whether `name` (an entry of an existing output directory) is a stale shard
// of the naming of `written` (the shard names written now): for a written
// "P-00001-of-00003.safetensors" or "P.safetensors", any
// "P-<digits>-of-<digits>.safetensors" or "P.safetensors" not written now.
bool IsStaleShard(const std::string& name, const std::vector<std::string>& written);

}  // namespace amn::formats

#endif  // AMN_FORMATS_STAGED_OUTPUT_H_
