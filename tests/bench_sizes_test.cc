// The size rule of `amn bench` (DESIGN.md §8): streaming buffers (input +
// output) of at least 4x the last-level cache, never fewer than the minimum
// streaming size, whole multiples of the cache size; floor buffers of at
// least 4x the last-level cache. Pure arithmetic, checked against numbers
// worked out by hand; nothing here is timed.
#include <gtest/gtest.h>

#include <cstddef>

#include "perf/measure.h"

namespace amn::perf {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(BenchSizes, UnknownCacheKeepsTheMinimumSize) {
  EXPECT_EQ(StreamElemsFor(0, 6.0, kStreamElems), size_t{4096} * 11008);
  EXPECT_EQ(StreamElemsFor(0, 6.0, size_t{1} << 23), size_t{1} << 23);  // --quick
  EXPECT_EQ(MinFloorBytes(0, 256 * kMiB), 256 * kMiB);
  EXPECT_EQ(MinFloorBytes(0, 64 * kMiB), 64 * kMiB);
}

TEST(BenchSizes, SmallCacheKeepsTheMinimumSize) {
  // F32 -> BF16 moves 6 bytes per element: 4 x 32 MiB is 22.4 M elements,
  // under 4096 x 11008 = 45,088,768 (which is 688 x 65,536).
  EXPECT_EQ(StreamElemsFor(32 * kMiB, 6.0, kStreamElems), size_t{45088768});
  EXPECT_EQ(MinFloorBytes(32 * kMiB, 256 * kMiB), 128 * kMiB);
}

TEST(BenchSizes, LargeCacheGrowsTheStreamToFourTimesIt) {
  // 300 MiB L3, 6 bytes per element: 4 x 300 MiB / 6 = 209,715,200 elements,
  // exactly 3,200 x 65,536.
  EXPECT_EQ(StreamElemsFor(300 * kMiB, 6.0, kStreamElems), size_t{209715200});
  // --quick's smaller minimum does not shrink it.
  EXPECT_EQ(StreamElemsFor(300 * kMiB, 6.0, size_t{1} << 23), size_t{209715200});
  EXPECT_EQ(MinFloorBytes(300 * kMiB, 256 * kMiB), 1200 * kMiB);
  // Q4_K -> F32: 144 / 256 + 4 = 4.5625 bytes per element. 4 x 508 MiB /
  // 4.5625 = 467,004,149.5 elements, rounded up to 7,126 x 65,536.
  EXPECT_EQ(StreamElemsFor(508 * kMiB, 4.5625, kStreamElems), size_t{7126} * 65536);
  // 4 x 100 MiB / 3 bytes = 139,810,133.3: 2,134 x 65,536 = 139,853,824.
  EXPECT_EQ(StreamElemsFor(100 * kMiB, 3.0, kStreamElems), size_t{139853824});
}

TEST(BenchSizes, EverySizeIsAWholeMultipleOfTheCacheSizeAndFillsFourCaches) {
  for (const size_t llc : {size_t{1} << 20, 33 * kMiB, 96 * kMiB, 260 * kMiB, 1536 * kMiB}) {
    for (const double bytes_per_elem : {0.5625, 1.0625, 3.0, 4.5625, 6.0, 8.0}) {
      const size_t n = StreamElemsFor(llc, bytes_per_elem, kStreamElems);
      EXPECT_EQ(n % kCacheElems, 0u) << llc << " " << bytes_per_elem;
      EXPECT_GE(n, kStreamElems);
      EXPECT_GE(static_cast<double>(n) * bytes_per_elem, 4.0 * static_cast<double>(llc));
      if (n > kStreamElems) {  // and not a block of 65,536 more than needed
        EXPECT_LT(static_cast<double>(n - kCacheElems) * bytes_per_elem,
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

}  // namespace
}  // namespace amn::perf
