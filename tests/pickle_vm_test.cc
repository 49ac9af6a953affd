// The pickle VM (formats/pickle_vm.h): hand-written pickles whose values are
// worked out by hand from the opcode definitions (CPython Lib/pickletools.py),
// the fixtures' real data.pkl, and hostile streams (disallowed globals,
// floods, deep nesting, underflow, every truncation of a real pickle).
#include "formats/pickle_vm.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "tests/fixtures.h"

namespace amn::formats {
namespace {

using namespace std::string_literals;

std::span<const std::byte> Bytes(const std::string& s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

Result<int64_t> NoPersistent(const PickleValue&) {
  return Status(StatusCode::kInvalid, "no persistent ids in this test");
}

Result<PickleValuePtr> RunBytes(const std::string& pickle, const PickleLimits& limits = PickleLimits()) {
  return RunPickle(Bytes(pickle), limits, NoPersistent);
}

// Runs a pickle that must succeed.
PickleValuePtr Ok(const std::string& pickle) {
  Result<PickleValuePtr> r = RunBytes(pickle);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : nullptr;
}

// The first entry (data.pkl in the fixtures) of a stored zip without an
// archive comment, found by hand through the end record, the first central
// directory header and its local header (PKWARE APPNOTE 4.3.7, 4.3.12,
// 4.3.16); the local header's sizes may be zero when a data descriptor follows.
std::string FirstStoredEntry(const std::vector<uint8_t>& zip) {
  auto le16 = [&](size_t at) { return static_cast<uint32_t>(zip[at] | zip[at + 1] << 8); };
  if (zip.size() < 22) return {};
  const size_t eocd = zip.size() - 22;
  if (test::LoadLe32(zip.data() + eocd) != 0x06054b50) return {};
  const size_t cd = test::LoadLe32(zip.data() + eocd + 16);
  if (cd + 46 > zip.size() || test::LoadLe32(zip.data() + cd) != 0x02014b50) return {};
  const uint32_t size = test::LoadLe32(zip.data() + cd + 20);
  const size_t local = test::LoadLe32(zip.data() + cd + 42);
  if (local + 30 > zip.size()) return {};
  const size_t begin = local + 30 + le16(local + 26) + le16(local + 28);
  if (begin + size > zip.size()) return {};
  return std::string(reinterpret_cast<const char*>(zip.data() + begin), size);
}

TEST(PickleVm, Scalars) {
  // (None, True, False, 255, 65535, -2, -1 via LONG1, 2**40 via LONG4, 1.5, 'hé', b'\x00\x01')
  const std::string p =
      "\x80\x02("
      "N\x88\x89"
      "K\xff"
      "M\xff\xff"
      "J\xfe\xff\xff\xff"
      "\x8a\x01\xff"
      "\x8b\x06\x00\x00\x00\x00\x00\x00\x00\x00\x01"
      "G\x3f\xf8\x00\x00\x00\x00\x00\x00"
      "\x8c\x03h\xc3\xa9"
      "C\x02\x00\x01"
      "t."s;
  PickleValuePtr v = Ok(p);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->kind, PickleKind::kTuple);
  ASSERT_EQ(v->items.size(), 11u);
  EXPECT_EQ(v->items[0]->kind, PickleKind::kNone);
  EXPECT_EQ(v->items[1]->kind, PickleKind::kBool);
  EXPECT_TRUE(v->items[1]->boolean);
  EXPECT_FALSE(v->items[2]->boolean);
  EXPECT_EQ(v->items[3]->integer, 255);
  EXPECT_EQ(v->items[4]->integer, 65535);
  EXPECT_EQ(v->items[5]->integer, -2);
  EXPECT_EQ(v->items[6]->integer, -1);
  EXPECT_EQ(v->items[7]->integer, int64_t{1} << 40);
  EXPECT_EQ(v->items[8]->kind, PickleKind::kFloat);
  EXPECT_EQ(v->items[8]->real, 1.5);
  EXPECT_EQ(v->items[9]->kind, PickleKind::kString);
  EXPECT_EQ(v->items[9]->text, "h\xc3\xa9");
  EXPECT_EQ(v->items[10]->kind, PickleKind::kBytes);
  EXPECT_EQ(v->items[10]->text, "\x00\x01"s);
}

TEST(PickleVm, StringsAndBytesAllWidths) {
  const std::string p =
      "\x80\x04("
      "X\x02\x00\x00\x00" "ab"
      "\x8d\x01\x00\x00\x00\x00\x00\x00\x00" "c"
      "C\x01" "d"
      "B\x01\x00\x00\x00" "e"
      "\x8e\x01\x00\x00\x00\x00\x00\x00\x00" "f"
      "\x96\x01\x00\x00\x00\x00\x00\x00\x00g"
      "l."s;
  PickleValuePtr v = Ok(p);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->kind, PickleKind::kList);
  ASSERT_EQ(v->items.size(), 6u);
  const char* want[] = {"ab", "c", "d", "e", "f", "g"};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(v->items[i]->kind, i < 2 ? PickleKind::kString : PickleKind::kBytes) << i;
    EXPECT_EQ(v->items[i]->text, want[i]);
  }
}

TEST(PickleVm, LongBeyondInt64IsUnsupported) {
  // 2**63 needs 9 bytes: 00 .. 80 00.
  Result<PickleValuePtr> r = RunBytes("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00."s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(r.status().byte_offset(), 2u);
  // -1 written with 9 bytes (sign extension only) still fits.
  PickleValuePtr v = Ok("\x80\x02\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\xff."s);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->integer, -1);
  // INT64_MIN in 8 bytes.
  v = Ok("\x80\x02\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80."s);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->integer, INT64_MIN);
}

TEST(PickleVm, Containers) {
  // ((), (1,), (1, 2), (1, 2, 3), [1, 2, 3], {'a': 1, 2: 'b'}, {1, 2}, frozenset({3}))
  const std::string p =
      "\x80\x04("
      ")"
      "K\x01\x85"
      "K\x01K\x02\x86"
      "K\x01K\x02K\x03\x87"
      "]K\x01" "a(K\x02K\x03" "e"
      "}\x8c\x01" "aK\x01s(K\x02\x8c\x01" "bu"
      "\x8f(K\x01K\x02\x90"
      "(K\x03\x91"
      "t."s;
  PickleValuePtr v = Ok(p);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->items.size(), 8u);
  for (size_t n = 0; n < 4; ++n) {
    ASSERT_EQ(v->items[n]->kind, PickleKind::kTuple);
    ASSERT_EQ(v->items[n]->items.size(), n);
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(v->items[n]->items[i]->integer, static_cast<int64_t>(i + 1));
  }
  const PickleValue& list = *v->items[4];
  ASSERT_EQ(list.kind, PickleKind::kList);
  ASSERT_EQ(list.items.size(), 3u);
  EXPECT_EQ(list.items[2]->integer, 3);
  const PickleValue& dict = *v->items[5];
  ASSERT_EQ(dict.kind, PickleKind::kDict);
  ASSERT_EQ(dict.pairs.size(), 2u);
  EXPECT_EQ(dict.pairs[0].first->text, "a");
  EXPECT_EQ(dict.pairs[0].second->integer, 1);
  EXPECT_EQ(dict.pairs[1].first->integer, 2);
  EXPECT_EQ(dict.pairs[1].second->text, "b");
  EXPECT_EQ(v->items[6]->kind, PickleKind::kSet);
  EXPECT_EQ(v->items[6]->items.size(), 2u);
  EXPECT_EQ(v->items[7]->kind, PickleKind::kFrozenSet);
  EXPECT_EQ(v->items[7]->items.size(), 1u);
  // DICT from a MARK, and LIST.
  v = Ok("\x80\x02(\x8c\x01xK\x07" "d."s);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->kind, PickleKind::kDict);
  ASSERT_EQ(v->pairs.size(), 1u);
  EXPECT_EQ(v->pairs[0].second->integer, 7);
}

TEST(PickleVm, StackOpsAndMemo) {
  // [x, x, x, y] with x = [] memoized by BINPUT 0, LONG_BINPUT 70000 and
  // MEMOIZE (key 2), y = 5 by DUP; POP and POP_MARK drop the rest.
  const std::string p =
      "\x80\x04]"
      "]q\x00r\x70\x11\x01\x00\x94"
      "a"
      "h\x00" "a"
      "j\x70\x11\x01\x00" "a"
      "(K\x09K\x09\x31"
      "K\x05\x32\x30" "a"
      "N0"
      "(0"  // POP of an empty frame drops its MARK (pickle.py)
      "."s;
  PickleValuePtr v = Ok(p);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->kind, PickleKind::kList);
  ASSERT_EQ(v->items.size(), 4u);
  EXPECT_EQ(v->items[0], v->items[1]);
  EXPECT_EQ(v->items[0], v->items[2]);
  EXPECT_EQ(v->items[0]->kind, PickleKind::kList);
  EXPECT_EQ(v->items[3]->integer, 5);
  // MEMOIZE used key 2 (two keys before it): BINGET 2 finds the list.
  v = Ok("\x80\x04]q\x00q\x01\x94h\x02."s);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->kind, PickleKind::kList);
  // An unknown memo key.
  Result<PickleValuePtr> r = RunBytes("\x80\x02h\x03."s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(r.status().byte_offset(), 2u);
}

TEST(PickleVm, AllowedGlobalsFold) {
  // OrderedDict() via GLOBAL + REDUCE, BUILD with a state, then via
  // STACK_GLOBAL + NEWOBJ; torch.Size((2, 3)); builtins.set([1]).
  const std::string p =
      "\x80\x04("
      "\x63"
      "collections\nOrderedDict\n)R}\x8c\x01kK\x01sb"
      "\x8c\x0b"
      "collections\x8c\x0bOrderedDict\x93)\x81"
      "\x8c\x05torch\x8c\x04Size\x93K\x02K\x03\x86\x85R"
      "c__builtin__\nset\n]K\x01" "a\x85R"
      "t."s;
  PickleValuePtr v = Ok(p);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->items.size(), 4u);
  ASSERT_EQ(v->items[0]->kind, PickleKind::kDict);
  ASSERT_NE(v->items[0]->state, nullptr);
  EXPECT_EQ(v->items[0]->state->pairs.size(), 1u);
  EXPECT_EQ(v->items[1]->kind, PickleKind::kDict);
  ASSERT_EQ(v->items[2]->kind, PickleKind::kTuple);
  ASSERT_EQ(v->items[2]->items.size(), 2u);
  EXPECT_EQ(v->items[2]->items[1]->integer, 3);
  ASSERT_EQ(v->items[3]->kind, PickleKind::kSet);
  EXPECT_EQ(v->items[3]->items.size(), 1u);
}

TEST(PickleVm, TensorRebuildsAreRecordedNotCalled) {
  // _rebuild_from_type_v2(_rebuild_tensor_v2, torch._tensor.Tensor, (1,), {})
  // is the inner call itself; with another type it is refused.
  const std::string inner = "ctorch._utils\n_rebuild_tensor_v2\n";
  PickleValuePtr v = Ok("\x80\x02" "ctorch._tensor\n_rebuild_from_type_v2\n(" + inner +
                        "ctorch._tensor\nTensor\nK\x01\x85}tR."s);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->kind, PickleKind::kObject);
  EXPECT_EQ(v->global->role, PickleGlobalRole::kRebuildTensorV2);
  ASSERT_EQ(v->args->items.size(), 1u);
  EXPECT_EQ(v->args->items[0]->integer, 1);
  Result<PickleValuePtr> r = RunBytes("\x80\x02" "ctorch._tensor\n_rebuild_from_type_v2\n(" + inner +
                                 "ctorch\nFloatStorage\nK\x01\x85}tR."s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  // Calling a storage class or a dtype is refused.
  r = RunBytes("\x80\x02" "ctorch\nfloat32\n)R."s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(r.status().message().find("torch.float32"), std::string::npos);
  // Dtypes as values carry their element type.
  v = Ok("\x80\x02" "ctorch\nbfloat16\n."s);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->kind, PickleKind::kGlobal);
  EXPECT_EQ(v->global->dtype, Dtype::kBf16);
}

TEST(PickleVm, DisallowedGlobals) {
  struct Case {
    std::string pickle;
    std::string name;
    uint64_t offset;
  };
  const Case cases[] = {
      {"\x80\x02\x63os\nsystem\n\x8c\x02lsR."s, "os.system", 2},
      {"\x80\x02\x63" "builtins\neval\n."s, "builtins.eval", 2},
      {"\x80\x04\x8c\x0asubprocess\x8c\x05Popen\x93."s, "subprocess.Popen", 21},
      {"\x80\x04\x8c\x02os\x8c\x06system\x93."s, "os.system", 14},
      {"\x80\x02\x63torch\nload\n."s, "torch.load", 2},
      {"\x80\x02\x63torch._utils\n_rebuild_tensor_v2 \n."s, "torch._utils._rebuild_tensor_v2 ", 2},
  };
  for (const Case& c : cases) {
    Result<PickleValuePtr> r = RunBytes(c.pickle);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalid) << c.name;
    EXPECT_NE(r.status().message().find("disallowed global '" + c.name + "'"), std::string::npos)
        << r.status().message();
    EXPECT_EQ(r.status().byte_offset(), c.offset) << c.name;
  }
  EXPECT_EQ(FindAllowedGlobal("os", "system"), nullptr);
  ASSERT_NE(FindAllowedGlobal("torch", "HalfStorage"), nullptr);
  EXPECT_EQ(FindAllowedGlobal("torch", "HalfStorage")->dtype, Dtype::kF16);
}

TEST(PickleVm, PersistentIds) {
  std::vector<std::string> seen;
  PersistentLoad load = [&](const PickleValue& pid) -> Result<int64_t> {
    if (pid.kind == PickleKind::kString) {
      seen.push_back(pid.text);
    } else if (pid.kind == PickleKind::kTuple) {
      seen.push_back(pid.items.at(0)->text);
    }
    return static_cast<int64_t>(seen.size() * 10);
  };
  const std::string p = "\x80\x02(\x8c\x02idK\x01\x86QPtext\nt."s;
  Result<PickleValuePtr> r = RunPickle(Bytes(p), PickleLimits(), load);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const PickleValue& v = **r;
  ASSERT_EQ(v.items.size(), 2u);
  EXPECT_EQ(v.items[0]->kind, PickleKind::kPersistent);
  EXPECT_EQ(v.items[0]->integer, 10);
  EXPECT_EQ(v.items[0]->args->items[1]->integer, 1);
  EXPECT_EQ(v.items[1]->integer, 20);
  EXPECT_EQ(v.items[1]->args->text, "text");
  EXPECT_EQ(seen, (std::vector<std::string>{"id", "text"}));
  // The loader's error stops the run, with the opcode's offset added.
  r = RunBytes("\x80\x02N\x51."s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "no persistent ids in this test");
  EXPECT_EQ(r.status().byte_offset(), 3u);
}

TEST(PickleVm, MalformedStreams) {
  struct Case {
    std::string pickle;
    StatusCode code;
    uint64_t offset;
  };
  const Case cases[] = {
      {"\x80\x02."s, StatusCode::kInvalid, 2},                  // STOP on an empty stack
      {"\x80\x02]a."s, StatusCode::kInvalid, 3},                // APPEND underflow
      {"\x80\x02\x30."s, StatusCode::kInvalid, 2},              // POP underflow
      {"\x80\x02N\x86."s, StatusCode::kInvalid, 3},              // TUPLE2 after one value
      {"\x80\x02NNt."s, StatusCode::kInvalid, 4},               // TUPLE without MARK
      {"\x80\x02]N(a."s, StatusCode::kInvalid, 5},              // APPEND cannot pop below a MARK
      {"\x80\x02Ne."s, StatusCode::kInvalid, 3},                // APPENDS without MARK
      {"\x80\x02NK\x01s."s, StatusCode::kInvalid, 5},           // SETITEM on an int
      {"\x80\x02}(Nu."s, StatusCode::kInvalid, 5},              // SETITEMS with an odd count
      {"\x80\x02\xff."s, StatusCode::kInvalid, 2},              // unknown opcode
      {"\x80\x02\x82\x01."s, StatusCode::kInvalid, 2},           // EXT1 (copyreg registry): not handled
      {"\x80\x06N."s, StatusCode::kUnsupported, 0},             // protocol 6
      {"\x80\x05\x97."s, StatusCode::kUnsupported, 2},          // NEXT_BUFFER
      {"\x80\x05\x98."s, StatusCode::kUnsupported, 2},          // READONLY_BUFFER
      {"\x80\x02K\x01)R."s, StatusCode::kInvalid, 5},           // REDUCE of an int
      {"\x80\x02NN\x93."s, StatusCode::kInvalid, 4},            // STACK_GLOBAL of non-strings
      {"\x80\x02Nb."s, StatusCode::kInvalid, 3},                // BUILD with one value
      {"\x80\x02K\x01Nb."s, StatusCode::kInvalid, 5},           // BUILD on an int
      {"\x80\x02\x8b\xff\xff\xff\xff."s, StatusCode::kInvalid, 2},  // negative LONG4 length
      {"\x80\x02N"s, StatusCode::kTruncated, 3},                 // no STOP
      {"\x80\x02X\xff\xff\xff\x7f" "ab."s, StatusCode::kTruncated, 2},  // string past the end
      {"\x80\x02\x8d\xff\xff\xff\xff\xff\xff\xff\xff."s, StatusCode::kTruncated, 2},
      {"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00N."s, StatusCode::kTruncated, 2},  // FRAME
      {"\x80\x02\x63os\n"s, StatusCode::kTruncated, 2},          // GLOBAL without its name line
  };
  for (const Case& c : cases) {
    Result<PickleValuePtr> r = RunBytes(c.pickle);
    ASSERT_FALSE(r.ok()) << testing::PrintToString(c.pickle);
    EXPECT_EQ(r.status().code(), c.code) << r.status().ToString();
    EXPECT_EQ(r.status().byte_offset(), c.offset) << r.status().ToString();
  }
  Result<PickleValuePtr> r = RunBytes("\x80\x02\xff."s);
  EXPECT_NE(r.status().message().find("0xff"), std::string::npos) << r.status().message();
}

TEST(PickleVm, NoneFloodHitsTheStackLimit) {
  std::string p = "\x80\x02";
  p.append(1 << 20, 'N');
  p += '.';
  const auto start = std::chrono::steady_clock::now();
  Result<PickleValuePtr> r = RunBytes(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded);
  EXPECT_EQ(r.status().byte_offset(), 2u + (1u << 16));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  // With POPs the stack stays small and the value budget ends it.
  std::string q = "\x80\x02";
  for (int i = 0; i < (1 << 20) + 10; ++i) q += "N0";
  q += "N.";
  r = RunBytes(q);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded);
  EXPECT_NE(r.status().message().find("values"), std::string::npos) << r.status().message();
}

TEST(PickleVm, AppendsFloodHitsTheItemBudget) {
  // One memoized value appended in frames of 60000 until 2**20 slots pass.
  std::string p = "\x80\x02]Nq\x00\x30"s;
  for (int frame = 0; frame < 20; ++frame) {
    p += '(';
    for (int i = 0; i < 60000; ++i) p += "h\x00"s;
    p += 'e';
  }
  p += '.';
  Result<PickleValuePtr> r = RunBytes(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded);
  // Tighter limits stop it sooner.
  PickleLimits small;
  small.max_items = 1000;
  r = RunBytes(p, small);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded);
  // And the string budget.
  small = PickleLimits();
  small.max_bytes = 3;
  r = RunBytes("\x80\x02\x8c\x02" "ab\x8c\x02\x63\x64\x86."s, small);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded);
  EXPECT_EQ(r.status().byte_offset(), 6u);
}

TEST(PickleVm, DeepNestingIsRefused) {
  // 100k EMPTY_LIST then 100k APPEND: the stack limit ends it first, and
  // with the stack allowed, the nesting limit at depth 257.
  std::string p = "\x80\x02";
  p.append(100000, ']');
  p.append(99999, 'a');
  p += '.';
  Result<PickleValuePtr> r = RunBytes(p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded);
  PickleLimits deep;
  deep.max_stack = 1 << 20;
  r = RunBytes(p, deep);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded);
  EXPECT_NE(r.status().message().find("nest deeper than 256"), std::string::npos) << r.status().message();
  // Exactly 256 levels are fine: 255 APPENDs of 256 lists.
  std::string ok = "\x80\x02";
  ok.append(256, ']');
  ok.append(255, 'a');
  ok += '.';
  PickleValuePtr v = Ok(ok);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->depth, 256u);
}

TEST(PickleVm, StaleDepthChainsAndCyclesFreeWithoutRecursion) {
  // Each list is put in its parent while still empty, then filled: the
  // recorded depths stay at 2, the real chain is 100k deep. Freeing it must
  // not recurse (the arena frees flat), and a self-containing list must not
  // leak (ASan would say).
  std::string p = "\x80\x02]q\x00"s;
  for (int i = 0; i < 100000; ++i) p += "]r\x01\x00\x00\x00" "a0j\x01\x00\x00\x00"s;
  p += "0h\x00."s;
  {
    PickleValuePtr v = Ok(p);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->kind, PickleKind::kList);
  }
  PickleValuePtr v = Ok("\x80\x02]q\x00h\x00h\x00" "a."s);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->items.size(), 1u);
  EXPECT_EQ(v->items[0], v.get());
}

TEST(PickleVm, MemoReplayIsShared) {
  // A list of 50000 ints, memoized, appended 50000 times to another list:
  // 50000 slots, no copies.
  std::string p = "\x80\x02](";
  for (int i = 0; i < 50000; ++i) p += "K\x01"s;
  p += "eq\x00\x30]("s;
  for (int i = 0; i < 50000; ++i) {
    if (i % 60000 == 59999) p += "e(";
    p += "h\x00"s;
  }
  p += "e.";
  const auto start = std::chrono::steady_clock::now();
  PickleValuePtr v = Ok(p);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->items.size(), 50000u);
  EXPECT_EQ(v->items.front(), v->items.back());
  EXPECT_EQ(v->items.front()->items.size(), 50000u);
}

TEST(PickleVm, FixtureDataPkl) {
  const auto files = test::FixtureFiles("pth_reference", ".pth");
  AMN_SKIP_WITHOUT_FIXTURES(files, "pth_reference");
  for (const auto& file : files) {
    const std::string pkl = FirstStoredEntry(test::ReadBytes(file));
    ASSERT_FALSE(pkl.empty()) << file;
    std::vector<std::string> keys;
    PersistentLoad load = [&](const PickleValue& pid) -> Result<int64_t> {
      // ('storage', torch.FloatStorage, key, location, numel) as pickletools shows.
      EXPECT_EQ(pid.items.size(), 5u);
      EXPECT_EQ(pid.items[1]->global->dtype, Dtype::kF32);
      keys.push_back(pid.items[2]->text);
      return static_cast<int64_t>(keys.size() - 1);
    };
    Result<PickleValuePtr> r = RunPickle(Bytes(pkl), PickleLimits(), load);
    ASSERT_TRUE(r.ok()) << file << ": " << r.status().ToString();
    const PickleValue& root = **r;
    ASSERT_EQ(root.kind, PickleKind::kDict);
    ASSERT_EQ(root.pairs.size(), 3u);
    EXPECT_EQ(root.pairs[0].first->text, "rnn.weight_ih_l0");
    EXPECT_EQ(root.pairs[2].first->text, "linear.weight");
    const PickleValue& t = *root.pairs[0].second;
    ASSERT_EQ(t.kind, PickleKind::kObject);
    EXPECT_EQ(t.global->role, PickleGlobalRole::kRebuildTensorV2);
    ASSERT_EQ(t.args->items.size(), 6u);
    EXPECT_EQ(t.args->items[0]->kind, PickleKind::kPersistent);
    // stride (1, 1) for [n, 1]
    EXPECT_EQ(t.args->items[3]->items[0]->integer, 1);
    EXPECT_EQ(t.args->items[3]->items[1]->integer, 1);
    ASSERT_NE(root.state, nullptr);  // BUILD with {'_metadata': ...}
    EXPECT_EQ(root.state->pairs[0].first->text, "_metadata");
    EXPECT_EQ(keys.size(), 3u);

    // Every strict prefix fails cleanly (and so does each with a byte flipped
    // to an unknown opcode at the front of the rest).
    for (size_t n = 0; n < pkl.size(); ++n) {
      Result<PickleValuePtr> cut = RunPickle(Bytes(pkl.substr(0, n)), PickleLimits(), load);
      ASSERT_FALSE(cut.ok()) << n;
      EXPECT_EQ(cut.status().code(), StatusCode::kTruncated) << n << ": " << cut.status().ToString();
    }
  }
}

TEST(PickleVm, LimitsFromParseLimits) {
  ParseLimits limits;
  limits.max_item_count = 1000;
  limits.max_header_bytes = 5000;
  const PickleLimits p = PickleLimits::From(limits);
  EXPECT_EQ(p.max_items, 1000u);
  EXPECT_EQ(p.max_memo, 1000u);
  EXPECT_EQ(p.max_bytes, 5000u);
  EXPECT_EQ(p.max_depth, 256u);
  EXPECT_EQ(p.max_stack, 65536u);
}

}  // namespace
}  // namespace amn::formats
