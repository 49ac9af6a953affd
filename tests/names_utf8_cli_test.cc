// Names that are not UTF-8 (GGUF tensor names, metadata keys and strings;
// NPZ member names; pickle dict keys, e.g. Python's surrogatepass bytes for a
// lone surrogate) survive parse, inspect and remember: each byte outside a
// well-formed sequence is written \xNN in text, JSON and safetensors keys
// (docs/formats.md), and no JSON library error reaches the user.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli_files.h"
#include "tests/cli_runner.h"
#include "tests/gguf_writer.h"
#include "tests/torch_zips.h"

namespace amn::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

void WriteBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// No byte of `text` is outside well-formed UTF-8 (a cheap check: the
// inputs' stray bytes are 0xff, 0xfe, 0xc3 followed by '(', 0xed 0xb3 0xbf).
void ExpectNoStrayBytes(const std::string& text) {
  EXPECT_EQ(text.find('\xff'), std::string::npos) << text;
  EXPECT_EQ(text.find('\xfe'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xc3("), std::string::npos) << text;
  EXPECT_EQ(text.find("\xed\xb3"), std::string::npos) << text;
  EXPECT_EQ(text.find("json.exception"), std::string::npos) << text;
}

std::string GgufWithNames(const std::vector<std::string>& tensors) {
  GgufWriter g;
  g.Header(tensors.size(), 2).KvU32("general.alignment", 32).KvStr("k\xfe", "v\xc3(");
  for (size_t i = 0; i < tensors.size(); ++i) g.Tensor(tensors[i], {2}, 0, 32 * i);
  g.PadTo(32).Zeros(32 * tensors.size());
  return {g.bytes().begin(), g.bytes().end()};
}

std::string NpyOfTwoFloats() {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string npy = std::string("\x93NUMPY\x01\x00", 8);
  npy += static_cast<char>(header.size());
  npy += '\0';
  return npy + header + std::string("\0\0\x80\x3f\0\0\0\x40", 8);
}

// Runs parse (text and JSON), inspect --json and remember on `input`; the
// output must hold `key` (already escaped) and every output is clean.
ReadBack RememberChecked(const TempDir& dir, const fs::path& input, const std::string& key) {
  const CliResult text = RunAmn("parse " + Quote(input));
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(key), std::string::npos) << text.out;
  ExpectNoStrayBytes(text.out);
  const CliResult json = RunAmn("parse --json " + Quote(input));
  EXPECT_EQ(json.exit_code, 0) << json.err;
  ExpectNoStrayBytes(json.out);
  const Json parsed = Json::parse(json.out);  // strict: throws on bytes that are not UTF-8
  EXPECT_EQ(parsed["tensors"][0]["name"], key) << json.out;
  const CliResult inspect = RunAmn("inspect --json " + Quote(input));
  EXPECT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_TRUE(Json::accept(inspect.out)) << inspect.out;
  const fs::path out = dir.path() / "out.safetensors";
  const CliResult r = RunAmn("remember --json " + Quote(input) + " -o " + Quote(out));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ExpectNoStrayBytes(r.err);
  EXPECT_TRUE(Json::accept(r.out)) << r.out;
  return ReadBack(out);
}

TEST(NamesUtf8Cli, GgufTensorNameAndMetadata) {
  TempDir dir;
  WriteBytes(dir.path() / "m.gguf", GgufWithNames({"w\xff"}));
  const ReadBack out = RememberChecked(dir, dir.path() / "m.gguf", "w\\xff");
  EXPECT_TRUE(out.header.contains("w\\xff")) << out.header.dump();
  EXPECT_EQ(out.header["__metadata__"]["k\\xfe"], "v\\xc3(") << out.header.dump();
  const CliResult text = RunAmn("parse " + Quote(dir.path() / "m.gguf"));
  EXPECT_NE(text.out.find("k\\xfe"), std::string::npos) << text.out;
}

TEST(NamesUtf8Cli, NpzMemberName) {
  TempDir dir;
  WriteBytes(dir.path() / "a.npz",
             fixtures::WriteZip({fixtures::ZipMember::Stored("a\xff.npy", NpyOfTwoFloats())}));
  const ReadBack out = RememberChecked(dir, dir.path() / "a.npz", "a\\xff");
  EXPECT_TRUE(out.header.contains("a\\xff")) << out.header.dump();
}

TEST(NamesUtf8Cli, PickleKeyWithSurrogatepassBytes) {
  // pickle writes str with errors="surrogatepass": "w\udcff" is w ED B3 BF.
  const std::string pickle =
      TorchStateDict({{"w\xed\xb3\xbf", {"FloatStorage", "0", 6, 0, {2, 3}, {3, 1}, ""}}});
  TempDir dir;
  WriteBytes(dir.path() / "w.pth", TorchZip(pickle, {{"0", SixFloats()}}));
  const ReadBack out = RememberChecked(dir, dir.path() / "w.pth", "w\\xed\\xb3\\xbf");
  EXPECT_TRUE(out.header.contains("w\\xed\\xb3\\xbf")) << out.header.dump();
}

// Two names that the rule writes alike are refused, not merged.
TEST(NamesUtf8Cli, NamesThatEscapeAlikeAreRefused) {
  TempDir dir;
  WriteBytes(dir.path() / "m.gguf", GgufWithNames({"w\xff", "w\\xff"}));
  const CliResult r = RunAmn("remember -q " + Quote(dir.path() / "m.gguf") + " -o " +
                             Quote(dir.path() / "out.safetensors"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("two tensors would be written as 'w\\xff'"), std::string::npos) << r.err;
  ExpectNoStrayBytes(r.err);
  EXPECT_FALSE(fs::exists(dir.path() / "out.safetensors"));
}

}  // namespace
}  // namespace amn::test
