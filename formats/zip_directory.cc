// ZIP end records, central directory and local headers (PKWARE APPNOTE.TXT
// 6.3.x: 4.3.7 local file header, 4.3.12 central directory header, 4.3.14
// zip64 end of central directory record, 4.3.15 its locator, 4.3.16 end of
// central directory record, 4.5.3 zip64 extended information extra field).
// Every count, size and offset is checked against the file and ParseLimits
// before it is used; no entry data is read.
#include "formats/zip_directory.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "formats/checked_math.h"

namespace amn::formats {
namespace {

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;    // "PK\3\4"
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;  // "PK\1\2"
constexpr uint32_t kEndSignature = 0x06054b50;            // "PK\5\6"
constexpr uint32_t kZip64EndSignature = 0x06064b50;       // "PK\6\6"
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;   // "PK\6\7"

constexpr uint64_t kEndBytes = 22;
constexpr uint64_t kMaxCommentBytes = 0xFFFF;
constexpr uint64_t kZip64LocatorBytes = 20;
constexpr uint64_t kZip64EndBytes = 56;
constexpr uint64_t kCentralHeaderBytes = 46;
constexpr uint64_t kLocalHeaderBytes = 30;

constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
constexpr uint16_t kFlagEncrypted = 1 << 0;
constexpr uint16_t kFlagDataDescriptor = 1 << 3;
constexpr uint16_t kFlagStrongEncryption = 1 << 6;
constexpr uint16_t kFlagMaskedLocalHeaders = 1 << 13;  // central directory encryption
constexpr uint16_t kSaturated16 = 0xFFFF;
constexpr uint32_t kSaturated32 = 0xFFFFFFFF;

uint16_t Le16(const std::byte* p) {
  return static_cast<uint16_t>(static_cast<uint16_t>(p[0]) | static_cast<uint16_t>(p[1]) << 8);
}
uint32_t Le32(const std::byte* p) {
  return static_cast<uint32_t>(Le16(p)) | static_cast<uint32_t>(Le16(p + 2)) << 16;
}
uint64_t Le64(const std::byte* p) {
  return static_cast<uint64_t>(Le32(p)) | static_cast<uint64_t>(Le32(p + 4)) << 32;
}

std::string Range(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

// Where the central directory is, from the end record (or its zip64 twin).
struct DirectoryLocation {
  uint64_t entries = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint64_t end_record_offset = 0;  // the first end record: the directory must end before it
};

// An extra field block (APPNOTE 4.5.1): id, size, data, repeated.
// Finds the data of the field `id`; a field running past the block is kInvalid.
class ExtraFields {
 public:
  explicit ExtraFields(std::span<const std::byte> block) : block_(block) {}
  // False (and `error` set) on a malformed block; `found` empty when absent.
  bool Find(uint16_t id, std::span<const std::byte>* found) const {
    *found = {};
    size_t pos = 0;
    // A tail shorter than a field header is padding some writers leave.
    while (block_.size() - pos >= 4) {
      const uint16_t field_id = Le16(block_.data() + pos);
      const uint16_t field_bytes = Le16(block_.data() + pos + 2);
      pos += 4;
      if (field_bytes > block_.size() - pos) return false;
      if (field_id == id && found->empty()) *found = block_.subspan(pos, field_bytes);
      pos += field_bytes;
    }
    return true;
  }

 private:
  std::span<const std::byte> block_;
};

// Reads the next 8-byte value of a zip64 extra field, in field order.
class Zip64Values {
 public:
  explicit Zip64Values(std::span<const std::byte> field) : field_(field) {}
  bool Next(uint64_t* value) {
    if (field_.size() - pos_ < 8) return false;
    *value = Le64(field_.data() + pos_);
    pos_ += 8;
    return true;
  }
  bool Next32(uint64_t* value) {  // the disk number is the one 4-byte value
    if (field_.size() - pos_ < 4) return false;
    *value = Le32(field_.data() + pos_);
    pos_ += 4;
    return true;
  }

 private:
  std::span<const std::byte> field_;
  size_t pos_ = 0;
};

class DirectoryReader {
 public:
  DirectoryReader(ByteSource& source, const ParseLimits& limits)
      : source_(source), limits_(limits.Clamped()), file_(MessageSafe(source.name(), kMessagePathBytes)) {}

  Result<std::vector<ZipEntry>> Run() {
    DirectoryLocation where;
    AMN_RETURN_IF_ERROR(FindDirectory(&where));
    AMN_RETURN_IF_ERROR(CheckDirectoryBounds(where));
    std::vector<std::byte> directory(where.bytes);
    AMN_RETURN_IF_ERROR(source_.ReadAt(where.offset, directory));

    std::vector<ZipEntry> entries;
    entries.reserve(where.entries);
    // Names are views into `directory`, which outlives the set.
    std::unordered_set<std::string_view> names;
    names.reserve(where.entries);
    uint64_t total_bytes = 0;
    size_t pos = 0;
    for (uint64_t index = 0; index < where.entries; ++index) {
      const uint64_t at = where.offset + pos;
      ZipEntry entry;
      std::string_view name;
      AMN_RETURN_IF_ERROR(ParseCentralHeader(directory, at, &pos, &entry, &name));
      entry.index = index;
      if (!names.insert(name).second) {
        return Fail(StatusCode::kInvalid, Entry(entry) + ": duplicate name", at);
      }
      AMN_RETURN_IF_ERROR(CheckSizes(entry, at, &total_bytes));
      entries.push_back(std::move(entry));
    }
    for (ZipEntry& entry : entries) AMN_RETURN_IF_ERROR(ReadLocalHeader(entry));
    AMN_RETURN_IF_ERROR(CheckLayout(entries, where.offset));
    return entries;
  }

 private:
  Status Fail(StatusCode code, const std::string& what, uint64_t offset) const {
    return Status(code, file_ + ": " + what).WithByteOffset(offset);
  }
  static std::string Entry(const ZipEntry& entry) { return "entry '" + MessageSafe(entry.name) + "'"; }

  // The end record is the last 22 bytes unless a comment (at most 64 KiB)
  // follows it: the last "PK\5\6" whose comment fits in the file.
  Status FindDirectory(DirectoryLocation* where) {
    const uint64_t size = source_.size();
    if (size < kEndBytes) {
      return Fail(StatusCode::kInvalid,
                  "not a ZIP archive: " + std::to_string(size) +
                      " bytes cannot hold an end of central directory record",
                  0);
    }
    const uint64_t tail_bytes = std::min(size, kEndBytes + kMaxCommentBytes);
    const uint64_t tail_offset = size - tail_bytes;
    std::vector<std::byte> tail(tail_bytes);
    AMN_RETURN_IF_ERROR(source_.ReadAt(tail_offset, tail));
    uint64_t found = tail_bytes;
    for (uint64_t p = tail_bytes - kEndBytes + 1; p-- > 0;) {
      if (Le32(tail.data() + p) == kEndSignature &&
          Le16(tail.data() + p + 20) <= tail_bytes - kEndBytes - p) {
        found = p;
        break;
      }
    }
    if (found == tail_bytes) {
      return Fail(StatusCode::kInvalid,
                  "not a ZIP archive: no end of central directory record in the last " +
                      std::to_string(tail_bytes) + " bytes",
                  tail_offset);
    }
    const std::byte* end = tail.data() + found;
    const uint64_t end_offset = tail_offset + found;
    uint64_t disk = Le16(end + 4);
    uint64_t directory_disk = Le16(end + 6);
    uint64_t disk_entries = Le16(end + 8);
    where->entries = Le16(end + 10);
    where->bytes = Le32(end + 12);
    where->offset = Le32(end + 16);
    where->end_record_offset = end_offset;

    // The zip64 locator sits right before the end record whenever a zip64
    // end record exists (as libzip and Python's zipfile read it); its values
    // replace the 16- and 32-bit ones, which are then usually saturated.
    if (end_offset >= kZip64LocatorBytes) {
      std::array<std::byte, kZip64LocatorBytes> locator{};
      const uint64_t locator_offset = end_offset - kZip64LocatorBytes;
      AMN_RETURN_IF_ERROR(source_.ReadAt(locator_offset, locator));
      if (Le32(locator.data()) == kZip64LocatorSignature) {
        const uint32_t record_disk = Le32(locator.data() + 4);
        const uint64_t record_offset = Le64(locator.data() + 8);
        const uint32_t total_disks = Le32(locator.data() + 16);
        if (record_disk != 0 || total_disks > 1) {
          return Fail(StatusCode::kUnsupported, "multi-disk (split) ZIP archives are not supported",
                      locator_offset);
        }
        if (record_offset > locator_offset || locator_offset - record_offset < kZip64EndBytes) {
          return Fail(StatusCode::kInvalid,
                      "zip64 end record at " + std::to_string(record_offset) +
                          " does not fit before its locator at " + std::to_string(locator_offset),
                      locator_offset);
        }
        std::array<std::byte, kZip64EndBytes> record{};
        AMN_RETURN_IF_ERROR(source_.ReadAt(record_offset, record));
        if (Le32(record.data()) != kZip64EndSignature) {
          return Fail(StatusCode::kInvalid, "no zip64 end record where its locator points",
                      record_offset);
        }
        disk = Le32(record.data() + 16);
        directory_disk = Le32(record.data() + 20);
        disk_entries = Le64(record.data() + 24);
        where->entries = Le64(record.data() + 32);
        where->bytes = Le64(record.data() + 40);
        where->offset = Le64(record.data() + 48);
        where->end_record_offset = record_offset;
      }
    }
    if (disk != 0 || directory_disk != 0 || disk_entries != where->entries) {
      return Fail(StatusCode::kUnsupported, "multi-disk (split) ZIP archives are not supported",
                  end_offset);
    }
    return Status::Ok();
  }

  Status CheckDirectoryBounds(const DirectoryLocation& where) const {
    if (where.entries > limits_.max_item_count) {
      return Fail(StatusCode::kLimitExceeded,
                  std::to_string(where.entries) + " entries exceed the item limit of " +
                      std::to_string(limits_.max_item_count),
                  where.end_record_offset);
    }
    if (where.bytes > limits_.max_header_bytes) {
      return Fail(StatusCode::kLimitExceeded,
                  "the " + std::to_string(where.bytes) +
                      "-byte central directory exceeds the header limit of " +
                      std::to_string(limits_.max_header_bytes) + " bytes",
                  where.end_record_offset);
    }
    uint64_t end = 0;
    if (!CheckedAdd(where.offset, where.bytes, &end) || end > where.end_record_offset) {
      return Fail(StatusCode::kInvalid,
                  "the central directory " + Range(where.offset, where.offset + where.bytes) +
                      " does not end before the end record at " +
                      std::to_string(where.end_record_offset),
                  where.end_record_offset);
    }
    uint64_t minimum = 0;
    if (!CheckedMul(where.entries, kCentralHeaderBytes, &minimum) || minimum > where.bytes) {
      return Fail(StatusCode::kInvalid,
                  std::to_string(where.entries) + " entries cannot fit in a " +
                      std::to_string(where.bytes) + "-byte central directory",
                  where.offset);
    }
    return Status::Ok();
  }

  // One central directory header at directory[*pos]; advances *pos.
  // `at` is its absolute offset, for messages.
  Status ParseCentralHeader(std::span<const std::byte> directory, uint64_t at, size_t* pos,
                            ZipEntry* entry, std::string_view* name) const {
    if (directory.size() - *pos < kCentralHeaderBytes) {
      return Fail(StatusCode::kInvalid, "central directory ends inside an entry header", at);
    }
    const std::byte* h = directory.data() + *pos;
    if (Le32(h) != kCentralHeaderSignature) {
      return Fail(StatusCode::kInvalid, "expected a central directory header (PK\\1\\2)", at);
    }
    const uint16_t flags = Le16(h + 8);
    const uint16_t method = Le16(h + 10);
    entry->crc32 = Le32(h + 16);
    const uint32_t compressed32 = Le32(h + 20);
    const uint32_t bytes32 = Le32(h + 24);
    const uint16_t name_bytes = Le16(h + 28);
    const uint16_t extra_bytes = Le16(h + 30);
    const uint16_t comment_bytes = Le16(h + 32);
    const uint16_t disk16 = Le16(h + 34);
    const uint32_t local_offset32 = Le32(h + 42);
    const size_t variable = size_t{name_bytes} + extra_bytes + comment_bytes;
    if (directory.size() - *pos - kCentralHeaderBytes < variable) {
      return Fail(StatusCode::kInvalid, "central directory ends inside an entry's name or extra fields",
                  at);
    }
    *name = std::string_view(reinterpret_cast<const char*>(h + kCentralHeaderBytes), name_bytes);
    entry->name = std::string(*name);
    const std::span<const std::byte> extra(h + kCentralHeaderBytes + name_bytes, extra_bytes);
    *pos += kCentralHeaderBytes + variable;

    if (name->find('\0') != std::string_view::npos) {
      return Fail(StatusCode::kInvalid, Entry(*entry) + ": name contains a NUL byte", at);
    }
    if ((flags & (kFlagEncrypted | kFlagStrongEncryption | kFlagMaskedLocalHeaders)) != 0) {
      return Fail(StatusCode::kUnsupported, Entry(*entry) + " is encrypted", at);
    }
    if (method != kMethodStored && method != kMethodDeflate) {
      return Fail(StatusCode::kUnsupported,
                  Entry(*entry) + " uses compression method " + std::to_string(method) +
                      " (this build reads stored (0) and DEFLATE (8))",
                  at);
    }
    entry->deflated = method == kMethodDeflate;

    // Saturated fields are in the zip64 extra field, in this order.
    entry->bytes = bytes32;
    entry->compressed_bytes = compressed32;
    entry->local_header_offset = local_offset32;
    uint64_t disk = disk16;
    if (bytes32 == kSaturated32 || compressed32 == kSaturated32 || local_offset32 == kSaturated32 ||
        disk16 == kSaturated16) {
      std::span<const std::byte> field;
      if (!ExtraFields(extra).Find(kZip64ExtraId, &field)) {
        return Fail(StatusCode::kInvalid, Entry(*entry) + ": malformed extra fields", at);
      }
      Zip64Values values(field);
      const bool ok = (bytes32 != kSaturated32 || values.Next(&entry->bytes)) &&
                      (compressed32 != kSaturated32 || values.Next(&entry->compressed_bytes)) &&
                      (local_offset32 != kSaturated32 || values.Next(&entry->local_header_offset)) &&
                      (disk16 != kSaturated16 || values.Next32(&disk));
      if (!ok) {
        return Fail(StatusCode::kInvalid,
                    Entry(*entry) + ": saturated sizes or offset without their zip64 extra field",
                    at);
      }
    }
    if (disk != 0) {
      return Fail(StatusCode::kUnsupported, Entry(*entry) + " starts on disk " + std::to_string(disk) +
                                                " (multi-disk archives are not supported)",
                  at);
    }
    return Status::Ok();
  }

  // The zip-bomb guard: every size is bounded before anything is inflated.
  Status CheckSizes(const ZipEntry& entry, uint64_t at, uint64_t* total_bytes) const {
    if (!entry.deflated && entry.compressed_bytes != entry.bytes) {
      return Fail(StatusCode::kInvalid,
                  Entry(entry) + " is stored but declares " + std::to_string(entry.compressed_bytes) +
                      " stored and " + std::to_string(entry.bytes) + " uncompressed bytes",
                  at);
    }
    if (entry.bytes > limits_.max_single_allocation) {
      return Fail(StatusCode::kLimitExceeded,
                  Entry(entry) + " has " + std::to_string(entry.bytes) +
                      " uncompressed bytes, over the single-allocation limit of " +
                      std::to_string(limits_.max_single_allocation),
                  at);
    }
    if (!CheckedAdd(*total_bytes, entry.bytes, total_bytes) || *total_bytes > limits_.max_total_bytes) {
      return Fail(StatusCode::kLimitExceeded,
                  "entries up to " + Entry(entry) + " declare more than the total limit of " +
                      std::to_string(limits_.max_total_bytes) + " uncompressed bytes",
                  at);
    }
    if (entry.deflated) {
      uint64_t allowed = 0;
      const bool bounded = CheckedMul(entry.compressed_bytes, limits_.max_decompression_ratio, &allowed);
      if (bounded && entry.bytes > allowed) {
        return Fail(StatusCode::kLimitExceeded,
                    Entry(entry) + " inflates " + std::to_string(entry.compressed_bytes) + " bytes to " +
                        std::to_string(entry.bytes) + ", over the decompression ratio limit of " +
                        std::to_string(limits_.max_decompression_ratio),
                    at);
      }
    }
    return Status::Ok();
  }

  // Finds data_offset and checks the local header against the central one:
  // same name and method, and (without a data descriptor) the same CRC-32
  // and sizes, zip64 ones included.
  Status ReadLocalHeader(ZipEntry& entry) {
    const uint64_t at = entry.local_header_offset;
    const uint64_t size = source_.size();
    if (at > size || size - at < kLocalHeaderBytes) {
      return Fail(StatusCode::kTruncated,
                  Entry(entry) + ": local header at " + std::to_string(at) + " runs past the end of the " +
                      std::to_string(size) + "-byte file",
                  at);
    }
    std::array<std::byte, kLocalHeaderBytes> h{};
    AMN_RETURN_IF_ERROR(source_.ReadAt(at, h));
    if (Le32(h.data()) != kLocalHeaderSignature) {
      return Fail(StatusCode::kInvalid, Entry(entry) + ": expected a local file header (PK\\3\\4)", at);
    }
    const uint16_t flags = Le16(h.data() + 6);
    const uint16_t method = Le16(h.data() + 8);
    const uint32_t crc = Le32(h.data() + 14);
    const uint32_t compressed32 = Le32(h.data() + 18);
    const uint32_t bytes32 = Le32(h.data() + 22);
    const uint16_t name_bytes = Le16(h.data() + 26);
    const uint16_t extra_bytes = Le16(h.data() + 28);
    const uint64_t variable = uint64_t{name_bytes} + extra_bytes;
    if (size - at - kLocalHeaderBytes < variable) {
      return Fail(StatusCode::kTruncated,
                  Entry(entry) + ": local header name and extra fields run past the end of the file", at);
    }
    std::vector<std::byte> tail(variable);
    AMN_RETURN_IF_ERROR(source_.ReadAt(at + kLocalHeaderBytes, tail));
    const std::string_view local_name(reinterpret_cast<const char*>(tail.data()), name_bytes);
    if (local_name != entry.name) {
      return Fail(StatusCode::kInvalid,
                  Entry(entry) + ": local header names '" + MessageSafe(local_name) + "'", at);
    }
    if (method != (entry.deflated ? kMethodDeflate : kMethodStored)) {
      return Fail(StatusCode::kInvalid,
                  Entry(entry) + ": local header method " + std::to_string(method) +
                      " differs from the central directory's",
                  at);
    }
    if ((flags & kFlagEncrypted) != 0) {
      return Fail(StatusCode::kUnsupported, Entry(entry) + " is encrypted", at);
    }
    if ((flags & kFlagDataDescriptor) == 0) {
      // Saturated local sizes come from the local zip64 field (uncompressed
      // first); a writer that left it out is not contradicting anything.
      uint64_t bytes = bytes32, compressed = compressed32;
      bool bytes_known = true, compressed_known = true;
      if (bytes32 == kSaturated32 || compressed32 == kSaturated32) {
        std::span<const std::byte> field;
        if (!ExtraFields(std::span<const std::byte>(tail).subspan(name_bytes)).Find(kZip64ExtraId, &field)) {
          return Fail(StatusCode::kInvalid, Entry(entry) + ": malformed local extra fields", at);
        }
        Zip64Values values(field);
        if (bytes32 == kSaturated32) bytes_known = values.Next(&bytes);
        if (compressed32 == kSaturated32) compressed_known = values.Next(&compressed);
      }
      if (crc != entry.crc32 || (bytes_known && bytes != entry.bytes) ||
          (compressed_known && compressed != entry.compressed_bytes)) {
        return Fail(StatusCode::kInvalid,
                    Entry(entry) + ": local header CRC-32 or sizes differ from the central directory's",
                    at);
      }
    }
    uint64_t data_end = 0;
    entry.data_offset = at + kLocalHeaderBytes + variable;  // at + 30 + variable <= size
    if (!CheckedAdd(entry.data_offset, entry.compressed_bytes, &data_end) || data_end > size) {
      return Fail(StatusCode::kTruncated,
                  Entry(entry) + ": data " + Range(entry.data_offset, entry.data_offset + entry.compressed_bytes) +
                      " runs past the end of the " + std::to_string(size) + "-byte file",
                  entry.data_offset);
    }
    return Status::Ok();
  }

  // Entries (local header through data) may not overlap each other or the
  // central directory: overlapping entries are how some zip bombs multiply
  // one compressed stream.
  Status CheckLayout(const std::vector<ZipEntry>& entries, uint64_t directory_offset) const {
    std::vector<size_t> order(entries.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return entries[a].local_header_offset < entries[b].local_header_offset;
    });
    for (size_t k = 0; k < order.size(); ++k) {
      const ZipEntry& entry = entries[order[k]];
      const uint64_t data_end = entry.data_offset + entry.compressed_bytes;  // checked when read
      const bool last = k + 1 == order.size();
      const uint64_t next = last ? directory_offset : entries[order[k + 1]].local_header_offset;
      if (data_end > next) {
        const std::string other =
            last ? std::string("the central directory") : Entry(entries[order[k + 1]]);
        return Fail(StatusCode::kInvalid,
                    Entry(entry) + ": " + Range(entry.local_header_offset, data_end) + " overlaps " +
                        other + " at " + std::to_string(next),
                    next);
      }
    }
    return Status::Ok();
  }

  ByteSource& source_;
  const ParseLimits limits_;
  const std::string file_;
};

}  // namespace

Result<std::vector<ZipEntry>> ReadZipDirectory(ByteSource& source, const ParseLimits& limits) {
  return DirectoryReader(source, limits).Run();
}

}  // namespace amn::formats
