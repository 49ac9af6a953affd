// Builds the IQ2/IQ1 encoder grid indexes: see ggml_iq2_grid_index.h.
#include "kernels/ref/ggml_iq2_grid_index.h"

#include <array>
#include <cfloat>
#include <cstddef>

#include "kernels/ggml_iq_grids.h"

namespace amn::ref::iq2 {
namespace {

// Every u a group of 8 two-bit levels can spell (0xAAAA = all 2) plus one,
// as ggml sizes its map.
constexpr uint32_t kMapSize = 43692;
// Largest distance: 8 bytes, each differing by at most 6 (a key with a
// level 3, byte 7, which no encoder produces but ggml indexes too).
constexpr int kMaxDist2 = 8 * 36;

std::span<const uint16_t> PackedGrid(GridKind kind) {
  switch (kind) {
    case GridKind::kIq2Xxs: return iq::packed::kIq2Xxs;
    case GridKind::kIq2Xs: return iq::packed::kIq2Xs;
    case GridKind::kIq2S: return iq::packed::kIq2S;
    case GridKind::kIq1: return iq::packed::kIq1S;
  }
  return {};
}

int NWant(GridKind kind) {
  switch (kind) {
    case GridKind::kIq2S: return 1;
    case GridKind::kIq1: return 3;
    default: return 2;
  }
}

}  // namespace

GridIndex::GridIndex(GridKind kind) {
  const std::span<const uint16_t> packed = PackedGrid(kind);
  size_ = static_cast<int>(packed.size());
  points_.resize(8 * packed.size());
  map_.assign(kMapSize, -1);
  for (int g = 0; g < size_; ++g) {
    for (int i = 0; i < 8; ++i) {
      points_[8 * g + i] = static_cast<uint8_t>(2 * ((packed[g] >> (2 * i)) & 3) + 1);
    }
    map_[packed[g]] = g;  // the packed entry is its own u
  }
  const int nwant = NWant(kind);
  // half[a * 256 + b]: the distance between the 4-element halves with keys
  // a (the searched key's, levels 0..3) and b (a grid point's), so a key's
  // distance to a point is two lookups.
  std::vector<uint8_t> half(256 * 256);
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      int d2 = 0;
      for (int i = 0; i < 4; ++i) {
        const int diff = 2 * ((b >> (2 * i)) & 3) - 2 * ((a >> (2 * i)) & 3);
        d2 += diff * diff;
      }
      half[256 * a + b] = static_cast<uint8_t>(d2);
    }
  }
  std::vector<uint16_t> dist2(packed.size());
  for (uint32_t u = 0; u < kMapSize; ++u) {
    if (map_[u] >= 0) continue;
    // Distances to every grid point (integers: no order question), then the
    // nwant smallest distinct ones, then the points at those distances in
    // (distance, index) order: qsort's order under ggml's total comparator.
    std::array<bool, kMaxDist2 + 1> present{};
    const uint8_t* lo = half.data() + 256 * (u & 0xFF);
    const uint8_t* hi = half.data() + 256 * (u >> 8);
    for (int g = 0; g < size_; ++g) {
      const int d2 = lo[packed[g] & 0xFF] + hi[packed[g] >> 8];
      dist2[g] = static_cast<uint16_t>(d2);
      present[d2] = true;
    }
    const size_t at = neighbours_.size();
    map_[u] = -static_cast<int32_t>(at) - 1;
    neighbours_.push_back(0);
    int taken = 0;
    for (int d2 = 0; d2 <= kMaxDist2 && taken < nwant; ++d2) {
      if (!present[d2]) continue;
      ++taken;
      for (int g = 0; g < size_; ++g) {
        if (dist2[g] == d2) neighbours_.push_back(static_cast<uint16_t>(g));
      }
    }
    neighbours_[at] = static_cast<uint16_t>(neighbours_.size() - at - 1);
  }
}

std::vector<float> GridTable(const GridIndex& grid, const float q[3]) {
  std::vector<float> table(8 * static_cast<size_t>(grid.Size()));
  for (int g = 0; g < grid.Size(); ++g) {
    for (int i = 0; i < 8; ++i) table[8 * g + i] = q[(grid.Point(g)[i] - 1) / 2];
  }
  return table;
}

void ScoreNeighboursRef(const float* table, const uint16_t* list, size_t n, const float* x,
                        const float* w, float scale, float* d2) {
  for (size_t j = 0; j < n; ++j) {
    const float* q = table + 8 * static_cast<size_t>(list[j]);
    float sum = 0.0f;
    for (int i = 0; i < 8; ++i) {
      const float diff = scale * q[i] - x[i];
      sum += w[i] * diff * diff;
    }
    d2[j] = sum;
  }
}

int FirstLeast(const float* d2, size_t n) {
  float best = FLT_MAX;
  int at = -1;
  for (size_t j = 0; j < n; ++j) {
    if (d2[j] < best) {
      best = d2[j];
      at = static_cast<int>(j);
    }
  }
  return at;
}

const GridIndex& GetGridIndex(GridKind kind) {
  switch (kind) {
    case GridKind::kIq2Xxs: {
      static const GridIndex index(GridKind::kIq2Xxs);
      return index;
    }
    case GridKind::kIq2Xs: {
      static const GridIndex index(GridKind::kIq2Xs);
      return index;
    }
    case GridKind::kIq2S: {
      static const GridIndex index(GridKind::kIq2S);
      return index;
    }
    case GridKind::kIq1:
    default: {
      static const GridIndex index(GridKind::kIq1);
      return index;
    }
  }
}

}  // namespace amn::ref::iq2
