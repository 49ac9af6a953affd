// Array entries: C strides and the bounds check every parser runs before an
// array's elements are read through its strides.
#include "formats/array_file.h"

#include "formats/byte_source.h"
#include "formats/checked_math.h"

namespace amn::formats {
namespace {

Status BoundsError(const ArrayEntry& entry, const std::string& what) {
  return Status(StatusCode::kInvalid, what).WithTensor(MessageSafe(entry.name));
}

}  // namespace

std::vector<uint64_t> RowMajorStrides(const std::vector<uint64_t>& shape) {
  std::vector<uint64_t> strides(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) strides[k - 1] = strides[k] * shape[k];
  return strides;
}

bool ArrayEntry::contiguous() const {
  if (elements <= 1) return true;
  uint64_t expected = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] != 1 && strides[k] != expected) return false;
    expected *= shape[k];
  }
  return true;
}

Status CheckArrayBounds(const ArrayEntry& entry, const ArrayMember& member) {
  if (entry.strides.size() != entry.shape.size()) {
    return BoundsError(entry, "strides and shape have different ranks");
  }
  uint64_t storage_bytes = 0, storage_end = 0;
  if (!CheckedMul(entry.storage_elements, DtypeBytes(entry.dtype), &storage_bytes) ||
      !CheckedAdd(entry.data_offset, storage_bytes, &storage_end) || storage_end > member.bytes) {
    return BoundsError(entry, "storage of " + std::to_string(entry.storage_elements) +
                                  " elements from byte " + std::to_string(entry.data_offset) +
                                  " runs past the end of '" + MessageSafe(member.name) + "' (" +
                                  std::to_string(member.bytes) + " bytes)");
  }
  if (entry.elements == 0) return Status::Ok();
  uint64_t last = entry.storage_offset;
  for (size_t k = 0; k < entry.shape.size(); ++k) {
    uint64_t step = 0;
    if (!CheckedMul(entry.shape[k] - 1, entry.strides[k], &step) || !CheckedAdd(last, step, &last)) {
      return BoundsError(entry, "strides overflow");
    }
  }
  if (last >= entry.storage_elements) {
    return BoundsError(entry, "the view reaches element " + std::to_string(last) +
                                  " of a storage of " + std::to_string(entry.storage_elements));
  }
  return Status::Ok();
}

}  // namespace amn::formats
