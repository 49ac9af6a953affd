// Mapped or read inputs for the streaming engine, with change detection.
#include "formats/engine_inputs.h"

#include <array>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "amn/convert.h"
#include "formats/zip_archive.h"

namespace amn::formats {

// What Views/Storage keep for one tensor until Release: the bytes read
// without a map (one piece per span; never resized once viewed) or an
// inflated member, and the views handed out.
struct EngineInputs::Buffers {
  std::array<std::vector<std::byte>, kPartCount + 1> pieces;
  std::string inflated;
  PackedViews views;
  std::span<const std::byte> storage;
  std::vector<float> scales;
};

namespace {

std::string PathText(const std::filesystem::path& path) {
  return MessageSafe(path.string(), kMessagePathBytes);
}

Status Changed(const std::filesystem::path& path) {
  return Status(StatusCode::kIo, PathText(path) +
                                     ": the file changed while it was being read (its size or "
                                     "modification time differs from when it was opened)");
}

}  // namespace

EngineInputs::EngineInputs(const std::vector<std::filesystem::path>& paths, bool use_mmap)
    : paths_(paths),
      use_mmap_(use_mmap),
      sources_(paths.size()),
      maps_(paths.size()),
      unmappable_(paths.size(), false) {}

EngineInputs::~EngineInputs() = default;

Result<FileSource*> EngineInputs::Source(size_t file) {
  std::lock_guard<std::mutex> lock(open_mutex_);
  std::unique_ptr<FileSource>& source = sources_[file];
  if (!source) {
    AMN_ASSIGN_OR_RETURN(source, FileSource::Open(paths_[file]));
  }
  return source.get();
}

Status EngineInputs::Read(size_t file, uint64_t offset, std::span<std::byte> out) {
  AMN_ASSIGN_OR_RETURN(FileSource* source, Source(file));
  return source->ReadAt(offset, out);  // pread: no lock needed
}

Result<RangeCopy> EngineInputs::CopyRange(size_t file, uint64_t offset, uint64_t bytes, int out_fd,
                                          CopyRangeCall call, std::optional<uint64_t> out_offset) {
  AMN_ASSIGN_OR_RETURN(FileSource* source, Source(file));
  // The input is read at `offset`, not at its position: no lock needed.
  if (out_offset) return CopyFileRangeAt(source->fd(), offset, out_fd, *out_offset, bytes, call);
  return CopyFileRange(source->fd(), offset, out_fd, bytes, call);
}

Result<FileSystemKind> EngineInputs::FileSystem(size_t file) {
  AMN_ASSIGN_OR_RETURN(FileSource* source, Source(file));
  return FileSystemOf(source->fd());
}

Result<const MappedFile*> EngineInputs::Map(size_t file) {
  if (!use_mmap_) return nullptr;
  AMN_ASSIGN_OR_RETURN(FileSource* source, Source(file));  // its stamp is the reference
  std::lock_guard<std::mutex> lock(open_mutex_);
  if (unmappable_[file]) return nullptr;
  std::optional<MappedFile>& map = maps_[file];
  if (!map) {
    AMN_ASSIGN_OR_RETURN(MappedFile mapped, MappedFile::Open(paths_[file]));
    if (mapped.stamp() != source->stamp()) return Changed(paths_[file]);
    if (!mapped.guarded() && !mapped.bytes().empty()) {
      unmappable_[file] = true;  // no guard slot left: read this file instead
      return nullptr;
    }
    map.emplace(std::move(mapped));
  }
  return &*map;
}

Result<std::span<const std::byte>> EngineInputs::MappedSpan(size_t file, uint64_t offset,
                                                            uint64_t bytes,
                                                            const std::string& what) {
  AMN_ASSIGN_OR_RETURN(const MappedFile* map, Map(file));
  if (map == nullptr) return Status(StatusCode::kIo, PathText(paths_[file]) + ": not mapped");
  const std::span<const std::byte> all = map->bytes();
  if (offset > all.size() || bytes > all.size() - offset) {
    return Status(StatusCode::kTruncated, PathText(paths_[file]) + " ends before " + what)
        .WithByteOffset(offset);
  }
  return all.subspan(offset, bytes);
}

Result<std::vector<std::byte>> EngineInputs::ReadWhole(size_t file, uint64_t offset,
                                                       uint64_t bytes) {
  std::vector<std::byte> data;
  try {
    data.resize(bytes);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kLimitExceeded, PathText(paths_[file]) + ": cannot allocate " +
                                                  std::to_string(bytes) +
                                                  " bytes to read a tensor without mmap")
        .WithByteOffset(offset);
  } catch (const std::length_error&) {
    return Status(StatusCode::kLimitExceeded, PathText(paths_[file]) + ": a tensor of " +
                                                  std::to_string(bytes) +
                                                  " bytes cannot be read without mmap")
        .WithByteOffset(offset);
  }
  AMN_RETURN_IF_ERROR(Read(file, offset, data));
  return data;
}

Result<PackedViews> EngineInputs::Views(size_t tensor, const PackedJob& job) {
  std::lock_guard<std::mutex> lock(buffers_mutex_);
  std::shared_ptr<const Buffers>& cached = buffers_[tensor];
  if (cached) return cached->views;
  auto buffers = std::make_shared<Buffers>();
  auto view = [&](const InputSpan& span, size_t piece) -> Result<std::span<const std::byte>> {
    AMN_ASSIGN_OR_RETURN(const MappedFile* map, Map(span.file));
    if (map != nullptr) return MappedSpan(span.file, span.offset, span.bytes, "its tensor data");
    AMN_ASSIGN_OR_RETURN(buffers->pieces[piece], ReadWhole(span.file, span.offset, span.bytes));
    return std::span<const std::byte>(buffers->pieces[piece]);
  };
  Result<std::span<const std::byte>> codes = view(job.codes, kPartCount);
  if (!codes.ok()) {
    buffers_.erase(tensor);
    return codes.status();
  }
  buffers->views.codes = *codes;
  for (size_t p = 0; p < kPartCount; ++p) {
    if (!job.parts[p]) continue;
    Result<std::span<const std::byte>> part = view(*job.parts[p], p);
    if (!part.ok()) {
      buffers_.erase(tensor);
      return part.status();
    }
    buffers->views.parts[p] = *part;
  }
  cached = std::move(buffers);
  return cached->views;
}

Result<std::span<const std::byte>> EngineInputs::Storage(size_t tensor, size_t file,
                                                         const ArrayJob& job) {
  const ArrayEntry& a = job.entry;
  const uint64_t bytes = a.storage_elements * DtypeBytes(a.dtype);  // checked by the plan
  const std::string member_name = "its member '" + MessageSafe(job.member.name) + "'";
  auto too_short = [&] {
    return Status(StatusCode::kTruncated, "member '" + MessageSafe(job.member.name) +
                                              "' is shorter than its array");
  };
  std::lock_guard<std::mutex> lock(buffers_mutex_);
  if (auto it = buffers_.find(tensor); it != buffers_.end()) return it->second->storage;
  auto buffers = std::make_shared<Buffers>();
  AMN_RETURN_IF_ERROR(Source(file).status());  // stamped, so changes are caught
  if (!job.member.deflated) {
    AMN_ASSIGN_OR_RETURN(const MappedFile* map, Map(file));
    if (map != nullptr) {
      AMN_ASSIGN_OR_RETURN(const std::span<const std::byte> member,
                           MappedSpan(file, job.member.file_offset, job.member.bytes, member_name));
      if (a.data_offset > member.size() || bytes > member.size() - a.data_offset) return too_short();
      buffers->storage = member.subspan(a.data_offset, bytes);
    } else {
      if (a.data_offset > job.member.bytes || bytes > job.member.bytes - a.data_offset) {
        return too_short();
      }
      AMN_ASSIGN_OR_RETURN(buffers->pieces[0],
                           ReadWhole(file, job.member.file_offset + a.data_offset, bytes));
      buffers->storage = buffers->pieces[0];
    }
  } else {
    AMN_ASSIGN_OR_RETURN(auto archive, ZipArchive::OpenFile(paths_[file], ParseLimits{}));
    const ZipEntry* entry = archive->Find(job.member.name);
    if (entry == nullptr) {
      return Status(StatusCode::kInvalid, PathText(paths_[file]) + ": member '" +
                                              MessageSafe(job.member.name) + "' is gone");
    }
    AMN_ASSIGN_OR_RETURN(buffers->inflated, archive->ReadEntry(*entry, job.member.bytes));
    const auto member =
        std::as_bytes(std::span<const char>(buffers->inflated.data(), buffers->inflated.size()));
    if (a.data_offset > member.size() || bytes > member.size() - a.data_offset) return too_short();
    buffers->storage = member.subspan(a.data_offset, bytes);
  }
  buffers_[tensor] = buffers;
  return buffers->storage;
}

Result<std::span<const float>> EngineInputs::Scales(size_t tensor, const OutputTensor& fp8) {
  // One FP8 weight's scales, as F32: a grid far past any real model's.
  constexpr uint64_t kMaxScaleBytes = uint64_t{256} << 20;
  std::lock_guard<std::mutex> lock(buffers_mutex_);
  if (auto it = buffers_.find(tensor); it != buffers_.end()) return std::span(it->second->scales);
  if (fp8.scale_elements > kMaxScaleBytes / sizeof(float)) {
    return Status(StatusCode::kLimitExceeded, "its scale tensor exceeds 256 MiB as F32")
        .WithTensor(fp8.name);
  }
  auto buffers = std::make_shared<Buffers>();
  std::vector<std::byte> raw(fp8.scale_elements * DtypeBytes(fp8.scale_dtype));
  AMN_RETURN_IF_ERROR(Read(fp8.scale_file, fp8.scale_offset, raw));
  std::vector<float>& f32 = buffers->scales;
  f32.resize(fp8.scale_elements);
  if (fp8.scale_dtype == Dtype::kF32) {
    if (!raw.empty()) std::memcpy(f32.data(), raw.data(), raw.size());
  } else {
    std::vector<uint16_t> halves(fp8.scale_elements);
    if (!raw.empty()) std::memcpy(halves.data(), raw.data(), raw.size());
    AMN_RETURN_IF_ERROR(fp8.scale_dtype == Dtype::kBf16 ? ConvertBf16ToF32(halves, f32)
                                                        : ConvertF16ToF32(halves, f32));
  }
  buffers_[tensor] = buffers;
  return std::span<const float>(buffers->scales);
}

void EngineInputs::Release(size_t tensor, const OutputTensor& out) {
  {
    std::lock_guard<std::mutex> lock(buffers_mutex_);
    buffers_.erase(tensor);
  }
  std::lock_guard<std::mutex> lock(open_mutex_);
  auto evict = [&](size_t file, uint64_t offset, uint64_t bytes) {
    if (maps_[file]) maps_[file]->Evict(offset, bytes);
  };
  if (out.decode == Decode::kPacked) {
    evict(out.packed.codes.file, out.packed.codes.offset, out.packed.codes.bytes);
    for (const std::optional<InputSpan>& part : out.packed.parts) {
      if (part) evict(part->file, part->offset, part->bytes);
    }
  } else if (out.decode == Decode::kArray && !out.array.member.deflated) {
    evict(out.input_file, out.array.member.file_offset, out.array.member.bytes);
  }
}

Status EngineInputs::CheckMaps() {
  std::lock_guard<std::mutex> lock(open_mutex_);
  for (size_t f = 0; f < maps_.size(); ++f) {
    if (maps_[f] && maps_[f]->faulted()) {
      return Status(StatusCode::kTruncated,
                    PathText(paths_[f]) +
                        ": the file was truncated while it was being read (a page of its "
                        "memory map vanished)");
    }
  }
  return Status::Ok();
}

Status EngineInputs::CheckUnchanged() {
  AMN_RETURN_IF_ERROR(CheckMaps());
  std::lock_guard<std::mutex> lock(open_mutex_);
  for (size_t f = 0; f < sources_.size(); ++f) {
    if (!sources_[f]) continue;
    AMN_ASSIGN_OR_RETURN(const FileStamp now, sources_[f]->CurrentStamp());
    if (now != sources_[f]->stamp()) return Changed(paths_[f]);
  }
  return Status::Ok();
}

}  // namespace amn::formats
