// The lookup structures ggml's IQ2/IQ1 encoders search (ggml-quants.c
// iq2xs_init_impl), rebuilt here from the packed grids of
// kernels/ggml_iq_grids.h. No Highway.
//
// A group of 8 values is first rounded to 2-bit levels l_i in {0, 1, 2};
// u = sum l_i << 2i names that point. `Map(u)` is its grid index when the
// grid holds it. Otherwise `Neighbours(u)` lists the grid points closest to
// it: distances are sum (g_i - p_i)^2 over the bytes 2l + 1, and the list
// holds every grid point whose distance is one of the `nwant` smallest
// distinct distances (IQ2_XXS, IQ2_XS: 2; IQ2_S: 1; IQ1_S/IQ1_M: 3),
// ordered by (distance, grid index) as ggml's qsort with its total order
// leaves them. The encoders keep the first strictly better candidate, so
// the order is part of the result.
//
// Each index is built once, at first use, thread-safe (a function-local
// static); the IQ1 one takes the longest (2048 points x 43692 keys).
#ifndef AMN_KERNELS_REF_GGML_IQ2_GRID_INDEX_H_
#define AMN_KERNELS_REF_GGML_IQ2_GRID_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace amn::ref::iq2 {

enum class GridKind { kIq2Xxs, kIq2Xs, kIq2S, kIq1 };

class GridIndex {
 public:
  // Grid point g as 8 bytes 2l + 1 (byte i: element i), ggml's kgrid_q2xs.
  const uint8_t* Point(int g) const { return points_.data() + 8 * g; }
  int Size() const { return size_; }
  // The grid index of u, or -1 when u is not on the grid.
  int Map(uint32_t u) const { return map_[u] >= 0 ? map_[u] : -1; }
  // The neighbour list of an off-grid u (Map(u) < 0), in ggml's order.
  std::span<const uint16_t> Neighbours(uint32_t u) const {
    const int32_t at = -map_[u] - 1;
    return {neighbours_.data() + at + 1, neighbours_[at]};
  }

  explicit GridIndex(GridKind kind);

 private:
  int size_ = 0;
  std::vector<uint8_t> points_;
  std::vector<int32_t> map_;  // >= 0: grid index; < 0: -(offset + 1)
  std::vector<uint16_t> neighbours_;  // per off-grid u: count, then indices
};

// The index of a grid kind, built on first use.
const GridIndex& GetGridIndex(GridKind kind);

// The grid as floats for the neighbour scoring: table[8g + i] = q[l] where
// l is element i's level (0, 1, 2) in point g.
std::vector<float> GridTable(const GridIndex& grid, const float q[3]);

// The neighbour scoring both encoder families share: for each of the n
// listed points g = list[j], d2[j] = sum over i = 0..7, in that order, of
// (w_i * diff) * diff with diff = scale * table[8g + i] - x_i. The scalar
// reference; kernels/ggml_iq2_neighbours-inl.h computes the same bits with
// one lane per listed point.
using NeighbourScoreFn = void (*)(const float* table, const uint16_t* list, size_t n,
                                  const float* x, const float* w, float scale, float* d2);
void ScoreNeighboursRef(const float* table, const uint16_t* list, size_t n, const float* x,
                        const float* w, float scale, float* d2);

// The first j with the least d2[j] below FLT_MAX (ggml keeps a candidate
// only when strictly better), or -1 when none is (NaN or overflow).
int FirstLeast(const float* d2, size_t n);

}  // namespace amn::ref::iq2

#endif  // AMN_KERNELS_REF_GGML_IQ2_GRID_INDEX_H_
