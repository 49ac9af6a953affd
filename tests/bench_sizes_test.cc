// The size rule of `amn bench` and perf/kernels_bench (DESIGN.md §8):
// streaming buffers (input + output) of at least 4x the last-level cache,
// never fewer than the minimum streaming size, whole multiples of the cache
// size; floor buffers of at least 4x the last-level cache, at each kernel's
// own bytes; rows judged against the fastest floor kept so far; compute-bound
// rows stream fewer elements. Pure arithmetic, checked against numbers worked
// out by hand; nothing here is timed.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string_view>
#include <utility>

#include "amn/kernel_registry.h"
#include "perf/measure.h"
#include "perf/shaped_copy.h"

namespace amn::perf {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

const KernelInfo* FindKernel(std::string_view name) {
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.name == name) return &kernel;
  }
  return nullptr;
}

TEST(BenchSizes, UnknownCacheKeepsTheMinimumSize) {
  EXPECT_EQ(StreamElemsFor(0, 6.0, kStreamElems), size_t{4096} * 11008);
  EXPECT_EQ(StreamElemsFor(0, 6.0, size_t{1} << 23), size_t{1} << 23);  // --quick
  EXPECT_EQ(MinFloorBytes(0, 256 * kMiB), 256 * kMiB);
  EXPECT_EQ(MinFloorBytes(0, 64 * kMiB), 64 * kMiB);
}

TEST(BenchSizes, SmallCacheKeepsTheMinimumSize) {
  // F32 -> BF16 moves 6 bytes per element: 4 x 32 MiB is 22.4 M elements,
  // under 4096 x 11008 = 45,088,768 (which is 86 x 524,288).
  EXPECT_EQ(StreamElemsFor(32 * kMiB, 6.0, kStreamElems), size_t{45088768});
  EXPECT_EQ(MinFloorBytes(32 * kMiB, 256 * kMiB), 128 * kMiB);
}

TEST(BenchSizes, LargeCacheGrowsTheStreamToFourTimesIt) {
  // 300 MiB L3, 6 bytes per element: 4 x 300 MiB / 6 = 209,715,200 elements,
  // exactly 400 x 524,288.
  EXPECT_EQ(StreamElemsFor(300 * kMiB, 6.0, kStreamElems), size_t{209715200});
  // --quick's smaller minimum does not shrink it.
  EXPECT_EQ(StreamElemsFor(300 * kMiB, 6.0, size_t{1} << 23), size_t{209715200});
  EXPECT_EQ(MinFloorBytes(300 * kMiB, 256 * kMiB), 1200 * kMiB);
  // Q4_K -> F32: 144 / 256 + 4 = 4.5625 bytes per element. 4 x 508 MiB /
  // 4.5625 = 467,004,149.5 elements, rounded up to 891 x 524,288.
  EXPECT_EQ(StreamElemsFor(508 * kMiB, 4.5625, kStreamElems), size_t{891} * 524288);
  // 4 x 100 MiB / 3 bytes = 139,810,133.3: 267 x 524,288 = 139,984,896.
  EXPECT_EQ(StreamElemsFor(100 * kMiB, 3.0, kStreamElems), size_t{139984896});
}

TEST(BenchSizes, EverySizeIsAWholeMultipleOfTheGranuleAndFillsFourCaches) {
  for (const size_t llc : {size_t{1} << 20, 33 * kMiB, 96 * kMiB, 260 * kMiB, 1536 * kMiB}) {
    for (const double bytes_per_elem : {0.5625, 1.0625, 3.0, 4.5625, 6.0, 8.0}) {
      const size_t n = StreamElemsFor(llc, bytes_per_elem, kStreamElems);
      EXPECT_EQ(n % kStreamGranule, 0u) << llc << " " << bytes_per_elem;
      EXPECT_GE(n, kStreamElems);
      EXPECT_GE(static_cast<double>(n) * bytes_per_elem, 4.0 * static_cast<double>(llc));
      if (n > kStreamElems) {  // and not a granule more than needed
        EXPECT_LT(static_cast<double>(n - kStreamGranule) * bytes_per_elem,
                  4.0 * static_cast<double>(llc));
      }
    }
  }
}

TEST(BenchSizes, StreamFloorIsTheSlowerOfWriteAndCopy) {
  Floors floors;
  floors.write_gbps = 10;         // bytes per ns
  floors.copy_traffic_gbps = 20;  // read + write bytes per ns
  floors.l2_write_gbps = 100;
  // Q4_K -> F32 (exact 0.5625 input bytes, not rounded up): write 4 / 10 =
  // 0.4 ns beats copy 4.5625 / 20 = 0.228 ns.
  EXPECT_DOUBLE_EQ(floors.StreamNsPerElem(0.5625, 4.0), 0.4);
  // F32 -> BF16: copy 6 / 20 = 0.3 ns beats write 2 / 10 = 0.2 ns.
  EXPECT_DOUBLE_EQ(floors.StreamNsPerElem(4.0, 2.0), 0.3);
  EXPECT_DOUBLE_EQ(floors.CacheNsPerElem(4.0), 0.04);
}

TEST(BenchSizes, StreamFloorTakesTheShapedCopyWhereItIsFaster) {
  Floors floors;
  floors.write_gbps = 10;
  floors.copy_traffic_gbps = 20;
  // F32 -> BF16 moved by a loop of its own shape at 30 bytes per ns: 6 / 30
  // = 0.2 ns, faster than the model's 0.3.
  floors.shaped_traffic_gbps = 30;
  EXPECT_DOUBLE_EQ(floors.StreamNsPerElem(4.0, 2.0), 0.2);
  // Slower than the model (6 / 15 = 0.4 ns): the model's 0.3 stays.
  floors.shaped_traffic_gbps = 15;
  EXPECT_DOUBLE_EQ(floors.StreamNsPerElem(4.0, 2.0), 0.3);
}

TEST(BenchSizes, FloorsAreMeasuredAtTheKernelsOwnBytes) {
  const KernelInfo* q4_k = FindKernel("q4_k_to_f32");
  const KernelInfo* bf16 = FindKernel("f32_to_bf16");
  ASSERT_NE(q4_k, nullptr);
  ASSERT_NE(bf16, nullptr);
  // Q4_K -> F32 streaming 7,126 x 65,536 = 467,009,536 elements (a 508 MiB
  // L3): input 1,824,256 blocks x 144 = 262,692,864 bytes, output 4 bytes
  // each = 1,868,038,144. The memcpy moves both (2,130,731,008, above the
  // 2032 MiB minimum); the memset of the output is raised to 2032 MiB.
  const FloorSizes stream = KernelFloorSizes(*q4_k, size_t{7126} * 65536, true, 2032 * kMiB);
  EXPECT_TRUE(stream.stream);
  EXPECT_EQ(stream.copy_bytes, size_t{2130731008});
  EXPECT_EQ(stream.write_bytes, 2032 * kMiB);
  // The shaped copy: the kernel's own bytes, already above the minimum.
  EXPECT_EQ(stream.shaped_in_bytes, size_t{262692864});
  EXPECT_EQ(stream.shaped_out_bytes, size_t{1868038144});
  // F32 -> BF16 at 2^20 elements (4 + 2 MiB) against a 64 MiB minimum:
  // both times 11, the smallest whole factor reaching 64 MiB (66 MiB).
  const FloorSizes small = KernelFloorSizes(*bf16, size_t{1} << 20, true, 64 * kMiB);
  EXPECT_EQ(small.shaped_in_bytes, 44 * kMiB);
  EXPECT_EQ(small.shaped_out_bytes, 22 * kMiB);
  // Cache-resident F32 -> BF16: a memset of its 65,536 x 2 output bytes only.
  const FloorSizes cache = KernelFloorSizes(*bf16, kCacheElems, false, 2032 * kMiB);
  EXPECT_FALSE(cache.stream);
  EXPECT_EQ(cache.write_bytes, size_t{131072});
  EXPECT_EQ(cache.copy_bytes, 0u);
  EXPECT_EQ(cache.shaped_in_bytes, 0u);
  EXPECT_EQ(cache.shaped_out_bytes, 0u);
}

TEST(BenchSizes, FloorPerElementUsesTheExactBytes) {
  const KernelInfo* q4_k = FindKernel("q4_k_to_f32");
  const KernelInfo* encode = FindKernel("f32_to_q4_k");
  ASSERT_NE(q4_k, nullptr);
  ASSERT_NE(encode, nullptr);
  Floors floors;
  floors.write_gbps = 10;
  floors.copy_traffic_gbps = 20;
  floors.l2_write_gbps = 100;
  // Decoder: 0.5625 input + 4 output bytes: write 0.4 ns beats copy 0.228.
  EXPECT_DOUBLE_EQ(FloorNsPerElem(*q4_k, kStreamElems, true, floors), 0.4);
  EXPECT_DOUBLE_EQ(FloorNsPerElem(*q4_k, kCacheElems, false, floors), 0.04);
  // Encoder: 4 input + 144 / 256 output bytes: copy 4.5625 / 20 = 0.228125
  // beats write 0.05625; cache-resident 0.5625 / 100.
  EXPECT_DOUBLE_EQ(FloorNsPerElem(*encode, kStreamElems, true, floors), 0.228125);
  EXPECT_DOUBLE_EQ(FloorNsPerElem(*encode, kCacheElems, false, floors), 0.005625);
}

TEST(BenchSizes, BestFloorsKeepTheFastestPerClass) {
  FloorSizes stream{true, 1024 * kMiB, 2048 * kMiB};
  const FloorSizes other_stream{true, 300 * kMiB, 600 * kMiB};
  const FloorSizes cache_f32{false, 262144, 0};
  const FloorSizes cache_bf16{false, 131072, 0};
  BestFloors best;
  EXPECT_EQ(best.For(stream).write_gbps, 0);  // nothing measured yet
  best.Keep(stream, 10, 20);
  best.Keep(other_stream, 8, 25);  // streaming: one class over every kernel
  EXPECT_EQ(best.For(stream).write_gbps, 10);
  EXPECT_EQ(best.For(stream).copy_traffic_gbps, 25);
  EXPECT_EQ(best.For(other_stream).write_gbps, 10);
  best.Keep(stream, 9, 19);  // slower: changes nothing
  EXPECT_EQ(best.stream().write_gbps, 10);
  EXPECT_EQ(best.stream().copy_traffic_gbps, 25);
  // Cache writes: one best per buffer size; the streaming ones untouched.
  best.Keep(cache_f32, 100, 0);
  best.Keep(cache_f32, 90, 0);
  best.Keep(cache_bf16, 150, 0);
  EXPECT_EQ(best.For(cache_f32).l2_write_gbps, 100);
  EXPECT_EQ(best.For(cache_bf16).l2_write_gbps, 150);
  EXPECT_EQ(best.For(FloorSizes{false, 65536, 0}).l2_write_gbps, 0);
  EXPECT_EQ(best.cache_write_gbps().size(), 2u);
  EXPECT_EQ(best.stream().write_gbps, 10);
}

TEST(BenchSizes, BestFloorsKeepTheFastestShapedCopyPerShape) {
  FloorSizes f32_to_bf16{true, 128 * kMiB, 192 * kMiB, 128 * kMiB, 64 * kMiB};
  const FloorSizes bf16_to_f32{true, 128 * kMiB, 192 * kMiB, 64 * kMiB, 128 * kMiB};
  BestFloors best;
  best.Keep(f32_to_bf16, 10, 20, 30);
  best.Keep(f32_to_bf16, 10, 20, 28);  // slower: changes nothing
  EXPECT_EQ(best.For(f32_to_bf16).shaped_traffic_gbps, 30);
  EXPECT_EQ(best.For(bf16_to_f32).shaped_traffic_gbps, 0);  // another shape: not measured
  best.Keep(bf16_to_f32, 10, 20, 25);
  EXPECT_EQ(best.For(bf16_to_f32).shaped_traffic_gbps, 25);
  EXPECT_EQ(best.For(f32_to_bf16).shaped_traffic_gbps, 30);
  EXPECT_EQ(best.shaped_traffic_gbps().size(), 2u);
  EXPECT_EQ(best.stream().shaped_traffic_gbps, 0);  // not one class over every kernel
}

// The shaped copy really moves every byte: one nonzero input byte, wherever
// it is (vector bodies, the part after the last whole vector), reaches the
// output; a zero input overwrites every output byte. Odd sizes, both ratios.
TEST(BenchSizes, ShapedCopyReadsAndWritesEveryByte) {
  for (const auto& [in_bytes, out_bytes] :
       {std::pair<size_t, size_t>{1000, 777}, {777, 5000}, {4096, 128}, {5, 3}}) {
    AlignedBytes in(in_bytes), out(out_bytes);
    std::memset(out.data(), 0xAA, out_bytes);
    ShapedCopy(in.data(), in_bytes, out.data(), out_bytes);  // in: zeros
    for (size_t i = 0; i < out_bytes; ++i) {
      ASSERT_EQ(out.data()[i], 0) << in_bytes << " -> " << out_bytes << " at " << i;
    }
    for (size_t p = 0; p < in_bytes; ++p) {
      std::memset(in.data(), 0, in_bytes);
      std::memset(out.data(), 0, out_bytes);
      in.data()[p] = 0x5C;
      ShapedCopy(in.data(), in_bytes, out.data(), out_bytes);
      bool reached = false;
      for (size_t i = 0; i < out_bytes; ++i) reached = reached || out.data()[i] != 0;
      ASSERT_TRUE(reached) << in_bytes << " -> " << out_bytes << ": input byte " << p << " unread";
    }
  }
}

TEST(BenchSizes, OnlyComputeBoundRowsStreamFewerElements) {
  bool shortened = true;
  // 2 ns per element against a 0.3 ns floor: compute-bound, but one call of
  // 45,088,768 elements takes 0.09 s, under the 0.25 s budget: full size.
  EXPECT_EQ(ComputeBoundStreamElems(kStreamElems, 2.0, 0.3, kCacheElems, shortened), kStreamElems);
  EXPECT_FALSE(shortened);
  // 2.9 ns on 209,715,200 elements is 0.6 s, but under 10x the floor.
  EXPECT_EQ(ComputeBoundStreamElems(209715200, 2.9, 0.3, kCacheElems, shortened), 209715200u);
  EXPECT_FALSE(shortened);
  // 10 ns: 0.25 s holds 25,000,000 elements, 47 whole x 524,288 = 24,641,536.
  EXPECT_EQ(ComputeBoundStreamElems(kStreamElems, 10.0, 0.3, kCacheElems, shortened),
            size_t{24641536});
  EXPECT_TRUE(shortened);
  // 1 us (the I-quant encoders): 250,000 elements, under one granule: 3 x 65,536.
  EXPECT_EQ(ComputeBoundStreamElems(kStreamElems, 1000.0, 0.3, kCacheElems, shortened),
            size_t{196608});
  EXPECT_TRUE(shortened);
  // Slower still: never under one cache-sized block.
  EXPECT_EQ(ComputeBoundStreamElems(kStreamElems, 1e6, 0.3, kCacheElems, shortened), kCacheElems);
  EXPECT_TRUE(shortened);
}

}  // namespace
}  // namespace amn::perf
