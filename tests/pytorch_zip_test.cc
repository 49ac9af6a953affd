// ReadPytorch on torch.save zips built in the test (tests/torch_zips.h): a
// data.pkl written by CPython's pickle module at protocol 1, FP8 tensors
// (_rebuild_tensor_v3 on an untyped storage, and the Float8 storage classes),
// and the memo-replay amplification, refused with a bounded number of bytes
// allocated (counted by this binary's operator new), not a bounded time.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "formats/byte_source.h"
#include "formats/pytorch.h"
#include "tests/torch_zips.h"

namespace {
std::atomic<uint64_t> g_allocated_bytes{0};
}  // namespace

// Every allocation of this binary is counted (cumulative bytes, an upper
// bound of the peak). g++ cannot see that these replace the global pair.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
  g_allocated_bytes += n;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace amn::formats {
namespace {

using test::TorchTensor;
using namespace std::string_literals;

Result<ArrayFile> ReadZip(const std::string& zip, const ParseLimits& limits = ParseLimits()) {
  auto source = std::make_unique<MemorySource>(
      std::as_bytes(std::span<const char>(zip.data(), zip.size())), "test.pth");
  Result<std::unique_ptr<ZipArchive>> archive = ZipArchive::Open(std::move(source), limits);
  if (!archive.ok()) return archive.status();
  return ReadPytorch(**archive, limits);
}

// pickle.dumps(state_dict, protocol=1) by CPython 3.11 with torch's
// persistent_id, for OrderedDict(layer.weight = storage[0:6].view(2, 3),
// layer.bias = storage[2:4], tied = layer.weight), checked with pickletools.dis:
// GLOBAL, BINPUT/BINGET, MARK ... TUPLE, INT 00 for False, BINPERSID, SETITEMS.
const std::string kProtocol1Pickle =
    "ccollections\nOrderedDict\nq\x00)Rq\x01(X\x0c\x00\x00\x00layer.weightq\x02" "ctorch._utils\n_reb"
    "uild_tensor_v2\nq\x03((X\x07\x00\x00\x00storageq\x04" "ctorch\nFloatStorage\nq\x05X\x01\x00\x00"
    "\x00" "0q\x06X\x03\x00\x00\x00" "cpuq\x07K\x06tq\x08QK\x00(K\x02K\x03tq\x09(K\x03K\x01tq\nI00\nh"
    "\x00)Rq\x0btq\x0cRq\x0dX\n\x00\x00\x00layer.biasq\x0eh\x03((h\x04h\x05h\x06h\x07K\x06tq\x0fQK"
    "\x02(K\x02tq\x10(K\x01tq\x11I00\nh\x00)Rq\x12tq\x13Rq\x14X\x04\x00\x00\x00tiedq\x15h\x0du."s;

TEST(PytorchZip, Protocol1DataPkl) {
  Result<ArrayFile> file = ReadZip(test::TorchZip(kProtocol1Pickle, {{"0", test::SixFloats()}}));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->arrays.size(), 3u);
  ASSERT_EQ(file->members.size(), 1u);
  const ArrayEntry& weight = file->arrays[0];
  EXPECT_EQ(weight.name, "layer.weight");
  EXPECT_EQ(weight.dtype, Dtype::kF32);
  EXPECT_EQ(weight.shape, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(weight.strides, (std::vector<uint64_t>{3, 1}));
  EXPECT_EQ(weight.storage_offset, 0u);
  const ArrayEntry& bias = file->arrays[1];
  EXPECT_EQ(bias.name, "layer.bias");
  EXPECT_EQ(bias.shape, (std::vector<uint64_t>{2}));
  EXPECT_EQ(bias.storage_offset, 2u);
  const ArrayEntry& tied = file->arrays[2];
  EXPECT_EQ(tied.name, "tied");
  EXPECT_EQ(tied.shape, weight.shape);
  for (const ArrayEntry& a : file->arrays) {
    EXPECT_EQ(a.member, 0u);
    EXPECT_EQ(a.storage_elements, 6u);
  }
}

TEST(PytorchZip, Fp8Tensors) {
  Result<ArrayFile> file = ReadZip(test::Fp8TorchZip());
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->arrays.size(), 2u);
  const ArrayEntry& e4m3 = file->arrays[0];
  EXPECT_EQ(e4m3.name, "e4m3");
  EXPECT_EQ(e4m3.dtype, Dtype::kF8E4m3);
  EXPECT_EQ(e4m3.shape, (std::vector<uint64_t>{5}));
  EXPECT_EQ(e4m3.storage_offset, 1u);
  EXPECT_EQ(e4m3.storage_elements, 6u);  // UntypedStorage: numel counts bytes
  const ArrayEntry& e5m2 = file->arrays[1];
  EXPECT_EQ(e5m2.dtype, Dtype::kF8E5m2);
  EXPECT_EQ(e5m2.shape, (std::vector<uint64_t>{2, 2}));
  EXPECT_EQ(e5m2.storage_elements, 4u);
}

TEST(PytorchZip, RebuildTensorV3DtypeAndStorage) {
  const std::string two_floats = test::SixFloats().substr(0, 8);
  // An untyped storage of 8 bytes read as U16 holds 4 elements.
  Result<ArrayFile> file = ReadZip(test::TorchZip(
      test::TorchStateDict({{"u16", {"UntypedStorage", "0", 8, 0, {4}, {1}, "uint16"}}}), {{"0", two_floats}}));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->arrays[0].dtype, Dtype::kU16);
  EXPECT_EQ(file->arrays[0].storage_elements, 4u);
  // ... and cannot view 5 of them.
  file = ReadZip(test::TorchZip(
      test::TorchStateDict({{"u16", {"UntypedStorage", "0", 8, 0, {5}, {1}, "uint16"}}}), {{"0", two_floats}}));
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kInvalid) << file.status().ToString();
  struct Case {
    TorchTensor tensor;
    StatusCode code;
    const char* text;
  };
  const Case cases[] = {
      {{"FloatStorage", "0", 2, 0, {2}, {1}, "float8_e4m3fn"}, StatusCode::kInvalid,
       "storage torch.FloatStorage does not hold torch.float8_e4m3fn"},
      {{"UntypedStorage", "0", 8, 0, {8}, {1}, "float8_e4m3fnuz"}, StatusCode::kUnsupported,
       "dtype torch.float8_e4m3fnuz is not supported"},
      {{"UntypedStorage", "0", 8, 0, {8}, {1}, "Size"}, StatusCode::kInvalid, "not a torch dtype"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    file = ReadZip(test::TorchZip(test::TorchStateDict({{"t", c.tensor}}), {{"0", two_floats}}));
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.status().code(), c.code) << file.status().ToString();
    EXPECT_EQ(file.status().tensor(), "t");
    EXPECT_NE(file.status().message().find(c.text), std::string::npos) << file.status().ToString();
  }
}

TEST(PytorchZip, SharedContainersBelowTheLimitStillRead) {
  Result<ArrayFile> file = ReadZip(test::MemoReplayTorchZip(3));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->arrays.size(), 8u);
  EXPECT_EQ(file->arrays[0].name, "w.0.0.0");
  EXPECT_EQ(file->arrays[7].name, "w.1.1.1");
  EXPECT_EQ(file->members.size(), 1u);
}

TEST(PytorchZip, MemoReplayIsRefusedBeforeItCostsMemory) {
  const std::string zip = test::MemoReplayTorchZip(64);  // 2^64 tensors in ~1.8 KB
  const uint64_t before = g_allocated_bytes.load();
  Result<ArrayFile> file = ReadZip(zip);
  const uint64_t allocated = g_allocated_bytes.load() - before;
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kLimitExceeded) << file.status().ToString();
  EXPECT_NE(file.status().message().find("shared (memoized) container"), std::string::npos)
      << file.status().ToString();
  // Building names and entries for the first 2^20 visits took ~300 MB.
  EXPECT_LT(allocated, uint64_t{1} << 20) << "bytes allocated while refusing";
}

TEST(PytorchZip, TightItemLimitBoundsTheWalkUpFront) {
  ParseLimits limits;
  limits.max_item_count = 1000;
  // 2^12 tensors: the VM's own graph stays under 1000 values, the walk would not.
  const std::string zip = test::MemoReplayTorchZip(12);
  const uint64_t before = g_allocated_bytes.load();
  Result<ArrayFile> file = ReadZip(zip, limits);
  const uint64_t allocated = g_allocated_bytes.load() - before;
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kLimitExceeded) << file.status().ToString();
  EXPECT_LT(allocated, uint64_t{64} << 10) << "bytes allocated while refusing";
}

TEST(PytorchZip, ViewsOfSharedStoragesCountTowardTheTotalBytes) {
  // 2^10 names for one [2, 3] F32 view: 24 KiB of output from 24 bytes.
  const std::string zip = test::MemoReplayTorchZip(10);
  ParseLimits limits;
  limits.max_total_bytes = 16 << 10;
  Result<ArrayFile> file = ReadZip(zip, limits);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kLimitExceeded) << file.status().ToString();
  EXPECT_NE(file.status().message().find("views of shared storages"), std::string::npos)
      << file.status().ToString();
  limits.max_total_bytes = 24 << 10;
  file = ReadZip(zip, limits);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->arrays.size(), 1024u);
}

}  // namespace
}  // namespace amn::formats
