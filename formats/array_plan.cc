// The remember plan of an NPY/NPZ/PyTorch file: one output tensor per array.
#include <set>

#include "formats/byte_source.h"
#include "formats/checked_math.h"
#include "formats/remember_plan.h"
#include "formats/utf8.h"

namespace amn::formats {

Result<RememberPlan> PlanArrayRemember(const std::filesystem::path& file, const ArrayFile& arrays,
                                       std::optional<ElemType> to,
                                       const std::atomic<bool>* cancel) {
  if (to && *to != ElemType::kF32 && *to != ElemType::kF16 && *to != ElemType::kBf16) {
    return Status(StatusCode::kInvalidArgument, "remember writes F32, F16 or BF16");
  }
  RememberPlan plan;
  plan.to = to ? DtypeOf(*to) : Dtype::kF32;
  plan.input_files = {file};
  OutputShard out;
  for (const auto& [key, value] : arrays.metadata) {
    out.metadata[EscapeInvalidUtf8(key)] = EscapeInvalidUtf8(value);
  }
  // Names that are not UTF-8 (NPZ member names, pickle keys) are written by
  // the \xNN rule (utf8.h); two names that become one are refused.
  std::set<std::string> names;
  out.tensors.reserve(arrays.arrays.size());
  for (size_t i = 0; i < arrays.arrays.size(); ++i) {
    AMN_RETURN_IF_ERROR(PollCancel(cancel, i));
    const ArrayEntry& a = arrays.arrays[i];
    std::string name = EscapeInvalidUtf8(a.name);
    if (name == "__metadata__" || !names.insert(name).second) {
      return Status(StatusCode::kInvalid,
                    file.string() + ": two arrays would be written as '" + MessageSafe(name) +
                        "' (or the name is reserved by safetensors)")
          .WithTensor(MessageSafe(name));
    }
    if (a.member >= arrays.members.size()) {
      return Status(StatusCode::kInvalid, file.string() + ": array names no member")
          .WithTensor(MessageSafe(a.name));
    }
    const ArrayMember& member = arrays.members[a.member];
    AMN_RETURN_IF_ERROR(CheckArrayBounds(a, member));
    OutputTensor t;
    t.name = std::move(name);
    t.shape = a.shape;
    t.dtype = to && ConvertsWithTo(a.dtype) ? DtypeOf(*to) : a.dtype;
    const uint64_t elem = DtypeBytes(a.dtype);
    uint64_t first = 0;  // the byte offset of the view's first element
    if (!CheckedMul(a.elements, DtypeBytes(t.dtype), &t.bytes) ||
        !CheckedMul(a.elements == 0 ? 0 : a.storage_offset, elem, &first)) {
      return Status(StatusCode::kLimitExceeded, file.string() + ": the output size overflows 64 bits")
          .WithTensor(MessageSafe(a.name));
    }
    const bool big_endian = a.big_endian && elem > 1;
    if (t.dtype == a.dtype && !big_endian && !member.deflated && a.contiguous()) {
      t.decode = Decode::kCopy;
      t.input_offset = member.file_offset + a.data_offset + first;  // within the member: checked
      t.input_bytes = t.bytes;
    } else {
      t.decode = Decode::kArray;
      t.array = {a, member};
    }
    out.tensors.push_back(std::move(t));
  }
  AMN_RETURN_IF_ERROR(AddOnlyShard(plan, std::move(out), cancel));
  return plan;
}

}  // namespace amn::formats
