// Scalar references of ggml's IQ3 encoders: byte for byte what
// ggml_quantize_chunk writes for IQ3_XXS and IQ3_S, without importance
// matrix (quantize_row_iq3_xxs_ref / quantize_row_iq3_s_ref) and with one
// (quantize_iq3_xxs / quantize_iq3_s given quant_weights). ggml-quants.c
// quantize_row_iq3_xxs_impl and quantize_row_iq3_s_impl; block layouts in
// kernels/ggml_iq_blocks.h; the grid search tables in
// kernels/ref/ggml_iq3_index.h. No Highway.
//
// Per 32-element sub-block (both types): weights w = x^2, or with an
// importance matrix qw * sqrt(sigma2 + x^2) (sigma2 = 2 sum x^2 / 256 over
// the super-block); |x| with the signs kept aside (IQ3_XXS: an even number
// of them, flipping the element of least w x^2 when odd); then 31 (IQ3_XXS)
// or 19 (IQ3_S) trial inverse scales (15 + 0.2 is) / max: each rounds the
// 32 values to levels 0..7 (nearest_int(0.5 (id |x| - 1))), looks every
// group of 4 up on the grid and replaces an off-grid group by its best
// neighbour (least sum sqrt(w) (scale q - |x|)^2, first in list order on
// ties); the trial of largest sumqx^2 / sumq2 wins. Groups left off the grid
// are placed again at the winning scale (IQ3_S: all groups), and the scale
// refitted. The super-block scale d = max scale / 31 (stored as F16 of d
// times 1.0125 or 1.033) and 4-bit sub-block scales follow.
//
// Order is the contract: every sum runs in increasing element index, in the
// association ggml's C gives it, one rounding per operation (the project
// builds with -ffp-contract=off). The trials are independent until the
// choice among them (in trial order, strict >), so the trial search is the
// hook a vector body replaces (Iq3TrialsFn): it may run one trial per lane
// as long as each lane does exactly one trial's scalar arithmetic.
//
// ggml quirks kept: IQ3_S does not advance its qs/signs pointers past an
// all-zero sub-block (the next sub-block's grid indices and signs land in
// its place; qh and scales are indexed by sub-block). Where ggml would abort
// (no neighbour has a distance below FLT_MAX: inputs whose fourth powers
// overflow F32, |x| beyond about 1e9), this code takes the list's first
// candidate and goes on.
//
// Preconditions: n_elems a multiple of 256, inputs finite.
#ifndef AMN_KERNELS_REF_GGML_IQ3_ENCODE_REF_H_
#define AMN_KERNELS_REF_GGML_IQ3_ENCODE_REF_H_

#include <cstddef>
#include <cstdint>

#include "amn/ggml_type.h"
#include "kernels/encode_args.h"
#include "kernels/encode_common.h"
#include "kernels/ref/ggml_iq3_index.h"

namespace amn::ref {

// iq3_find_best_neighbour for off-grid point u of one group of 4: the grid
// index of the candidate of least sum over i = 0..3 (in order, from 0) of
// (waux_i * diff) * diff, diff = scale * (2 l_i + 1) - xval_i; strict <, so
// the first in list order wins ties. Its levels go to l[0..3]. ggml asserts
// a winner exists; without one (every distance NaN or >= FLT_MAX) the
// first candidate is taken.
int Iq3BestNeighbour(const Iq3Index& index, uint32_t u, const float* xval, const float* waux,
                     float scale, int8_t* l);

// The trial-scale search of one 32-element sub-block (ggml's `is` loop):
// xxs selects IQ3_XXS's 31 trials (else IQ3_S's 19); xval |x| (signs
// applied), weight and waux = sqrt(weight), max the running MAX of xval.
// Returns the winning scale (max / 15 when no trial wins); L (zeros on
// entry) and on_grid[8] receive the winning trial's levels and which of its
// groups were on the grid (untouched when no trial wins: on_grid must hold
// xxs on entry).
using Iq3TrialsFn = float (*)(bool xxs, const Iq3Index& index, const float* xval,
                              const float* weight, const float* waux, float max, int8_t* L,
                              bool* on_grid);
float Iq3TrialsRef(bool xxs, const Iq3Index& index, const float* xval, const float* weight,
                   const float* waux, float max, int8_t* L, bool* on_grid);

// Block bytes of IQ3_XXS (98) or IQ3_S (110); 0 for any other type.
size_t Iq3EncodeBlockBytes(GgmlType type);

// One super-block (256 F32) of IQ3_XXS or IQ3_S; qw its 256 importance
// values or null; trials the trial search (Iq3TrialsRef for the reference).
void QuantizeIq3Block(GgmlType type, const float* x, const float* qw, uint8_t* out,
                      Iq3TrialsFn trials);

// One row of n_elems F32 to n_elems / 256 blocks; imatrix: n_elems importance
// values (ggml's quant_weights for this row) or null.
void QuantizeIq3Row(GgmlType type, const float* x, size_t n_elems, uint8_t* out,
                    const float* imatrix = nullptr);

// The error sums of one encoded super-block (elements i0 .. i0 + 255).
void AddIq3Errors(GgmlType type, const uint8_t* block, const float* x, uint64_t i0,
                  kernels::ErrorSums& errors);

// The kernel table's reference of family GgmlIq3Quant: rows x cols
// BF16/F16/F32 (cols a multiple of 256) widened to F32 one super-block at a
// time; imatrix null or cols values (per column of every row). A non-finite
// element is refused: its index is returned, the blocks before its
// super-block are written. With errors, each block is decoded
// (ref::DequantIQuantBlock) and its elements added in index order.
uint64_t EncodeGgmlIq3Quant(const kernels::GgmlQuantArgs& a, kernels::ErrorSums* errors);

}  // namespace amn::ref

#endif  // AMN_KERNELS_REF_GGML_IQ3_ENCODE_REF_H_
