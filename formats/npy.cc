// .npy files and .npz archives as ArrayFiles: each array's NPY header is
// read (npy_header.cc) and its elements located, never read. NumPy writes
// exactly the array's bytes after the header, so the data must fill the
// file (or member) exactly.
#include "formats/npy.h"

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace amn::formats {
namespace {

// Enough for the preamble of every version (v2.0 / v3.0: 12 bytes).
constexpr uint64_t kPreambleBytes = 12;

std::string Where(std::string_view name) { return MessageSafe(name, kMessagePathBytes) + ": "; }

// Fortran order: the first index varies fastest.
std::vector<uint64_t> ColumnMajorStrides(const std::vector<uint64_t>& shape) {
  std::vector<uint64_t> strides(shape.size(), 1);
  for (size_t k = 1; k < shape.size(); ++k) strides[k] = strides[k - 1] * shape[k - 1];
  return strides;
}

// The array of `header`, whose member holds `member_bytes` uncompressed
// bytes: the data after the header must be exactly the array's.
Result<ArrayEntry> EntryFromHeader(const NpyHeader& header, std::string array_name,
                                   const ArrayMember& member, std::string_view where) {
  const uint64_t data_bytes = header.elements * DtypeBytes(header.dtype);  // checked by the parser
  const uint64_t available = member.bytes >= header.data_offset ? member.bytes - header.data_offset : 0;
  if (available < data_bytes) {
    return Status(StatusCode::kTruncated,
                  Where(where) + "the array needs " + std::to_string(data_bytes) +
                      " data bytes after its header, " + std::to_string(available) + " are there")
        .WithByteOffset(member.bytes)
        .WithTensor(MessageSafe(array_name));
  }
  if (available > data_bytes) {
    return Status(StatusCode::kInvalid,
                  Where(where) + std::to_string(available - data_bytes) +
                      " bytes follow the array's " + std::to_string(data_bytes) + " data bytes")
        .WithByteOffset(header.data_offset + data_bytes)
        .WithTensor(MessageSafe(array_name));
  }
  ArrayEntry entry;
  entry.name = std::move(array_name);
  entry.dtype = header.dtype;
  entry.shape = header.shape;
  entry.elements = header.elements;
  entry.data_offset = header.data_offset;
  entry.storage_offset = 0;
  entry.strides = header.fortran_order ? ColumnMajorStrides(header.shape) : RowMajorStrides(header.shape);
  entry.storage_elements = header.elements;
  entry.big_endian = header.big_endian;
  AMN_RETURN_IF_ERROR(CheckArrayBounds(entry, member));
  return entry;
}

// Reads the NPY header that starts at byte 0 of a member through `read`
// (read(offset, out) fills out from that uncompressed offset, in increasing
// offsets), bounding its length by the limits and the member's size.
template <typename ReadFn>
Result<NpyHeader> ReadHeader(ReadFn&& read, uint64_t member_bytes, std::string_view where,
                             const ParseLimits& limits) {
  std::vector<std::byte> prefix(std::min(member_bytes, kPreambleBytes));
  AMN_RETURN_IF_ERROR(read(0, std::span(prefix)));
  AMN_ASSIGN_OR_RETURN(const uint64_t header_bytes, NpyHeaderBytes(prefix, where));
  if (header_bytes > kPreambleBytes && header_bytes - kPreambleBytes > limits.max_header_bytes) {
    return Status(StatusCode::kLimitExceeded,
                  Where(where) + "NPY header of " + std::to_string(header_bytes) +
                      " bytes exceeds the limit of " + std::to_string(limits.max_header_bytes))
        .WithByteOffset(0);
  }
  if (header_bytes > member_bytes) {
    return Status(StatusCode::kTruncated,
                  Where(where) + "the NPY header declares " + std::to_string(header_bytes) +
                      " bytes, only " + std::to_string(member_bytes) + " are there")
        .WithByteOffset(member_bytes);
  }
  const uint64_t have = prefix.size();
  prefix.resize(header_bytes);
  if (header_bytes > have) AMN_RETURN_IF_ERROR(read(have, std::span(prefix).subspan(have)));
  return ParseNpyHeader(prefix, where, limits);
}

// Adds the array's name to an error, and for a deflated member says that
// its byte offset counts uncompressed bytes of the member; a stored
// member's offsets become file offsets.
Status InMember(Status status, const ZipEntry& entry, std::string_view array_name) {
  const std::string tensor = MessageSafe(array_name);
  if (!status.byte_offset()) return std::move(status).WithTensor(tensor);
  if (!entry.deflated) {
    const uint64_t at = entry.data_offset + *status.byte_offset();
    return std::move(status).WithByteOffset(at).WithTensor(tensor);
  }
  return Status(status.code(), status.message() + " (offset into the inflated member)")
      .WithByteOffset(*status.byte_offset())
      .WithTensor(tensor);
}

ArrayMember MemberOf(const ZipEntry& zip_entry) {
  return ArrayMember{.name = zip_entry.name,
                     .deflated = zip_entry.deflated,
                     .file_offset = zip_entry.data_offset,
                     .stored_bytes = zip_entry.compressed_bytes,
                     .bytes = zip_entry.bytes,
                     .zip_index = zip_entry.index};
}

Result<ArrayEntry> ReadNpzMember(ZipArchive& archive, const ZipEntry& zip_entry,
                                 std::string array_name, size_t member_index,
                                 const ParseLimits& limits) {
  const std::string where = archive.name() + " member " + zip_entry.name;
  std::unique_ptr<ZipEntryReader> reader;
  if (zip_entry.deflated) {
    AMN_ASSIGN_OR_RETURN(reader, archive.OpenEntry(zip_entry));
  }
  // Stored members are read in place; deflated ones are inflated from their
  // start, only as far as the header goes. A failed read is reported at the
  // member offset it started from, like every other error here (InMember
  // turns it into a file offset for stored members).
  auto read = [&](uint64_t offset, std::span<std::byte> out) -> Status {
    Status status = reader ? reader->Read(out)
                           : archive.source().ReadAt(zip_entry.data_offset + offset, out);
    if (status.ok()) return status;
    return Status(status.code(), status.message()).WithByteOffset(offset);
  };
  AMN_ASSIGN_OR_RETURN(const NpyHeader header, ReadHeader(read, zip_entry.bytes, where, limits));
  AMN_ASSIGN_OR_RETURN(ArrayEntry entry,
                       EntryFromHeader(header, std::move(array_name), MemberOf(zip_entry), where));
  entry.member = member_index;
  return entry;
}

}  // namespace

Result<ArrayFile> ReadNpy(ByteSource& source, std::string_view array_name,
                          const ParseLimits& limits) {
  ArrayMember member;
  member.name = source.name();
  member.bytes = member.stored_bytes = source.size();
  auto read = [&source](uint64_t offset, std::span<std::byte> out) {
    return source.ReadAt(offset, out);
  };
  auto header = ReadHeader(read, member.bytes, source.name(), limits);
  if (!header.ok()) {
    Status status = header.status();
    return std::move(status).WithTensor(MessageSafe(array_name));
  }
  AMN_ASSIGN_OR_RETURN(ArrayEntry entry,
                       EntryFromHeader(*header, std::string(array_name), member, source.name()));
  ArrayFile file;
  file.format = "npy";
  file.members.push_back(std::move(member));
  file.arrays.push_back(std::move(entry));
  return file;
}

Result<ArrayFile> ReadNpz(ZipArchive& archive, const ParseLimits& limits) {
  constexpr std::string_view kSuffix = ".npy";
  const std::vector<ZipEntry>& entries = archive.entries();
  if (entries.size() > limits.max_item_count) {
    return Status(StatusCode::kLimitExceeded,
                  Where(archive.name()) + std::to_string(entries.size()) +
                      " members exceed the item limit of " + std::to_string(limits.max_item_count));
  }
  ArrayFile file;
  file.format = "npz";
  file.members.reserve(entries.size());
  file.arrays.reserve(entries.size());
  for (const ZipEntry& zip_entry : entries) {
    const std::string_view member_name = zip_entry.name;
    if (!member_name.ends_with(kSuffix) || member_name.size() == kSuffix.size()) {
      return Status(StatusCode::kInvalid, Where(archive.name()) + "member '" +
                                              MessageSafe(member_name) +
                                              "' is not an array (NPZ members are <name>.npy)")
          .WithByteOffset(zip_entry.local_header_offset);
    }
    std::string array_name(member_name.substr(0, member_name.size() - kSuffix.size()));
    auto entry = ReadNpzMember(archive, zip_entry, array_name, file.members.size(), limits);
    if (!entry.ok()) return InMember(entry.status(), zip_entry, array_name);
    file.members.push_back(MemberOf(zip_entry));
    file.arrays.push_back(std::move(*entry));
  }
  return file;
}

}  // namespace amn::formats
