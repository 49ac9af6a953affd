// The remember plan of an NPY/NPZ/PyTorch file: one output tensor per array.
#include <set>

#include "formats/byte_source.h"
#include "formats/remember_plan.h"
#include "formats/utf8.h"

namespace amn::formats {

Result<RememberPlan> PlanArrayRemember(const std::filesystem::path& file, const ArrayFile& arrays,
                                       std::optional<ElemType> to) {
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
  for (const ArrayEntry& a : arrays.arrays) {
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
    t.bytes = a.elements * DtypeBytes(t.dtype);
    const uint64_t elem = DtypeBytes(a.dtype);
    const bool big_endian = a.big_endian && elem > 1;
    if (t.dtype == a.dtype && !big_endian && !member.deflated && a.contiguous()) {
      t.decode = Decode::kCopy;
      t.input_offset = member.file_offset + a.data_offset + (a.elements == 0 ? 0 : a.storage_offset * elem);
      t.input_bytes = t.bytes;
    } else {
      t.decode = Decode::kArray;
      t.array = {a, member};
    }
    out.tensors.push_back(std::move(t));
  }
  AddOnlyShard(plan, std::move(out));
  return plan;
}

}  // namespace amn::formats
