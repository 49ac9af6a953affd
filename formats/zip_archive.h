// ZIP containers (NPZ, PyTorch checkpoints) through libzip: stored and
// DEFLATE entries, zip64. Every declared size is checked against the file
// and ParseLimits before anything is allocated or inflated.
#ifndef AMN_FORMATS_ZIP_ARCHIVE_H_
#define AMN_FORMATS_ZIP_ARCHIVE_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "amn/limits.h"
#include "amn/result.h"
#include "formats/byte_source.h"

namespace amn::formats {

struct ZipEntry {
  std::string name;
  uint64_t index = 0;            // libzip's index
  bool deflated = false;         // method 8; method 0 is stored
  uint64_t local_header_offset = 0;
  uint64_t data_offset = 0;      // absolute offset of the entry's (compressed) data
  uint64_t compressed_bytes = 0;
  uint64_t bytes = 0;            // uncompressed
  uint32_t crc32 = 0;
};

class ZipEntryReader;

class ZipArchive {
 public:
  // Reads the central directory (and each entry's local header, to find its
  // data) from `source`, which the archive owns. Errors: not a ZIP (no end of
  // central directory record) kInvalid; entries or names over
  // limits.max_item_count / max_header_bytes, an entry over
  // max_single_allocation uncompressed, a total over max_total_bytes, or a
  // deflated entry whose bytes / compressed_bytes ratio exceeds
  // max_decompression_ratio: kLimitExceeded; encrypted entries, methods other
  // than stored and DEFLATE, multi-disk archives: kUnsupported; data running
  // past the end of the file kTruncated; a stored entry whose sizes differ,
  // duplicate names, overlapping entry data, local headers that disagree
  // with the central directory: kInvalid. Messages name the source, the
  // entry and a byte offset.
  static Result<std::unique_ptr<ZipArchive>> Open(std::unique_ptr<ByteSource> source,
                                                  const ParseLimits& limits);
  static Result<std::unique_ptr<ZipArchive>> OpenFile(const std::filesystem::path& path,
                                                      const ParseLimits& limits);
  ~ZipArchive();

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* Find(std::string_view name) const;  // nullptr when absent
  const std::string& name() const;                    // the source's name
  ByteSource& source();

  // The whole uncompressed entry; kLimitExceeded when entry.bytes > max_bytes.
  // Entries are read through libzip: DEFLATE data is inflated and must
  // produce exactly entry.bytes bytes, and every entry (stored ones too) must
  // have the right CRC-32 (kInvalid otherwise). `entry` must be one of
  // entries() (or a copy): anything else is kInvalidArgument.
  Result<std::string> ReadEntry(const ZipEntry& entry, uint64_t max_bytes);

  // A sequential reader of the uncompressed entry (inflating as it goes).
  // It must not outlive the archive. An archive and its readers are used
  // from one thread at a time (libzip's archive is not thread-safe); several
  // readers may be open and interleaved.
  Result<std::unique_ptr<ZipEntryReader>> OpenEntry(const ZipEntry& entry);

 private:
  struct Impl;
  explicit ZipArchive(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::vector<ZipEntry> entries_;
  friend class ZipEntryReader;
};

class ZipEntryReader {
 public:
  virtual ~ZipEntryReader() = default;
  // The next out.size() uncompressed bytes; kTruncated past the entry's end
  // (nothing is read then), kInvalid when the compressed data is corrupt,
  // ends early, or runs on past entry.bytes, or its CRC-32 is wrong (checked
  // by the Read that reaches the end, also an empty Read of an empty entry).
  // After an error every Read returns that error again.
  virtual Status Read(std::span<std::byte> out) = 0;
  virtual uint64_t position() const = 0;
};

// True when `source` starts with a ZIP local file header ("PK\3\4") or an
// empty archive's end record ("PK\5\6").
bool LooksLikeZip(ByteSource& source);

}  // namespace amn::formats

#endif  // AMN_FORMATS_ZIP_ARCHIVE_H_
