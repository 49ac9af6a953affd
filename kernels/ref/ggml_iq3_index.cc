// The IQ3 search tables (kernels/ref/ggml_iq3_index.h), built from the
// decoder grids' level indices the way iq3xs_init_impl builds them.
#include "kernels/ref/ggml_iq3_index.h"

#include <algorithm>
#include <array>

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
  std::vector<int> dist(grid_size);
  std::vector<std::array<int, 4>> twice_level(grid_size);
  for (int g = 0; g < grid_size; ++g) {
    for (int i = 0; i < 4; ++i) twice_level[g][i] = 2 * Level(g, i);
  }
  for (int u = 0; u < kPoints; ++u) {
    if (map_[u] >= 0) continue;
    int twice_u[4];
    for (int i = 0; i < 4; ++i) twice_u[i] = 2 * ((u >> (3 * i)) & 7);
    for (int g = 0; g < grid_size; ++g) {
      int d2 = 0;
      for (int i = 0; i < 4; ++i) {
        const int diff = twice_level[g][i] - twice_u[i];  // (2l+1) - (2l'+1)
        d2 += diff * diff;
      }
      dist[g] = d2;
    }
    // ggml sorts the (d2, g) pairs and keeps every entry before the first
    // one at the (nwant + 1)-th distinct distance: the same list is, for
    // each of the nwant smallest distinct distances in increasing order,
    // its entries in increasing g. (Sorting 4096 lists took 0.2 s.)
    int smallest[3] = {};
    int n_distinct = 0;
    for (int g = 0; g < grid_size; ++g) {
      int d2 = dist[g], k = 0;
      while (k < n_distinct && smallest[k] < d2) ++k;
      if (k < n_distinct && smallest[k] == d2) continue;
      if (k >= nwant) continue;
      for (int j = std::min(n_distinct, nwant - 1); j > k; --j) smallest[j] = smallest[j - 1];
      smallest[k] = d2;
      n_distinct = std::min(n_distinct + 1, nwant);
    }
    std::vector<int> list;
    for (int k = 0; k < n_distinct; ++k) {
      for (int g = 0; g < grid_size; ++g) {
        if (dist[g] == smallest[k]) list.push_back(g);
      }
    }
    const int n = static_cast<int>(list.size());
    list_of_[u] = static_cast<int32_t>(index_.size());
    count_[u] = n;
    const int n_pad = (n + kIq3NeighbourPad - 1) / kIq3NeighbourPad * kIq3NeighbourPad;
    qoff_[u] = static_cast<int32_t>(q_.size());
    q_.resize(q_.size() + 4 * static_cast<size_t>(n_pad), 0.0f);
    for (int c = 0; c < n; ++c) {
      const int g = list[c];
      index_.push_back(static_cast<uint16_t>(g));
      for (int i = 0; i < 4; ++i) {
        q_[qoff_[u] + i * n_pad + c] = static_cast<float>(2 * Level(g, i) + 1);
      }
    }
  }
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
