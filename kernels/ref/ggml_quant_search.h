// The scale searches ggml's K-quant reference quantizers share
// (ggml-quants.c: nearest_int, best_index_int8, make_qx_quants with
// rmse_type 1, make_q3_quants with do_rmse, make_qkx2_quants), as plain
// scalar code in ggml's float operation order. No Highway.
//
// Order is the contract: every running sum below is accumulated in
// increasing element index, one rounding per operation, in the association
// ggml's C gives it (left to right: w*x*l is (w*x)*l, w*l*l is (w*l)*l), with
// integer codes converted to float exactly where C converts them, and
// divisions where ggml divides (never a reciprocal product). The project
// builds with -ffp-contract=off, as ggml's reference C is built without FMA.
#ifndef AMN_KERNELS_REF_GGML_QUANT_SEARCH_H_
#define AMN_KERNELS_REF_GGML_QUANT_SEARCH_H_

#include <bit>
#include <cstdint>

namespace amn::ref::gq {

// ggml GROUP_MAX_EPS: a group whose largest |x| is below it is all zero.
inline constexpr float kGroupMaxEps = 1e-15f;

// Round to nearest, ties to even, for |v| <= 4194303: adding 1.5 * 2^23
// puts the integer in the low mantissa bits (the FPU rounds it, RNE).
inline int NearestInt(float v) {
  const uint32_t bits = std::bit_cast<uint32_t>(v + 12582912.f);
  return static_cast<int>(bits & 0x007fffffu) - 0x00400000;
}

// Index of the codebook value (n sorted int8 values) nearest to v: a binary
// search, ties between neighbours going to the upper one.
int BestIndexInt8(int n, const int8_t* values, float v);

// The scale quantize_row_iq4_nl_impl (ntry = 7) finds for one 32-element
// group over the IQ4_NL codebook with the given weights: d = -max /
// values[0], refined by the weighted least-squares scale of 15 trial
// inverse scales (itry + values[0]) / max; 0 when max |x| is below
// kGroupMaxEps. Shared by IQ4_NL (one block) and IQ4_XS (its sub-blocks).
float Iq4NlScale(const float* x, const float* weight);

// make_qx_quants(n, nmax, x, L, rmse_type = 1, qw): symmetric codes L[i] in
// [0, 2 nmax) (offset by nmax) with weights qw[i], or x^2 when qw is null;
// returns the scale (0 for an all-zero group). n <= 32.
float MakeQxQuantsRmse1(int n, int nmax, const float* x, int8_t* L,
                        const float* qw = nullptr);

// make_qp_quants(n, nmax, x, L, qw): codes L[i] in [0, nmax] of a scale
// without offset for x >= 0 (the sub-block scales and mins of the imatrix
// K-quants), picked by weighted squared error among nine candidate scales,
// then refined by coordinate descent. Returns the scale (0 when max x is
// below kGroupMaxEps: L = 0). L is ggml's uint8_t: a negative code wraps.
float MakeQpQuants(int n, int nmax, const float* x, uint8_t* L, const float* qw);

// make_q3_quants(n, nmax, x, L, do_rmse = true): codes in [0, 2 nmax) with
// the coordinate-descent refinement; an all-zero group gets L = 0 (not
// nmax) and scale 0, as ggml. n <= 32.
float MakeQ3QuantsRmse(int n, int nmax, const float* x, int8_t* L);

// make_qkx2_quants: affine codes L[i] in [0, nmax] with min <= 0 searched
// over nstep + 1 candidate scales (rmin + rdelta * is + nmax) / (max - min);
// the error is weighted |d| (use_mad) or d^2. Returns the scale; *the_min
// receives -min. laux is scratch of n bytes. With use_mad false this is
// also ggml's make_qkx3_quants given weights (the imatrix path): the two
// differ only in `max == min` against `max <= min`, the same test for
// finite x (min <= x[0] <= max).
float MakeQkx2Quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                     float* the_min, uint8_t* laux, float rmin, float rdelta, int nstep,
                     bool use_mad);

}  // namespace amn::ref::gq

#endif  // AMN_KERNELS_REF_GGML_QUANT_SEARCH_H_
