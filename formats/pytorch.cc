// PyTorch zip checkpoints (torch/serialization.py, _save and _load): data.pkl
// run by the pickle VM, persistent ids ('storage', <T>Storage, key, location,
// numel) naming raw storages `<prefix>/data/<key>`, and tensors as
// _rebuild_tensor{,_v2,_v3}(storage, storage_offset, size, stride, ...) views
// of them (torch/_utils.py). Only headers are read; the storages stay where
// they are in the zip.
#include "formats/pytorch.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "formats/checked_math.h"
#include "formats/pickle_vm.h"

namespace amn::formats {
namespace {

constexpr uint64_t kMaxSmallEntryBytes = 64;  // byteorder, version
// Dotted names longer than this cannot name a tensor (real ones are under
// 200 bytes); it also bounds the strings a walk builds per visit.
constexpr size_t kMaxTensorNameBytes = 4096;

// The rebuild functions whose arguments start (storage, storage_offset, size, stride).
bool IsPlainRebuild(PickleGlobalRole role) {
  return role == PickleGlobalRole::kRebuildTensor || role == PickleGlobalRole::kRebuildTensorV2 ||
         role == PickleGlobalRole::kRebuildTensorV3;
}

// The same status with `context: ` in front of its message.
Status InContext(const Status& status, const std::string& context) {
  Status out(status.code(), context + ": " + status.message());
  if (status.byte_offset().has_value()) out = Status(std::move(out).WithByteOffset(*status.byte_offset()));
  if (!status.tensor().empty()) out = Status(std::move(out).WithTensor(status.tensor()));
  return out;
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

class CheckpointReader {
 public:
  CheckpointReader(ZipArchive& archive, const ParseLimits& limits)
      : archive_(archive), limits_(limits.Clamped()), pickle_limits_(PickleLimits::From(limits)) {}

  Result<ArrayFile> Read() {
    AMN_RETURN_IF_ERROR(FindPrefix());
    AMN_RETURN_IF_ERROR(ReadByteOrder());
    AMN_RETURN_IF_ERROR(ReadVersion());
    const std::string pkl_name = prefix_ + "/data.pkl";
    const ZipEntry* pkl = archive_.Find(pkl_name);
    AMN_ASSIGN_OR_RETURN(std::string pickle, archive_.ReadEntry(*pkl, limits_.max_header_bytes));
    PersistentLoad load = [this](const PickleValue& pid) { return LoadStorage(pid); };
    Result<PickleValuePtr> root =
        RunPickle(std::as_bytes(std::span<const char>(pickle.data(), pickle.size())), pickle_limits_, load);
    if (!root.ok()) {
      Status status = InContext(root.status(), File() + ": '" + MessageSafe(pkl_name) + "'");
      // Pickle offsets are file offsets too when data.pkl is stored.
      if (!pkl->deflated && status.byte_offset().has_value()) {
        const uint64_t file_offset = pkl->data_offset + *status.byte_offset();
        return Status(std::move(status).WithByteOffset(file_offset));
      }
      return status;
    }
    root_ = *root;
    out_.format = "pytorch";
    AMN_RETURN_IF_ERROR(CheckWalkSize());
    AMN_RETURN_IF_ERROR(Walk(*root_, std::string(), 0));
    return std::move(out_);
  }

 private:
  struct Storage {
    const ZipEntry* entry = nullptr;
    const PickleGlobal* type = nullptr;
    uint64_t numel = 0;
    std::optional<size_t> member;  // index into out_.members once a tensor uses it
  };

  std::string File() const { return MessageSafe(archive_.name(), kMessagePathBytes); }
  Status Invalid(const std::string& what) const {
    return Status(StatusCode::kInvalid, File() + ": " + what);
  }
  Status TensorError(StatusCode code, const std::string& name, const std::string& what) const {
    return Status(code, File() + ": tensor '" + MessageSafe(name) + "': " + what).WithTensor(MessageSafe(name));
  }

  // The single top-level folder holding data.pkl ("archive" in torch >= 1.6
  // with default names, the file's stem in others).
  Status FindPrefix() {
    size_t found = 0;
    for (const ZipEntry& entry : archive_.entries()) {
      const std::string_view name = entry.name;
      constexpr std::string_view kPkl = "/data.pkl";
      if (name.size() > kPkl.size() && name.ends_with(kPkl) &&
          name.find('/') == name.size() - kPkl.size()) {
        if (++found == 1) prefix_ = std::string(name.substr(0, name.size() - kPkl.size()));
      }
    }
    if (found == 0) return Invalid("no '<folder>/data.pkl' in the zip: not a PyTorch checkpoint");
    if (found > 1) return Invalid("several '<folder>/data.pkl' entries: more than one checkpoint in the zip");
    return Status::Ok();
  }

  Result<std::string> ReadSmall(const ZipEntry& entry) {
    Result<std::string> text = archive_.ReadEntry(entry, kMaxSmallEntryBytes);
    if (!text.ok()) return InContext(text.status(), File() + ": '" + MessageSafe(entry.name) + "'");
    return Trimmed(std::move(*text));
  }

  Status ReadByteOrder() {
    const ZipEntry* entry = archive_.Find(prefix_ + "/byteorder");
    if (entry == nullptr) return Status::Ok();  // torch < 2.0 writes little-endian only
    AMN_ASSIGN_OR_RETURN(std::string order, ReadSmall(*entry));
    if (order == "big") {
      big_endian_ = true;
    } else if (order != "little") {
      return Invalid("'" + MessageSafe(entry->name) + "' says '" + MessageSafe(order, 40) +
                     "', not 'little' or 'big'");
    }
    return Status::Ok();
  }

  Status ReadVersion() {
    const ZipEntry* entry = archive_.Find(prefix_ + "/version");
    if (entry == nullptr) return Status::Ok();
    AMN_ASSIGN_OR_RETURN(std::string version, ReadSmall(*entry));
    out_.metadata["pytorch.version"] = MessageSafe(version, 40);
    return Status::Ok();
  }

  // persistent_load: ('storage', torch.<T>Storage, key, location, numel).
  Result<int64_t> LoadStorage(const PickleValue& pid) {
    const auto& f = pid.items;
    if (pid.kind != PickleKind::kTuple || f.size() != 5 || f[0]->kind != PickleKind::kString ||
        f[0]->text != "storage" || f[1]->kind != PickleKind::kGlobal ||
        f[1]->global->role != PickleGlobalRole::kStorageType || f[2]->kind != PickleKind::kString ||
        f[3]->kind != PickleKind::kString || f[4]->kind != PickleKind::kInt || f[4]->integer < 0) {
      return Status(StatusCode::kInvalid,
                    "persistent id is not ('storage', <storage type>, key, location, numel)");
    }
    const std::string& key = f[2]->text;
    const PickleGlobal* type = f[1]->global;
    const auto numel = static_cast<uint64_t>(f[4]->integer);
    const std::string member_name = prefix_ + "/data/" + key;
    if (auto it = by_key_.find(key); it != by_key_.end()) {
      const Storage& seen = storages_[it->second];
      if (seen.type != type || seen.numel != numel) {
        return Status(StatusCode::kInvalid, "storage '" + MessageSafe(member_name) +
                                                "' is named with two different types or sizes");
      }
      return static_cast<int64_t>(it->second);
    }
    const ZipEntry* entry = archive_.Find(member_name);
    if (entry == nullptr) {
      return Status(StatusCode::kInvalid, "storage '" + MessageSafe(member_name) + "' is not in the zip");
    }
    if (type->dtype.has_value()) {
      uint64_t bytes = 0;
      if (!CheckedMul(numel, DtypeBytes(*type->dtype), &bytes) || bytes != entry->bytes) {
        return Status(StatusCode::kInvalid,
                      "storage '" + MessageSafe(member_name) + "' declares " + std::to_string(numel) +
                          " elements of torch." + std::string(type->name) + " but holds " +
                          std::to_string(entry->bytes) + " bytes");
      }
    }
    storages_.push_back(Storage{entry, type, numel, std::nullopt});
    by_key_.emplace(key, storages_.size() - 1);
    return static_cast<int64_t>(storages_.size() - 1);
  }

  Status TooDeep() const {
    return Status(StatusCode::kLimitExceeded, File() + ": state dict nests deeper than " +
                                                  std::to_string(pickle_limits_.max_depth));
  }

  // How many values Walk would visit from `value`, saturating at
  // max_items + 1. Memo replays make the value graph a DAG whose paths can
  // be exponentially many (64 levels of [m, m] name 2^64 tensors in 1.5 KB),
  // so each container is counted once, in time and memory linear in the
  // graph the VM built, before Walk builds a single name.
  Status CountVisits(const PickleValue& value, uint64_t depth, uint64_t* out) {
    if (depth > pickle_limits_.max_depth) return TooDeep();
    *out = 1;
    const bool container = value.kind == PickleKind::kDict || value.kind == PickleKind::kList ||
                           value.kind == PickleKind::kTuple || value.kind == PickleKind::kSet ||
                           value.kind == PickleKind::kFrozenSet;
    if (!container) return Status::Ok();
    constexpr uint64_t kCounting = UINT64_MAX;
    const auto [it, first] = visit_counts_.try_emplace(&value, kCounting);
    uint64_t& count = it->second;  // references into an unordered_map survive rehashing
    if (!first) {
      if (count == kCounting) return TooDeep();  // a container holds itself: Walk would never end
      *out = count;
      return Status::Ok();
    }
    const uint64_t cap = pickle_limits_.max_items + 1;
    uint64_t total = 1;
    auto add = [&](const PickleValue& child) {
      uint64_t n = 0;
      AMN_RETURN_IF_ERROR(CountVisits(child, depth + 1, &n));
      total = std::min(cap, total + std::min(cap, n));
      return Status::Ok();
    };
    for (const auto& pair : value.pairs) AMN_RETURN_IF_ERROR(add(*pair.second));
    for (const PickleValue* item : value.items) AMN_RETURN_IF_ERROR(add(*item));
    count = total;
    *out = total;
    return Status::Ok();
  }

  Status CheckWalkSize() {
    uint64_t visits = 0;
    AMN_RETURN_IF_ERROR(CountVisits(*root_, 0, &visits));
    visit_counts_.clear();
    if (visits > pickle_limits_.max_items) {
      return Status(StatusCode::kLimitExceeded,
                    File() + ": state dict has more than " + std::to_string(pickle_limits_.max_items) +
                        " values, counting every use of a shared (memoized) container");
    }
    return Status::Ok();
  }

  // nullopt when the joined name would be too long to name a tensor.
  static std::optional<std::string> Join(const std::string& path, const std::string& part) {
    if (path.size() + 1 + part.size() > kMaxTensorNameBytes) return std::nullopt;
    return path.empty() ? part : path + "." + part;
  }

  // Visits the state dict; `name` is nullopt below a dict key that cannot be
  // part of a name (tuples, floats..., or a path over kMaxTensorNameBytes),
  // where finding a tensor is an error.
  Status Walk(const PickleValue& value, const std::optional<std::string>& name, uint64_t depth) {
    // Memo replays make the value graph a DAG (or cyclic): bound the walk itself.
    if (depth > pickle_limits_.max_depth) return TooDeep();
    if (++visits_ > pickle_limits_.max_items) {
      return Status(StatusCode::kLimitExceeded, File() + ": state dict has more than " +
                                                    std::to_string(pickle_limits_.max_items) + " values");
    }
    switch (value.kind) {
      case PickleKind::kDict:
        for (const auto& [key, item] : value.pairs) {
          std::optional<std::string> child;
          if (name.has_value() && key->kind == PickleKind::kString) child = Join(*name, key->text);
          if (name.has_value() && key->kind == PickleKind::kInt) {
            child = Join(*name, std::to_string(key->integer));
          }
          AMN_RETURN_IF_ERROR(Walk(*item, child, depth + 1));
        }
        return Status::Ok();
      case PickleKind::kList:
      case PickleKind::kTuple:
      case PickleKind::kSet:
      case PickleKind::kFrozenSet: {
        const bool indexed = value.kind == PickleKind::kList || value.kind == PickleKind::kTuple;
        for (size_t i = 0; i < value.items.size(); ++i) {
          std::optional<std::string> child;
          if (name.has_value() && indexed) child = Join(*name, std::to_string(i));
          AMN_RETURN_IF_ERROR(Walk(*value.items[i], child, depth + 1));
        }
        return Status::Ok();
      }
      case PickleKind::kObject: {
        const PickleGlobalRole role = value.global->role;
        if (!IsPlainRebuild(role) && role != PickleGlobalRole::kRebuildParameter &&
            role != PickleGlobalRole::kRebuildParameterWithState &&
            role != PickleGlobalRole::kUnsupportedTensor) {
          return Status::Ok();  // a layout: not an array
        }
        // A tensor alone (torch.save(t)) is named "tensor".
        const std::string tensor_name = !name.has_value() ? std::string("?")
                                        : name->empty()   ? std::string("tensor")
                                                          : *name;
        if (value.global->role == PickleGlobalRole::kUnsupportedTensor) {
          return TensorError(StatusCode::kUnsupported, tensor_name,
                             "made by torch._utils." + std::string(value.global->name) +
                                 " (quantized, sparse, nested or subclass tensors are not supported)");
        }
        if (!name.has_value()) {
          return Status(StatusCode::kUnsupported,
                        File() + ": a tensor under a dict key that is not a string or an integer, or with a "
                                  "dotted name over " + std::to_string(kMaxTensorNameBytes) + " bytes");
        }
        return AddTensor(value, tensor_name);
      }
      default:
        return Status::Ok();  // ints, strings, dtypes...: not arrays
    }
  }

  Status IntTuple(const PickleValue& value, const std::string& name, const char* what,
                  std::vector<uint64_t>* out) {
    if (value.kind != PickleKind::kTuple) {
      return TensorError(StatusCode::kInvalid, name, std::string(what) + " is not a tuple");
    }
    out->clear();
    for (const PickleValue* item : value.items) {
      if (item->kind != PickleKind::kInt || item->integer < 0) {
        return TensorError(StatusCode::kInvalid, name, std::string(what) + " holds a non-integer or negative value");
      }
      out->push_back(static_cast<uint64_t>(item->integer));
    }
    return Status::Ok();
  }

  // _rebuild_tensor_v3's dtype argument: the element type of a storage that
  // is untyped (numel counts bytes) or already of that type.
  Status ApplyV3Dtype(const PickleValue& dtype, const Storage& storage, const std::string& name,
                      ArrayEntry* entry) {
    if (dtype.kind != PickleKind::kGlobal || dtype.global->role != PickleGlobalRole::kDtype) {
      return TensorError(StatusCode::kInvalid, name, "the dtype of _rebuild_tensor_v3 is not a torch dtype");
    }
    const std::string dtype_name = "torch." + std::string(dtype.global->name);
    if (!dtype.global->dtype.has_value()) {
      return TensorError(StatusCode::kUnsupported, name, "dtype " + dtype_name + " is not supported");
    }
    const bool untyped = storage.type->name == "UntypedStorage";
    if (!untyped && storage.type->dtype != dtype.global->dtype) {
      return TensorError(StatusCode::kInvalid, name,
                         "storage torch." + std::string(storage.type->name) + " does not hold " + dtype_name);
    }
    entry->dtype = *dtype.global->dtype;
    if (untyped) entry->storage_elements = storage.numel / DtypeBytes(entry->dtype);
    return Status::Ok();
  }

  Status AddTensor(const PickleValue& object, const std::string& name) {
    const PickleValue* tensor = &object;
    const PickleGlobalRole role = object.global->role;
    if (role == PickleGlobalRole::kRebuildParameter || role == PickleGlobalRole::kRebuildParameterWithState) {
      // _rebuild_parameter(data, requires_grad, backward_hooks[, state])
      const auto& a = object.args->items;
      const size_t want = role == PickleGlobalRole::kRebuildParameter ? 3 : 4;
      if (!a.empty() && a[0]->kind == PickleKind::kObject &&
          a[0]->global->role == PickleGlobalRole::kUnsupportedTensor) {
        return TensorError(StatusCode::kUnsupported, name,
                           "parameter made by torch._utils." + std::string(a[0]->global->name) +
                               " (quantized, sparse, nested or subclass tensors are not supported)");
      }
      if (a.size() != want || a[0]->kind != PickleKind::kObject || !IsPlainRebuild(a[0]->global->role)) {
        return TensorError(StatusCode::kInvalid, name, "parameter is not (tensor, requires_grad, hooks)");
      }
      tensor = a[0];
    }
    // _rebuild_tensor(storage, storage_offset, size, stride),
    // _rebuild_tensor_v2(..., requires_grad, backward_hooks[, metadata]) and
    // _rebuild_tensor_v3(..., requires_grad, backward_hooks, dtype[, metadata]).
    const auto& a = tensor->args->items;
    const bool v2 = tensor->global->role == PickleGlobalRole::kRebuildTensorV2;
    const bool v3 = tensor->global->role == PickleGlobalRole::kRebuildTensorV3;
    const size_t min_args = v3 ? 7 : v2 ? 6 : 4;
    const size_t max_args = v3 || v2 ? min_args + 1 : min_args;
    if (a.size() < min_args || a.size() > max_args) {
      return TensorError(StatusCode::kInvalid, name,
                         "torch._utils." + std::string(tensor->global->name) + " with " +
                             std::to_string(a.size()) + " arguments");
    }
    if (a[0]->kind != PickleKind::kPersistent || a[0]->integer < 0 ||
        static_cast<uint64_t>(a[0]->integer) >= storages_.size()) {
      return TensorError(StatusCode::kInvalid, name, "first argument is not a storage");
    }
    if (a[1]->kind != PickleKind::kInt || a[1]->integer < 0) {
      return TensorError(StatusCode::kInvalid, name, "storage offset is not a non-negative integer");
    }
    Storage& storage = storages_[static_cast<size_t>(a[0]->integer)];
    if (!storage.type->dtype.has_value()) {
      return TensorError(StatusCode::kUnsupported, name,
                         "storage type torch." + std::string(storage.type->name) + " is not supported");
    }
    ArrayEntry entry;
    entry.name = name;
    entry.dtype = *storage.type->dtype;
    entry.storage_elements = storage.numel;
    if (v3) AMN_RETURN_IF_ERROR(ApplyV3Dtype(*a[6], storage, name, &entry));
    AMN_RETURN_IF_ERROR(IntTuple(*a[2], name, "size", &entry.shape));
    AMN_RETURN_IF_ERROR(IntTuple(*a[3], name, "stride", &entry.strides));
    if (entry.shape.size() != entry.strides.size()) {
      return TensorError(StatusCode::kInvalid, name, "size and stride have different lengths");
    }
    const std::optional<uint64_t> elements = ElementCount(entry.shape);
    if (!elements) return TensorError(StatusCode::kInvalid, name, "element count overflows");
    entry.elements = *elements;
    entry.storage_offset = static_cast<uint64_t>(a[1]->integer);
    entry.big_endian = big_endian_ && DtypeBytes(entry.dtype) > 1;
    if (!storage.member.has_value()) {
      const ZipEntry& zip = *storage.entry;
      out_.members.push_back(ArrayMember{zip.name, zip.deflated, zip.data_offset, zip.compressed_bytes,
                                         zip.bytes, zip.index});
      storage.member = out_.members.size() - 1;
    }
    entry.member = *storage.member;
    const Status bounds = CheckArrayBounds(entry, out_.members[entry.member]);
    if (!bounds.ok()) return InContext(bounds, File());
    // Views can name one storage many times (tied weights; or a memo
    // replay): the output they plan is bounded like the data a file declares.
    uint64_t bytes = 0;
    if (!CheckedMul(entry.elements, DtypeBytes(entry.dtype), &bytes) ||
        !CheckedAdd(planned_bytes_, bytes, &planned_bytes_) ||
        planned_bytes_ > limits_.max_total_bytes) {
      return Status(StatusCode::kLimitExceeded, File() + ": tensors total more than " +
                                                    std::to_string(limits_.max_total_bytes) +
                                                    " bytes (views of shared storages included)")
          .WithTensor(MessageSafe(name));
    }
    name_bytes_ += name.size();
    if (name_bytes_ > limits_.max_header_bytes) {
      return Status(StatusCode::kLimitExceeded, File() + ": tensor names exceed " +
                                                    std::to_string(limits_.max_header_bytes) + " bytes");
    }
    if (!names_.insert(name).second) {
      return TensorError(StatusCode::kInvalid, name, "two tensors have this name");
    }
    if (out_.arrays.size() >= limits_.max_item_count) {
      return Status(StatusCode::kLimitExceeded, File() + ": more than " +
                                                    std::to_string(limits_.max_item_count) + " tensors");
    }
    out_.arrays.push_back(std::move(entry));
    return Status::Ok();
  }

  ZipArchive& archive_;
  const ParseLimits limits_;
  const PickleLimits pickle_limits_;
  std::string prefix_;
  bool big_endian_ = false;
  std::vector<Storage> storages_;
  std::unordered_map<std::string, size_t> by_key_;
  PickleValuePtr root_;
  ArrayFile out_;
  std::set<std::string> names_;
  uint64_t visits_ = 0;
  std::unordered_map<const PickleValue*, uint64_t> visit_counts_;  // CountVisits
  uint64_t name_bytes_ = 0;
  uint64_t planned_bytes_ = 0;  // row-major bytes of every tensor so far
};

}  // namespace

bool LooksLikeLegacyTorch(ByteSource& source) {
  // torch.save's legacy format pickles its magic number first: PROTO n
  // (protocol 2 by default, any 2-5 accepted), LONG1 10 bytes,
  // 0x1950a86a20f9469cfc6c. A safetensors length can begin with 0x80 too,
  // so one byte is not enough.
  constexpr uint8_t kMagic[] = {0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46,
                                0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
  std::array<std::byte, 2 + sizeof(kMagic)> head{};
  if (source.size() < head.size() || !source.ReadAt(0, head).ok()) return false;
  const auto protocol = static_cast<uint8_t>(head[1]);
  return head[0] == std::byte{0x80} && protocol >= 2 && protocol <= 5 &&
         std::memcmp(head.data() + 2, kMagic, sizeof(kMagic)) == 0;
}

Result<ArrayFile> ReadPytorch(ZipArchive& archive, const ParseLimits& limits) {
  CheckpointReader reader(archive, limits);
  return reader.Read();
}

}  // namespace amn::formats
