// ZipArchive: the central directory read by hand (zip_directory.h), which
// knows where each entry's data starts, and libzip opened over the same
// ByteSource, which must list the same entries and does all the reading:
// it inflates DEFLATE entries and checks every entry's CRC-32.
#include "formats/zip_archive.h"

#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <unordered_map>
#include <utility>

#include "formats/zip_directory.h"

namespace amn::formats {
namespace {

// libzip reads in small pieces; this only bounds one ByteSource call.
constexpr uint64_t kMaxBridgeRead = uint64_t{1} << 30;
// One zip_fread call never asks for more than this.
constexpr uint64_t kMaxInflateChunk = uint64_t{1} << 30;

std::string FileText(const ByteSource& source) { return MessageSafe(source.name(), kMessagePathBytes); }
std::string EntryText(const ZipEntry& entry) { return "entry '" + MessageSafe(entry.name) + "'"; }

// A zip_error_t that frees its message.
class LibzipError {
 public:
  LibzipError() { zip_error_init(&error_); }
  ~LibzipError() { zip_error_fini(&error_); }
  LibzipError(const LibzipError&) = delete;
  LibzipError& operator=(const LibzipError&) = delete;
  zip_error_t* get() { return &error_; }

 private:
  zip_error_t error_;
};

// libzip's view of a ByteSource (zip_source_function_create): read-only and
// seekable. The ByteSource's own Status is kept, so an I/O error reaches the
// caller as itself rather than as libzip's "read error".
struct SourceBridge {
  ByteSource* source = nullptr;
  uint64_t position = 0;
  LibzipError error;
  Status last_failure;
};

zip_int64_t BridgeCallback(void* user, void* data, zip_uint64_t len, zip_source_cmd_t command) {
  auto* bridge = static_cast<SourceBridge*>(user);
  const uint64_t size = bridge->source->size();
  switch (command) {
    case ZIP_SOURCE_OPEN:
      bridge->position = 0;
      return 0;
    case ZIP_SOURCE_READ: {
      if (bridge->position >= size || len == 0) return 0;
      const uint64_t n = std::min({uint64_t{len}, size - bridge->position, kMaxBridgeRead});
      Status status = bridge->source->ReadAt(bridge->position, {static_cast<std::byte*>(data), n});
      if (!status.ok()) {
        bridge->last_failure = std::move(status);
        zip_error_set(bridge->error.get(), ZIP_ER_READ, EIO);
        return -1;
      }
      bridge->position += n;
      return static_cast<zip_int64_t>(n);
    }
    case ZIP_SOURCE_CLOSE:
    case ZIP_SOURCE_FREE:  // the bridge belongs to the archive, not to libzip
      return 0;
    case ZIP_SOURCE_STAT: {
      if (len < sizeof(zip_stat_t)) {
        zip_error_set(bridge->error.get(), ZIP_ER_INVAL, 0);
        return -1;
      }
      auto* stat = static_cast<zip_stat_t*>(data);
      zip_stat_init(stat);
      stat->size = size;
      stat->valid |= ZIP_STAT_SIZE;
      return sizeof(zip_stat_t);
    }
    case ZIP_SOURCE_ERROR:
      return zip_error_to_data(bridge->error.get(), data, len);
    case ZIP_SOURCE_SEEK: {
      const zip_int64_t to = zip_source_seek_compute_offset(bridge->position, size, data, len,
                                                            bridge->error.get());
      if (to < 0) return -1;
      bridge->position = static_cast<uint64_t>(to);
      return 0;
    }
    case ZIP_SOURCE_TELL:
      return static_cast<zip_int64_t>(bridge->position);
    case ZIP_SOURCE_SUPPORTS:
      return ZIP_SOURCE_SUPPORTS_SEEKABLE;
    default:
      zip_error_set(bridge->error.get(), ZIP_ER_OPNOTSUPP, 0);
      return -1;
  }
}

// A libzip failure as a Status: the ByteSource's own error when it caused
// it, else kInvalid (kUnsupported for what libzip cannot do), with libzip's
// text.
Status LibzipFailure(SourceBridge& bridge, zip_error_t* error, const std::string& what,
                     uint64_t offset) {
  if (!bridge.last_failure.ok()) return std::exchange(bridge.last_failure, Status::Ok());
  StatusCode code = StatusCode::kInvalid;
  switch (zip_error_code_zip(error)) {
    case ZIP_ER_MULTIDISK:
    case ZIP_ER_COMPNOTSUPP:
    case ZIP_ER_ENCRNOTSUPP:
    case ZIP_ER_NOPASSWD:
      code = StatusCode::kUnsupported;
      break;
    case ZIP_ER_MEMORY:
      code = StatusCode::kLimitExceeded;
      break;
    default:
      break;
  }
  return Status(code, FileText(*bridge.source) + ": " + what + " (libzip: " +
                          MessageSafe(zip_error_strerror(error)) + ")")
      .WithByteOffset(offset);
}

// Both readers must agree on every entry: a file the two parse differently
// is malformed in a way one of them did not notice.
Status CrossCheck(zip_t* zip, SourceBridge& bridge, const std::vector<ZipEntry>& entries) {
  const std::string file = FileText(*bridge.source);
  const zip_int64_t count = zip_get_num_entries(zip, 0);
  if (count < 0 || static_cast<uint64_t>(count) != entries.size()) {
    return Status(StatusCode::kInvalid, file + ": libzip lists " + std::to_string(count) +
                                            " entries, the central directory " +
                                            std::to_string(entries.size()));
  }
  constexpr zip_uint64_t kNeeded = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
  for (const ZipEntry& entry : entries) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(zip, entry.index, ZIP_FL_ENC_RAW, &stat) != 0) {
      return LibzipFailure(bridge, zip_get_error(zip), EntryText(entry) + ": libzip cannot describe it",
                           entry.local_header_offset);
    }
    const bool agree = (stat.valid & kNeeded) == kNeeded && stat.name != nullptr &&
                       entry.name == stat.name && stat.size == entry.bytes &&
                       stat.comp_size == entry.compressed_bytes &&
                       stat.comp_method == (entry.deflated ? ZIP_CM_DEFLATE : ZIP_CM_STORE) &&
                       ((stat.valid & ZIP_STAT_CRC) == 0 || stat.crc == entry.crc32);
    if (!agree) {
      return Status(StatusCode::kInvalid,
                    file + ": " + EntryText(entry) + ": libzip reads the central directory differently")
          .WithByteOffset(entry.local_header_offset);
    }
  }
  return Status::Ok();
}

// Uncompressed bytes of one entry through libzip, which inflates and checks
// the CRC-32 when a read reaches the end of the data.
class LibzipEntryReader final : public ZipEntryReader {
 public:
  LibzipEntryReader(zip_file_t* file, SourceBridge* bridge, const ZipEntry& entry)
      : file_(file), bridge_(bridge), entry_(entry) {}
  ~LibzipEntryReader() override { zip_fclose(file_); }
  LibzipEntryReader(const LibzipEntryReader&) = delete;
  LibzipEntryReader& operator=(const LibzipEntryReader&) = delete;

  uint64_t position() const override { return position_; }

  Status Read(std::span<std::byte> out) override {
    if (!failure_.ok()) return failure_;
    bridge_->last_failure = Status::Ok();
    if (out.size() > entry_.bytes - position_) {
      return Status(StatusCode::kTruncated,
                    Prefix() + "reading " + std::to_string(out.size()) + " bytes at " +
                        std::to_string(position_) + " runs past its " + std::to_string(entry_.bytes) +
                        " uncompressed bytes")
          .WithByteOffset(entry_.data_offset);
    }
    size_t done = 0;
    while (done < out.size()) {
      const uint64_t want = std::min<uint64_t>(out.size() - done, kMaxInflateChunk);
      const zip_int64_t n = zip_fread(file_, out.data() + done, want);
      if (n < 0) return Fail(ReadFailure("reading at " + std::to_string(position_)));
      if (n == 0) {
        return Fail(Status(StatusCode::kInvalid, Prefix() + "the data ends after " + std::to_string(position_) +
                                                     " of " + std::to_string(entry_.bytes) + " bytes")
                        .WithByteOffset(entry_.data_offset));
      }
      done += static_cast<size_t>(n);
      position_ += static_cast<uint64_t>(n);
    }
    if (position_ == entry_.bytes && !end_checked_) {
      // libzip compares the CRC-32 only when a read meets the end of the
      // data, and it would inflate past the declared size: one more byte
      // asked for must be refused.
      std::byte probe{};
      const zip_int64_t n = zip_fread(file_, &probe, 1);
      if (n < 0) return Fail(ReadFailure("at the end"));
      if (n > 0) {
        return Fail(Status(StatusCode::kInvalid, Prefix() + "the data holds more than the declared " +
                                                     std::to_string(entry_.bytes) + " bytes")
                        .WithByteOffset(entry_.data_offset));
      }
      end_checked_ = true;
    }
    return Status::Ok();
  }

 private:
  std::string Prefix() const { return FileText(*bridge_->source) + ": " + EntryText(entry_) + ": "; }
  Status ReadFailure(const std::string& where) {
    return LibzipFailure(*bridge_, zip_file_get_error(file_),
                         EntryText(entry_) + ": " + where + " of its uncompressed data",
                         entry_.data_offset);
  }
  Status Fail(Status status) {
    failure_ = status;
    return status;
  }

  zip_file_t* file_;
  SourceBridge* bridge_;
  const ZipEntry entry_;
  uint64_t position_ = 0;
  bool end_checked_ = false;
  Status failure_;
};

// Only the archive's own record of an entry is trusted: `entry` must be a
// copy of one of `entries`.
const ZipEntry* OwnEntry(const std::vector<ZipEntry>& entries, const ZipEntry& entry) {
  if (entry.index >= entries.size()) return nullptr;
  const ZipEntry& own = entries[entry.index];
  const bool same = own.name == entry.name && own.deflated == entry.deflated &&
                    own.data_offset == entry.data_offset && own.compressed_bytes == entry.compressed_bytes &&
                    own.bytes == entry.bytes;
  return same ? &own : nullptr;
}

Status NotAnEntry(const ByteSource& source, const ZipEntry& entry) {
  return Status(StatusCode::kInvalidArgument,
                FileText(source) + ": " + EntryText(entry) + " is not an entry of this archive");
}

}  // namespace

struct ZipArchive::Impl {
  std::unique_ptr<ByteSource> source;
  std::unique_ptr<SourceBridge> bridge;  // libzip keeps its address
  zip_t* zip = nullptr;
  std::unordered_map<std::string_view, size_t> by_name;  // views of entries_' names

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (zip != nullptr) zip_discard(zip);  // frees the zip_source_t; the bridge outlives it
  }
};

ZipArchive::ZipArchive(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ZipArchive::~ZipArchive() = default;

Result<std::unique_ptr<ZipArchive>> ZipArchive::Open(std::unique_ptr<ByteSource> source,
                                                     const ParseLimits& limits) {
  if (source == nullptr) return Status(StatusCode::kInvalidArgument, "ZipArchive::Open: no source");
  const std::string file = FileText(*source);
  try {
    if (source->size() > static_cast<uint64_t>(std::numeric_limits<zip_int64_t>::max())) {
      return Status(StatusCode::kUnsupported, file + ": too large for libzip");
    }
    AMN_ASSIGN_OR_RETURN(std::vector<ZipEntry> entries, ReadZipDirectory(*source, limits));

    auto impl = std::make_unique<Impl>();
    impl->source = std::move(source);
    impl->bridge = std::make_unique<SourceBridge>();
    impl->bridge->source = impl->source.get();
    LibzipError error;
    zip_source_t* zip_source = zip_source_function_create(BridgeCallback, impl->bridge.get(), error.get());
    if (zip_source == nullptr) {
      return LibzipFailure(*impl->bridge, error.get(), "libzip cannot read it", 0);
    }
    impl->zip = zip_open_from_source(zip_source, ZIP_RDONLY, error.get());
    if (impl->zip == nullptr) {
      zip_source_free(zip_source);
      return LibzipFailure(*impl->bridge, error.get(), "libzip cannot open it", 0);
    }
    AMN_RETURN_IF_ERROR(CrossCheck(impl->zip, *impl->bridge, entries));

    std::unique_ptr<ZipArchive> archive(new ZipArchive(std::move(impl)));
    archive->entries_ = std::move(entries);
    archive->impl_->by_name.reserve(archive->entries_.size());
    for (size_t i = 0; i < archive->entries_.size(); ++i) {
      archive->impl_->by_name.emplace(archive->entries_[i].name, i);
    }
    return archive;
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kLimitExceeded, file + ": out of memory reading the ZIP directory");
  }
}

Result<std::unique_ptr<ZipArchive>> ZipArchive::OpenFile(const std::filesystem::path& path,
                                                         const ParseLimits& limits) {
  AMN_ASSIGN_OR_RETURN(std::unique_ptr<FileSource> file, FileSource::Open(path));
  return Open(std::move(file), limits);
}

const ZipEntry* ZipArchive::Find(std::string_view name) const {
  const auto found = impl_->by_name.find(name);
  return found == impl_->by_name.end() ? nullptr : &entries_[found->second];
}

const std::string& ZipArchive::name() const { return impl_->source->name(); }
ByteSource& ZipArchive::source() { return *impl_->source; }

Result<std::unique_ptr<ZipEntryReader>> ZipArchive::OpenEntry(const ZipEntry& entry) {
  const ZipEntry* own_entry = OwnEntry(entries_, entry);
  if (own_entry == nullptr) return NotAnEntry(*impl_->source, entry);
  const ZipEntry& own = *own_entry;
  try {
    impl_->bridge->last_failure = Status::Ok();
    zip_file_t* handle = zip_fopen_index(impl_->zip, own.index, 0);
    if (handle == nullptr) {
      return LibzipFailure(*impl_->bridge, zip_get_error(impl_->zip),
                           EntryText(own) + ": libzip cannot open it", own.local_header_offset);
    }
    return std::unique_ptr<ZipEntryReader>(new LibzipEntryReader(handle, impl_->bridge.get(), own));
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kLimitExceeded,
                  FileText(*impl_->source) + ": out of memory opening " + EntryText(own));
  }
}

Result<std::string> ZipArchive::ReadEntry(const ZipEntry& entry, uint64_t max_bytes) {
  const std::string file = FileText(*impl_->source);
  if (OwnEntry(entries_, entry) == nullptr) return NotAnEntry(*impl_->source, entry);
  if (entry.bytes > max_bytes || entry.bytes > std::numeric_limits<size_t>::max()) {
    return Status(StatusCode::kLimitExceeded, file + ": " + EntryText(entry) + " has " +
                                                  std::to_string(entry.bytes) +
                                                  " uncompressed bytes, over the caller's limit of " +
                                                  std::to_string(max_bytes))
        .WithByteOffset(entry.data_offset);
  }
  AMN_ASSIGN_OR_RETURN(std::unique_ptr<ZipEntryReader> reader, OpenEntry(entry));
  try {
    std::string bytes(static_cast<size_t>(entry.bytes), '\0');
    AMN_RETURN_IF_ERROR(reader->Read(std::as_writable_bytes(std::span<char>(bytes))));
    return bytes;
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kLimitExceeded,
                  file + ": out of memory for the " + std::to_string(entry.bytes) + " bytes of " +
                      EntryText(entry));
  }
}

bool LooksLikeZip(ByteSource& source) {
  std::byte magic[4];
  if (source.size() < sizeof(magic) || !source.ReadAt(0, magic).ok()) return false;
  return std::memcmp(magic, "PK\3\4", 4) == 0 || std::memcmp(magic, "PK\5\6", 4) == 0;
}

}  // namespace amn::formats
