// Pickle protocols 0 and 1 (formats/pickle_text.h and the VM's text and
// Python 2 opcodes): the operand decoders against CPython's rules, streams
// that CPython's pickle module writes (bytes copied from pickle.dumps(...,
// protocol=0/1) and checked with pickletools.dis), hand-written Python 2
// opcodes (STRING, BINSTRING, SHORT_BINSTRING, INST, OBJ), and malformed
// operands with their byte offsets.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "formats/pickle_text.h"
#include "formats/pickle_vm.h"

namespace amn::formats {
namespace {

using namespace std::string_literals;

Result<PickleValuePtr> RunText(const std::string& pickle, const PickleLimits& limits = PickleLimits()) {
  return RunPickle(std::as_bytes(std::span<const char>(pickle.data(), pickle.size())), limits,
                   [](const PickleValue&) -> Result<int64_t> {
                     return Status(StatusCode::kInvalid, "no persistent ids here");
                   });
}

PickleValuePtr Ok(const std::string& pickle) {
  Result<PickleValuePtr> r = RunText(pickle);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : nullptr;
}

TEST(PickleText, Decimal) {
  EXPECT_EQ(*ParsePickleDecimal("0"), 0);
  EXPECT_EQ(*ParsePickleDecimal("-5"), -5);
  EXPECT_EQ(*ParsePickleDecimal("+7"), 7);
  EXPECT_EQ(*ParsePickleDecimal("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(*ParsePickleDecimal("-9223372036854775808"), INT64_MIN);
  for (const char* big : {"9223372036854775808", "-9223372036854775809", "99999999999999999999999"}) {
    EXPECT_EQ(ParsePickleDecimal(big).status().code(), StatusCode::kUnsupported) << big;
  }
  for (const char* bad : {"", "-", "0x10", "1_000", " 1", "1 ", "1.0", "--1"}) {
    EXPECT_EQ(ParsePickleDecimal(bad).status().code(), StatusCode::kInvalid) << bad;
  }
}

TEST(PickleText, Float) {
  EXPECT_EQ(*ParsePickleFloat("3.5"), 3.5);
  EXPECT_EQ(*ParsePickleFloat("1e-05"), 1e-05);
  EXPECT_EQ(*ParsePickleFloat("+2"), 2.0);
  EXPECT_EQ(*ParsePickleFloat("-0.0"), 0.0);
  EXPECT_TRUE(std::signbit(*ParsePickleFloat("-0.0")));
  EXPECT_EQ(*ParsePickleFloat("-inf"), -INFINITY);
  EXPECT_TRUE(std::isnan(*ParsePickleFloat("nan")));
  for (const char* bad : {"", "1.5x", "abc", " 1", "0x"}) {
    EXPECT_EQ(ParsePickleFloat(bad).status().code(), StatusCode::kInvalid) << bad;
  }
}

TEST(PickleText, QuotedString) {
  EXPECT_EQ(*DecodePickleString("'abc'"), "abc");
  EXPECT_EQ(*DecodePickleString("\"a'b\""), "a'b");
  EXPECT_EQ(*DecodePickleString("''"), "");
  EXPECT_EQ(*DecodePickleString(R"('\x00\n\t\r\\\'\"\a\b\f\v')"), "\x00\n\t\r\\'\"\a\b\f\v"s);
  EXPECT_EQ(*DecodePickleString(R"('\101\0\7777')"), "A\x00\xff" "7"s);  // \777 keeps its low byte
  EXPECT_EQ(*DecodePickleString(R"('\q\xFf')"), "\\q\xff");              // unknown escapes stay
  for (const char* bad : {"abc", "'abc\"", "'", R"('abc\')", R"('\x4')", R"('\xg0')"}) {
    EXPECT_EQ(DecodePickleString(bad).status().code(), StatusCode::kInvalid) << bad;
  }
}

TEST(PickleText, RawUnicodeEscape) {
  EXPECT_EQ(*DecodePickleUnicode("h\xe9\\u000a\\u005cx"), "h\xc3\xa9\n\\x");
  EXPECT_EQ(*DecodePickleUnicode("\\u20ac\\U0001f600"), "\xe2\x82\xac\xf0\x9f\x98\x80");
  // \u is an escape only after an odd run of backslashes.
  EXPECT_EQ(*DecodePickleUnicode(R"(\\u0041)"), R"(\\u0041)");
  EXPECT_EQ(*DecodePickleUnicode(R"(\\\u0041)"), R"(\\A)");
  EXPECT_EQ(*DecodePickleUnicode(R"(a\b\)"), R"(a\b\)");
  for (const char* bad : {R"(\u12)", R"(\u12g4)", R"(\ud800)", R"(\U00110000)", R"(\Uffffffff)"}) {
    EXPECT_EQ(DecodePickleUnicode(bad).status().code(), StatusCode::kInvalid) << bad;
  }
}

// pickle.dumps(v, protocol=0) and protocol=1 of
// v = {'a': [1, -2, 3.5, 'hé\n\\x', (True, None, False), 2**40, -2**63, '€😀', 1e-05, inf]}.
const std::string kProtocol0 =
    "(dp0\nVa\np1\n(lp2\nI1\naI-2\naF3.5\naVh\xe9\\u000a\\u005cx\np3\na(I01\nNI00\ntp4\naL1099511627776L\n"
    "aL-9223372036854775808L\naV\\u20ac\\U0001f600\np5\naF1e-05\naFinf\nas."s;
const std::string kProtocol1 =
    "}q\x00X\x01\x00\x00\x00" "aq\x01]q\x02(K\x01J\xfe\xff\xff\xffG@\x0c\x00\x00\x00\x00\x00\x00"
    "X\x06\x00\x00\x00h\xc3\xa9\n\\xq\x03(I01\nNI00\ntq\x04L1099511627776L\nL-9223372036854775808L\n"
    "X\x07\x00\x00\x00\xe2\x82\xac\xf0\x9f\x98\x80q\x05G>\xe4\xf8\xb5\x88\xe3h\xf1G\x7f\xf0\x00\x00"
    "\x00\x00\x00\x00" "es."s;

TEST(PickleText, CPythonProtocols0And1) {
  for (const std::string* pickle : {&kProtocol0, &kProtocol1}) {
    SCOPED_TRACE(pickle == &kProtocol0 ? "protocol 0" : "protocol 1");
    PickleValuePtr v = Ok(*pickle);
    ASSERT_NE(v, nullptr);
    ASSERT_EQ(v->kind, PickleKind::kDict);
    ASSERT_EQ(v->pairs.size(), 1u);
    EXPECT_EQ(v->pairs[0].first->text, "a");
    const PickleValue& list = *v->pairs[0].second;
    ASSERT_EQ(list.kind, PickleKind::kList);
    ASSERT_EQ(list.items.size(), 10u);
    EXPECT_EQ(list.items[0]->integer, 1);
    EXPECT_EQ(list.items[1]->integer, -2);
    EXPECT_EQ(list.items[2]->real, 3.5);
    EXPECT_EQ(list.items[3]->kind, PickleKind::kString);
    EXPECT_EQ(list.items[3]->text, "h\xc3\xa9\n\\x");
    const PickleValue& tuple = *list.items[4];
    ASSERT_EQ(tuple.kind, PickleKind::kTuple);
    ASSERT_EQ(tuple.items.size(), 3u);
    EXPECT_EQ(tuple.items[0]->kind, PickleKind::kBool);
    EXPECT_TRUE(tuple.items[0]->boolean);
    EXPECT_EQ(tuple.items[1]->kind, PickleKind::kNone);
    EXPECT_EQ(tuple.items[2]->kind, PickleKind::kBool);
    EXPECT_FALSE(tuple.items[2]->boolean);
    EXPECT_EQ(list.items[5]->integer, int64_t{1} << 40);
    EXPECT_EQ(list.items[6]->integer, INT64_MIN);
    EXPECT_EQ(list.items[7]->text, "\xe2\x82\xac\xf0\x9f\x98\x80");
    EXPECT_EQ(list.items[8]->real, 1e-05);
    EXPECT_EQ(list.items[9]->real, INFINITY);
  }
}

TEST(PickleText, Python2StringsMemoAndInstances) {
  // [b'k', b'abc', b'xy', b'k' (GET 0), set([1, 2]) by INST, frozenset([3]) by OBJ]
  const std::string p =
      "(S'k'\np0\n"
      "T\x03\x00\x00\x00" "abc"
      "U\x02xy"
      "g0\n"
      "((I1\nI2\nli__builtin__\nset\n"
      "(c__builtin__\nfrozenset\n(I3\nlo"
      "l."s;
  PickleValuePtr v = Ok(p);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->kind, PickleKind::kList);
  ASSERT_EQ(v->items.size(), 6u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(v->items[i]->kind, PickleKind::kString) << i;
  EXPECT_EQ(v->items[0]->text, "k");
  EXPECT_EQ(v->items[1]->text, "abc");
  EXPECT_EQ(v->items[2]->text, "xy");
  EXPECT_EQ(v->items[3], v->items[0]);  // the memo shares, never copies
  ASSERT_EQ(v->items[4]->kind, PickleKind::kSet);
  ASSERT_EQ(v->items[4]->items.size(), 2u);
  EXPECT_EQ(v->items[4]->items[1]->integer, 2);
  ASSERT_EQ(v->items[5]->kind, PickleKind::kFrozenSet);
  ASSERT_EQ(v->items[5]->items.size(), 1u);
  EXPECT_EQ(v->items[5]->items[0]->integer, 3);
}

TEST(PickleText, Python2OrderedDict) {
  // OrderedDict([('a', 1), ('b', None)]) at protocol 0 the way Python 2.7
  // pickles it (written by hand: no Python 2 here):
  // OrderedDict.__reduce__ passes the items as one list of [key, value].
  const std::string p =
      "ccollections\nOrderedDict\np0\n((lp1\n(lp2\nS'a'\np3\naI1\naa(lp4\nS'b'\np5\naNaatp6\nRp7\n."s;
  PickleValuePtr v = Ok(p);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->kind, PickleKind::kDict);
  ASSERT_EQ(v->pairs.size(), 2u);
  EXPECT_EQ(v->pairs[0].first->text, "a");
  EXPECT_EQ(v->pairs[0].second->integer, 1);
  EXPECT_EQ(v->pairs[1].first->text, "b");
  EXPECT_EQ(v->pairs[1].second->kind, PickleKind::kNone);
}

TEST(PickleText, MalformedOperandsNameTheOpcodeAndOffset) {
  struct Case {
    std::string pickle;
    StatusCode code;
    uint64_t offset;
    const char* text;
  };
  const Case cases[] = {
      {"NI12x\n."s, StatusCode::kInvalid, 1, "INT"},
      {"NI99999999999999999999\n."s, StatusCode::kUnsupported, 1, "64 bits"},
      {"NNI1"s, StatusCode::kTruncated, 2, "INT"},
      {"L12LL\n."s, StatusCode::kInvalid, 0, "LONG"},
      {"F1.5.5\n."s, StatusCode::kInvalid, 0, "FLOAT"},
      {"S'abc\n."s, StatusCode::kInvalid, 0, "STRING"},
      {"Vx\\u12\n."s, StatusCode::kInvalid, 0, "UNICODE"},
      {"g7\n."s, StatusCode::kInvalid, 0, "memo key 7"},
      {"Np-1\n."s, StatusCode::kInvalid, 1, "negative PUT"},
      {"T\xff\xff\xff\xff."s, StatusCode::kInvalid, 0, "negative BINSTRING"},
      {"U\x05" "ab"s, StatusCode::kTruncated, 0, "SHORT_BINSTRING"},
      {"(ios\nsystem\n."s, StatusCode::kInvalid, 1, "disallowed global 'os.system'"},
      {"(o."s, StatusCode::kInvalid, 1, "OBJ without a class"},
      {"(I1\nicollections\nOrderedDict\n."s, StatusCode::kUnsupported, 4, "OrderedDict with arguments"},
      {"ccollections\nOrderedDict\n((lI1\natR."s, StatusCode::kInvalid, 33, "not a [key, value] pair"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pickle);
    Result<PickleValuePtr> r = RunText(c.pickle);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), c.code) << r.status().ToString();
    EXPECT_EQ(r.status().byte_offset(), c.offset) << r.status().ToString();
    EXPECT_NE(r.status().message().find(c.text), std::string::npos) << r.status().ToString();
  }
}

TEST(PickleText, TextOperandsCountAgainstTheLimits) {
  PickleLimits limits;
  limits.max_bytes = 16;
  Result<PickleValuePtr> r = RunText("S'" + std::string(40, 'a') + "'\n."s, limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded) << r.status().ToString();
  // 12 raw bytes >= 0x80 are 24 bytes of UTF-8: past the budget only once decoded.
  r = RunText("V" + std::string(12, '\xe9') + "\n."s, limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded) << r.status().ToString();
  limits = PickleLimits();
  limits.max_items = 5;  // INST builds its argument tuple, the list and the set
  r = RunText("((I1\nI2\nli__builtin__\nset\n."s, limits);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kLimitExceeded) << r.status().ToString();
}

}  // namespace
}  // namespace amn::formats
