// The ZIP reader. Archives come from writers independent of the reader:
// libzip's writing API, Python's zipfile (at test time, skipped without
// /usr/bin/python3) and, for the zip64 end records, bytes laid out by hand
// from APPNOTE.TXT. Expectations are the bytes each writer was given, the
// offsets the APPNOTE layout puts them at, and what zipfile reports; damaged
// archives are made by patching fields at their APPNOTE offsets.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zip.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "formats/zip_archive.h"
#include "tests/fixtures.h"
#include "tests/temp_dir.h"

namespace amn::formats {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

constexpr const char* kPython = "/usr/bin/python3";

// --- Writing archives (libzip's writing API) ---------------------------------

struct Member {
  std::string name;
  std::string bytes;
  bool deflate = false;
};

Bytes BuildZip(const std::vector<Member>& members, const char* comment = nullptr) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  EXPECT_NE(buffer, nullptr);
  zip_t* zip = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  EXPECT_NE(zip, nullptr) << zip_error_strerror(&error);
  zip_source_keep(buffer);
  for (const Member& member : members) {
    zip_source_t* data = zip_source_buffer(zip, member.bytes.data(), member.bytes.size(), 0);
    const zip_int64_t index = zip_file_add(zip, member.name.c_str(), data, ZIP_FL_ENC_UTF_8);
    EXPECT_GE(index, 0) << zip_strerror(zip);
    EXPECT_EQ(zip_set_file_compression(zip, static_cast<zip_uint64_t>(index),
                                       member.deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 9),
              0);
  }
  if (comment != nullptr) zip_set_archive_comment(zip, comment, static_cast<zip_uint16_t>(std::strlen(comment)));
  EXPECT_EQ(zip_close(zip), 0) << zip_strerror(zip);

  Bytes out;
  EXPECT_EQ(zip_source_open(buffer), 0);
  uint8_t chunk[4096];
  for (zip_int64_t n; (n = zip_source_read(buffer, chunk, sizeof(chunk))) > 0;) {
    out.insert(out.end(), chunk, chunk + n);
  }
  zip_source_close(buffer);
  zip_source_free(buffer);
  zip_error_fini(&error);
  return out;
}

// --- Reading and patching raw fields (APPNOTE 4.3.7, 4.3.12, 4.3.16) -------

uint32_t Get32(const Bytes& b, size_t at) { return test::LoadLe32(b.data() + at); }
uint16_t Get16(const Bytes& b, size_t at) { return static_cast<uint16_t>(b[at] | b[at + 1] << 8); }
void Put16(Bytes& b, size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v);
  b[at + 1] = static_cast<uint8_t>(v >> 8);
}
void Put32(Bytes& b, size_t at, uint32_t v) {
  Put16(b, at, static_cast<uint16_t>(v));
  Put16(b, at + 2, static_cast<uint16_t>(v >> 16));
}
void Put64(Bytes& b, size_t at, uint64_t v) {
  Put32(b, at, static_cast<uint32_t>(v));
  Put32(b, at + 4, static_cast<uint32_t>(v >> 32));
}

// Where a member's headers and data are, for an archive without comment or
// zip64 records (what libzip writes for small inputs).
struct RawEntry {
  size_t central = 0;  // central directory header
  size_t local = 0;    // local file header
  size_t data = 0;     // first data byte
  std::string name;
};

struct RawLayout {
  size_t end = 0;  // end of central directory record
  std::vector<RawEntry> entries;
};

RawLayout Layout(const Bytes& zip) {
  RawLayout layout;
  layout.end = zip.size() - 22;
  EXPECT_EQ(Get32(zip, layout.end), 0x06054b50u);
  size_t pos = Get32(zip, layout.end + 16);
  for (uint16_t i = 0; i < Get16(zip, layout.end + 10); ++i) {
    EXPECT_EQ(Get32(zip, pos), 0x02014b50u);
    RawEntry entry;
    entry.central = pos;
    entry.local = Get32(zip, pos + 42);
    const uint16_t name_bytes = Get16(zip, pos + 28);
    entry.name.assign(reinterpret_cast<const char*>(zip.data() + pos + 46), name_bytes);
    entry.data = entry.local + 30 + Get16(zip, entry.local + 26) + Get16(zip, entry.local + 28);
    pos += 46 + name_bytes + Get16(zip, pos + 30) + Get16(zip, pos + 32);
    layout.entries.push_back(entry);
  }
  return layout;
}

// Field offsets in the central and local headers.
struct Field {
  size_t central, local;
};
constexpr Field kFlags{8, 6}, kMethod{10, 8}, kCrc{16, 14}, kCompressed{20, 18}, kUncompressed{24, 22};

void Patch32(Bytes& zip, const RawEntry& entry, Field field, uint32_t value) {
  Put32(zip, entry.central + field.central, value);
  Put32(zip, entry.local + field.local, value);
}
void Patch16(Bytes& zip, const RawEntry& entry, Field field, uint16_t value) {
  Put16(zip, entry.central + field.central, value);
  Put16(zip, entry.local + field.local, value);
}

// --- Sources -------------------------------------------------------------------

std::span<const std::byte> AsBytes(const Bytes& b) {
  return std::span(reinterpret_cast<const std::byte*>(b.data()), b.size());
}

// Fails every read once `fail` is set (an I/O error partway through).
class FailingSource final : public ByteSource {
 public:
  explicit FailingSource(const Bytes& bytes) : inner_(AsBytes(bytes), "failing.zip") {}
  uint64_t size() const override { return inner_.size(); }
  Status ReadAt(uint64_t offset, std::span<std::byte> out) override {
    if (*fail_) return Status(StatusCode::kIo, "failing.zip: injected read error").WithByteOffset(offset);
    return inner_.ReadAt(offset, out);
  }
  const std::string& name() const override { return inner_.name(); }
  std::shared_ptr<bool> fail_switch() const { return fail_; }

 private:
  MemorySource inner_;
  std::shared_ptr<bool> fail_ = std::make_shared<bool>(false);
};

Result<std::unique_ptr<ZipArchive>> OpenBytes(const Bytes& zip, const ParseLimits& limits = {}) {
  return ZipArchive::Open(std::make_unique<MemorySource>(AsBytes(zip), "test.zip"), limits);
}

std::string ReadAll(ZipArchive& archive, const ZipEntry& entry) {
  Result<std::string> bytes = archive.ReadEntry(entry, entry.bytes);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  return bytes.ok() ? *bytes : std::string();
}

// Reads every entry both ways; only errors are allowed, never a crash.
void ReadEverything(ZipArchive& archive) {
  for (const ZipEntry& entry : archive.entries()) {
    (void)archive.ReadEntry(entry, entry.bytes);
    Result<std::unique_ptr<ZipEntryReader>> reader = archive.OpenEntry(entry);
    if (!reader.ok()) continue;
    std::vector<std::byte> chunk(7);
    while ((*reader)->position() + chunk.size() <= entry.bytes && (*reader)->Read(chunk).ok()) {
    }
  }
}

std::string Pattern(size_t n, unsigned seed) {
  std::string s(n, '\0');
  uint32_t x = seed;
  for (char& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

std::string Text(size_t n) {
  std::string s;
  for (size_t i = 0; s.size() < n; ++i) s += "row " + std::to_string(i % 97) + " of the table;\n";
  s.resize(n);
  return s;
}

// --- Python (independent writer and reader) ------------------------------------

using test::TempDir;

// Runs a Python script (argv[1..] = args); its stdout, or nullopt on failure.
std::optional<std::string> RunPython(const TempDir& dir, const std::string& script,
                                     const std::vector<std::string>& args = {}) {
  const fs::path script_path = dir.path() / "script.py";
  std::ofstream(script_path) << script;
  std::string command = std::string(kPython) + " '" + script_path.string() + "'";
  for (const std::string& arg : args) command += " '" + arg + "'";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  char chunk[4096];
  for (size_t n; (n = std::fread(chunk, 1, sizeof(chunk), pipe)) > 0;) out.append(chunk, n);
  if (::pclose(pipe) != 0) return std::nullopt;
  return out;
}

Bytes ToBytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

#define SKIP_WITHOUT_PYTHON() \
  if (!fs::exists(kPython)) GTEST_SKIP() << kPython << " not found"

// --- Round trips -------------------------------------------------------------

TEST(ZipArchive, StoredAndDeflatedRoundTrip) {
  const std::vector<Member> members = {
      {"stored.bin", Pattern(1000, 1), false},
      {"dir/deflated.txt", Text(100000), true},
      {"empty_stored", "", false},
      {"empty_deflated", "", true},
      {"random_deflated.bin", Pattern(5000, 2), true},
  };
  const Bytes zip = BuildZip(members);
  const RawLayout layout = Layout(zip);
  ASSERT_EQ(layout.entries.size(), members.size());

  MemorySource probe(AsBytes(zip));
  EXPECT_TRUE(LooksLikeZip(probe));
  auto archive = OpenBytes(zip);
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  EXPECT_EQ((*archive)->name(), "test.zip");
  const std::vector<ZipEntry>& entries = (*archive)->entries();
  ASSERT_EQ(entries.size(), members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    SCOPED_TRACE(members[i].name);
    const ZipEntry& entry = entries[i];
    EXPECT_EQ(entry.name, members[i].name);
    EXPECT_EQ(entry.index, i);
    EXPECT_EQ(entry.bytes, members[i].bytes.size());
    EXPECT_EQ(entry.deflated, Get16(zip, layout.entries[i].central + kMethod.central) == 8);
    EXPECT_EQ(entry.local_header_offset, layout.entries[i].local);
    EXPECT_EQ(entry.data_offset, layout.entries[i].data);
    EXPECT_EQ(entry.compressed_bytes, Get32(zip, layout.entries[i].central + kCompressed.central));
    EXPECT_EQ(entry.crc32, Get32(zip, layout.entries[i].central + kCrc.central));
    EXPECT_EQ((*archive)->Find(members[i].name), &entry);
    EXPECT_EQ(ReadAll(**archive, entry), members[i].bytes);

    // Streaming in odd-sized pieces gives the same bytes.
    auto reader = (*archive)->OpenEntry(entry);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    std::string streamed;
    while ((*reader)->position() < entry.bytes) {
      std::vector<std::byte> piece(std::min<uint64_t>(333, entry.bytes - (*reader)->position()));
      ASSERT_TRUE((*reader)->Read(piece).ok());
      streamed.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    }
    EXPECT_EQ(streamed, members[i].bytes);
    std::byte one{};
    EXPECT_EQ((*reader)->Read({&one, 1}).code(), StatusCode::kTruncated);
  }
  EXPECT_TRUE(entries[1].deflated);
  EXPECT_FALSE(entries[0].deflated);
  EXPECT_EQ((*archive)->Find("missing"), nullptr);

  // The stored member's data_offset points at exactly its bytes.
  const ZipEntry& stored = entries[0];
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(zip.data() + stored.data_offset), stored.bytes),
            members[0].bytes);
}

TEST(ZipArchive, ReadersInterleaveAndRefuseWhatTheyDoNotOwn) {
  const std::vector<Member> members = {{"a", Text(20000), true}, {"b", Pattern(20000, 3), true}};
  const Bytes zip = BuildZip(members);
  auto archive = OpenBytes(zip);
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  const auto& entries = (*archive)->entries();
  auto a = (*archive)->OpenEntry(entries[0]);
  auto b = (*archive)->OpenEntry(entries[1]);
  ASSERT_TRUE(a.ok() && b.ok());
  std::string read_a, read_b;
  std::vector<std::byte> piece(1000);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE((*a)->Read(piece).ok());
    read_a.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    ASSERT_TRUE((*b)->Read(piece).ok());
    read_b.append(reinterpret_cast<const char*>(piece.data()), piece.size());
  }
  EXPECT_EQ(read_a, members[0].bytes);
  EXPECT_EQ(read_b, members[1].bytes);

  ZipEntry forged = entries[0];
  forged.bytes += 1;
  EXPECT_EQ((*archive)->ReadEntry(forged, 1 << 20).status().code(), StatusCode::kInvalidArgument);
  forged = entries[0];
  forged.index = 7;
  EXPECT_EQ((*archive)->OpenEntry(forged).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*archive)->ReadEntry(entries[0], entries[0].bytes - 1).status().code(),
            StatusCode::kLimitExceeded);
}

TEST(ZipArchive, OpenFileAndComment) {
  TempDir dir;
  const Bytes zip = BuildZip({{"x.txt", "hello", false}}, "an archive comment with PK in it");
  const fs::path path = dir.path() / "c.zip";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(zip.data()), zip.size());
  auto archive = ZipArchive::OpenFile(path, {});
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  ASSERT_EQ((*archive)->entries().size(), 1u);
  EXPECT_EQ(ReadAll(**archive, (*archive)->entries()[0]), "hello");
  EXPECT_EQ((*archive)->name(), path.string());
  EXPECT_EQ(ZipArchive::OpenFile(dir.path() / "missing.zip", {}).status().code(), StatusCode::kIo);
}

TEST(ZipArchive, EmptyArchiveAndNotAZip) {
  Bytes empty(22, 0);
  Put32(empty, 0, 0x06054b50);
  MemorySource empty_source(AsBytes(empty));
  EXPECT_TRUE(LooksLikeZip(empty_source));
  auto archive = OpenBytes(empty);
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  EXPECT_TRUE((*archive)->entries().empty());

  const Bytes not_zip = ToBytes(Pattern(300, 9));
  MemorySource not_zip_source(AsBytes(not_zip));
  EXPECT_FALSE(LooksLikeZip(not_zip_source));
  auto refused = OpenBytes(not_zip);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalid);
  EXPECT_NE(refused.status().message().find("test.zip"), std::string::npos);
  EXPECT_EQ(OpenBytes(Bytes{}).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(ZipArchive::Open(nullptr, {}).status().code(), StatusCode::kInvalidArgument);
}

// --- zip64 -------------------------------------------------------------------

TEST(ZipArchive, PythonForceZip64LocalHeaders) {
  SKIP_WITHOUT_PYTHON();
  TempDir dir;
  // force_zip64 adds a zip64 field to the local header (sizes stay in the
  // 32-bit fields while they fit).
  const auto out = RunPython(dir, R"(
import io, sys, zipfile
data = bytes((i * 7 + 3) % 256 for i in range(3000))
buf = io.BytesIO()
with zipfile.ZipFile(buf, 'w') as z:
    with z.open('big.bin', 'w', force_zip64=True) as f:
        f.write(data)
    zi = zipfile.ZipInfo('deflated.bin')
    zi.compress_type = zipfile.ZIP_DEFLATED
    with z.open(zi, 'w', force_zip64=True) as f:
        f.write(data * 5)
sys.stdout.buffer.write(buf.getvalue())
)");
  ASSERT_TRUE(out.has_value());
  const Bytes zip = ToBytes(*out);
  std::string expected;
  for (int i = 0; i < 3000; ++i) expected += static_cast<char>((i * 7 + 3) % 256);
  const RawLayout layout = Layout(zip);
  ASSERT_EQ(Get16(zip, layout.entries[0].local + 28), 20);  // extra length
  ASSERT_EQ(Get16(zip, layout.entries[0].local + 30 + 7), 1);  // zip64 field id

  auto archive = OpenBytes(zip);
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  const auto& entries = (*archive)->entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].name, "big.bin");
  EXPECT_EQ(entries[0].data_offset, layout.entries[0].local + 30 + 7 + 20);  // name + zip64 field
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(zip.data() + entries[0].data_offset), 3000), expected);
  EXPECT_EQ(ReadAll(**archive, entries[0]), expected);
  EXPECT_TRUE(entries[1].deflated);
  EXPECT_EQ(ReadAll(**archive, entries[1]), expected + expected + expected + expected + expected);
}

// One stored member "a.bin" = "hello" whose sizes are saturated in both
// headers and held in zip64 fields (the central one with the offset too),
// with the directory found through the zip64 end record and its locator
// (APPNOTE 4.3.14, 4.3.15, 4.5.3), laid out by hand.
Bytes HandMadeZip64() {
  Bytes zip(237, 0);
  const uint32_t crc_hello = 0x3610A686;  // CRC-32 of "hello"
  Put32(zip, 0, 0x04034b50);              // local header at 0
  Put16(zip, 4, 45);
  Put16(zip, 12, 0x21);
  Put32(zip, 14, crc_hello);
  Put32(zip, 18, 0xFFFFFFFF);
  Put32(zip, 22, 0xFFFFFFFF);
  Put16(zip, 26, 5);
  Put16(zip, 28, 20);
  std::memcpy(zip.data() + 30, "a.bin", 5);
  Put16(zip, 35, 1);  // local zip64 field: uncompressed, compressed
  Put16(zip, 37, 16);
  Put64(zip, 39, 5);
  Put64(zip, 47, 5);
  std::memcpy(zip.data() + 55, "hello", 5);
  Put32(zip, 60, 0x02014b50);  // central header at 60
  Put16(zip, 64, 45);
  Put16(zip, 66, 45);
  Put16(zip, 74, 0x21);
  Put32(zip, 76, crc_hello);
  Put32(zip, 80, 0xFFFFFFFF);
  Put32(zip, 84, 0xFFFFFFFF);
  Put16(zip, 88, 5);
  Put16(zip, 90, 28);
  Put32(zip, 102, 0xFFFFFFFF);
  std::memcpy(zip.data() + 106, "a.bin", 5);
  Put16(zip, 111, 1);  // central zip64 field: uncompressed, compressed, offset
  Put16(zip, 113, 24);
  Put64(zip, 115, 5);
  Put64(zip, 123, 5);
  Put64(zip, 131, 0);
  Put32(zip, 139, 0x06064b50);  // zip64 end record at 139 (directory: 60 + 79)
  Put64(zip, 143, 44);
  Put16(zip, 151, 45);
  Put16(zip, 153, 45);
  Put64(zip, 163, 1);
  Put64(zip, 171, 1);
  Put64(zip, 179, 79);
  Put64(zip, 187, 60);
  Put32(zip, 195, 0x07064b50);  // locator at 195
  Put64(zip, 203, 139);
  Put32(zip, 211, 1);
  Put32(zip, 215, 0x06054b50);  // end record at 215, saturated
  Put16(zip, 223, 0xFFFF);
  Put16(zip, 225, 0xFFFF);
  Put32(zip, 227, 0xFFFFFFFF);
  Put32(zip, 231, 0xFFFFFFFF);
  return zip;
}

TEST(ZipArchive, Zip64EndRecordsAndCentralField) {
  const Bytes zip = HandMadeZip64();
  if (fs::exists(kPython)) {  // the hand layout is a valid archive to zipfile too
    TempDir dir;
    const fs::path path = dir.path() / "z64.zip";
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(zip.data()), zip.size());
    EXPECT_EQ(RunPython(dir, "import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\n"
                             "sys.stdout.write(z.read('a.bin').decode())\n",
                        {path.string()}),
              "hello");
  }
  auto archive = OpenBytes(zip);
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  ASSERT_EQ((*archive)->entries().size(), 1u);
  const ZipEntry& entry = (*archive)->entries()[0];
  EXPECT_EQ(entry.name, "a.bin");
  EXPECT_EQ(entry.bytes, 5u);
  EXPECT_EQ(entry.compressed_bytes, 5u);
  EXPECT_EQ(entry.local_header_offset, 0u);
  EXPECT_EQ(entry.data_offset, 55u);
  EXPECT_EQ(entry.crc32, 0x3610A686u);
  EXPECT_EQ(ReadAll(**archive, entry), "hello");

  Bytes no_field = zip;  // saturated sizes without the zip64 field
  Put16(no_field, 111, 0x7777);
  EXPECT_EQ(OpenBytes(no_field).status().code(), StatusCode::kInvalid);
  Bytes local_differs = zip;  // the local zip64 field's compressed size
  Put64(local_differs, 47, 4);
  EXPECT_EQ(OpenBytes(local_differs).status().code(), StatusCode::kInvalid);
  Bytes bad_locator = zip;
  Put64(bad_locator, 203, 170);
  EXPECT_EQ(OpenBytes(bad_locator).status().code(), StatusCode::kInvalid);
  Bytes split = zip;  // total disks 2
  Put32(split, 211, 2);
  EXPECT_EQ(OpenBytes(split).status().code(), StatusCode::kUnsupported);
}

// --- Fixtures, listed by zipfile ---------------------------------------------

void CheckAgainstZipfile(const fs::path& file) {
  SCOPED_TRACE(file.string());
  TempDir dir;
  const auto listing = RunPython(dir, R"(
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for i in z.infolist():
    print(i.filename, i.compress_type, i.file_size, i.compress_size, i.CRC, i.header_offset,
          z.read(i.filename).hex() or '-', sep='\t')
)",
                                 {file.string()});
  ASSERT_TRUE(listing.has_value());
  auto archive = ZipArchive::OpenFile(file, {});
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  const Bytes raw = test::ReadBytes(file);
  std::istringstream lines(*listing);
  std::string line;
  size_t index = 0;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string name, hex;
    int method = 0;
    uint64_t bytes = 0, compressed = 0, offset = 0;
    uint32_t crc = 0;
    std::getline(fields, name, '\t');
    fields >> method >> bytes >> compressed >> crc >> offset >> hex;
    std::string data;
    for (size_t i = 0; hex != "-" && i + 1 < hex.size(); i += 2) {
      data += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    }
    ASSERT_LT(index, (*archive)->entries().size());
    const ZipEntry& entry = (*archive)->entries()[index++];
    SCOPED_TRACE(name);
    EXPECT_EQ(entry.name, name);
    EXPECT_EQ(entry.deflated, method == 8);
    EXPECT_EQ(entry.bytes, bytes);
    EXPECT_EQ(entry.compressed_bytes, compressed);
    EXPECT_EQ(entry.crc32, crc);
    EXPECT_EQ(entry.local_header_offset, offset);
    EXPECT_EQ(ReadAll(**archive, entry), data);
    if (!entry.deflated) {
      ASSERT_LE(entry.data_offset + entry.bytes, raw.size());
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(raw.data() + entry.data_offset), entry.bytes), data);
    }
  }
  EXPECT_EQ(index, (*archive)->entries().size());
}

TEST(ZipArchive, NpzFixtureMembers) {
  const auto files = test::FixtureFiles("npz_reference", ".npz");
  AMN_SKIP_WITHOUT_FIXTURES(files, "npz_reference");
  // The NPZ holds one .npy per array of the Gemma Scope slice.
  auto archive = ZipArchive::OpenFile(files[0], {});
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  std::vector<std::string> names;
  for (const ZipEntry& entry : (*archive)->entries()) names.push_back(entry.name);
  EXPECT_EQ(names, (std::vector<std::string>{"W_dec.npy", "W_enc.npy", "b_dec.npy", "b_enc.npy",
                                             "threshold.npy"}));
  SKIP_WITHOUT_PYTHON();
  for (const fs::path& file : files) CheckAgainstZipfile(file);
}

TEST(ZipArchive, PthFixtureMembers) {
  const auto files = test::FixtureFiles("pth_reference", ".pth");
  AMN_SKIP_WITHOUT_FIXTURES(files, "pth_reference");
  // torch.save writes data.pkl first and stores every member, with data
  // descriptors (flag bit 3).
  for (const fs::path& file : files) {
    auto archive = ZipArchive::OpenFile(file, {});
    ASSERT_TRUE(archive.ok()) << archive.status().ToString();
    ASSERT_FALSE((*archive)->entries().empty());
    const std::string& first = (*archive)->entries()[0].name;
    EXPECT_TRUE(first.ends_with("/data.pkl")) << first;
    const std::string prefix = first.substr(0, first.size() - std::string("data.pkl").size());
    EXPECT_NE((*archive)->Find(prefix + "data/0"), nullptr);
    EXPECT_NE((*archive)->Find(prefix + "version"), nullptr);
  }
  SKIP_WITHOUT_PYTHON();
  for (const fs::path& file : files) CheckAgainstZipfile(file);
}

TEST(ZipArchive, PythonDataDescriptors) {
  SKIP_WITHOUT_PYTHON();
  TempDir dir;
  // Written to a pipe, zipfile cannot seek back: sizes go in data descriptors.
  const auto out = RunPython(dir, R"(
import sys, zipfile
with zipfile.ZipFile(sys.stdout.buffer, 'w') as z:
    z.writestr('s.txt', 'stored text ' * 50)
    z.writestr('d.txt', 'deflated text ' * 500, compress_type=zipfile.ZIP_DEFLATED)
)");
  ASSERT_TRUE(out.has_value());
  const Bytes zip = ToBytes(*out);
  ASSERT_NE(Get16(zip, 6) & 8, 0);  // flag bit 3 in the first local header
  auto archive = OpenBytes(zip);
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  ASSERT_EQ((*archive)->entries().size(), 2u);
  std::string stored, deflated;
  for (int i = 0; i < 50; ++i) stored += "stored text ";
  for (int i = 0; i < 500; ++i) deflated += "deflated text ";
  EXPECT_EQ(ReadAll(**archive, (*archive)->entries()[0]), stored);
  EXPECT_EQ(ReadAll(**archive, (*archive)->entries()[1]), deflated);
}

// --- Limits: refused before anything is inflated -----------------------------

TEST(ZipArchive, ZipBombRefusedByRatio) {
  const Bytes zip = BuildZip({{"zeros.bin", std::string(50u << 20, '\0'), true}});
  const RawLayout layout = Layout(zip);
  const uint64_t compressed = Get32(zip, layout.entries[0].central + kCompressed.central);
  ASSERT_GT((50u << 20) / compressed, 1000u);  // DEFLATE's best is about 1032:1

  ParseLimits limits;
  limits.max_decompression_ratio = 1000;
  auto refused = OpenBytes(zip, limits);
  EXPECT_EQ(refused.status().code(), StatusCode::kLimitExceeded) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("zeros.bin"), std::string::npos);
  EXPECT_EQ(refused.status().byte_offset(), layout.entries[0].central);

  limits.max_decompression_ratio = 5000;  // above the built-in cap: clamped to 1000
  EXPECT_EQ(OpenBytes(zip, limits).status().code(), StatusCode::kLimitExceeded);
}

TEST(ZipArchive, LimitsOnSizesAndCounts) {
  const std::vector<Member> members = {{"a", Pattern(4000, 4), false}, {"b", Text(9000), true}};
  const Bytes zip = BuildZip(members);
  ASSERT_TRUE(OpenBytes(zip).ok());
  ParseLimits limits;
  limits.max_single_allocation = 8999;
  EXPECT_EQ(OpenBytes(zip, limits).status().code(), StatusCode::kLimitExceeded);
  limits = {};
  limits.max_total_bytes = 12999;
  EXPECT_EQ(OpenBytes(zip, limits).status().code(), StatusCode::kLimitExceeded);
  limits = {};
  limits.max_item_count = 1;
  EXPECT_EQ(OpenBytes(zip, limits).status().code(), StatusCode::kLimitExceeded);
  limits = {};
  limits.max_header_bytes = 46;
  EXPECT_EQ(OpenBytes(zip, limits).status().code(), StatusCode::kLimitExceeded);

  // A deflated entry declaring bytes from no compressed data at all.
  const RawLayout layout = Layout(zip);
  Bytes nothing = zip;
  Patch32(nothing, layout.entries[1], kCompressed, 0);
  EXPECT_EQ(OpenBytes(nothing).status().code(), StatusCode::kLimitExceeded);
}

// --- Damaged archives ----------------------------------------------------------

TEST(ZipArchive, CorruptDeflateStreamAndWrongCrc) {
  const std::vector<Member> members = {{"d.txt", Text(50000), true}, {"s.bin", Pattern(3000, 5), false}};
  const Bytes zip = BuildZip(members);
  const RawLayout layout = Layout(zip);

  Bytes corrupt = zip;  // BFINAL=1, BTYPE=11: a reserved block type
  corrupt[layout.entries[0].data] = 0xFF;
  auto archive = OpenBytes(corrupt);
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  const ZipEntry& deflated = (*archive)->entries()[0];
  EXPECT_EQ((*archive)->ReadEntry(deflated, deflated.bytes).status().code(), StatusCode::kInvalid);
  auto reader = (*archive)->OpenEntry(deflated);
  ASSERT_TRUE(reader.ok());
  std::vector<std::byte> piece(100);
  const Status first = (*reader)->Read(piece);
  EXPECT_EQ(first.code(), StatusCode::kInvalid) << first.ToString();
  EXPECT_EQ((*reader)->Read(piece).code(), StatusCode::kInvalid);

  for (size_t i = 0; i < members.size(); ++i) {
    SCOPED_TRACE(members[i].name);
    Bytes bad_crc = zip;
    Patch32(bad_crc, layout.entries[i], kCrc, Get32(zip, layout.entries[i].central + kCrc.central) ^ 1);
    auto opened = OpenBytes(bad_crc);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    const ZipEntry& entry = (*opened)->entries()[i];
    const auto whole = (*opened)->ReadEntry(entry, entry.bytes);
    EXPECT_EQ(whole.status().code(), StatusCode::kInvalid) << whole.status().ToString();
    // Streaming: everything but the last byte is fine, the last read fails.
    auto stream = (*opened)->OpenEntry(entry);
    ASSERT_TRUE(stream.ok());
    std::vector<std::byte> most(entry.bytes - 1), last(1);
    EXPECT_TRUE((*stream)->Read(most).ok());
    EXPECT_EQ((*stream)->Read(last).code(), StatusCode::kInvalid);
  }

  // A deflate stream cut short: the declared size cannot be reached.
  Bytes short_stream = zip;
  const uint32_t compressed = Get32(zip, layout.entries[0].central + kCompressed.central);
  Patch32(short_stream, layout.entries[0], kCompressed, compressed / 2);
  auto cut = OpenBytes(short_stream);
  ASSERT_TRUE(cut.ok()) << cut.status().ToString();
  EXPECT_EQ((*cut)->ReadEntry((*cut)->entries()[0], 1 << 20).status().code(), StatusCode::kInvalid);

  // A stream holding more than declared.
  Bytes longer = zip;
  Patch32(longer, layout.entries[0], kUncompressed, 40000);
  auto more = OpenBytes(longer);
  ASSERT_TRUE(more.ok()) << more.status().ToString();
  EXPECT_EQ((*more)->ReadEntry((*more)->entries()[0], 1 << 20).status().code(), StatusCode::kInvalid);
}

TEST(ZipArchive, IoErrorsPassThroughLibzip) {
  const Bytes zip = BuildZip({{"d.txt", Text(50000), true}});
  auto source = std::make_unique<FailingSource>(zip);
  const std::shared_ptr<bool> fail = source->fail_switch();
  auto archive = ZipArchive::Open(std::move(source), {});
  ASSERT_TRUE(archive.ok()) << archive.status().ToString();
  *fail = true;
  const ZipEntry& entry = (*archive)->entries()[0];
  const auto read = (*archive)->ReadEntry(entry, entry.bytes);
  EXPECT_EQ(read.status().code(), StatusCode::kIo) << read.status().ToString();
}

TEST(ZipArchive, EveryPrefixAndEveryFlippedByteFailsCleanly) {
  const Bytes zip = BuildZip({{"a.txt", Text(300), true}, {"b.bin", Pattern(40, 6), false}});
  for (size_t n = 0; n < zip.size(); ++n) {
    const Bytes prefix(zip.begin(), zip.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_FALSE(OpenBytes(prefix).ok()) << "prefix of " << n << " bytes";
  }
  for (size_t i = 0; i < zip.size(); ++i) {
    Bytes flipped = zip;
    flipped[i] ^= 0xFF;
    auto archive = OpenBytes(flipped);
    if (archive.ok()) ReadEverything(**archive);
  }
}

TEST(ZipArchive, DeclaredSizesBeyondTheFile) {
  const Bytes zip = BuildZip({{"a.bin", Pattern(100, 7), false}, {"b.bin", Pattern(100, 8), false}});
  const RawLayout layout = Layout(zip);
  Bytes huge = zip;
  Patch32(huge, layout.entries[1], kCompressed, 1000000);
  Patch32(huge, layout.entries[1], kUncompressed, 1000000);
  auto refused = OpenBytes(huge);
  EXPECT_EQ(refused.status().code(), StatusCode::kTruncated) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("b.bin"), std::string::npos);

  Bytes far_header = zip;
  Put32(far_header, layout.entries[1].central + 42, 0x7FFFFFFF);
  EXPECT_EQ(OpenBytes(far_header).status().code(), StatusCode::kTruncated);

  Bytes far_directory = zip;
  Put32(far_directory, layout.end + 16, 0x7FFFFFF0);
  EXPECT_EQ(OpenBytes(far_directory).status().code(), StatusCode::kInvalid);

  // a.bin grown into b.bin's local header: entries overlap.
  Bytes overlap = zip;
  Patch32(overlap, layout.entries[0], kCompressed, 150);
  Patch32(overlap, layout.entries[0], kUncompressed, 150);
  EXPECT_EQ(OpenBytes(overlap).status().code(), StatusCode::kInvalid);

  Bytes unequal = zip;  // stored, yet sizes differ
  Patch32(unequal, layout.entries[0], kUncompressed, 99);
  EXPECT_EQ(OpenBytes(unequal).status().code(), StatusCode::kInvalid);
}

TEST(ZipArchive, EncryptedEntriesAreUnsupported) {
  const Bytes zip = BuildZip({{"a.bin", Pattern(100, 7), false}, {"b.bin", Pattern(100, 8), true}});
  const RawLayout layout = Layout(zip);
  Bytes flagged = zip;
  Patch16(flagged, layout.entries[1], kFlags, Get16(zip, layout.entries[1].central + kFlags.central) | 1);
  auto refused = OpenBytes(flagged);
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("b.bin"), std::string::npos);

  // A real AES-encrypted entry from libzip's writer, where this build of it can.
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_t* writer = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  ASSERT_NE(writer, nullptr);
  zip_source_keep(buffer);
  const std::string secret = Text(500);
  const zip_int64_t index =
      zip_file_add(writer, "secret.txt", zip_source_buffer(writer, secret.data(), secret.size(), 0), 0);
  const bool can_encrypt = index >= 0 && zip_file_set_encryption(writer, 0, ZIP_EM_AES_256, "password") == 0;
  const bool closed = zip_close(writer) == 0;
  if (can_encrypt && closed && zip_source_open(buffer) == 0) {
    Bytes encrypted;
    uint8_t chunk[4096];
    for (zip_int64_t n; (n = zip_source_read(buffer, chunk, sizeof(chunk))) > 0;) {
      encrypted.insert(encrypted.end(), chunk, chunk + n);
    }
    zip_source_close(buffer);
    EXPECT_EQ(OpenBytes(encrypted).status().code(), StatusCode::kUnsupported);
  }
  zip_source_free(buffer);
  zip_error_fini(&error);
}

TEST(ZipArchive, InconsistentHeadersAreInvalid) {
  const Bytes zip = BuildZip({{"a.bin", Pattern(100, 7), false}, {"b.bin", Pattern(100, 8), false}});
  const RawLayout layout = Layout(zip);

  Bytes duplicate = zip;  // "b.bin" renamed "a.bin" in both headers
  duplicate[layout.entries[1].central + 46] = 'a';
  duplicate[layout.entries[1].local + 30] = 'a';
  auto refused = OpenBytes(duplicate);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalid);
  EXPECT_NE(refused.status().message().find("duplicate"), std::string::npos);

  Bytes renamed_local = zip;
  renamed_local[layout.entries[1].local + 30] = 'c';
  EXPECT_EQ(OpenBytes(renamed_local).status().code(), StatusCode::kInvalid);

  Bytes local_size = zip;  // only the local header's size differs
  Put32(local_size, layout.entries[0].local + kCompressed.local, 101);
  EXPECT_EQ(OpenBytes(local_size).status().code(), StatusCode::kInvalid);

  Bytes bzip2 = zip;
  Patch16(bzip2, layout.entries[0], kMethod, 12);
  EXPECT_EQ(OpenBytes(bzip2).status().code(), StatusCode::kUnsupported);

  Bytes split = zip;  // the end record says this is disk 1
  Put16(split, layout.end + 4, 1);
  EXPECT_EQ(OpenBytes(split).status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace amn::formats
