// Laying a remember plan out as an NPZ (ZIP of stored .npy members).
#include "formats/npz_output_plan.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "formats/checked_math.h"
#include "formats/utf8.h"

namespace amn::formats {
namespace {

constexpr uint32_t kLocalSignature = 0x04034b50, kCentralSignature = 0x02014b50;
constexpr uint32_t kEndSignature = 0x06054b50, kZip64EndSignature = 0x06064b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
// "Version needed" (APPNOTE 4.4.3), as Python's zipfile sets it: 4.5 where
// a ZIP64 value is needed, else 2.0; "made by" Unix with the same version.
constexpr uint16_t kZip64Version = 45, kDefaultVersion = 20;
constexpr uint16_t kUnix = 3 << 8;
constexpr uint16_t kUtf8Flag = 0x800;          // names that are not ASCII
constexpr uint16_t kDosDate = 1 << 5 | 1;      // 1980-01-01, 00:00: reproducible bytes
constexpr uint32_t kExternalAttributes = 0600u << 16;  // zipfile's mode for 'w' members
constexpr uint64_t kMax32 = 0xFFFFFFFF;

void Put16(std::string& s, uint16_t v) {
  s.push_back(static_cast<char>(v));
  s.push_back(static_cast<char>(v >> 8));
}
void Put32(std::string& s, uint32_t v) {
  Put16(s, static_cast<uint16_t>(v));
  Put16(s, static_cast<uint16_t>(v >> 16));
}
void Put64(std::string& s, uint64_t v) {
  Put32(s, static_cast<uint32_t>(v));
  Put32(s, static_cast<uint32_t>(v >> 32));
}

// numpy's dtype.descr for the dtypes it has.
const char* Descr(Dtype d) {
  switch (d) {
    case Dtype::kF64: return "<f8";
    case Dtype::kF32: return "<f4";
    case Dtype::kF16: return "<f2";
    case Dtype::kI64: return "<i8";
    case Dtype::kI32: return "<i4";
    case Dtype::kI16: return "<i2";
    case Dtype::kI8: return "|i1";
    case Dtype::kU64: return "<u8";
    case Dtype::kU32: return "<u4";
    case Dtype::kU16: return "<u2";
    case Dtype::kU8: return "|u1";
    case Dtype::kBool: return "|b1";
    default: return nullptr;
  }
}

// Python's repr of a tuple of ints: (), (5,), (2, 3).
std::string ShapeRepr(const std::vector<uint64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

bool Ascii(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

struct Entry {
  std::string name;  // member name, NAME.npy
  uint64_t local_at = 0, size = 0;
};

}  // namespace

void NpzCrcs::OnChunk(size_t tensor, std::span<const std::byte> bytes) {
  if (tensor >= member_of.size() || member_of[tensor] == SIZE_MAX || bytes.empty()) return;
  Member& m = members[member_of[tensor]];
  // zlib's crc32 takes at most 4 GiB a call (uInt lengths).
  const auto* p = reinterpret_cast<const Bytef*>(bytes.data());
  for (size_t left = bytes.size(); left > 0;) {
    const size_t n = std::min<size_t>(left, size_t{1} << 30);
    m.crc = static_cast<uint32_t>(::crc32(m.crc, p, static_cast<uInt>(n)));
    p += n;
    left -= n;
  }
}

Status NpzCrcs::Patch(int fd) const {
  for (const Member& m : members) {
    std::string le;
    Put32(le, m.crc);
    for (const uint64_t at : {m.local_crc_at, m.central_crc_at}) {
      if (::pwrite(fd, le.data(), le.size(), static_cast<off_t>(at)) != 4) {
        return Status(StatusCode::kIo, std::string("cannot write a CRC-32 of the NPZ: ") +
                                           std::strerror(errno))
            .WithByteOffset(at);
      }
    }
  }
  return Status::Ok();
}

Result<std::string> NpyHeader(Dtype dtype, const std::vector<uint64_t>& shape) {
  const char* descr = Descr(dtype);
  if (descr == nullptr) {
    return Status(StatusCode::kUnsupported,
                  std::string(DtypeName(dtype)) + " has no numpy dtype" +
                      (dtype == Dtype::kBf16 ? " (numpy has no bfloat16: use --scheme f32, exact, or f16)"
                                             : ""));
  }
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " +
                     ShapeRepr(shape) + ", }";
  if (!shape.empty()) dict.append(21 - std::min<size_t>(21, std::to_string(shape[0]).size()), ' ');
  // Magic (6) + version (2) + length (2, or 4 in 2.0) + dict + '\n', to 64.
  const size_t hlen = dict.size() + 1;
  size_t prefix = 10;
  if (hlen + 64 > 0xFFFF) prefix = 12;
  const size_t pad = 64 - (prefix + hlen) % 64;
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(prefix == 10 ? 1 : 2));
  out.push_back(0);
  if (prefix == 10) {
    Put16(out, static_cast<uint16_t>(hlen + pad));
  } else {
    Put32(out, static_cast<uint32_t>(hlen + pad));
  }
  out += dict;
  out.append(pad, ' ');
  out.push_back('\n');
  return out;
}

Result<RememberPlan> PlanNpzOutput(RememberPlan plan, NpzCrcs& crcs,
                                   const std::atomic<bool>* cancel) {
  std::vector<OutputTensor> arrays;
  for (OutputShard& shard : plan.shards) {
    for (OutputTensor& t : shard.tensors) arrays.push_back(std::move(t));
  }
  plan.shards.clear();
  std::sort(arrays.begin(), arrays.end(),
            [](const OutputTensor& a, const OutputTensor& b) { return a.name < b.name; });
  OutputShard out;
  std::vector<Entry> entries;
  crcs = NpzCrcs{};
  uint64_t offset = 0;
  auto add = [&](OutputTensor t) -> Status {
    t.data_begin = offset;
    if (!CheckedAdd(offset, t.bytes, &offset)) {
      return Status(StatusCode::kLimitExceeded, "the NPZ output overflows 64 bits");
    }
    out.tensors.push_back(std::move(t));
    return Status::Ok();
  };
  for (size_t i = 0; i < arrays.size(); ++i) {
    AMN_RETURN_IF_ERROR(PollCancel(cancel, i));
    OutputTensor& t = arrays[i];
    if (i > 0 && arrays[i - 1].name == t.name) {
      return Status(StatusCode::kInvalid,
                    "two tensors are named '" + MessageSafe(t.name) + "'; an NPZ needs one each");
    }
    Result<std::string> npy = NpyHeader(t.dtype, t.shape);
    if (!npy.ok()) {
      return Status(npy.status().code(),
                    "tensor '" + MessageSafe(t.name) + "' is " + npy.status().message());
    }
    Entry e;
    e.name = t.name + ".npy";
    e.local_at = offset;
    e.size = npy->size() + t.bytes;
    std::string head;
    // zipfile rewrites the local header once the member is written: real
    // sizes (0xFFFFFFFF past 4 GiB), the ZIP64 extra field kept.
    const bool big = e.size >= kMax32;
    Put32(head, kLocalSignature);
    Put16(head, big ? kZip64Version : kDefaultVersion);
    Put16(head, Ascii(e.name) ? 0 : kUtf8Flag);
    Put16(head, 0);  // stored
    Put16(head, 0);  // 00:00
    Put16(head, kDosDate);
    Put32(head, 0);  // CRC-32: patched once the data is written
    Put32(head, static_cast<uint32_t>(std::min(e.size, kMax32)));
    Put32(head, static_cast<uint32_t>(std::min(e.size, kMax32)));
    Put16(head, static_cast<uint16_t>(e.name.size()));
    Put16(head, 20);
    head += e.name;
    Put16(head, 1);  // ZIP64 extended information
    Put16(head, 16);
    Put64(head, e.size);
    Put64(head, e.size);
    NpzCrcs::Member m;
    m.local_crc_at = offset + 14;
    m.crc = static_cast<uint32_t>(
        ::crc32(0, reinterpret_cast<const Bytef*>(npy->data()), static_cast<uInt>(npy->size())));
    head += *npy;
    auto bytes = std::make_shared<std::vector<std::byte>>(head.size());
    std::memcpy(bytes->data(), head.data(), head.size());
    OutputTensor header;
    header.name = t.name;
    header.dtype = Dtype::kU8;
    header.decode = Decode::kInline;
    header.bytes = bytes->size();
    header.inline_bytes = std::move(bytes);
    crcs.member_of.push_back(SIZE_MAX);
    AMN_RETURN_IF_ERROR(add(std::move(header)));
    m.data_tensor = out.tensors.size();
    crcs.member_of.push_back(crcs.members.size());
    crcs.members.push_back(m);
    AMN_RETURN_IF_ERROR(add(std::move(t)));
    entries.push_back(std::move(e));
  }
  // The central directory, ZIP64 only where a value needs it.
  const uint64_t cd_at = offset;
  std::string cd;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    std::string extra;
    if (e.size >= kMax32) {
      Put64(extra, e.size);
      Put64(extra, e.size);
    }
    if (e.local_at >= kMax32) Put64(extra, e.local_at);
    crcs.members[i].central_crc_at = cd_at + cd.size() + 16;
    const uint16_t version = extra.empty() ? kDefaultVersion : kZip64Version;
    Put32(cd, kCentralSignature);
    Put16(cd, kUnix | version);
    Put16(cd, version);
    Put16(cd, Ascii(e.name) ? 0 : kUtf8Flag);
    Put16(cd, 0);
    Put16(cd, 0);
    Put16(cd, kDosDate);
    Put32(cd, 0);  // CRC-32: patched
    Put32(cd, static_cast<uint32_t>(std::min(e.size, kMax32)));
    Put32(cd, static_cast<uint32_t>(std::min(e.size, kMax32)));
    Put16(cd, static_cast<uint16_t>(e.name.size()));
    Put16(cd, static_cast<uint16_t>(extra.empty() ? 0 : extra.size() + 4));
    Put16(cd, 0);  // comment
    Put16(cd, 0);  // disk
    Put16(cd, 0);  // internal attributes
    Put32(cd, kExternalAttributes);
    Put32(cd, static_cast<uint32_t>(std::min(e.local_at, kMax32)));
    cd += e.name;
    if (!extra.empty()) {
      Put16(cd, 1);
      Put16(cd, static_cast<uint16_t>(extra.size()));
      cd += extra;
    }
  }
  const uint64_t cd_size = cd.size(), count = entries.size();
  if (count > 0xFFFF || cd_size >= kMax32 || cd_at >= kMax32) {
    const uint64_t zip64_end_at = cd_at + cd_size;
    Put32(cd, kZip64EndSignature);
    Put64(cd, 44);  // the record's size after this field
    Put16(cd, kUnix | kZip64Version);
    Put16(cd, kZip64Version);
    Put32(cd, 0);
    Put32(cd, 0);
    Put64(cd, count);
    Put64(cd, count);
    Put64(cd, cd_size);
    Put64(cd, cd_at);
    Put32(cd, kZip64LocatorSignature);
    Put32(cd, 0);
    Put64(cd, zip64_end_at);
    Put32(cd, 1);
  }
  Put32(cd, kEndSignature);
  Put16(cd, 0);
  Put16(cd, 0);
  Put16(cd, static_cast<uint16_t>(std::min<uint64_t>(count, 0xFFFF)));
  Put16(cd, static_cast<uint16_t>(std::min<uint64_t>(count, 0xFFFF)));
  Put32(cd, static_cast<uint32_t>(std::min(cd_size, kMax32)));
  Put32(cd, static_cast<uint32_t>(std::min(cd_at, kMax32)));
  Put16(cd, 0);
  auto bytes = std::make_shared<std::vector<std::byte>>(cd.size());
  std::memcpy(bytes->data(), cd.data(), cd.size());
  OutputTensor directory;
  directory.name = "(central directory)";
  directory.dtype = Dtype::kU8;
  directory.decode = Decode::kInline;
  directory.bytes = bytes->size();
  directory.inline_bytes = std::move(bytes);
  crcs.member_of.push_back(SIZE_MAX);
  AMN_RETURN_IF_ERROR(add(std::move(directory)));
  out.data_bytes = offset;
  plan.total_bytes = offset;
  plan.total_tensors = out.tensors.size();
  plan.shards.push_back(std::move(out));
  return plan;
}

}  // namespace amn::formats
