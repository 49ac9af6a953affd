// The \xNN rule for bytes that are not UTF-8 (formats/utf8.h) and messages
// cut on character boundaries (MessageSafe).
#include "formats/utf8.h"

#include <gtest/gtest.h>

#include <string>

#include "formats/byte_source.h"

namespace amn::formats {
namespace {

TEST(Utf8, WellFormedTextIsKept) {
  for (const std::string text : {"", "plain", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
                                 "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf"}) {
    EXPECT_TRUE(IsValidUtf8(text)) << text;
    EXPECT_EQ(EscapeInvalidUtf8(text), text);
  }
}

TEST(Utf8, EveryStrayByteBecomesHex) {
  const struct {
    std::string in, out;
  } cases[] = {
      {"w\xff", "w\\xff"},
      {"\x80", "\\x80"},                                  // lone continuation
      {"\xc3", "\\xc3"},                                  // truncated
      {"\xc3(", "\\xc3("},                                // bad continuation
      {"\xc0\xaf", "\\xc0\\xaf"},                         // overlong '/'
      {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},                // overlong, 3 bytes
      {"\xed\xb3\xbf", "\\xed\\xb3\\xbf"},                // lone surrogate (Python surrogatepass)
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},       // past U+10FFFF
      {"a\xe2\x82", "a\\xe2\\x82"},                       // truncated at the end
      {"\xe2\x82\xac\xff\xe2\x82\xac", "\xe2\x82\xac\\xff\xe2\x82\xac"},
  };
  for (const auto& c : cases) {
    EXPECT_FALSE(IsValidUtf8(c.in)) << c.out;
    EXPECT_EQ(EscapeInvalidUtf8(c.in), c.out);
    EXPECT_TRUE(IsValidUtf8(EscapeInvalidUtf8(c.in)));
  }
}

TEST(Utf8, CutsNeverSplitACharacter) {
  const std::string euro3 = "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac";  // 9 bytes, 3 characters
  EXPECT_EQ(Utf8CutPoint(euro3, 9), 9u);
  EXPECT_EQ(Utf8CutPoint(euro3, 8), 6u);
  EXPECT_EQ(Utf8CutPoint(euro3, 4), 3u);
  EXPECT_EQ(Utf8CutPoint(euro3, 2), 0u);
  EXPECT_EQ(Utf8CutPoint("ab\xff\xff", 3), 3u);  // a stray byte is its own unit
}

TEST(Utf8, MessagesAreValidUtf8AndCutOnCharacters) {
  const std::string name = std::string(199, 'a') + "\xe2\x82\xac" + "tail";
  const std::string message = MessageSafe(name);
  EXPECT_EQ(message, std::string(199, 'a') + "...");
  EXPECT_TRUE(IsValidUtf8(message));
  EXPECT_EQ(MessageSafe("k\xfe\n"), "k\\xfe\\x0a");
  EXPECT_EQ(MessageSafe("caf\xc3\xa9"), "caf\xc3\xa9");
}

}  // namespace
}  // namespace amn::formats
