// The typing of --gguf-kv and --gguf-metadata (formats/gguf_kv_text.h), and
// the encoded bytes of the values the writer stores for them, checked
// against GGUF's layout written out by hand.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "formats/gguf_kv_text.h"
#include "formats/gguf_writer.h"

namespace amn::formats {
namespace {

GgufValue Kv(const std::string& text) {
  auto r = ParseGgufKvArgument(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().message();
  return r.ok() ? r->second : GgufValue{};
}

std::string Error(const std::string& text) {
  auto r = ParseGgufKvArgument(text);
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.status().message();
}

TEST(GgufKvText, InfersTypes) {
  EXPECT_EQ(Kv("a=7").type, GgufValueType::kU32);
  EXPECT_EQ(Kv("a=4294967295").type, GgufValueType::kU32);
  EXPECT_EQ(Kv("a=4294967296").type, GgufValueType::kU64);
  EXPECT_EQ(Kv("a=-1").type, GgufValueType::kI32);
  EXPECT_EQ(Kv("a=-1").i, -1);
  EXPECT_EQ(Kv("a=-2147483649").type, GgufValueType::kI64);
  EXPECT_EQ(Kv("a=0.5").type, GgufValueType::kF32);
  EXPECT_EQ(Kv("a=1e-5").type, GgufValueType::kF32);
  EXPECT_EQ(Kv("a=true").type, GgufValueType::kBool);
  EXPECT_EQ(Kv("a=llama").s, "llama");
  EXPECT_EQ(Kv("a=").type, GgufValueType::kString);          // empty string
  EXPECT_EQ(Kv("a=1e999").type, GgufValueType::kString);     // no f32 holds it
  EXPECT_EQ(Kv("a=http://x:1").s, "http://x:1");              // "http" is no type
  EXPECT_EQ(Kv("a=b=c").s, "b=c");                            // the first '=' splits
  EXPECT_EQ(Kv("a=18446744073709551615").u, UINT64_MAX);
}

TEST(GgufKvText, ExplicitTypes) {
  EXPECT_EQ(Kv("a=u8:255").type, GgufValueType::kU8);
  EXPECT_EQ(Kv("a=i16:-32768").i, -32768);
  EXPECT_EQ(Kv("a=str:42").s, "42");
  EXPECT_EQ(Kv("a=f64:0.1").f, 0.1);
  EXPECT_EQ(Kv("a=bool:false").b, false);
  EXPECT_NE(Error("a=u8:256").find("not a u8"), std::string::npos);
  EXPECT_NE(Error("a=i8:-129").find("not an i8"), std::string::npos);
  EXPECT_NE(Error("a=u32:-1").find("not a u32"), std::string::npos);
  EXPECT_NE(Error("a=f32:1e39").find("f32"), std::string::npos);
  EXPECT_NE(Error("a=bool:1").find("true or false"), std::string::npos);
  EXPECT_NE(Error("=1").find("key=value"), std::string::npos);
  EXPECT_NE(Error("novalue").find("key=value"), std::string::npos);
}

TEST(GgufKvText, JsonObjects) {
  auto r = ParseGgufMetadataJson(
      R"({"t": ["a", "b"], "i": [1, -2], "w": [1, 5000000000], "f": [1, 0.5], "n": [[1], ["x"]],
          "u": {"type": "u16", "value": 9}, "s": {"type": "str", "value": "9"}})");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 7u);
  std::map<std::string, GgufValue> m(r->begin(), r->end());
  EXPECT_EQ(m["t"].elem_type, GgufValueType::kString);
  EXPECT_EQ(m["i"].elem_type, GgufValueType::kI32);
  EXPECT_EQ(m["i"].items[1].i, -2);
  EXPECT_EQ(m["w"].elem_type, GgufValueType::kI64);
  EXPECT_EQ(m["f"].elem_type, GgufValueType::kF32);
  EXPECT_EQ(m["f"].items[0].f, 1.0);
  EXPECT_EQ(m["n"].elem_type, GgufValueType::kArray);
  EXPECT_EQ(m["n"].items[1].elem_type, GgufValueType::kString);
  EXPECT_EQ(m["u"].type, GgufValueType::kU16);
  EXPECT_EQ(m["s"].s, "9");
  EXPECT_FALSE(ParseGgufMetadataJson(R"({"m": [1, "a"]})").ok());
  EXPECT_FALSE(ParseGgufMetadataJson(R"({"m": null})").ok());
  EXPECT_FALSE(ParseGgufMetadataJson(R"([1])").ok());
  EXPECT_FALSE(ParseGgufMetadataJson(R"({"m": {"type": "u8", "value": 300}})").ok());
}

// GGUF's value layout (ggml/src/gguf.cpp): u32 type, then the value
// little-endian; an array is u32 element type, u64 count, then the items.
TEST(GgufWriter, EncodesValuesAsGgufLaysThemOut) {
  GgufMetadata m;
  ASSERT_TRUE(m.Set("a", Kv("a=u16:513")).ok());
  EXPECT_EQ(*m.Encoded("a"), std::string("\x02\x00\x00\x00\x01\x02", 6));
  auto arr = ParseGgufMetadataJson(R"({"b": [["x"]]})");
  ASSERT_TRUE(arr.ok());
  ASSERT_TRUE(m.Set("b", arr->front().second).ok());
  const std::string b("\x09\0\0\0"           // array
                      "\x09\0\0\0"           // of arrays
                      "\x01\0\0\0\0\0\0\0"   // one
                      "\x08\0\0\0"           // of strings
                      "\x01\0\0\0\0\0\0\0"   // one
                      "\x01\0\0\0\0\0\0\0x",  // "x"
                      37);
  EXPECT_EQ(*m.Encoded("b"), b);
  ASSERT_TRUE(m.Set("a", Kv("a=str:z")).ok());  // an override keeps the key's place
  EXPECT_EQ(m.entries().front().first, "a");
  GgufValue bad;
  bad.type = GgufValueType::kArray;
  bad.count = 2;  // holds none of its 2 items
  EXPECT_FALSE(m.Set("c", bad).ok());
  const std::string header = GgufHeaderBytes(m, {{"t", {3, 2}, 1, 0}}, 32);
  EXPECT_EQ(header.size() % 32, 0u);
  EXPECT_EQ(header.substr(0, 8), std::string("GGUF\x03\0\0\0", 8));
  EXPECT_EQ(header.substr(8, 16), std::string("\x01\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0", 16));
}

}  // namespace
}  // namespace amn::formats
