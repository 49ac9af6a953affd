// Staged file and directory outputs of the remember engine.
#include "formats/remember_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "formats/byte_source.h"
#include "formats/output_lock.h"
#include "formats/staged_output.h"

namespace amn::formats {
namespace fs = std::filesystem;
namespace {

std::string PathText(const fs::path& path) { return MessageSafe(path.string(), kMessagePathBytes); }

fs::path DirOf(const fs::path& path) {
  return path.parent_path().empty() ? fs::path(".") : path.parent_path();
}

uint64_t ShardBytes(const OutputShard& shard) { return shard.header_bytes.size() + shard.data_bytes; }

Status Cancelled(const EngineOptions& engine, const fs::path& output) {
  if (engine.cancel != nullptr && engine.cancel->load(std::memory_order_relaxed)) {
    return Status(StatusCode::kCancelled, PathText(output) + ": interrupted");
  }
  return Status::Ok();
}

// Runs `shard` through the engine into `fd`, reporting progress over all
// shards from `base_bytes` / `base_tensors`.
Status RunShard(const RememberPlan& plan, const OutputShard& shard, int fd, const fs::path& name,
                EngineOptions engine, const OutputProgress& progress, uint64_t base_bytes,
                size_t base_tensors) {
  engine.on_progress = [&](uint64_t bytes, size_t tensors) {
    if (progress) progress(base_bytes + bytes, base_tensors + tensors);
  };
  return WriteShard(plan, shard, fd, name.string(), engine);
}

}  // namespace

Status WriteFileOutput(const RememberPlan& plan, const fs::path& output, bool overwrite,
                       EngineOptions engine, const OutputProgress& progress) {
  std::error_code error;
  if (overwrite && fs::is_directory(output, error)) {
    return Status(StatusCode::kInvalidArgument,
                  PathText(output) + " is a directory; the output is a file");
  }
  AMN_ASSIGN_OR_RETURN(const OutputLock lock, OutputLock::Acquire(output));
  RemoveOrphanedPartials(DirOf(output));
  OutputLock::RemoveStale(DirOf(output));
  AMN_RETURN_IF_ERROR(CheckFreeSpace(DirOf(output), {ShardBytes(plan.shards.front())}, output));
  AMN_ASSIGN_OR_RETURN(StagedFile file, StagedFile::Create(output));
  AMN_RETURN_IF_ERROR(
      RunShard(plan, plan.shards.front(), file.fd(), output, engine, progress, 0, 0));
  AMN_RETURN_IF_ERROR(Cancelled(engine, output));
  return file.Commit(overwrite);
}

Status WriteDirectoryOutput(const RememberPlan& plan, const DirectoryExtras& extras,
                            const fs::path& output, bool overwrite, EngineOptions engine,
                            const OutputProgress& progress) {
  const fs::path target = output.has_filename() ? output : output.parent_path();  // "out/"
  std::error_code error;
  AMN_ASSIGN_OR_RETURN(const OutputLock lock, OutputLock::Acquire(target));
  const bool merging = overwrite && fs::is_directory(target, error);
  RemoveOrphanedPartials(DirOf(target));
  OutputLock::RemoveStale(DirOf(target));
  if (merging) RemoveOrphanedPartials(target);

  std::vector<uint64_t> sizes;
  std::vector<std::string> names;
  for (const OutputShard& shard : plan.shards) {
    sizes.push_back(ShardBytes(shard));
    names.push_back(shard.file_name);
  }
  const std::vector<std::string> shards = names;
  for (const fs::path& copy : extras.copies) {
    const uintmax_t size = fs::file_size(copy, error);
    if (error) return Status(StatusCode::kIo, PathText(copy) + ": cannot stat: " + error.message());
    sizes.push_back(size);
    names.push_back(copy.filename().string());
  }
  for (const auto& [name, text] : extras.texts) {
    sizes.push_back(text.size());
    names.push_back(name);
  }
  AMN_RETURN_IF_ERROR(CheckFreeSpace(merging ? target : DirOf(target), sizes, target));

  AMN_ASSIGN_OR_RETURN(StagedDir dir, StagedDir::Create(target, overwrite));
  uint64_t base_bytes = 0;
  size_t base_tensors = 0;
  for (const OutputShard& shard : plan.shards) {
    const fs::path path = dir.path() / shard.file_name;
    // Read-write for the mapped writer (formats/mapped_output.h).
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      return Status(StatusCode::kIo, PathText(target / shard.file_name) + ": cannot create: " +
                                         std::error_code(errno, std::generic_category()).message());
    }
    Status status =
        RunShard(plan, shard, fd, target / shard.file_name, engine, progress, base_bytes, base_tensors);
    if (status.ok() && ::fsync(fd) != 0) {
      status = Status(StatusCode::kIo, PathText(target / shard.file_name) + ": cannot sync: " +
                                           std::error_code(errno, std::generic_category()).message());
    }
    if (::close(fd) != 0 && status.ok()) {
      status = Status(StatusCode::kIo, PathText(target / shard.file_name) + ": cannot close: " +
                                           std::error_code(errno, std::generic_category()).message());
    }
    AMN_RETURN_IF_ERROR(status);
    base_bytes += ShardBytes(shard);
    base_tensors += shard.tensors.size();
  }
  for (const fs::path& copy : extras.copies) {
    AMN_RETURN_IF_ERROR(CopyFileDurably(copy, dir.path() / copy.filename()));
  }
  for (const auto& [name, text] : extras.texts) {
    AMN_RETURN_IF_ERROR(WriteFileDurably(dir.path() / name, text));
  }
  AMN_RETURN_IF_ERROR(Cancelled(engine, target));
  return dir.Commit(names, shards, extras.index_name);
}

}  // namespace amn::formats
