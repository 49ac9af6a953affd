// SHA-256 (formats/sha256.h) against the FIPS 180-2 example vectors, split
// updates, and python3's hashlib on the same bytes where python3 runs.
#include "formats/sha256.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace amn::formats {
namespace {

std::string Hash(const std::string& text) {
  Sha256 h;
  h.Update(std::as_bytes(std::span(text.data(), text.size())));
  return HexDigest(h.Finish());
}

TEST(Sha256, NistVectors) {
  EXPECT_EQ(Hash(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Hash(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Any split of the input into updates gives the same digest (lengths around
// the 55/56/64-byte padding edges included).
TEST(Sha256, SplitUpdatesAgree) {
  for (size_t n : {55u, 56u, 63u, 64u, 65u, 119u, 120u, 200u}) {
    std::string text;
    for (size_t i = 0; i < n; ++i) text += static_cast<char>('a' + i % 26);
    const std::string whole = Hash(text);
    for (size_t cut = 0; cut <= n; cut += 7) {
      Sha256 h;
      h.Update(std::as_bytes(std::span(text.data(), cut)));
      h.Update(std::as_bytes(std::span(text.data() + cut, n - cut)));
      EXPECT_EQ(HexDigest(h.Finish()), whole) << n << " split at " << cut;
    }
  }
}

TEST(Sha256, FileMatchesPythonHashlib) {
  const auto path = std::filesystem::temp_directory_path() / ("amn_sha256_" + std::to_string(getpid()));
  std::string bytes;
  for (uint32_t i = 0; i < 3 * (1u << 20) + 17; ++i) bytes += static_cast<char>((i * 7919u) >> 3);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const Result<std::string> ours = Sha256OfFile(path);
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  EXPECT_EQ(*ours, Hash(bytes));
  const std::string command = "python3 -c \"import hashlib,sys; print(hashlib.sha256(open(sys.argv[1],'rb')"
                              ".read()).hexdigest())\" '" + path.string() + "' 2>/dev/null";
  std::string python;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char line[128] = {};
    if (std::fgets(line, sizeof(line), pipe) != nullptr) python = line;
    ::pclose(pipe);
  }
  std::filesystem::remove(path);
  if (python.empty()) GTEST_SKIP() << "no python3 to compare with";
  EXPECT_EQ(*ours + "\n", python);
}

TEST(Sha256, VerifyNamesTheBlobOnAMismatch) {
  const auto path = std::filesystem::temp_directory_path() / ("amn_blob_" + std::to_string(getpid()));
  std::ofstream(path, std::ios::binary) << "abc";
  EXPECT_TRUE(VerifyBlobSha256(path, "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD").ok());
  const Status bad = VerifyBlobSha256(path, std::string(64, '0'));
  EXPECT_EQ(bad.code(), StatusCode::kInvalid);
  EXPECT_NE(bad.message().find(path.string()), std::string::npos) << bad.message();
  EXPECT_NE(bad.message().find("ba7816bf"), std::string::npos) << bad.message();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace amn::formats
