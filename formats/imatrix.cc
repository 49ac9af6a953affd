// llama.cpp legacy imatrix reader: see imatrix.h.
#include "formats/imatrix.h"

#include <bit>
#include <cstring>
#include <span>
#include <utility>

#include "formats/gguf.h"

// The file's F32 values are copied as bytes (formats do not loop over
// elements), which is their value on the little-endian hosts amn builds for.
static_assert(std::endian::native == std::endian::little, "imatrix values are little-endian F32");

namespace amn {
namespace {

// A bounds-checked little-endian cursor over the file.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> bytes, std::string_view file_name)
      : bytes_(bytes), file_(file_name) {}

  uint64_t offset() const { return pos_; }
  uint64_t left() const { return bytes_.size() - pos_; }

  Status Error(StatusCode code, const std::string& what, uint64_t at) const {
    return Status(code, "imatrix file '" + std::string(file_) + "': " + what).WithByteOffset(at);
  }

  // A non-negative int32 (a count or a length).
  Status ReadCount(const char* what, int32_t& out) {
    if (left() < 4) return Error(StatusCode::kTruncated, std::string("ends inside ") + what, pos_);
    const uint8_t* p = bytes_.data() + pos_;
    out = static_cast<int32_t>(static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                               static_cast<uint32_t>(p[2]) << 16 |
                               static_cast<uint32_t>(p[3]) << 24);
    if (out < 0) {
      return Error(StatusCode::kInvalid, std::string(what) + " is negative (" +
                                             std::to_string(out) + ")", pos_);
    }
    pos_ += 4;
    return Status::Ok();
  }

  Status ReadString(const char* what, int32_t len, std::string& out) {
    if (left() < static_cast<uint64_t>(len)) {
      return Error(StatusCode::kTruncated,
                   std::string(what) + " of " + std::to_string(len) + " bytes runs past the end",
                   pos_);
    }
    out.assign(reinterpret_cast<const char*>(bytes_.data() + pos_), static_cast<size_t>(len));
    pos_ += static_cast<uint64_t>(len);
    return Status::Ok();
  }

  Status ReadFloats(int32_t n, std::vector<float>& out) {
    // n <= INT32_MAX, so 4 * n fits in 64 bits; checked before allocating.
    const uint64_t need = 4 * static_cast<uint64_t>(n);
    if (left() < need) {
      return Error(StatusCode::kTruncated,
                   std::to_string(n) + " values run past the end", pos_);
    }
    out.resize(static_cast<size_t>(n));
    // Little-endian F32 on a little-endian host: the bytes as they are.
    if (need != 0) std::memcpy(out.data(), bytes_.data() + pos_, need);
    pos_ += need;
    return Status::Ok();
  }

 private:
  std::span<const uint8_t> bytes_;
  std::string_view file_;
  uint64_t pos_ = 0;
};

}  // namespace

Result<ImatrixDat> ParseImatrixDat(std::span<const uint8_t> bytes, std::string_view file_name) {
  Cursor c(bytes, file_name);
  ImatrixDat dat;
  int32_t n_entries = 0;
  const uint64_t entries_at = c.offset();
  AMN_RETURN_IF_ERROR(c.ReadCount("the entry count", n_entries));
  if (n_entries > kImatrixMaxEntries) {
    return c.Error(StatusCode::kLimitExceeded,
                   std::to_string(n_entries) + " entries (at most " +
                       std::to_string(kImatrixMaxEntries) + ")",
                   entries_at);
  }
  // Each entry takes at least 12 bytes: a count this file cannot hold is
  // refused before reserving.
  if (static_cast<uint64_t>(n_entries) * 12 > c.left()) {
    return c.Error(StatusCode::kTruncated,
                   std::to_string(n_entries) + " entries cannot fit in the " +
                       std::to_string(c.left()) + " bytes left",
                   entries_at);
  }
  dat.entries.reserve(static_cast<size_t>(n_entries));
  for (int32_t e = 0; e < n_entries; ++e) {
    ImatrixEntry entry;
    int32_t len = 0;
    const uint64_t len_at = c.offset();
    AMN_RETURN_IF_ERROR(c.ReadCount("an entry's name length", len));
    if (len > kImatrixMaxNameBytes) {
      return c.Error(StatusCode::kLimitExceeded,
                     "a name of " + std::to_string(len) + " bytes (at most " +
                         std::to_string(kImatrixMaxNameBytes) + ")",
                     len_at);
    }
    AMN_RETURN_IF_ERROR(c.ReadString("an entry's name", len, entry.name));
    AMN_RETURN_IF_ERROR(c.ReadCount("the call count", entry.ncall));
    int32_t nval = 0;
    AMN_RETURN_IF_ERROR(c.ReadCount("the value count", nval));
    Status s = c.ReadFloats(nval, entry.values);
    if (!s.ok()) return std::move(s).WithTensor(entry.name);
    dat.entries.push_back(std::move(entry));
  }
  if (c.left() == 0) return dat;  // files from before the trailer existed
  dat.has_trailer = true;
  AMN_RETURN_IF_ERROR(c.ReadCount("the last call count", dat.last_call));
  int32_t len = 0;
  AMN_RETURN_IF_ERROR(c.ReadCount("the dataset name length", len));
  AMN_RETURN_IF_ERROR(c.ReadString("the dataset name", len, dat.dataset));
  if (c.left() != 0) {
    return c.Error(StatusCode::kInvalid,
                   std::to_string(c.left()) + " bytes after the dataset name", c.offset());
  }
  return dat;
}

namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The F32 data of one tensor (the header already checked that it lies in the
// file and that its byte count matches its type and dims).
Status ReadF32Tensor(formats::ByteSource& source, const formats::GgufHeader& h,
                     const formats::GgufTensorInfo& t, const ParseLimits& limits,
                     std::vector<float>& out) {
  if (t.type != 0) {  // GGML_TYPE_F32
    return Status(StatusCode::kInvalid, "imatrix tensor is not F32 (ggml type " +
                                            std::to_string(t.type) + ") in " + source.name())
        .WithTensor(t.name);
  }
  if (t.bytes > limits.max_single_allocation) {
    return Status(StatusCode::kLimitExceeded, "imatrix tensor of " + std::to_string(t.bytes) +
                                                  " bytes in " + source.name())
        .WithTensor(t.name);
  }
  // F32: t.bytes == 4 * t.elements (the header reader checked it).
  out.resize(t.elements);
  Status s = source.ReadAt(h.data_offset + t.offset, std::as_writable_bytes(std::span(out)));
  if (!s.ok()) return std::move(s).WithTensor(t.name);
  return Status::Ok();
}

}  // namespace

Result<ImatrixGguf> ReadImatrixGguf(formats::ByteSource& source, const ParseLimits& limits) {
  AMN_ASSIGN_OR_RETURN(const formats::GgufHeader h, formats::ReadGgufHeader(source, limits));
  if (const formats::GgufValue* type = h.Find("general.type"); type != nullptr) {
    if (type->type != formats::GgufValueType::kString || type->s != "imatrix") {
      return Status(StatusCode::kInvalid,
                    "general.type is not \"imatrix\" in " + source.name());
    }
  }
  ImatrixGguf out;
  if (const auto* v = h.Find("imatrix.chunk_count"); v && v->type == formats::GgufValueType::kU32) {
    out.chunk_count = static_cast<uint32_t>(v->u);
  }
  if (const auto* v = h.Find("imatrix.chunk_size"); v && v->type == formats::GgufValueType::kU32) {
    out.chunk_size = static_cast<uint32_t>(v->u);
  }
  for (const formats::GgufTensorInfo& t : h.tensors) {
    if (!EndsWith(t.name, ".in_sum2")) continue;
    ImatrixGgufEntry e;
    e.name = t.name.substr(0, t.name.size() - std::string_view(".in_sum2").size());
    if (t.dims.empty() || t.dims.size() > 2) {
      return Status(StatusCode::kInvalid, "in_sum2 must have 1 or 2 dimensions, has " +
                                              std::to_string(t.dims.size()) + " in " +
                                              source.name())
          .WithTensor(t.name);
    }
    e.cols = t.dims[0];
    e.n_mat = t.dims.size() == 2 ? t.dims[1] : 1;
    const std::string counts_name = e.name + ".counts";
    const formats::GgufTensorInfo* counts = nullptr;
    for (const formats::GgufTensorInfo& c : h.tensors) {
      if (c.name == counts_name) counts = &c;
    }
    if (counts == nullptr) {
      return Status(StatusCode::kInvalid, "no " + counts_name + " beside it in " + source.name())
          .WithTensor(t.name);
    }
    if (counts->elements != e.n_mat) {
      return Status(StatusCode::kInvalid, std::to_string(counts->elements) +
                                              " counts for " + std::to_string(e.n_mat) +
                                              " matrices in " + source.name())
          .WithTensor(counts_name);
    }
    AMN_RETURN_IF_ERROR(ReadF32Tensor(source, h, t, limits, e.in_sum2));
    AMN_RETURN_IF_ERROR(ReadF32Tensor(source, h, *counts, limits, e.counts));
    out.entries.push_back(std::move(e));
  }
  return out;
}

std::vector<float> ImportanceValues(const ImatrixEntry& entry) {
  std::vector<float> v = entry.values;
  if (entry.ncall > 0) {
    // float / int: the int converted, one IEEE division, as llama-quantize.
    const float ncall = static_cast<float>(entry.ncall);
    for (float& x : v) x /= ncall;
  }
  return v;
}

std::vector<float> ImportanceValues(const ImatrixGgufEntry& entry) {
  std::vector<float> v(entry.in_sum2.size());
  for (uint64_t j = 0; j < entry.n_mat; ++j) {
    const float count = entry.counts[j];
    for (uint64_t i = 0; i < entry.cols; ++i) {
      // A matrix that saw no input (an unused expert) gets 1 everywhere.
      v[j * entry.cols + i] = count > 0.0f ? entry.in_sum2[j * entry.cols + i] / count : 1.0f;
    }
  }
  return v;
}

}  // namespace amn
