// The IQ3 search tables (kernels/ref/ggml_iq3_index.h), built from the
// decoder grids' level indices the way iq3xs_init_impl builds them.
#include "kernels/ref/ggml_iq3_index.h"

#include <algorithm>
#include <utility>

#include "kernels/ggml_iq_grids.h"

namespace amn::ref {

namespace {
constexpr int kPoints = 4096;  // 8^4
}  // namespace

Iq3Index::Iq3Index(int grid_size)
    : grid_size_(grid_size), map_(kPoints, -1), list_of_(kPoints, -1), count_(kPoints, 0),
      qoff_(kPoints, -1) {
  if (grid_size == 256) {
    levels_.assign(iq::packed::kIq3Xxs.begin(), iq::packed::kIq3Xxs.end());
  } else {
    levels_.assign(iq::packed::kIq3S.begin(), iq::packed::kIq3S.end());
  }
  for (int g = 0; g < grid_size; ++g) map_[levels_[g]] = g;
  const int nwant = grid_size == 256 ? 2 : 3;
  std::vector<std::pair<int, int>> dist(grid_size);  // (squared distance, grid index)
  for (int u = 0; u < kPoints; ++u) {
    if (map_[u] >= 0) continue;
    for (int g = 0; g < grid_size; ++g) {
      int d2 = 0;
      for (int i = 0; i < 4; ++i) {
        const int diff = 2 * Level(g, i) - 2 * ((u >> (3 * i)) & 7);  // (2l+1) - (2l'+1)
        d2 += diff * diff;
      }
      dist[g] = {d2, g};
    }
    std::sort(dist.begin(), dist.end());  // ggml's qsort order: (d2, index), total
    // Every entry up to (not including) the first one at the (nwant + 1)-th
    // distinct distance.
    int n = 0, distinct = 1, d2 = dist[0].first;
    for (int j = 0; j < grid_size; ++j) {
      if (dist[j].first > d2) {
        if (distinct == nwant) break;
        d2 = dist[j].first;
        ++distinct;
      }
      ++n;
    }
    list_of_[u] = static_cast<int32_t>(index_.size());
    count_[u] = n;
    const int n_pad = (n + kIq3NeighbourPad - 1) / kIq3NeighbourPad * kIq3NeighbourPad;
    qoff_[u] = static_cast<int32_t>(q_.size());
    q_.resize(q_.size() + 4 * static_cast<size_t>(n_pad), 0.0f);
    for (int c = 0; c < n; ++c) {
      const int g = dist[c].second;
      index_.push_back(static_cast<uint16_t>(g));
      for (int i = 0; i < 4; ++i) {
        q_[qoff_[u] + i * n_pad + c] = static_cast<float>(2 * Level(g, i) + 1);
      }
    }
  }
}

Iq3Neighbours Iq3Index::NeighboursOf(uint32_t u) const {
  Iq3Neighbours r;
  r.n = count_[u];
  r.n_pad = (r.n + kIq3NeighbourPad - 1) / kIq3NeighbourPad * kIq3NeighbourPad;
  r.index = index_.data() + list_of_[u];
  r.q = q_.data() + qoff_[u];
  return r;
}

const Iq3Index& Iq3Index::Xxs() {
  static const Iq3Index index(256);
  return index;
}

const Iq3Index& Iq3Index::S() {
  static const Iq3Index index(512);
  return index;
}

}  // namespace amn::ref
