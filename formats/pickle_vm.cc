// The pickle VM (pickle_vm.h). Opcode meanings follow CPython's
// Lib/pickletools.py and the Unpickler in Lib/pickle.py (protocols 0-5; the
// text operands of protocols 0 and 1 are decoded in pickle_text.cc): a stack of values,
// MARKs as positions in it (a MARK opens a frame that pops cannot reach
// below), and a memo of shared values. Values live in an arena freed in one
// go, so sharing and even cycles cost nothing to release and recursion never
// happens here.
#include "formats/pickle_vm.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <unordered_map>

#include "formats/byte_source.h"
#include "formats/pickle_text.h"

namespace amn::formats {
namespace {

// The allowlist: the only globals a pickle may name. Everything here is inert
// data or a constructor the VM folds itself; nothing is ever called.
constexpr PickleGlobal kAllowedGlobals[] = {
    {"collections", "OrderedDict", PickleGlobalRole::kOrderedDict, std::nullopt},
    {"torch._utils", "_rebuild_tensor", PickleGlobalRole::kRebuildTensor, std::nullopt},
    {"torch._utils", "_rebuild_tensor_v2", PickleGlobalRole::kRebuildTensorV2, std::nullopt},
    {"torch._utils", "_rebuild_tensor_v3", PickleGlobalRole::kRebuildTensorV3, std::nullopt},
    {"torch._utils", "_rebuild_parameter", PickleGlobalRole::kRebuildParameter, std::nullopt},
    {"torch._utils", "_rebuild_parameter_with_state", PickleGlobalRole::kRebuildParameterWithState,
     std::nullopt},
    {"torch._tensor", "_rebuild_from_type_v2", PickleGlobalRole::kRebuildFromTypeV2, std::nullopt},
    {"torch._tensor", "Tensor", PickleGlobalRole::kTensorType, std::nullopt},
    {"torch._utils", "_rebuild_qtensor", PickleGlobalRole::kUnsupportedTensor, std::nullopt},
    {"torch._utils", "_rebuild_sparse_tensor", PickleGlobalRole::kUnsupportedTensor, std::nullopt},
    {"torch._utils", "_rebuild_sparse_csr_tensor", PickleGlobalRole::kUnsupportedTensor, std::nullopt},
    {"torch._utils", "_rebuild_nested_tensor", PickleGlobalRole::kUnsupportedTensor, std::nullopt},
    {"torch._utils", "_rebuild_meta_tensor_no_storage", PickleGlobalRole::kUnsupportedTensor,
     std::nullopt},
    {"torch._utils", "_rebuild_wrapper_subclass", PickleGlobalRole::kUnsupportedTensor, std::nullopt},
    {"torch._utils", "_rebuild_device_tensor_from_numpy", PickleGlobalRole::kUnsupportedTensor,
     std::nullopt},
    {"torch.serialization", "_get_layout", PickleGlobalRole::kLayout, std::nullopt},
    // Typed storages as the persistent ids of torch.save name them
    // (torch/storage.py _dtype_to_storage_type_map); UntypedStorage counts bytes.
    {"torch", "DoubleStorage", PickleGlobalRole::kStorageType, Dtype::kF64},
    {"torch", "FloatStorage", PickleGlobalRole::kStorageType, Dtype::kF32},
    {"torch", "HalfStorage", PickleGlobalRole::kStorageType, Dtype::kF16},
    {"torch", "BFloat16Storage", PickleGlobalRole::kStorageType, Dtype::kBf16},
    {"torch", "LongStorage", PickleGlobalRole::kStorageType, Dtype::kI64},
    {"torch", "IntStorage", PickleGlobalRole::kStorageType, Dtype::kI32},
    {"torch", "ShortStorage", PickleGlobalRole::kStorageType, Dtype::kI16},
    {"torch", "CharStorage", PickleGlobalRole::kStorageType, Dtype::kI8},
    {"torch", "ByteStorage", PickleGlobalRole::kStorageType, Dtype::kU8},
    {"torch", "BoolStorage", PickleGlobalRole::kStorageType, Dtype::kBool},
    {"torch", "UntypedStorage", PickleGlobalRole::kStorageType, Dtype::kU8},
    {"torch", "Float8_e4m3fnStorage", PickleGlobalRole::kStorageType, Dtype::kF8E4m3},
    {"torch", "Float8_e5m2Storage", PickleGlobalRole::kStorageType, Dtype::kF8E5m2},
    {"torch", "ComplexFloatStorage", PickleGlobalRole::kStorageType, std::nullopt},
    {"torch", "ComplexDoubleStorage", PickleGlobalRole::kStorageType, std::nullopt},
    {"torch", "QInt8Storage", PickleGlobalRole::kStorageType, std::nullopt},
    {"torch", "QUInt8Storage", PickleGlobalRole::kStorageType, std::nullopt},
    {"torch", "QInt32Storage", PickleGlobalRole::kStorageType, std::nullopt},
    {"torch", "QUInt4x2Storage", PickleGlobalRole::kStorageType, std::nullopt},
    {"torch", "QUInt2x4Storage", PickleGlobalRole::kStorageType, std::nullopt},
    // torch.dtype pickles as its name (GLOBAL 'torch float32').
    {"torch", "float64", PickleGlobalRole::kDtype, Dtype::kF64},
    {"torch", "float32", PickleGlobalRole::kDtype, Dtype::kF32},
    {"torch", "float16", PickleGlobalRole::kDtype, Dtype::kF16},
    {"torch", "bfloat16", PickleGlobalRole::kDtype, Dtype::kBf16},
    {"torch", "int64", PickleGlobalRole::kDtype, Dtype::kI64},
    {"torch", "int32", PickleGlobalRole::kDtype, Dtype::kI32},
    {"torch", "int16", PickleGlobalRole::kDtype, Dtype::kI16},
    {"torch", "int8", PickleGlobalRole::kDtype, Dtype::kI8},
    {"torch", "uint8", PickleGlobalRole::kDtype, Dtype::kU8},
    {"torch", "bool", PickleGlobalRole::kDtype, Dtype::kBool},
    {"torch", "uint16", PickleGlobalRole::kDtype, Dtype::kU16},
    {"torch", "uint32", PickleGlobalRole::kDtype, Dtype::kU32},
    {"torch", "uint64", PickleGlobalRole::kDtype, Dtype::kU64},
    {"torch", "float8_e4m3fn", PickleGlobalRole::kDtype, Dtype::kF8E4m3},
    {"torch", "float8_e5m2", PickleGlobalRole::kDtype, Dtype::kF8E5m2},
    {"torch", "float8_e8m0fnu", PickleGlobalRole::kDtype, Dtype::kF8E8m0},
    {"torch", "float8_e4m3fnuz", PickleGlobalRole::kDtype, std::nullopt},
    {"torch", "float8_e5m2fnuz", PickleGlobalRole::kDtype, std::nullopt},
    {"torch", "complex64", PickleGlobalRole::kDtype, std::nullopt},
    {"torch", "complex128", PickleGlobalRole::kDtype, std::nullopt},
    {"torch", "Size", PickleGlobalRole::kSize, std::nullopt},
    // Protocol 2 writes Python 3's builtins under their Python 2 name.
    {"builtins", "set", PickleGlobalRole::kSet, std::nullopt},
    {"builtins", "frozenset", PickleGlobalRole::kFrozenSet, std::nullopt},
    {"__builtin__", "set", PickleGlobalRole::kSet, std::nullopt},
    {"__builtin__", "frozenset", PickleGlobalRole::kFrozenSet, std::nullopt},
};

// Opcodes (Lib/pickletools.py).
enum Op : uint8_t {
  kMark = '(', kStop = '.', kPop = '0', kPopMark = '1', kDup = '2', kNone = 'N',
  kBinInt = 'J', kBinInt1 = 'K', kBinInt2 = 'M', kBinFloat = 'G',
  kBinUnicode = 'X', kShortBinBytes = 'C', kBinBytes = 'B',
  kEmptyTuple = ')', kTuple = 't', kEmptyList = ']', kAppend = 'a', kAppends = 'e', kList = 'l',
  kEmptyDict = '}', kDict = 'd', kSetItem = 's', kSetItems = 'u',
  kGlobal = 'c', kReduce = 'R', kBuild = 'b',
  kBinPut = 'q', kLongBinPut = 'r', kBinGet = 'h', kLongBinGet = 'j',
  kPersId = 'P', kBinPersId = 'Q',
  // Protocols 0 and 1: text operands (one line each) and Python 2 strings.
  kInt = 'I', kLong = 'L', kFloat = 'F', kString = 'S', kUnicode = 'V', kGet = 'g', kPut = 'p',
  kBinString = 'T', kShortBinString = 'U', kInst = 'i', kObj = 'o',
  kProto = 0x80, kNewObj = 0x81, kTuple1 = 0x85, kTuple2 = 0x86, kTuple3 = 0x87,
  kNewTrue = 0x88, kNewFalse = 0x89, kLong1 = 0x8a, kLong4 = 0x8b,
  kShortBinUnicode = 0x8c, kBinUnicode8 = 0x8d, kBinBytes8 = 0x8e, kEmptySet = 0x8f,
  kAddItems = 0x90, kFrozenSet = 0x91, kStackGlobal = 0x93, kMemoize = 0x94, kFrame = 0x95,
  kByteArray8 = 0x96, kNextBuffer = 0x97, kReadonlyBuffer = 0x98,
};

std::string OpName(uint8_t op) {
  switch (op) {
    case kMark: return "MARK";
    case kStop: return "STOP";
    case kPop: return "POP";
    case kPopMark: return "POP_MARK";
    case kDup: return "DUP";
    case kNone: return "NONE";
    case kBinInt: return "BININT";
    case kBinInt1: return "BININT1";
    case kBinInt2: return "BININT2";
    case kBinFloat: return "BINFLOAT";
    case kBinUnicode: return "BINUNICODE";
    case kShortBinBytes: return "SHORT_BINBYTES";
    case kBinBytes: return "BINBYTES";
    case kEmptyTuple: return "EMPTY_TUPLE";
    case kTuple: return "TUPLE";
    case kEmptyList: return "EMPTY_LIST";
    case kAppend: return "APPEND";
    case kAppends: return "APPENDS";
    case kList: return "LIST";
    case kEmptyDict: return "EMPTY_DICT";
    case kDict: return "DICT";
    case kSetItem: return "SETITEM";
    case kSetItems: return "SETITEMS";
    case kGlobal: return "GLOBAL";
    case kReduce: return "REDUCE";
    case kBuild: return "BUILD";
    case kBinPut: return "BINPUT";
    case kLongBinPut: return "LONG_BINPUT";
    case kBinGet: return "BINGET";
    case kLongBinGet: return "LONG_BINGET";
    case kPersId: return "PERSID";
    case kInt: return "INT";
    case kLong: return "LONG";
    case kFloat: return "FLOAT";
    case kString: return "STRING";
    case kUnicode: return "UNICODE";
    case kGet: return "GET";
    case kPut: return "PUT";
    case kBinString: return "BINSTRING";
    case kShortBinString: return "SHORT_BINSTRING";
    case kInst: return "INST";
    case kObj: return "OBJ";
    case kBinPersId: return "BINPERSID";
    case kProto: return "PROTO";
    case kNewObj: return "NEWOBJ";
    case kTuple1: return "TUPLE1";
    case kTuple2: return "TUPLE2";
    case kTuple3: return "TUPLE3";
    case kNewTrue: return "NEWTRUE";
    case kNewFalse: return "NEWFALSE";
    case kLong1: return "LONG1";
    case kLong4: return "LONG4";
    case kShortBinUnicode: return "SHORT_BINUNICODE";
    case kBinUnicode8: return "BINUNICODE8";
    case kBinBytes8: return "BINBYTES8";
    case kEmptySet: return "EMPTY_SET";
    case kAddItems: return "ADDITEMS";
    case kFrozenSet: return "FROZENSET";
    case kStackGlobal: return "STACK_GLOBAL";
    case kMemoize: return "MEMOIZE";
    case kFrame: return "FRAME";
    case kByteArray8: return "BYTEARRAY8";
    case kNextBuffer: return "NEXT_BUFFER";
    case kReadonlyBuffer: return "READONLY_BUFFER";
    default: break;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = "opcode 0x";
  name += kHex[op >> 4];
  name += kHex[op & 15];
  if (op >= 0x20 && op < 0x7f) name += std::string(" '") + static_cast<char>(op) + "'";
  return name;
}

struct Arena {
  std::deque<PickleValue> values;  // a deque never moves what it holds
};

class Vm {
 public:
  Vm(std::span<const std::byte> pickle, const PickleLimits& limits, const PersistentLoad& load)
      : in_(pickle), limits_(limits), load_(load), arena_(std::make_shared<Arena>()) {}

  Result<PickleValuePtr> Run() {
    while (true) {
      op_offset_ = pos_;
      if (pos_ >= in_.size()) {
        return Status(StatusCode::kTruncated,
                      "pickle ends at byte " + std::to_string(pos_) + " before its STOP opcode")
            .WithByteOffset(pos_);
      }
      op_ = static_cast<uint8_t>(in_[pos_++]);
      if (op_ == kStop) {
        PickleValue* result = nullptr;
        AMN_RETURN_IF_ERROR(Pop(&result));
        return PickleValuePtr(arena_, result);
      }
      AMN_RETURN_IF_ERROR(Step());
    }
  }

 private:
  Status Error(StatusCode code, const std::string& what) const {
    return Status(code, what + " (pickle " + OpName(op_) + " at byte " +
                            std::to_string(op_offset_) + ")")
        .WithByteOffset(op_offset_);
  }
  Status Invalid(const std::string& what) const { return Error(StatusCode::kInvalid, what); }

  // ---- reading operands ----
  Status Take(uint64_t n, const std::byte** out) {
    if (n > in_.size() - pos_) {
      return Status(StatusCode::kTruncated,
                    "pickle ends inside " + OpName(op_) + " at byte " + std::to_string(op_offset_) +
                        " (needs " + std::to_string(n) + " bytes, " +
                        std::to_string(in_.size() - pos_) + " left)")
          .WithByteOffset(op_offset_);
    }
    *out = in_.data() + pos_;
    pos_ += n;
    return Status::Ok();
  }
  Status Le(int bytes, uint64_t* value) {
    const std::byte* p = nullptr;
    AMN_RETURN_IF_ERROR(Take(static_cast<uint64_t>(bytes), &p));
    *value = 0;
    for (int i = bytes - 1; i >= 0; --i) *value = *value << 8 | static_cast<uint64_t>(p[i]);
    return Status::Ok();
  }
  // A text line ending in '\n' (GLOBAL, PERSID, INST and the protocol 0 operands),
  // without the newline.
  Status Line(std::string_view* out) {
    const auto* begin = reinterpret_cast<const char*>(in_.data() + pos_);
    const void* nl = std::memchr(begin, '\n', in_.size() - pos_);
    if (nl == nullptr) {
      return Status(StatusCode::kTruncated, "pickle ends inside the text line of " + OpName(op_) +
                                                " at byte " + std::to_string(op_offset_))
          .WithByteOffset(op_offset_);
    }
    const auto length = static_cast<size_t>(static_cast<const char*>(nl) - begin);
    AMN_RETURN_IF_ERROR(CountBytes(length));
    *out = std::string_view(begin, length);
    pos_ += length + 1;
    return Status::Ok();
  }

  // ---- budgets ----
  Status CountItem() {
    if (++items_ > limits_.max_items) {
      return Error(StatusCode::kLimitExceeded,
                   "pickle builds more than " + std::to_string(limits_.max_items) + " values");
    }
    return Status::Ok();
  }
  Status CountBytes(uint64_t n) {
    if (n > limits_.max_bytes - bytes_) {
      return Error(StatusCode::kLimitExceeded, "pickle strings exceed " +
                                                   std::to_string(limits_.max_bytes) + " bytes");
    }
    bytes_ += n;
    return Status::Ok();
  }
  Status New(PickleKind kind, PickleValue** out) {
    AMN_RETURN_IF_ERROR(CountItem());
    PickleValue& value = arena_->values.emplace_back();
    value.kind = kind;
    value.offset = op_offset_;
    *out = &value;
    return Status::Ok();
  }
  // Counts the slot and the nesting it makes.
  Status Adopt(PickleValue* parent, const PickleValue* child) {
    AMN_RETURN_IF_ERROR(CountItem());
    const uint64_t depth = uint64_t{child->depth} + 1;
    if (depth > limits_.max_depth) {
      return Error(StatusCode::kLimitExceeded,
                   "containers nest deeper than " + std::to_string(limits_.max_depth));
    }
    parent->depth = std::max(parent->depth, static_cast<uint32_t>(depth));
    return Status::Ok();
  }
  Status AddItem(PickleValue* parent, const PickleValue* child) {
    AMN_RETURN_IF_ERROR(Adopt(parent, child));
    parent->items.push_back(child);
    return Status::Ok();
  }
  Status AddPair(PickleValue* dict, const PickleValue* key, const PickleValue* value) {
    AMN_RETURN_IF_ERROR(Adopt(dict, key));
    AMN_RETURN_IF_ERROR(Adopt(dict, value));
    dict->pairs.emplace_back(key, value);
    return Status::Ok();
  }

  // ---- the stack ----
  size_t FrameStart() const { return marks_.empty() ? 0 : marks_.back(); }
  Status Push(PickleValue* value) {
    if (stack_.size() + marks_.size() >= limits_.max_stack) {
      return Error(StatusCode::kLimitExceeded,
                   "pickle stack deeper than " + std::to_string(limits_.max_stack));
    }
    stack_.push_back(value);
    return Status::Ok();
  }
  Status PushNew(PickleKind kind, PickleValue** out = nullptr) {
    PickleValue* value = nullptr;
    AMN_RETURN_IF_ERROR(New(kind, &value));
    if (out != nullptr) *out = value;
    return Push(value);
  }
  Status Pop(PickleValue** out) {
    if (stack_.size() <= FrameStart()) return Invalid("stack underflow");
    *out = stack_.back();
    stack_.pop_back();
    return Status::Ok();
  }
  Status Top(PickleValue** out) {
    if (stack_.size() <= FrameStart()) return Invalid("stack underflow");
    *out = stack_.back();
    return Status::Ok();
  }
  // The values above the last MARK, removing them and the MARK.
  Status PopMark(std::vector<PickleValue*>* out) {
    if (marks_.empty()) return Invalid("no MARK to pop");
    const size_t start = marks_.back();
    marks_.pop_back();
    out->assign(stack_.begin() + static_cast<std::ptrdiff_t>(start), stack_.end());
    stack_.resize(start);
    return Status::Ok();
  }
  Status TopOfKind(PickleKind kind, PickleValue** out) {
    AMN_RETURN_IF_ERROR(Top(out));
    if ((*out)->kind != kind) {
      return Invalid(std::string("expects a ") + std::string(PickleKindName(kind)) + ", not a " +
                     std::string(PickleKindName((*out)->kind)));
    }
    return Status::Ok();
  }

  // ---- memo ----
  Status Put(uint64_t key) {
    PickleValue* top = nullptr;
    AMN_RETURN_IF_ERROR(Top(&top));
    auto it = memo_.find(key);
    if (it != memo_.end()) {
      it->second = top;
      return Status::Ok();
    }
    if (memo_.size() >= limits_.max_memo) {
      return Error(StatusCode::kLimitExceeded,
                   "pickle memo over " + std::to_string(limits_.max_memo) + " entries");
    }
    memo_.emplace(key, top);
    return Status::Ok();
  }
  Status Get(uint64_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) return Invalid("memo key " + std::to_string(key) + " is not defined");
    return Push(it->second);
  }

  // ---- opcodes ----
  Status PushInt(int64_t value) {
    PickleValue* v = nullptr;
    AMN_RETURN_IF_ERROR(PushNew(PickleKind::kInt, &v));
    v->integer = value;
    return Status::Ok();
  }
  // LONG1 / LONG4: little-endian two's complement of `n` bytes.
  Status Long(uint64_t n) {
    const std::byte* p = nullptr;
    AMN_RETURN_IF_ERROR(Take(n, &p));
    if (n == 0) return PushInt(0);
    // Bytes past the eighth must only repeat the sign of the first eight.
    const bool negative = n > 8 ? (static_cast<uint8_t>(p[7]) & 0x80) != 0
                                : (static_cast<uint8_t>(p[n - 1]) & 0x80) != 0;
    for (uint64_t i = 8; i < n; ++i) {
      if (static_cast<uint8_t>(p[i]) != (negative ? 0xff : 0x00)) {
        return Error(StatusCode::kUnsupported, "integer does not fit in 64 bits");
      }
    }
    uint64_t bits = negative ? ~uint64_t{0} : 0;
    const uint64_t used = std::min<uint64_t>(n, 8);
    for (uint64_t i = 0; i < used; ++i) {
      bits &= ~(uint64_t{0xff} << (8 * i));
      bits |= static_cast<uint64_t>(p[i]) << (8 * i);
    }
    return PushInt(static_cast<int64_t>(bits));
  }
  Status Text(PickleKind kind, uint64_t n) {
    const std::byte* p = nullptr;
    AMN_RETURN_IF_ERROR(Take(n, &p));
    AMN_RETURN_IF_ERROR(CountBytes(n));
    PickleValue* v = nullptr;
    AMN_RETURN_IF_ERROR(PushNew(kind, &v));
    v->text.assign(reinterpret_cast<const char*>(p), n);
    return Status::Ok();
  }
  Status TextOp(PickleKind kind, int length_bytes) {
    uint64_t n = 0;
    AMN_RETURN_IF_ERROR(Le(length_bytes, &n));
    return Text(kind, n);
  }
  Status MakeSequence(PickleKind kind, const std::vector<PickleValue*>& items) {
    PickleValue* v = nullptr;
    AMN_RETURN_IF_ERROR(New(kind, &v));
    v->items.reserve(items.size());
    for (const PickleValue* item : items) AMN_RETURN_IF_ERROR(AddItem(v, item));
    return Push(v);
  }
  Status TupleN(size_t n) {
    std::vector<PickleValue*> items(n);
    for (size_t i = n; i-- > 0;) AMN_RETURN_IF_ERROR(Pop(&items[i]));
    return MakeSequence(PickleKind::kTuple, items);
  }
  Status MarkedSequence(PickleKind kind) {
    std::vector<PickleValue*> items;
    AMN_RETURN_IF_ERROR(PopMark(&items));
    return MakeSequence(kind, items);
  }
  Status AddPairs(PickleValue* dict, const std::vector<PickleValue*>& items) {
    if (items.size() % 2 != 0) return Invalid("odd number of items for a dict");
    for (size_t i = 0; i < items.size(); i += 2) AMN_RETURN_IF_ERROR(AddPair(dict, items[i], items[i + 1]));
    return Status::Ok();
  }
  Status MakeGlobal(std::string_view module, std::string_view name, PickleValue** out) {
    const PickleGlobal* allowed = FindAllowedGlobal(module, name);
    if (allowed == nullptr) {
      return Invalid("disallowed global '" + MessageSafe(module, 100) + "." + MessageSafe(name, 100) + "'");
    }
    AMN_RETURN_IF_ERROR(New(PickleKind::kGlobal, out));
    (*out)->global = allowed;
    return Status::Ok();
  }
  Status Global(std::string_view module, std::string_view name) {
    PickleValue* v = nullptr;
    AMN_RETURN_IF_ERROR(MakeGlobal(module, name, &v));
    return Push(v);
  }
  // INST / OBJ (protocols 0 and 1): cls(*args), as REDUCE would call it.
  Status Instantiate(const PickleValue* cls, const std::vector<PickleValue*>& args) {
    PickleValue* tuple = nullptr;
    AMN_RETURN_IF_ERROR(New(PickleKind::kTuple, &tuple));
    for (const PickleValue* item : args) AMN_RETURN_IF_ERROR(AddItem(tuple, item));
    PickleValue* result = nullptr;
    AMN_RETURN_IF_ERROR(Call(cls, tuple, false, &result));
    return Push(result);
  }

  // ---- text operands (protocols 0 and 1) ----
  // A pickle_text.h result, or its error at this opcode.
  template <typename T>
  Status Decoded(Result<T> result, T* out) {
    if (!result.ok()) return Error(result.status().code(), result.status().message());
    *out = std::move(*result);
    return Status::Ok();
  }
  // LONG, GET, PUT: a decimal line (LONG may end in Python 2's 'L').
  Status DecimalLine(int64_t* out) {
    std::string_view line;
    AMN_RETURN_IF_ERROR(Line(&line));
    if (op_ == kLong && !line.empty() && line.back() == 'L') line.remove_suffix(1);
    return Decoded(ParsePickleDecimal(line), out);
  }
  // STRING, UNICODE: the decoded line as a string value.
  Status QuotedLine() {
    std::string_view line;
    AMN_RETURN_IF_ERROR(Line(&line));
    std::string text;
    AMN_RETURN_IF_ERROR(Decoded(op_ == kUnicode ? DecodePickleUnicode(line) : DecodePickleString(line), &text));
    // Line() counted the raw bytes; UTF-8 of bytes >= 0x80 can be longer.
    if (text.size() > line.size()) AMN_RETURN_IF_ERROR(CountBytes(text.size() - line.size()));
    PickleValue* v = nullptr;
    AMN_RETURN_IF_ERROR(PushNew(PickleKind::kString, &v));
    v->text = std::move(text);
    return Status::Ok();
  }
  Status TextOpcode() {
    std::string_view line;
    int64_t value = 0;
    PickleValue* v = nullptr;
    switch (op_) {
      case kInt:
        AMN_RETURN_IF_ERROR(Line(&line));
        if (line == "00" || line == "01") {  // Python 2.3+ writes bools as INT 00 / 01
          AMN_RETURN_IF_ERROR(PushNew(PickleKind::kBool, &v));
          v->boolean = line == "01";
          return Status::Ok();
        }
        AMN_RETURN_IF_ERROR(Decoded(ParsePickleDecimal(line), &value));
        return PushInt(value);
      case kLong:
        AMN_RETURN_IF_ERROR(DecimalLine(&value));
        return PushInt(value);
      case kFloat: {
        double real = 0;
        AMN_RETURN_IF_ERROR(Line(&line));
        AMN_RETURN_IF_ERROR(Decoded(ParsePickleFloat(line), &real));
        AMN_RETURN_IF_ERROR(PushNew(PickleKind::kFloat, &v));
        v->real = real;
        return Status::Ok();
      }
      case kString:
      case kUnicode: return QuotedLine();
      case kGet:
        AMN_RETURN_IF_ERROR(DecimalLine(&value));
        if (value < 0) return Invalid("memo key " + std::to_string(value) + " is not defined");
        return Get(static_cast<uint64_t>(value));
      case kPut:
        AMN_RETURN_IF_ERROR(DecimalLine(&value));
        if (value < 0) return Invalid("negative PUT argument");
        return Put(static_cast<uint64_t>(value));
      default: break;
    }
    return Invalid("unsupported pickle " + OpName(op_));
  }
  Status Persistent(PickleValue* pid) {
    if (!load_) return Error(StatusCode::kUnsupported, "persistent ids are not expected here");
    Result<int64_t> handle = load_(*pid);
    if (!handle.ok()) {
      Status status = handle.status();
      if (status.byte_offset().has_value()) return status;
      return std::move(status).WithByteOffset(op_offset_);
    }
    PickleValue* v = nullptr;
    AMN_RETURN_IF_ERROR(New(PickleKind::kPersistent, &v));
    AMN_RETURN_IF_ERROR(Adopt(v, pid));
    v->args = pid;
    v->integer = *handle;
    return Push(v);
  }

  static std::string GlobalName(const PickleGlobal& g) {
    return std::string(g.module) + "." + std::string(g.name);
  }
  // What calling `callable` with the tuple `args` makes (REDUCE).
  Status Call(const PickleValue* callable, PickleValue* args, bool nested, PickleValue** out) {
    if (callable->kind != PickleKind::kGlobal) {
      return Invalid("calls a " + std::string(PickleKindName(callable->kind)));
    }
    if (args->kind != PickleKind::kTuple) {
      return Invalid("call arguments are a " + std::string(PickleKindName(args->kind)) + ", not a tuple");
    }
    const PickleGlobal& g = *callable->global;
    switch (g.role) {
      case PickleGlobalRole::kOrderedDict: {
        // Python 3 passes no arguments (the items follow as SETITEMS);
        // Python 2's __reduce__ passes one list of [key, value] pairs.
        AMN_RETURN_IF_ERROR(New(PickleKind::kDict, out));
        if (args->items.empty()) return Status::Ok();
        const PickleValue* pairs = args->items[0];
        if (args->items.size() != 1 ||
            (pairs->kind != PickleKind::kList && pairs->kind != PickleKind::kTuple)) {
          return Error(StatusCode::kUnsupported, "OrderedDict with arguments other than a list of pairs");
        }
        for (const PickleValue* pair : pairs->items) {
          if ((pair->kind != PickleKind::kList && pair->kind != PickleKind::kTuple) || pair->items.size() != 2) {
            return Invalid("OrderedDict item is not a [key, value] pair");
          }
          AMN_RETURN_IF_ERROR(AddPair(*out, pair->items[0], pair->items[1]));
        }
        return Status::Ok();
      }
      case PickleGlobalRole::kSize:
        if (args->items.size() != 1 || args->items[0]->kind != PickleKind::kTuple) {
          return Invalid("torch.Size expects one tuple");
        }
        *out = const_cast<PickleValue*>(args->items[0]);  // tuples are never mutated
        return Status::Ok();
      case PickleGlobalRole::kSet:
      case PickleGlobalRole::kFrozenSet: {
        const PickleKind kind = g.role == PickleGlobalRole::kSet ? PickleKind::kSet : PickleKind::kFrozenSet;
        AMN_RETURN_IF_ERROR(New(kind, out));
        if (args->items.empty()) return Status::Ok();
        const PickleValue* from = args->items[0];
        if (args->items.size() != 1 ||
            (from->kind != PickleKind::kList && from->kind != PickleKind::kTuple &&
             from->kind != PickleKind::kSet && from->kind != PickleKind::kFrozenSet)) {
          return Invalid(GlobalName(g) + " expects one list, tuple or set");
        }
        for (const PickleValue* item : from->items) AMN_RETURN_IF_ERROR(AddItem(*out, item));
        return Status::Ok();
      }
      case PickleGlobalRole::kRebuildFromTypeV2: {
        // torch/_tensor.py: func(*args) when new_type is torch.Tensor; the
        // state (Python attributes) is dropped. Other types are subclasses
        // whose code we would have to run.
        if (nested) return Invalid("nested _rebuild_from_type_v2");
        if (args->items.size() != 4) return Invalid("_rebuild_from_type_v2 expects 4 arguments");
        const PickleValue* type = args->items[1];
        if (type->kind != PickleKind::kGlobal || type->global->role != PickleGlobalRole::kTensorType) {
          return Error(StatusCode::kUnsupported, "_rebuild_from_type_v2 of a type other than torch.Tensor");
        }
        PickleValue* inner = const_cast<PickleValue*>(args->items[2]);
        return Call(args->items[0], inner, true, out);
      }
      case PickleGlobalRole::kRebuildTensor:
      case PickleGlobalRole::kRebuildTensorV2:
      case PickleGlobalRole::kRebuildTensorV3:
      case PickleGlobalRole::kRebuildParameter:
      case PickleGlobalRole::kRebuildParameterWithState:
      case PickleGlobalRole::kUnsupportedTensor:
      case PickleGlobalRole::kLayout:
        AMN_RETURN_IF_ERROR(New(PickleKind::kObject, out));
        (*out)->global = &g;
        AMN_RETURN_IF_ERROR(Adopt(*out, args));
        (*out)->args = args;
        return Status::Ok();
      case PickleGlobalRole::kTensorType:
      case PickleGlobalRole::kStorageType:
      case PickleGlobalRole::kDtype:
        break;
    }
    return Error(StatusCode::kUnsupported, "calling '" + GlobalName(g) + "' is not supported");
  }
  Status NewObj(const PickleValue* cls, const PickleValue* args, PickleValue** out) {
    if (cls->kind != PickleKind::kGlobal) return Invalid("NEWOBJ of a " + std::string(PickleKindName(cls->kind)));
    if (args->kind != PickleKind::kTuple) return Invalid("NEWOBJ arguments are not a tuple");
    switch (cls->global->role) {
      case PickleGlobalRole::kOrderedDict: return New(PickleKind::kDict, out);
      case PickleGlobalRole::kSet: return New(PickleKind::kSet, out);
      case PickleGlobalRole::kFrozenSet: return New(PickleKind::kFrozenSet, out);
      default: break;
    }
    return Error(StatusCode::kUnsupported, "creating '" + GlobalName(*cls->global) + "' is not supported");
  }

  Status Step() {
    PickleValue* a = nullptr;
    PickleValue* b = nullptr;
    uint64_t n = 0;
    std::vector<PickleValue*> items;
    switch (op_) {
      case kProto:
        AMN_RETURN_IF_ERROR(Le(1, &n));
        if (n > 5) return Error(StatusCode::kUnsupported, "pickle protocol " + std::to_string(n));
        return Status::Ok();
      case kFrame: {
        // Frames only group opcodes for buffering; their length must fit.
        AMN_RETURN_IF_ERROR(Le(8, &n));
        if (n > in_.size() - pos_) {
          return Status(StatusCode::kTruncated, "pickle FRAME at byte " + std::to_string(op_offset_) +
                                                    " runs past the end")
              .WithByteOffset(op_offset_);
        }
        return Status::Ok();
      }
      case kMark:
        if (stack_.size() + marks_.size() >= limits_.max_stack) {
          return Error(StatusCode::kLimitExceeded,
                       "pickle stack deeper than " + std::to_string(limits_.max_stack));
        }
        marks_.push_back(stack_.size());
        return Status::Ok();
      case kPop:
        if (stack_.size() <= FrameStart() && !marks_.empty()) {
          marks_.pop_back();  // pickle.py: POP of an empty frame drops its MARK
          return Status::Ok();
        }
        return Pop(&a);
      case kPopMark: return PopMark(&items);
      case kDup:
        AMN_RETURN_IF_ERROR(Top(&a));
        return Push(a);
      case kNone: return PushNew(PickleKind::kNone);
      case kNewTrue:
      case kNewFalse:
        AMN_RETURN_IF_ERROR(PushNew(PickleKind::kBool, &a));
        a->boolean = op_ == kNewTrue;
        return Status::Ok();
      case kBinInt:
        AMN_RETURN_IF_ERROR(Le(4, &n));
        return PushInt(static_cast<int32_t>(static_cast<uint32_t>(n)));
      case kBinInt1:
        AMN_RETURN_IF_ERROR(Le(1, &n));
        return PushInt(static_cast<int64_t>(n));
      case kBinInt2:
        AMN_RETURN_IF_ERROR(Le(2, &n));
        return PushInt(static_cast<int64_t>(n));
      case kLong1:
        AMN_RETURN_IF_ERROR(Le(1, &n));
        return Long(n);
      case kLong4:
        AMN_RETURN_IF_ERROR(Le(4, &n));
        if ((n & 0x80000000u) != 0) return Invalid("negative LONG4 length");
        return Long(n);
      case kBinFloat: {
        AMN_RETURN_IF_ERROR(Le(8, &n));
        // BINFLOAT is big-endian: reverse what Le read.
        n = __builtin_bswap64(n);
        AMN_RETURN_IF_ERROR(PushNew(PickleKind::kFloat, &a));
        std::memcpy(&a->real, &n, sizeof n);
        return Status::Ok();
      }
      case kShortBinUnicode: return TextOp(PickleKind::kString, 1);
      case kBinUnicode: return TextOp(PickleKind::kString, 4);
      case kBinUnicode8: return TextOp(PickleKind::kString, 8);
      case kShortBinBytes: return TextOp(PickleKind::kBytes, 1);
      case kBinBytes: return TextOp(PickleKind::kBytes, 4);
      case kBinBytes8:
      case kByteArray8: return TextOp(PickleKind::kBytes, 8);
      case kEmptyTuple: return PushNew(PickleKind::kTuple);
      case kTuple: return MarkedSequence(PickleKind::kTuple);
      case kTuple1: return TupleN(1);
      case kTuple2: return TupleN(2);
      case kTuple3: return TupleN(3);
      case kEmptyList: return PushNew(PickleKind::kList);
      case kList: return MarkedSequence(PickleKind::kList);
      case kAppend:
        AMN_RETURN_IF_ERROR(Pop(&b));
        AMN_RETURN_IF_ERROR(TopOfKind(PickleKind::kList, &a));
        return AddItem(a, b);
      case kAppends:
        AMN_RETURN_IF_ERROR(PopMark(&items));
        AMN_RETURN_IF_ERROR(TopOfKind(PickleKind::kList, &a));
        for (const PickleValue* item : items) AMN_RETURN_IF_ERROR(AddItem(a, item));
        return Status::Ok();
      case kEmptyDict: return PushNew(PickleKind::kDict);
      case kDict:
        AMN_RETURN_IF_ERROR(PopMark(&items));
        AMN_RETURN_IF_ERROR(New(PickleKind::kDict, &a));
        AMN_RETURN_IF_ERROR(AddPairs(a, items));
        return Push(a);
      case kSetItem: {
        PickleValue* key = nullptr;
        AMN_RETURN_IF_ERROR(Pop(&b));
        AMN_RETURN_IF_ERROR(Pop(&key));
        AMN_RETURN_IF_ERROR(TopOfKind(PickleKind::kDict, &a));
        return AddPair(a, key, b);
      }
      case kSetItems:
        AMN_RETURN_IF_ERROR(PopMark(&items));
        AMN_RETURN_IF_ERROR(TopOfKind(PickleKind::kDict, &a));
        return AddPairs(a, items);
      case kEmptySet: return PushNew(PickleKind::kSet);
      case kAddItems:
        AMN_RETURN_IF_ERROR(PopMark(&items));
        AMN_RETURN_IF_ERROR(TopOfKind(PickleKind::kSet, &a));
        for (const PickleValue* item : items) AMN_RETURN_IF_ERROR(AddItem(a, item));
        return Status::Ok();
      case kFrozenSet: return MarkedSequence(PickleKind::kFrozenSet);
      case kGlobal: {
        std::string_view module, name;
        AMN_RETURN_IF_ERROR(Line(&module));
        AMN_RETURN_IF_ERROR(Line(&name));
        return Global(module, name);
      }
      case kStackGlobal:
        AMN_RETURN_IF_ERROR(Pop(&b));
        AMN_RETURN_IF_ERROR(Pop(&a));
        if (a->kind != PickleKind::kString || b->kind != PickleKind::kString) {
          return Invalid("STACK_GLOBAL expects two strings");
        }
        return Global(a->text, b->text);
      case kReduce: {
        PickleValue* result = nullptr;
        AMN_RETURN_IF_ERROR(Pop(&b));
        AMN_RETURN_IF_ERROR(Pop(&a));
        AMN_RETURN_IF_ERROR(Call(a, b, false, &result));
        return Push(result);
      }
      case kNewObj: {
        PickleValue* result = nullptr;
        AMN_RETURN_IF_ERROR(Pop(&b));
        AMN_RETURN_IF_ERROR(Pop(&a));
        AMN_RETURN_IF_ERROR(NewObj(a, b, &result));
        return Push(result);
      }
      case kBuild:
        AMN_RETURN_IF_ERROR(Pop(&b));
        AMN_RETURN_IF_ERROR(Top(&a));
        if (a->kind != PickleKind::kDict && a->kind != PickleKind::kObject) {
          return Invalid("BUILD on a " + std::string(PickleKindName(a->kind)));
        }
        AMN_RETURN_IF_ERROR(Adopt(a, b));
        a->state = b;
        return Status::Ok();
      case kBinPut:
        AMN_RETURN_IF_ERROR(Le(1, &n));
        return Put(n);
      case kLongBinPut:
        AMN_RETURN_IF_ERROR(Le(4, &n));
        return Put(n);
      case kMemoize: return Put(memo_.size());
      case kBinGet:
        AMN_RETURN_IF_ERROR(Le(1, &n));
        return Get(n);
      case kLongBinGet:
        AMN_RETURN_IF_ERROR(Le(4, &n));
        return Get(n);
      case kBinPersId:
        AMN_RETURN_IF_ERROR(Pop(&a));
        return Persistent(a);
      case kPersId: {
        std::string_view id;
        AMN_RETURN_IF_ERROR(Line(&id));
        AMN_RETURN_IF_ERROR(New(PickleKind::kString, &a));
        a->text.assign(id);
        return Persistent(a);
      }
      case kInt:
      case kLong:
      case kFloat:
      case kString:
      case kUnicode:
      case kGet:
      case kPut: return TextOpcode();
      case kBinString:
        AMN_RETURN_IF_ERROR(Le(4, &n));
        if ((n & 0x80000000u) != 0) return Invalid("negative BINSTRING length");
        return Text(PickleKind::kString, n);
      case kShortBinString: return TextOp(PickleKind::kString, 1);
      case kInst: {
        std::string_view module, name;
        AMN_RETURN_IF_ERROR(Line(&module));
        AMN_RETURN_IF_ERROR(Line(&name));
        AMN_RETURN_IF_ERROR(MakeGlobal(module, name, &a));
        AMN_RETURN_IF_ERROR(PopMark(&items));
        return Instantiate(a, items);
      }
      case kObj:
        AMN_RETURN_IF_ERROR(PopMark(&items));
        if (items.empty()) return Invalid("OBJ without a class");
        a = items.front();
        items.erase(items.begin());
        return Instantiate(a, items);
      case kNextBuffer:
      case kReadonlyBuffer:
        return Error(StatusCode::kUnsupported, "out-of-band buffers are not supported");
      default: break;
    }
    return Invalid("unsupported pickle " + OpName(op_));
  }

  std::span<const std::byte> in_;
  const PickleLimits& limits_;
  const PersistentLoad& load_;
  std::shared_ptr<Arena> arena_;
  uint64_t pos_ = 0;
  uint64_t op_offset_ = 0;
  uint8_t op_ = 0;
  std::vector<PickleValue*> stack_;
  std::vector<size_t> marks_;  // stack sizes at each open MARK
  std::unordered_map<uint64_t, PickleValue*> memo_;
  uint64_t items_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace

PickleLimits PickleLimits::From(const ParseLimits& limits) {
  const ParseLimits clamped = limits.Clamped();
  PickleLimits out;
  out.max_memo = clamped.max_item_count;
  out.max_items = clamped.max_item_count;
  out.max_bytes = clamped.max_header_bytes;
  return out;
}

const PickleGlobal* FindAllowedGlobal(std::string_view module, std::string_view name) {
  for (const PickleGlobal& g : kAllowedGlobals) {
    if (g.module == module && g.name == name) return &g;
  }
  return nullptr;
}

std::string_view PickleKindName(PickleKind kind) {
  switch (kind) {
    case PickleKind::kNone: return "none";
    case PickleKind::kBool: return "bool";
    case PickleKind::kInt: return "int";
    case PickleKind::kFloat: return "float";
    case PickleKind::kString: return "string";
    case PickleKind::kBytes: return "bytes";
    case PickleKind::kTuple: return "tuple";
    case PickleKind::kList: return "list";
    case PickleKind::kDict: return "dict";
    case PickleKind::kSet: return "set";
    case PickleKind::kFrozenSet: return "frozenset";
    case PickleKind::kGlobal: return "global";
    case PickleKind::kPersistent: return "persistent id";
    case PickleKind::kObject: return "object";
  }
  return "value";
}

Result<PickleValuePtr> RunPickle(std::span<const std::byte> pickle, const PickleLimits& limits,
                                 const PersistentLoad& persistent_load) {
  Vm vm(pickle, limits, persistent_load);
  return vm.Run();
}

}  // namespace amn::formats
