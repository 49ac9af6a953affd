// A small pickle VM for the streams torch.save writes (protocols 0-5: the
// opcodes of Python's pickle module that torch emits, and the text and
// Python 2 opcodes of protocols 0 and 1 that old checkpoints use; see
// pickletools.py for their definitions). Nothing is ever executed: globals come from one fixed
// allowlist (pickle_vm.cc) and REDUCE / NEWOBJ / BUILD of them only record
// their arguments for the caller to interpret. Every stack, memo, container
// and byte count is bounded by PickleLimits.
#ifndef AMN_FORMATS_PICKLE_VM_H_
#define AMN_FORMATS_PICKLE_VM_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "amn/limits.h"
#include "amn/result.h"
#include "formats/dtype.h"

namespace amn::formats {

struct PickleLimits {
  // Values on the stack plus open MARKs.
  uint64_t max_stack = uint64_t{1} << 16;
  // Memo entries (BINPUT, LONG_BINPUT, MEMOIZE).
  uint64_t max_memo = uint64_t{1} << 20;
  // Nesting of containers as they are built (a list in a list is depth 2);
  // also bounds every walk over a result.
  uint64_t max_depth = 256;
  // Values created plus slots filled in containers (so APPENDS of one
  // memoized value many times costs one item per slot).
  uint64_t max_items = uint64_t{1} << 20;
  // Bytes of all strings and bytes objects together.
  uint64_t max_bytes = uint64_t{100} << 20;

  // max_memo and max_items from max_item_count, max_bytes from
  // max_header_bytes; stack and depth keep their defaults.
  static PickleLimits From(const ParseLimits& limits);
};

// What a global is allowed to be (the allowlist's roles).
enum class PickleGlobalRole : uint8_t {
  kOrderedDict,                // collections.OrderedDict: REDUCE/NEWOBJ -> empty dict
  kRebuildTensor,              // torch._utils._rebuild_tensor
  kRebuildTensorV2,            // torch._utils._rebuild_tensor_v2
  kRebuildTensorV3,            // torch._utils._rebuild_tensor_v3 (dtype given, storage untyped)
  kRebuildParameter,           // torch._utils._rebuild_parameter
  kRebuildParameterWithState,  // torch._utils._rebuild_parameter_with_state
  kRebuildFromTypeV2,          // torch._tensor._rebuild_from_type_v2 (new_type torch.Tensor only)
  kTensorType,                 // torch._tensor.Tensor, only as _rebuild_from_type_v2's new_type
  kUnsupportedTensor,          // quantized/sparse/nested... rebuilds: recorded, refused by readers
  kLayout,                     // torch.serialization._get_layout (sparse tensors' argument): recorded
  kStorageType,                // torch.FloatStorage ... torch.UntypedStorage (persistent ids)
  kDtype,                      // torch.float32 ... (inert values)
  kSize,                       // torch.Size: REDUCE -> the tuple of ints
  kSet,                        // builtins.set: REDUCE -> set
  kFrozenSet,                  // builtins.frozenset: REDUCE -> frozenset
};

struct PickleGlobal {
  std::string_view module;
  std::string_view name;
  PickleGlobalRole role;
  // kStorageType / kDtype: the element type; nullopt for types torch has and
  // we do not read (complex, quantized).
  std::optional<Dtype> dtype;
};

// The allowlist entry for module.name, or nullptr when it is not allowed.
const PickleGlobal* FindAllowedGlobal(std::string_view module, std::string_view name);

enum class PickleKind : uint8_t {
  kNone, kBool, kInt, kFloat, kString, kBytes,
  kTuple, kList, kDict, kSet, kFrozenSet,
  kGlobal,      // an allowlisted global itself
  kPersistent,  // the result of a persistent load
  kObject,      // REDUCE/NEWOBJ of an allowlisted callable that the VM does not fold
};

// One value. Children are owned by the result's arena, so memo replays share
// them and no walk of the graph is needed to free it (it may even be cyclic:
// a list can be appended to itself). Code that walks values must bound its
// own depth (PickleLimits::max_depth): depths recorded while building can be
// stale after a memoized container is filled later.
struct PickleValue {
  PickleKind kind = PickleKind::kNone;
  bool boolean = false;                   // kBool
  int64_t integer = 0;                    // kInt; kPersistent: the handle persistent_load gave
  double real = 0;                        // kFloat
  std::string text;                       // kString (UTF-8 as pickled), kBytes
  std::vector<const PickleValue*> items;  // kTuple, kList, kSet, kFrozenSet
  std::vector<std::pair<const PickleValue*, const PickleValue*>> pairs;  // kDict, in insertion order
  const PickleGlobal* global = nullptr;   // kGlobal; kObject: the callable
  const PickleValue* args = nullptr;      // kObject: the argument tuple; kPersistent: the id
  const PickleValue* state = nullptr;     // kObject, kDict: the last BUILD state (else nullptr)
  uint64_t offset = 0;                    // byte offset of the opcode that made it
  uint32_t depth = 1;                     // container nesting when last filled
};

// A value that keeps the whole result (its arena) alive.
using PickleValuePtr = std::shared_ptr<const PickleValue>;

// Turns a persistent id (BINPERSID's popped value, or PERSID's text as a
// kString) into the handle stored in the kPersistent value; an error stops
// the run and is returned as is (the VM adds the byte offset when it has none).
using PersistentLoad = std::function<Result<int64_t>(const PickleValue& pid)>;

// Runs `pickle` to its STOP and returns the value STOP pops. Errors:
// kTruncated (the stream ends inside an opcode or before STOP), kInvalid
// (unknown opcode, stack underflow, a missing MARK, a bad memo key, wrong
// operand types, a global not on the allowlist: "disallowed global
// 'os.system'"), kUnsupported (NEXT_BUFFER / READONLY_BUFFER, integers
// beyond int64, calls the VM cannot give meaning to), kLimitExceeded
// (PickleLimits). Messages name the opcode; byte_offset() is its offset.
Result<PickleValuePtr> RunPickle(std::span<const std::byte> pickle, const PickleLimits& limits,
                                 const PersistentLoad& persistent_load);

// "none", "int", "dict", ... for messages.
std::string_view PickleKindName(PickleKind kind);

}  // namespace amn::formats

#endif  // AMN_FORMATS_PICKLE_VM_H_
