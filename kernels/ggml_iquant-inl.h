// Per-target ggml I-quant dequantization (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS,
// IQ3_S, IQ1_S, IQ1_M), Highway 1.0.3. Same two passes as the K-quants
// (kernels/ggml_kquant-inl.h, whose Decoded and StoreBlock this reuses):
// 1. each 8-element group's lattice entry (kernels/ggml_iq_grids.h) becomes
//    eight int8 codes in one 64-bit word, signs applied without a branch:
//    with m = 0xFF in each negative byte, (g ^ m) + (m & 0x01…01) negates
//    those bytes (grid bytes are 1…62, so no carry crosses a byte);
//    On AVX-512 (IQ1_S, IQ1_M) and AVX2 (IQ1_M), the IQ1 types instead
//    build 8 or 4 grid indices per vector and fetch their entries with one
//    gather, and take the bias off per byte there (scalar lookups were half
//    their time). AVX2's gather keeps its index in ymm5 (IqGatherGrid:
//    QEMU 7.2, the emulated fleet, mis-decodes ymm4 as a gather index);
//    IQ2_XXS, IQ2_XS and IQ3_S (both) do the same
//    (kIqGathers), with a second gather for the sign masks;
// 2. code → f32, times the group's factor, one IEEE multiply.
// Why that equals the reference's db · g · (±1): round(db · g) · (±1) is
// round(db · (±g)) because round-to-nearest-even is symmetric. IQ1's
// dl · (g + δ) with δ = ±1/8 is taken as (dl · 1/8) · (8g ± 1): dl · 1/8 is
// exact (dl is 0, ±Inf, NaN or ≥ 2^-24 in magnitude), and 8g ± 1 is the exact
// integer 8(g + δ), so both sides round the same real number once.
// BF16/F16 outputs of IQ2_*/IQ3_* on some x86 targets replace pass 2 with
// byte lookups of per-slot tables of the results (IqByteTableBlock).
// Same bytes as the reference on every target; SCALAR runs the reference.
#if defined(AMN_KERNELS_GGML_IQUANT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef AMN_KERNELS_GGML_IQUANT_INL_H_
#undef AMN_KERNELS_GGML_IQUANT_INL_H_
#else
#define AMN_KERNELS_GGML_IQUANT_INL_H_
#endif

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/kernel_args.h"
#include "kernels/float_convert-inl.h"
#include "kernels/ggml_iq_blocks.h"
#include "kernels/ggml_kquant-inl.h"
#include "kernels/int4_byte_table-inl.h"
#include "kernels/ref/ggml_iquant_ref.h"

HWY_BEFORE_NAMESPACE();
namespace amn {
namespace HWY_NAMESPACE {

#if HWY_TARGET != HWY_SCALAR

namespace iqv {

using kqv::Decoded;
using kqv::F16At;

constexpr uint64_t kOnes = 0x0101010101010101ull;

// Eight int8 codes (byte j = element j) into dec.q.
HWY_INLINE void PutGroup(uint64_t codes, int8_t* dst) {
  if constexpr (std::endian::native == std::endian::big) codes = __builtin_bswap64(codes);
  std::memcpy(dst, &codes, sizeof(codes));
}

// Grid bytes (1…127) with the bytes set in the byte mask m negated.
HWY_INLINE uint64_t Signed(uint64_t grid, uint64_t m) { return (grid ^ m) + (m & kOnes); }
// m from 8 explicit sign bits, or from a 7-bit ksigns index.
HWY_INLINE uint64_t Signs(unsigned bits) { return iq::kSignMask[bits & 0xff]; }
HWY_INLINE uint64_t KSigns(unsigned index) { return iq::kKSignMask[index & 127]; }

// IQ1 codes 8g ± 1 biased by 16 (kIq1SGridBiased holds 8(g + 2) + 1; a
// negative delta takes 2 off every byte, which never borrows: bytes are >= 9).
HWY_INLINE uint64_t Iq1Codes(unsigned index, bool negative_delta) {
  return iq::kIq1SGridBiased[index] - (0x0202020202020202ull & (0 - uint64_t{negative_delta}));
}

HWY_INLINE uint64_t Pair(uint32_t lo, uint32_t hi) { return lo | static_cast<uint64_t>(hi) << 32; }

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#if HWY_TARGET == HWY_AVX2
// kTable[idx[l]] for 4 u64 lanes by vpgatherqq with the index always in ymm5.
// QEMU without its 2024 fix (QEMU issue 2474, "target/i386: Fix VSIB
// decode", in 9.1), such as Debian bookworm's 7.2 that runs the emulated
// fleet, decodes a VSIB index field of 4 (ymm4) as "no index", as in a plain
// SIB byte, and every lane then loads table[0]; hn::GatherIndex left the
// register to the compiler, which picked ymm4 for some IQ1_M gathers (only
// fleet/AVX2 failed). Real CPUs are right; the move into ymm5 costs no
// measurable time. docs/performance/gguf-iquants.md has the minimal reproducer.
// u32 tables (IQ3 grids) take vpgatherdd, 8 lanes, the same way.
#define AMN_IQ_GATHER_YMM5(CMP, GATHER, SCALE, SIZE)                              \
  asm("vmovdqa {%[idx], %%ymm5|ymm5, %[idx]}\n\t"                                 \
      CMP " {%[mask], %[mask], %[mask]|%[mask], %[mask], %[mask]}\n\t"            \
      GATHER " {%[mask], (%[table],%%ymm5," SCALE "), %[out]"                     \
      "|%[out], " SIZE " PTR [%[table]+ymm5*" SCALE "], %[mask]}"                  \
      : [out] "=&x"(out), [mask] "=&x"(mask)                                      \
      : [idx] "x"(idx.raw), [table] "r"(kTable.data()), "m"(kTable)               \
      : "xmm5")
template <const auto& kTable, typename T>
HWY_INLINE hn::Vec256<T> IqGatherGrid(hn::Vec256<T> idx) {
  static_assert(sizeof(T) == sizeof(kTable[0]) && (sizeof(T) == 4 || sizeof(T) == 8));
  __m256i out, mask;
  if constexpr (sizeof(T) == 8) {
    AMN_IQ_GATHER_YMM5("vpcmpeqq", "vpgatherqq", "8", "QWORD");
  } else {
    AMN_IQ_GATHER_YMM5("vpcmpeqd", "vpgatherdd", "4", "DWORD");
  }
  return hn::Vec256<T>{out};
}
#undef AMN_IQ_GATHER_YMM5
#else
template <const auto& kTable, class V>
HWY_INLINE V IqGatherGrid(V idx) {
  const hn::DFromV<V> du;
  const hn::RebindToSigned<decltype(du)> di;
  return hn::GatherIndex(du, kTable.data(), hn::BitCast(di, idx));
}
#endif
// N = 4 (AVX2) or 8 (AVX-512) groups, one u64 lane each.
using IqGatherDU = hn::CappedTag<uint64_t, 8>;
using GatherBytes = hn::Vec<hn::Repartition<uint8_t, IqGatherDU>>;

// Per lane l: (word >> shift[l]) & mask, word the bytes of src16 (the same
// 16 in every 128-bit block) that pick[8l..8l+7] selects (0x80: zero).
HWY_INLINE hn::Vec<IqGatherDU> PickedField(GatherBytes src16, const uint8_t* pick,
                                      const uint64_t* shift, uint64_t mask) {
  const IqGatherDU du;
  const hn::Repartition<uint8_t, decltype(du)> d8;
  const auto word = hn::BitCast(du, hn::TableLookupBytesOr0(src16, hn::LoadU(d8, pick)));
  return hn::And(hn::Shr(word, hn::LoadU(du, shift)), hn::Set(du, mask));
}

// N bytes at p, one per u64 lane (1.0.3 has no u8 -> u64 promotion).
HWY_INLINE hn::Vec<IqGatherDU> PromotedBytes(const uint8_t* p) {
  const IqGatherDU du;
  const hn::Rebind<uint32_t, decltype(du)> d32;
  return hn::PromoteTo(du, hn::PromoteTo(d32, hn::LoadU(hn::Rebind<uint8_t, decltype(du)>(), p)));
}

// kBytes = 4, 8 or 16 bytes from p in every 128-bit block (repeated). 4 or
// 8 bytes are broadcast as a u32/u64, not copied into a zeroed 16-byte buffer: a 16-byte
// load of two smaller stores cannot be store-forwarded (that stall made the
// AVX2 IQ2_XXS gather path 2.5x slower than scalar lookups).
template <size_t kBytes>
HWY_INLINE GatherBytes Dup16(const uint8_t* p) {
  static_assert(kBytes == 4 || kBytes == 8 || kBytes == 16);
  const hn::Repartition<uint8_t, IqGatherDU> d8;
  if constexpr (kBytes == 4) {
    uint32_t word;
    std::memcpy(&word, p, sizeof(word));
    return hn::BitCast(d8, hn::Set(hn::Repartition<uint32_t, decltype(d8)>(), word));
  } else if constexpr (kBytes == 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    return hn::BitCast(d8, hn::Set(hn::Repartition<uint64_t, decltype(d8)>(), word));
  } else {
    HWY_ALIGN uint8_t copy[16];
    std::memcpy(copy, p, sizeof(copy));  // LoadDup128 wants aligned bytes
    return hn::LoadDup128(d8, copy);
  }
}

// AVX2 and AVX-512: IQ1 codes for N = 4 or 8 groups (8N elements) at a time, the
// grid entries fetched by one N-lane gather instead of N scalar loads. Group
// g's lane takes its 3 high index bits from word >> shift[g], word the bytes
// TableLookupBytesOr0(qh16, idx[8g..]) picks for it (qh16: the 16 qh bytes
// in every 128-bit block); the delta sign is bit 15 of word (IQ1_S) or bit 3
// of word >> shift[g] (IQ1_M).
template <bool kSignBit15>
HWY_INLINE void Iq1GatherN(const uint8_t* qs, GatherBytes qh16, const uint8_t* word_idx,
                           const uint64_t* shift, int8_t* dst) {
  const IqGatherDU du;
  const hn::Repartition<uint8_t, decltype(du)> d8;
  const auto one = hn::Set(du, 1u);
  const auto word = hn::BitCast(du, hn::TableLookupBytesOr0(qh16, hn::LoadU(d8, word_idx)));
  const auto bits = hn::Shr(word, hn::LoadU(du, shift));
  const auto idx = hn::Or(PromotedBytes(qs), hn::ShiftLeft<8>(hn::And(bits, hn::Set(du, 7u))));
  const auto grid = IqGatherGrid<iq::kIq1SGridBiased>(idx);
  const auto neg = kSignBit15 ? hn::And(hn::ShiftRight<15>(word), one)
                              : hn::And(hn::ShiftRight<3>(bits), one);
  // Per byte (no borrows between bytes), take off the bias 16 and, for a
  // negative delta, 2 more: the codes 8g ± 1 themselves (kIq1Bias is 0).
  const auto minus = hn::Or(hn::And(hn::Sub(hn::Zero(du), neg), hn::Set(du, 0x0202020202020202ull)),
                            hn::Set(du, 0x1010101010101010ull));
  hn::StoreU(hn::Sub(hn::BitCast(d8, grid), hn::BitCast(d8, minus)), d8,
             reinterpret_cast<uint8_t*>(dst));
}
// Per lane g (0..31), PickedField's operands: pick[8g..8g+7] the bytes
// first .. first + count - 1 then 0x80 (zero), and shift[g].
struct GatherPicks {
  uint8_t pick[32 * 8];
  uint64_t shift[32];
};
struct LanePick {
  int first, count, shift;
};
template <class F>
constexpr GatherPicks MakeGatherPicks(F lane_pick) {
  GatherPicks t{};
  for (int g = 0; g < 32; ++g) {
    const LanePick p = lane_pick(g);
    for (int k = 0; k < 8; ++k) t.pick[8 * g + k] = k < p.count ? p.first + k : 0x80;
    t.shift[g] = p.shift;
  }
  return t;
}
// IQ1's qh bits of group g: IQ1_S word g/4 (bytes 2(g/4), 2(g/4)+1),
// shift 3(g%4); IQ1_M byte g/2, shift 4(g%2).
alignas(64) constexpr GatherPicks kIq1SGather =
    MakeGatherPicks([](int g) { return LanePick{2 * (g / 4), 2, 3 * (g % 4)}; });
alignas(64) constexpr GatherPicks kIq1MGather =
    MakeGatherPicks([](int g) { return LanePick{g / 2, 1, 4 * (g % 2)}; });

template <bool kIq1S>
HWY_INLINE void Iq1GatherBlock(const uint8_t* qs, const uint8_t* qh, int8_t* dst) {
  const auto qh16 = Dup16<16>(qh);
  const GatherPicks& t = kIq1S ? kIq1SGather : kIq1MGather;
  for (size_t g = 0; g < 32; g += hn::Lanes(IqGatherDU())) {
    Iq1GatherN<kIq1S>(qs + g, qh16, t.pick + 8 * g, t.shift + g, dst + 8 * g);
  }
}

// N groups' codes: grid entries (8 bytes per lane) with the bytes that
// kMasks[sign_idx] sets negated, Signed per lane.
template <const auto& kMasks>
HWY_INLINE void StoreSignedN(hn::Vec<IqGatherDU> grid, hn::Vec<IqGatherDU> sign_idx, int8_t* dst) {
  const IqGatherDU du;
  const hn::Repartition<uint8_t, decltype(du)> d8;
  const auto m = IqGatherGrid<kMasks>(sign_idx);
  const auto codes = hn::Add(hn::Xor(grid, m), hn::And(m, hn::Set(du, kOnes)));
  hn::StoreU(hn::BitCast(d8, codes), d8, reinterpret_cast<uint8_t*>(dst));
}
// IQ2: kGrid[idx] signed by kMasks[sign_idx], two gathers instead of 2N
// scalar loads.
template <const auto& kGrid, const auto& kMasks>
HWY_INLINE void SignedGatherN(hn::Vec<IqGatherDU> idx, hn::Vec<IqGatherDU> sign_idx, int8_t* dst) {
  StoreSignedN<kMasks>(IqGatherGrid<kGrid>(idx), sign_idx, dst);
}
// IQ3: a group's two 4-byte grid entries kGrid[idx[2g]], kGrid[idx[2g+1]]
// from one 2N-lane u32 gather.
template <const auto& kGrid, const auto& kMasks>
HWY_INLINE void SignedGather2N(hn::Vec<hn::Repartition<uint32_t, IqGatherDU>> idx,
                               hn::Vec<IqGatherDU> sign_idx, int8_t* dst) {
  StoreSignedN<kMasks>(hn::BitCast(IqGatherDU(), IqGatherGrid<kGrid>(idx)), sign_idx, dst);
}

// IQ2_XXS: 8 bytes per 4 groups (4 index bytes, then a u32 of four 7-bit
// ksigns at 7k); lane l of a step of N groups takes byte 8(l/4) + l%4 and
// the ksigns of word 8(l/4) + 4.
alignas(64) constexpr GatherPicks kIq2XxsIdxPicks =
    MakeGatherPicks([](int l) { return LanePick{8 * (l / 4) + l % 4, 1, 0}; });
alignas(64) constexpr GatherPicks kIq2XxsSignPicks =
    MakeGatherPicks([](int l) { return LanePick{8 * (l / 4) + 4, 4, 7 * (l % 4)}; });
HWY_INLINE void Iq2XxsGatherBlock(const uint8_t* qs, int8_t* dst) {
  constexpr size_t kN = hn::MaxLanes(IqGatherDU());
  for (size_t g = 0; g < 32; g += kN) {
    const auto src = Dup16<2 * kN>(qs + 2 * g);
    SignedGatherN<iq::kIq2XxsGrid, iq::kKSignMask>(
        PickedField(src, kIq2XxsIdxPicks.pick, kIq2XxsIdxPicks.shift, 0xFF),
        PickedField(src, kIq2XxsSignPicks.pick, kIq2XxsSignPicks.shift, 127), dst + 8 * g);
  }
}

// IQ2_XS: a u16 per group, 9 index bits and 7 ksigns bits.
HWY_INLINE void Iq2XsGatherBlock(const uint8_t* qs, int8_t* dst) {
  const IqGatherDU du;
  const hn::Rebind<uint32_t, decltype(du)> d32;
  const hn::Rebind<uint16_t, decltype(du)> d16;
  for (size_t g = 0; g < 32; g += hn::Lanes(du)) {
    const auto q = hn::PromoteTo(
        du, hn::PromoteTo(d32, hn::LoadU(d16, reinterpret_cast<const uint16_t*>(qs + 2 * g))));
    SignedGatherN<iq::kIq2XsGrid, iq::kKSignMask>(hn::And(q, hn::Set(du, 511u)),
                                                  hn::ShiftRight<9>(q), dst + 8 * g);
  }
}

// 2N index bytes at p, one per u32 lane.
HWY_INLINE hn::Vec<hn::Repartition<uint32_t, IqGatherDU>> PromotedBytes2N(const uint8_t* p) {
  const hn::Repartition<uint32_t, IqGatherDU> d32;
  return hn::PromoteTo(d32, hn::LoadU(hn::Rebind<uint8_t, decltype(d32)>(), p));
}

// IQ3_S: entry e (2 per group, e = 0..63) is byte kQs + e with bit e%8 of
// qh byte e/8 as bit 8; a sign byte per group.
struct Iq3SQhPicks {
  uint8_t pick[64 * 4];  // entry e's u32 lane: qh byte e / 8, then zeros
  uint32_t shift[16];    // 8 - e % 8: bit e % 8 to bit 8
};
constexpr Iq3SQhPicks MakeIq3SQhPicks() {
  Iq3SQhPicks t{};
  for (int e = 0; e < 64; ++e) {
    for (int k = 0; k < 4; ++k) t.pick[4 * e + k] = k == 0 ? e / 8 : 0x80;
  }
  for (int e = 0; e < 16; ++e) t.shift[e] = 8 - e % 8;
  return t;
}
alignas(64) constexpr Iq3SQhPicks kIq3SQhPicks = MakeIq3SQhPicks();
HWY_INLINE void Iq3SGatherBlock(const uint8_t* b, int8_t* dst) {
  using namespace iq::iq3s;
  const hn::Repartition<uint32_t, IqGatherDU> d32;
  const hn::Repartition<uint8_t, decltype(d32)> d8;
  const auto qh16 = Dup16<8>(b + kQh);
  const auto shift = hn::LoadU(d32, kIq3SQhPicks.shift);
  for (size_t g = 0; g < 32; g += hn::Lanes(IqGatherDU())) {
    const auto qh = hn::BitCast(
        d32, hn::TableLookupBytesOr0(qh16, hn::LoadU(d8, kIq3SQhPicks.pick + 8 * g)));
    const auto high = hn::And(hn::Shl(qh, shift), hn::Set(d32, 256u));
    SignedGather2N<iq::kIq3SGrid, iq::kSignMask>(hn::Or(PromotedBytes2N(b + kQs + 2 * g), high),
                                                 PromotedBytes(b + kSigns + g), dst + 8 * g);
  }
}
#endif

// Which IQ2/IQ3 types gather (docs/performance/gguf-iquants.md, "IQ2/IQ3 grid gathers",
// cache-resident ns, best of 3 interleaved, on an Intel host): IQ2_XXS,
// IQ2_XS and IQ3_S on AVX2 and AVX-512 (F32 1.08-1.81x, BF16/F16
// 1.10-1.47x, except AVX-512 BF16/F16 of IQ2_XXS, 0.93-1.09x, within
// noise). On a Zen 4 host gathers are slower than scalar lookups for
// several of these ("Gathers on Zen 4"); kept where the Intel gain is the
// larger. IQ3_XXS looks up scalars everywhere (AVX2 gathers: 1.01-1.17x on
// the Intel host, 0.68-0.72x on Zen 4); IQ2_S too (AVX2 F16 0.86x, AVX-512
// 0.95-1.06x).
template <uint32_t kType>
constexpr bool kIqGathers =
    HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 &&
    (kType == iq::kIq2XxsId || kType == iq::kIq2XsId || kType == iq::kIq3SId);

HWY_INLINE void DecodeIq2Xxs(const uint8_t* b, Decoded& out) {
  using namespace iq::iq2xxs;
  const float d = F16At(b + kD);
  for (int g = 0; g < 8; ++g) {
    const uint32_t aux0 = kq::LoadLe32(b + kQs + 8 * g);
    const uint32_t aux1 = kq::LoadLe32(b + kQs + 8 * g + 4);
    out.dl[2 * g] = out.dl[2 * g + 1] = d * (0.5f + static_cast<float>(aux1 >> 28)) * 0.25f;
    if constexpr (kIqGathers<iq::kIq2XxsId>) continue;
    for (int k = 0; k < 4; ++k) {
      PutGroup(Signed(iq::kIq2XxsGrid[(aux0 >> (8 * k)) & 0xff], KSigns(aux1 >> (7 * k))),
               out.q + 32 * g + 8 * k);
    }
  }
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kIqGathers<iq::kIq2XxsId>) Iq2XxsGatherBlock(b + kQs, out.q);
#endif
}

HWY_INLINE void DecodeIq2Xs(const uint8_t* b, Decoded& out) {
  using namespace iq::iq2xs;
  const float d = F16At(b + kD);
  for (int t = 0; t < 16; ++t) {
    const int s = (b[kScales + t / 2] >> (4 * (t % 2))) & 15;
    out.dl[t] = d * (0.5f + static_cast<float>(s)) * 0.25f;
  }
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kIqGathers<iq::kIq2XsId>) {
    Iq2XsGatherBlock(b + kQs, out.q);
    return;
  }
#endif
  for (int g = 0; g < 32; ++g) {
    const uint16_t q = kq::LoadLe16(b + kQs + 2 * g);
    PutGroup(Signed(iq::kIq2XsGrid[q & 511], KSigns(q >> 9)), out.q + 8 * g);
  }
}

HWY_INLINE void DecodeIq2S(const uint8_t* b, Decoded& out) {
  using namespace iq::iq2s;
  const float d = F16At(b + kD);
  for (int t = 0; t < 16; ++t) {
    const int s = (b[kScales + t / 2] >> (4 * (t % 2))) & 15;
    out.dl[t] = d * (0.5f + static_cast<float>(s)) * 0.25f;
  }
  for (int h = 0; h < 8; ++h) {  // one qh byte per 4 groups
    const unsigned qh = b[kQh + h];
    for (int k = 0; k < 4; ++k) {
      const int g = 4 * h + k;
      const unsigned idx = b[kQs + g] | ((qh >> (2 * k)) & 3u) << 8;
      PutGroup(Signed(iq::kIq2SGrid[idx], Signs(b[kSigns + g])), out.q + 8 * g);
    }
  }
}

HWY_INLINE void DecodeIq3Xxs(const uint8_t* b, Decoded& out) {
  using namespace iq::iq3xxs;
  const float d = F16At(b + kD);
  for (int g = 0; g < 8; ++g) {
    const uint32_t aux = kq::LoadLe32(b + kSignsScales + 4 * g);
    out.dl[2 * g] = out.dl[2 * g + 1] = d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f;
    for (int k = 0; k < 4; ++k) {
      const uint8_t* qs = b + kQs + 8 * g + 2 * k;
      PutGroup(Signed(Pair(iq::kIq3XxsGrid[qs[0]], iq::kIq3XxsGrid[qs[1]]),
                      KSigns(aux >> (7 * k))),
               out.q + 32 * g + 8 * k);
    }
  }
}

HWY_INLINE void DecodeIq3S(const uint8_t* b, Decoded& out) {
  using namespace iq::iq3s;
  const float d = F16At(b + kD);
  for (int t = 0; t < 16; ++t) {
    const int s = (b[kScales + t / 4] >> (4 * ((t / 2) % 2))) & 15;
    out.dl[t] = d * static_cast<float>(1 + 2 * s);
  }
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kIqGathers<iq::kIq3SId>) {
    Iq3SGatherBlock(b, out.q);
    return;
  }
#endif
  for (int h = 0; h < 8; ++h) {  // one qh byte per 4 groups
    const unsigned qh = b[kQh + h];
    for (int k = 0; k < 4; ++k) {
      const int g = 4 * h + k;
      const unsigned lo = b[kQs + 2 * g] | ((qh >> (2 * k)) & 1u) << 8;
      const unsigned hi = b[kQs + 2 * g + 1] | ((qh >> (2 * k + 1)) & 1u) << 8;
      PutGroup(Signed(Pair(iq::kIq3SGrid[lo], iq::kIq3SGrid[hi]), Signs(b[kSigns + g])),
               out.q + 8 * g);
    }
  }
}

// IQ1 factors dl[t] = (d · (2s_t + 1)) · delta, t < kN, for the 3-bit
// s_t = (u16 word w_t of bytes 16 · 2w_t.. of `bytes` >> shift_t) & 7: the
// words come out of 16 block bytes by one in-block byte shuffle, the shifts
// are per lane, then the reference's two multiplies in its order, all on
// vectors (scalar int-to-float conversions per factor cost as much as a
// block's codes). kIdx: per t, the word's two byte indices then two zeroing
// (0x80) indices; kShift: shift_t.
template <size_t kN>
HWY_INLINE void Iq1Factors(float d, const uint8_t* bytes16, const uint8_t* idx,
                           const uint32_t* shift, float* dl) {
  const hn::CappedTag<uint32_t, kN> du;
  const hn::RebindToSigned<decltype(du)> di;
  const hn::RebindToFloat<decltype(du)> df;
  const hn::Repartition<uint8_t, decltype(du)> d8;
  HWY_ALIGN uint8_t copy[16];
  std::memcpy(copy, bytes16, sizeof(copy));  // LoadDup128 wants aligned bytes
  const auto src = hn::LoadDup128(d8, copy);
  for (size_t t = 0; t < kN; t += hn::Lanes(du)) {
    const auto word = hn::BitCast(du, hn::TableLookupBytesOr0(src, hn::LoadU(d8, idx + 4 * t)));
    const auto s3 = hn::And(hn::Shr(word, hn::LoadU(du, shift + t)), hn::Set(du, 7u));
    const auto odd = hn::Add(hn::ShiftLeft<1>(hn::BitCast(di, s3)), hn::Set(di, 1));
    const auto dls = hn::Mul(hn::Set(df, d), hn::ConvertTo(df, odd));
    hn::StoreU(hn::Mul(dls, hn::Set(df, iq::kIq1Delta)), df, dl + t);
  }
}

// IQ1_S: s for sub-block j is bits 12..14 of qh word j (bytes kQh + 2j,
// the last 16 bytes of the block); one factor per 32 elements.
HWY_ALIGN constexpr uint8_t kIq1SIdx[32] = {
    0, 1, 0x80, 0x80, 2, 3, 0x80, 0x80, 4,  5,  0x80, 0x80, 6,  7,  0x80, 0x80,
    8, 9, 0x80, 0x80, 10, 11, 0x80, 0x80, 12, 13, 0x80, 0x80, 14, 15, 0x80, 0x80};
HWY_ALIGN constexpr uint32_t kIq1SShift[8] = {12, 12, 12, 12, 12, 12, 12, 12};
// IQ1_M: s_t is bits 3(t%4).. of scale word t/4 (bytes kScales + 2(t/4), the
// last 8 bytes of the block: bytes 8.. of the 16 ending there).
HWY_ALIGN constexpr uint8_t kIq1MIdx[64] = {
    8,  9,  0x80, 0x80, 8,  9,  0x80, 0x80, 8,  9,  0x80, 0x80, 8,  9,  0x80, 0x80,
    10, 11, 0x80, 0x80, 10, 11, 0x80, 0x80, 10, 11, 0x80, 0x80, 10, 11, 0x80, 0x80,
    12, 13, 0x80, 0x80, 12, 13, 0x80, 0x80, 12, 13, 0x80, 0x80, 12, 13, 0x80, 0x80,
    14, 15, 0x80, 0x80, 14, 15, 0x80, 0x80, 14, 15, 0x80, 0x80, 14, 15, 0x80, 0x80};
HWY_ALIGN constexpr uint32_t kIq1MShift[16] = {0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9, 0, 3, 6, 9};

// Which IQ1 types gather: both on AVX-512; on AVX2 only IQ1_M, as IQ1_S's
// four-lane gather was about 5 % slower than its scalar lookups (F32/F16)
// while IQ1_M's was 14-18 % faster (medians, docs/performance/gguf-iquants.md).
template <bool kIq1S>
constexpr bool kIq1Gathers = HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2 &&
                             !(kIq1S && HWY_TARGET == HWY_AVX2);
// The bias left on the codes for pass 2: 0 after the gather path, 16 after
// PutGroup (8g ± 1 + 16).
template <bool kIq1S>
constexpr int kIq1Bias = kIq1Gathers<kIq1S> ? 0 : 16;

HWY_INLINE void DecodeIq1S(const uint8_t* b, Decoded& out) {
  using namespace iq::iq1s;
  const float d = F16At(b + kD);
  static_assert(kQh + 16 == kBytes);
  Iq1Factors<8>(d, b + kQh, kIq1SIdx, kIq1SShift, out.dl);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kIq1Gathers<true>) {
    Iq1GatherBlock<true>(b + kQs, b + kQh, out.q);
    return;
  }
#endif
  for (int sub = 0; sub < 8; ++sub) {
    const uint16_t qh = kq::LoadLe16(b + kQh + 2 * sub);
    for (int k = 0; k < 4; ++k) {
      const unsigned idx = b[kQs + 4 * sub + k] | ((qh >> (3 * k)) & 7u) << 8;
      PutGroup(Iq1Codes(idx, (qh & 0x8000) != 0), out.q + 32 * sub + 8 * k);
    }
  }
}

HWY_INLINE void DecodeIq1M(const uint8_t* b, Decoded& out) {
  using namespace iq::iq1m;
  const uint32_t d_bits = ggml::F16ScaleBits(iq::Iq1MScaleBits(b));
  float d;
  std::memcpy(&d, &d_bits, sizeof(d));
  static_assert(kScales + 8 == kBytes);
  Iq1Factors<16>(d, b + kBytes - 16, kIq1MIdx, kIq1MShift, out.dl);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  if constexpr (kIq1Gathers<false>) {
    Iq1GatherBlock<false>(b + kQs, b + kQh, out.q);
    return;
  }
#endif
  for (int h = 0; h < 16; ++h) {  // one qh byte per 2 groups: index bits, delta sign
    const unsigned qh = b[kQh + h];
    PutGroup(Iq1Codes(b[kQs + 2 * h] | (qh & 7u) << 8, (qh & 8u) != 0),
             out.q + 16 * h);
    PutGroup(Iq1Codes(b[kQs + 2 * h + 1] | (qh & 0x70u) << 4, (qh & 0x80u) != 0),
             out.q + 16 * h + 8);
  }
}

template <uint32_t kType>
HWY_INLINE void DecodeBlock(const uint8_t* b, Decoded& dec) {
  if constexpr (kType == iq::kIq2XxsId) DecodeIq2Xxs(b, dec);
  if constexpr (kType == iq::kIq2XsId) DecodeIq2Xs(b, dec);
  if constexpr (kType == iq::kIq2SId) DecodeIq2S(b, dec);
  if constexpr (kType == iq::kIq3XxsId) DecodeIq3Xxs(b, dec);
  if constexpr (kType == iq::kIq3SId) DecodeIq3S(b, dec);
  if constexpr (kType == iq::kIq1SId) DecodeIq1S(b, dec);
  if constexpr (kType == iq::kIq1MId) DecodeIq1M(b, dec);
}

// Whether dec.dl[0, kN) are all finite (exponent field not all ones).
template <size_t kN>
HWY_INLINE bool FactorsFinite(const Decoded& dec) {
  bool finite = true;
  for (size_t t = 0; t < kN; ++t) {
    finite &= (std::bit_cast<uint32_t>(dec.dl[t]) & 0x7F800000u) != 0x7F800000u;
  }
  return finite;
}

// 16-bit outputs of IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS and IQ3_S through byte
// tables (kernels/int4_byte_table-inl.h), as the K-quants' KQuantByteTableBlock:
// their signed codes ±g take few values (IQ2: ±{8, 25, 43}; IQ3_XXS:
// ±{4, 12, …, 52, 62}; IQ3_S: ±{1, 3, …, 15}), and (q >> kShift) & kMask of
// the code byte tells them apart (IqTableCodes checks it on every value). So
// a factor slot's outputs are entries of a 16-entry table of
// Encode(float(code) · dl), the arithmetic and encoder of Store16 (same
// bits, NaNs included), and its elements byte lookups of that table. IQ3:
// one factor per 32 elements, 16 codes, a table per 32; IQ2 (6 codes, 3-bit
// indices): two slots per table (IQ2_XS/IQ2_S: a 32-element group's halves,
// IQ2_XXS: two groups); blocks with finite factors compute half of each
// table and mirror the rest (IqMirroredTables). Pass 1 (the int8 codes in
// Decoded::q) is unchanged.
// Taken where it was faster than Store16 (docs/performance/gguf-iquants.md, "IQ2/IQ3
// 16-bit outputs through byte tables", cache-resident ns, best of 3
// interleaved, with IqMirroredTables): SSSE3/SSE4 for all five types (BF16
// 1.4–2.0×, F16 with software rounding 2.1–3.3×); AVX2 BF16 of IQ2_XXS,
// IQ2_XS, IQ3_XXS, IQ3_S (1.07–1.20×); AVX-512 BF16 of IQ2_XXS and IQ3_XXS
// (1.15–1.31×, one AVX3_DL run of IQ3_XXS 1.00×) and F16 of IQ2_XXS
// (1.03–1.16×). The others keep Store16: AVX2 BF16 of IQ2_S (1.00×), AVX2
// F16 (F16C rounds cheaply: 0.80–0.97×), AVX-512 BF16 of IQ2_XS, IQ2_S,
// IQ3_S (0.71–0.95×) and F16 of the other four (0.59–1.04×).
template <uint32_t kType, typename TOut, bool kBf16>
constexpr bool IQuantUsesByteTables() {
  constexpr bool kSse = kByteTables128;
  constexpr bool kAvx2 = HWY_TARGET == HWY_AVX2;
  constexpr bool kAvx3 = HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3;
  if constexpr (sizeof(TOut) != 2) return false;
  switch (kType) {
    case iq::kIq2XxsId: return kSse || kAvx3 || (kAvx2 && kBf16);
    case iq::kIq3XxsId: return kSse || ((kAvx2 || kAvx3) && kBf16);
    case iq::kIq2XsId:
    case iq::kIq3SId: return kSse || (kAvx2 && kBf16);
    case iq::kIq2SId: return kSse;
    default: return false;
  }
}

#if AMN_BYTE_TABLES
// IQ2's 6 codes take a 3-bit index, so one table holds two factor slots'
// results, the second's at entries 8..15: IQ2_XS/IQ2_S the two 16-element
// halves of a 32-element group (a factor each), IQ2_XXS two 32-element
// groups (a factor per 32): 4 tables per block instead of 8.
template <uint32_t kType>
constexpr bool kIqTwoSlots = kType == iq::kIq2XxsId || kType == iq::kIq2XsId ||
                             kType == iq::kIq2SId;
// 32-element groups per table.
template <uint32_t kType>
constexpr size_t kIqGroupsPerTable = kType == iq::kIq2XxsId ? 2 : 1;
// Table index of a code byte q: (q >> kShift) & kMask (+ 8 in a table's
// second slot).
template <uint32_t kType>
constexpr int kIqTableShift = kType == iq::kIq3XxsId ? 3 : kType == iq::kIq3SId ? 1 : 4;
template <uint32_t kType>
constexpr uint8_t kIqTableMask = kIqTwoSlots<kType> ? 7 : 15;

// The signed code at each table index (both slots for two-slot types), and
// whether the indices of the codes ±level are distinct.
struct IqTableCodes {
  int8_t code[16];
  bool distinct;
};
template <size_t kLevels>
constexpr IqTableCodes MakeIqTableCodes(const iq::GridCode<kLevels>& grid, int shift,
                                        unsigned mask) {
  IqTableCodes t{{}, true};
  bool used[16] = {};
  for (size_t l = 0; l < kLevels; ++l) {
    for (int sign : {1, -1}) {
      const int code = sign * grid.levels[l];
      const unsigned index = (static_cast<uint8_t>(code) >> shift) & mask;
      t.distinct &= !used[index];
      used[index] = true;
      t.code[index] = static_cast<int8_t>(code);
      if (mask == 7) t.code[index + 8] = static_cast<int8_t>(code);
    }
  }
  return t;
}
template <uint32_t kType>
constexpr IqTableCodes MakeIqTableCodesOf() {
  const int shift = kIqTableShift<kType>;
  const unsigned mask = kIqTableMask<kType>;
  if constexpr (kType == iq::kIq3XxsId) {
    return MakeIqTableCodes(iq::kIq3XxsCode, shift, mask);
  } else if constexpr (kType == iq::kIq3SId) {
    return MakeIqTableCodes(iq::kIq3SCode, shift, mask);
  } else {
    return MakeIqTableCodes(iq::kIq2Code, shift, mask);
  }
}
template <uint32_t kType>
alignas(16) constexpr IqTableCodes kIqTableCodes = MakeIqTableCodesOf<kType>();
static_assert(kIqTableCodes<iq::kIq2XxsId>.distinct && kIqTableCodes<iq::kIq2XsId>.distinct &&
              kIqTableCodes<iq::kIq2SId>.distinct && kIqTableCodes<iq::kIq3XxsId>.distinct &&
              kIqTableCodes<iq::kIq3SId>.distinct);

// Table indices of 16 code bytes (the same 16 in every 128-bit block), in
// the table's second slot or not. The shift is on u16 lanes: the
// neighbour's bits land at 8 - kShift and up, above kMask.
template <uint32_t kType>
HWY_INLINE hn::Vec<Int4Lookup32Tag> IqTableIndices(const int8_t* q, bool second) {
  const Int4Lookup32Tag d8;
  const hn::Repartition<uint16_t, Int4Lookup32Tag> d16;
  const auto v = hn::BitCast(d16, hn::LoadDup128(d8, reinterpret_cast<const uint8_t*>(q)));
  const auto index = hn::And(hn::BitCast(d8, hn::ShiftRight<kIqTableShift<kType>>(v)),
                             hn::Set(d8, kIqTableMask<kType>));
  return second ? hn::Or(index, hn::Set(d8, uint8_t{8})) : index;
}

// The tables of a block with finite factors from the 8 entries of
// positive codes: the code at index c ^ kIqMirror is minus that
// at c (IQ2: 8 ↔ -8 at 0 ↔ 7, per slot; IQ3: 0 ↔ 15), and with a finite
// factor (-g) · dl is -(g · dl) exactly, whose BF16/F16 is the same bits
// with bit 15 set (NaN-free rounding acts on the magnitude). Computed:
// indices 0..3 and kIqSecondBase..+3 (IQ2: 3 and 11 unused), half the
// entries' converts, multiplies and roundings (SSSE3/SSE4: two 4-lane
// vectors instead of four; AVX2/AVX-512: one 8-lane vector instead of two
// or one 16-lane, and a lane permute instead of two).
template <uint32_t kType>
constexpr int kIqMirror = kIqTwoSlots<kType> ? 7 : 15;
template <uint32_t kType>
constexpr int kIqSecondBase = kIqTwoSlots<kType> ? 8 : 4;
// Per table index: the byte of the 8 computed entries it copies (low bytes
// at 0..7, high bytes at 8..15), and 0x80 where it is a mirror; exact:
// every used index (nonzero code) is computed or minus a computed one.
struct IqMirrorBytes {
  uint8_t low[16];
  uint8_t high[16];
  uint8_t sign[16];
  bool exact;
};
template <uint32_t kType>
constexpr IqMirrorBytes MakeIqMirrorBytes() {
  IqMirrorBytes m{{}, {}, {}, true};
  const int8_t* code = kIqTableCodes<kType>.code;
  const auto computed = [](int c) {
    return c < 4 ? c : (c >= kIqSecondBase<kType> && c < kIqSecondBase<kType> + 4)
                           ? c - kIqSecondBase<kType> + 4 : -1;
  };
  for (int c = 0; c < 16; ++c) {
    const int at = computed(c);
    const int from = at >= 0 ? at : computed(c ^ kIqMirror<kType>);
    m.low[c] = static_cast<uint8_t>(from < 0 ? 0 : from);
    m.high[c] = static_cast<uint8_t>(m.low[c] + 8);
    m.sign[c] = at >= 0 ? 0 : 0x80;
    m.exact &= code[c] == 0 || at >= 0 || (from >= 0 && code[c] == -code[c ^ kIqMirror<kType>]);
  }
  return m;
}
template <uint32_t kType>
alignas(16) constexpr IqMirrorBytes kIqMirrorBytes = MakeIqMirrorBytes<kType>();
static_assert(kIqMirrorBytes<iq::kIq2XxsId>.exact && kIqMirrorBytes<iq::kIq2XsId>.exact &&
              kIqMirrorBytes<iq::kIq2SId>.exact && kIqMirrorBytes<iq::kIq3XxsId>.exact &&
              kIqMirrorBytes<iq::kIq3SId>.exact);

template <bool kUpperHalf, class Entries>
HWY_INLINE Int4ByteTables<Int4Lookup32Tag> IqMirroredTables(const IqMirrorBytes& m,
                                                            int32_t second_base,
                                                            const Entries& entries) {
  const Int4Lookup32Tag d8;
  const hn::Repartition<uint32_t, Int4Lookup32Tag> du;
  const hn::RebindToSigned<decltype(du)> di;
  const auto split = EntryByteSplit<kUpperHalf>(d8);
  const auto gather = [&](hn::Vec<decltype(du)> v) {
    return hn::BitCast(du, hn::TableLookupBytes(hn::BitCast(d8, v), split));
  };
  // u32 lanes (in every 128-bit block): low bytes of entries 0..3, of
  // second_base..+3, then their high bytes.
  hn::Vec<Int4Lookup32Tag> computed;
  if constexpr (hn::MaxLanes(du) == 4) {
    computed = hn::BitCast(d8, hn::InterleaveLower(du, gather(entries(du, hn::Iota(di, 0))),
                                                   gather(entries(du, hn::Iota(di, second_base)))));
  } else {  // 8 lanes: one entries vector, blocks 0 and 1, then a lane permute
    const auto lane = hn::Iota(di, 0);  // codes 0..3, second_base..+3
    const auto codes = hn::Add(lane, hn::IfThenElseZero(hn::Gt(lane, hn::Set(di, 3)),
                                                        hn::Set(di, second_base - 4)));
    alignas(32) static constexpr int32_t kPairs[8] = {0, 4, 1, 5, 0, 4, 1, 5};
    computed = hn::BitCast(d8, hn::TableLookupLanes(gather(entries(du, codes)),
                                                    hn::SetTableIndices(du, kPairs)));
  }
  const auto dup = [&](const uint8_t* bytes16) { return hn::LoadDup128(d8, bytes16); };
  return {hn::TableLookupBytes(computed, dup(m.low)),
          hn::Xor(hn::TableLookupBytes(computed, dup(m.high)), dup(m.sign))};
}

// One decoded block through the byte tables (kMirror: finite factors, half
// the entries computed).
template <uint32_t kType, class Encode, bool kMirror>
HWY_INLINE void IqByteTableBlock(const Decoded& dec, uint16_t* HWY_RESTRICT y) {
  const hn::ScalableTag<uint8_t> d8;
  constexpr size_t kGroups = kIqGroupsPerTable<kType>;
  for (size_t first = 0; first < 8; first += kGroups) {
    // The table's slot factors: a 32-element group's (IQ3: one factor per
    // 32), its two halves' (IQ2_XS/IQ2_S) or two groups' (IQ2_XXS).
    const float slots[2] = {dec.dl[2 * first], dec.dl[2 * first + (kGroups == 2 ? 2 : 1)]};
    const auto entries = [&](auto du, auto c) {
      const hn::RebindToFloat<decltype(du)> df;
      const auto q = Codebook16(du, hn::BitCast(du, c), kIqTableCodes<kType>.code);
      const auto dl = kqv::SlotFactors<kIqTwoSlots<kType> ? 3 : 4>(df, c, slots, 0);
      return Encode()(du, hn::BitCast(du, kqv::ScaledCodes<false, false>(df, q, dl, dl, 0)));
    };
    const auto tables = [&] {
      if constexpr (kMirror) {
        return IqMirroredTables<Encode::kUpperHalf>(kIqMirrorBytes<kType>, kIqSecondBase<kType>,
                                                    entries);
      } else {
        return Int4Tables32(MakeInt4ByteTables<Encode::kUpperHalf>(d8, entries));
      }
    }();
    // Whether half h of group g is in the table's second slot.
    const auto second = [first](size_t g, size_t h) {
      return kGroups == 2 ? g != first : kIqTwoSlots<kType> && h == 1;
    };
    for (size_t g = first; g < first + kGroups; ++g) {
      StoreInt4ByteLookups32(tables, IqTableIndices<kType>(dec.q + 32 * g, second(g, 0)),
                             IqTableIndices<kType>(dec.q + 32 * g + 16, second(g, 1)),
                             y + 32 * g);
    }
  }
}
#endif

// n_blocks super-blocks of kType; TOut float (F32) or uint16_t (kBf16 picks
// BF16 over F16).
template <uint32_t kType, typename TOut, bool kBf16>
HWY_INLINE void BlocksOut(const uint8_t* HWY_RESTRICT blocks, size_t n_blocks,
                          TOut* HWY_RESTRICT out) {
  // d is the only possible NaN operand, so no NaN fix-up (kSpecial) is needed
  // (a NaN result is d's NaN, kept by the multiply).
  // IQ1_S has one factor per 32 elements, the others one per 16.
  constexpr bool kIq1 = kType == iq::kIq1SId || kType == iq::kIq1MId;
  constexpr bool kIq1S = kType == iq::kIq1SId;
  using Value = kqv::Scaled<false, false, kIq1 ? kIq1Bias<kIq1S> : 0, kIq1S ? 5 : 4>;
  const size_t bytes = ref::IQuantBlockBytes(kType);
  Decoded dec;
  dec.codes = dec.q;
  for (size_t i = 0; i < n_blocks; ++i) {
    DecodeBlock<kType>(blocks + i * bytes, dec);
#if AMN_BYTE_TABLES
    if constexpr (IQuantUsesByteTables<kType, TOut, kBf16>()) {
      // As below: finite factors give no NaN, for F16 too.
      if (HWY_LIKELY(FactorsFinite<16>(dec))) {
        IqByteTableBlock<kType, kqv::Encoder16<kBf16, false>, true>(dec, out + i * iq::kQK);
      } else {
        IqByteTableBlock<kType, kqv::Encoder16<kBf16, true>, false>(dec, out + i * iq::kQK);
      }
      continue;
    }
#endif
    // BF16 may skip the NaN rule when every factor the block uses is
    // finite: each result is then float(code - bias) * dl[g], finite times
    // finite, which is never NaN (that needs Inf * 0 or a NaN operand). The
    // test is on the factors actually multiplied, so it holds for every bit
    // pattern whatever the layout of d (a non-finite d gives non-finite
    // factors: (2s + 1) and (0.5 + s) are nonzero).
    // F32 of IQ1_S/IQ1_M takes the unrolled store (kqv::KQuantUnrollsF32
    // says where and why).
    if (sizeof(TOut) == 2 && kBf16 && HWY_LIKELY(FactorsFinite<kIq1S ? 8 : 16>(dec))) {
      kqv::StoreBlock<Value, TOut, kBf16, false>(dec, 0, out + i * iq::kQK);
    } else {
      constexpr bool kUnrolledF32 = kIq1 && kqv::kUnrollsF32Here;
      kqv::StoreBlock<Value, TOut, kBf16, true, kUnrolledF32>(dec, 0, out + i * iq::kQK);
    }
  }
}

template <typename TOut, bool kBf16>
HWY_INLINE bool TypeOut(uint32_t type, const uint8_t* blocks, size_t n_blocks, TOut* out) {
  switch (type) {
    case iq::kIq2XxsId: BlocksOut<iq::kIq2XxsId, TOut, kBf16>(blocks, n_blocks, out); return true;
    case iq::kIq2XsId: BlocksOut<iq::kIq2XsId, TOut, kBf16>(blocks, n_blocks, out); return true;
    case iq::kIq2SId: BlocksOut<iq::kIq2SId, TOut, kBf16>(blocks, n_blocks, out); return true;
    case iq::kIq3XxsId: BlocksOut<iq::kIq3XxsId, TOut, kBf16>(blocks, n_blocks, out); return true;
    case iq::kIq3SId: BlocksOut<iq::kIq3SId, TOut, kBf16>(blocks, n_blocks, out); return true;
    case iq::kIq1SId: BlocksOut<iq::kIq1SId, TOut, kBf16>(blocks, n_blocks, out); return true;
    case iq::kIq1MId: BlocksOut<iq::kIq1MId, TOut, kBf16>(blocks, n_blocks, out); return true;
    default: return false;
  }
}

}  // namespace iqv

#endif  // HWY_TARGET != HWY_SCALAR

// Row kernels: n_blocks super-blocks of GGUF type `type` to n_blocks * 256
// outputs (any alignment, no overlap). False, nothing written, for a type
// outside the family.
HWY_INLINE bool DequantIQuantToF32Kernel(uint32_t type, const uint8_t* blocks, size_t n_blocks,
                                         float* out) {
#if HWY_TARGET == HWY_SCALAR
  return ref::DequantIQuantToF32(type, blocks, n_blocks, out);
#else
  return iqv::TypeOut<float, false>(type, blocks, n_blocks, out);
#endif
}
HWY_INLINE bool DequantIQuantToBf16Kernel(uint32_t type, const uint8_t* blocks, size_t n_blocks,
                                          uint16_t* out) {
#if HWY_TARGET == HWY_SCALAR
  return ref::DequantIQuantToBf16(type, blocks, n_blocks, out);
#else
  return iqv::TypeOut<uint16_t, true>(type, blocks, n_blocks, out);
#endif
}
HWY_INLINE bool DequantIQuantToF16Kernel(uint32_t type, const uint8_t* blocks, size_t n_blocks,
                                         uint16_t* out) {
#if HWY_TARGET == HWY_SCALAR
  return ref::DequantIQuantToF16(type, blocks, n_blocks, out);
#else
  return iqv::TypeOut<uint16_t, false>(type, blocks, n_blocks, out);
#endif
}

// The GgmlIQuant family (kernels/kernel_args.h): blocks [begin, end) of a
// 256-element lattice I-quant (IQ1_* IQ2_* IQ3_*); other types are ignored.
HWY_INLINE void DecodeGgmlIQuant(const kernels::GgmlArgs& a, size_t begin, size_t end,
                                 ElemType out_type, void* out) {
  const uint8_t* blocks = a.blocks + begin * ref::IQuantBlockBytes(a.type);
  const size_t n = end - begin;
  switch (out_type) {
    case ElemType::kF32: DequantIQuantToF32Kernel(a.type, blocks, n, static_cast<float*>(out)); break;
    case ElemType::kBf16: DequantIQuantToBf16Kernel(a.type, blocks, n, static_cast<uint16_t*>(out)); break;
    case ElemType::kF16: DequantIQuantToF16Kernel(a.type, blocks, n, static_cast<uint16_t*>(out)); break;
    default: break;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace amn
HWY_AFTER_NAMESPACE();

#endif  // AMN_KERNELS_GGML_IQUANT_INL_H_
