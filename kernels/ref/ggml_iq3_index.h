// The search tables of ggml's IQ3 encoders (ggml-quants.c iq3xs_init_impl):
// for each of the 4096 points of the 8^4 level cube, its index in the
// 256-entry (IQ3_XXS) or 512-entry (IQ3_S) grid, or, for a point off the
// grid, its neighbour list. No Highway.
//
// A point is four levels l_i in 0..7 (u = l_0 | l_1 << 3 | l_2 << 6 |
// l_3 << 9); the grid entry holds the odd values 2 l_i + 1. The neighbours of
// an off-grid point are the grid entries at the nwant smallest distinct
// squared distances (sum of (2 l_i + 1 - g_i)^2; nwant 2 for IQ3_XXS, 3 for
// IQ3_S), ordered by (distance, grid index): ggml sorts the same pairs with
// qsort and a total order on them, so its lists are these exact lists.
// The grid entries are ggml's kgrid_256 / kgrid_512, which are the packed
// level indices of the decoder grids (kernels/ggml_iq_grids.h packed::kIq3Xxs
// and packed::kIq3S).
//
// Built once, at first use, thread-safe (a function-local static).
#ifndef AMN_KERNELS_REF_GGML_IQ3_INDEX_H_
#define AMN_KERNELS_REF_GGML_IQ3_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace amn::ref {

// Candidate lists are padded to a multiple of this many, so a vector kernel
// of up to 8 float lanes reads whole vectors (the padding is never chosen).
inline constexpr int kIq3NeighbourPad = 8;

// The neighbour list of one off-grid point.
struct Iq3Neighbours {
  int n = 0;                        // candidates (>= 1; 38 at most)
  int n_pad = 0;                    // n rounded up to kIq3NeighbourPad
  const uint16_t* index = nullptr;  // n grid indices, in ggml's order
  // 4 rows of n_pad floats: q[i * n_pad + c] is 2 l_i + 1 of candidate c,
  // the value ggml scores (padding: 0).
  const float* q = nullptr;
};

class Iq3Index {
 public:
  // The tables of the 256-entry (IQ3_XXS) or 512-entry (IQ3_S) grid.
  static const Iq3Index& Xxs();
  static const Iq3Index& S();

  int grid_size() const { return grid_size_; }
  // Grid index of point u (0 .. 4095), or -1 when u is off the grid.
  int GridIndex(uint32_t u) const { return map_[u]; }
  // Level l_i (0 .. 7) of element i of grid entry g.
  int Level(int g, int i) const { return (levels_[g] >> (3 * i)) & 7; }
  // Neighbours of an off-grid point u (inline: called once per off-grid
  // group and trial).
  Iq3Neighbours NeighboursOf(uint32_t u) const {
    Iq3Neighbours r;
    r.n = count_[u];
    r.n_pad = (r.n + kIq3NeighbourPad - 1) / kIq3NeighbourPad * kIq3NeighbourPad;
    r.index = index_.data() + list_of_[u];
    r.q = q_.data() + qoff_[u];
    return r;
  }

 private:
  explicit Iq3Index(int grid_size);

  int grid_size_;
  std::vector<uint16_t> levels_;   // grid entry -> packed levels (its u)
  std::vector<int32_t> map_;       // u -> grid index or -1
  std::vector<int32_t> list_of_;   // u -> its first candidate in index_, or -1
  std::vector<int32_t> count_;     // u -> candidates
  std::vector<int32_t> qoff_;      // u -> offset of its 4 q rows in q_
  std::vector<uint16_t> index_;
  std::vector<float> q_;
};

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_GGML_IQ3_INDEX_H_
