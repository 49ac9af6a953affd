// Shared checking code for the per-target kernel tests.
#include "tests/kernel_check.h"

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <sstream>

namespace amn::test {
namespace {

constexpr uint8_t kUnwritten = 0x5A;

std::string Hex(const uint8_t* bytes, size_t n) {
  std::ostringstream out;
  out << "0x" << std::hex << std::setfill('0');
  for (size_t i = n; i-- > 0;) out << std::setw(2) << static_cast<int>(bytes[i]);
  return out.str();
}

}  // namespace

PlacedBuffer::PlacedBuffer(size_t payload_bytes, size_t offset_bytes, uint8_t fill)
    : storage_(payload_bytes + offset_bytes + kCanaryBytes + 2 * kAlign, fill),
      payload_bytes_(payload_bytes) {
  const auto base = reinterpret_cast<uintptr_t>(storage_.data());
  data_ = storage_.data() + (kAlign - base % kAlign) % kAlign + offset_bytes;
  std::memset(data_ + payload_bytes, kCanary, kCanaryBytes);
}

bool PlacedBuffer::CanaryIntact() const {
  for (size_t i = 0; i < kCanaryBytes; ++i) {
    if (data_[payload_bytes_ + i] != kCanary) return false;
  }
  return true;
}

std::vector<uint8_t> PseudoRandomBytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> bytes(n);
  uint32_t x = seed | 1;
  for (uint8_t& byte : bytes) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    byte = static_cast<uint8_t>(x >> 11);
  }
  return bytes;
}

const KernelInfo& KernelNamed(std::string_view name) {
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.name == name) return kernel;
  }
  ADD_FAILURE() << "no kernel named " << name;
  return Kernels().front();
}

testing::AssertionResult MatchesReference(const KernelInfo& kernel,
                                          const std::vector<uint8_t>& input,
                                          size_t in_offset_elems, size_t out_offset_elems) {
  // in_size: bytes of one input unit (an element, or a block of block_elems).
  const size_t in_size = KernelInBytes(kernel, kernel.block_elems);
  // out_size: bytes of one output unit (an element, or an encoder's unit).
  const bool per_unit = kernel.out_unit_bytes != 0;
  const size_t out_size = per_unit ? kernel.out_unit_bytes : ElemTypeBytes(kernel.out);
  if (input.size() % in_size != 0) {
    return testing::AssertionFailure() << "input is not a whole number of elements";
  }
  const size_t n = input.size() / in_size * kernel.block_elems;
  const size_t out_units = per_unit ? n / kernel.block_elems : n;

  std::vector<uint8_t> expected(KernelOutBytes(kernel, n));
  kernel.run_reference(input.data(), n, expected.data());

  PlacedBuffer in(input.size(), in_offset_elems * in_size, 0);
  if (!input.empty()) std::memcpy(in.data(), input.data(), input.size());
  PlacedBuffer out(KernelOutBytes(kernel, n), out_offset_elems * out_size, kUnwritten);
  kernel.run(in.data(), n, out.data());

  if (!out.CanaryIntact()) {
    return testing::AssertionFailure() << kernel.name << " wrote past its " << n << " outputs";
  }
  // memcmp with a null pointer is undefined even for zero bytes, and an empty
  // std::vector's data() may be null.
  if (!input.empty() && std::memcmp(in.data(), input.data(), input.size()) != 0) {
    return testing::AssertionFailure() << kernel.name << " modified its input";
  }
  for (size_t i = 0; i < out_units; ++i) {
    const uint8_t* got = out.data() + i * out_size;
    const uint8_t* want = expected.data() + i * out_size;
    if (std::memcmp(got, want, out_size) != 0) {
      const size_t unit_in = per_unit ? i : i / kernel.block_elems;
      return testing::AssertionFailure()
             << kernel.name << " output unit " << i << " of " << out_units << ": input "
             << Hex(input.data() + unit_in * in_size, std::min<size_t>(in_size, 64)) << " gave "
             << Hex(got, std::min<size_t>(out_size, 64))
             << ", reference " << Hex(want, std::min<size_t>(out_size, 64));
    }
  }
  return testing::AssertionSuccess();
}

std::vector<uint8_t> AllU16Bytes() {
  std::vector<uint16_t> values(65536);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint16_t>(i);
  return AsBytes(values);
}

std::vector<uint32_t> F32EdgeBits() {
  // Low mantissa bits around the BF16 (bit 16) and F16 (bit 13) rounding
  // points: exactly half, just below, just above, with even and odd kept LSB.
  const uint32_t kMantissas[] = {
      0x000000, 0x000001, 0x000FFF, 0x001000, 0x001001, 0x001FFF, 0x002000, 0x003000,
      0x007FFF, 0x008000, 0x008001, 0x00FFFF, 0x010000, 0x017FFF, 0x018000, 0x018001,
      0x3FFFFF, 0x400000, 0x400001, 0x7F7FFF, 0x7F8000, 0x7FBFFF, 0x7FC000, 0x7FE000,
      0x7FEFFF, 0x7FF000, 0x7FF001, 0x7FFFFF, 0x200000, 0x0007FF, 0x555555, 0x2AAAAA};
  std::vector<uint32_t> bits;
  for (uint32_t sign = 0; sign < 2; ++sign) {
    for (uint32_t exp = 0; exp < 256; ++exp) {
      for (uint32_t mant : kMantissas) bits.push_back(sign << 31 | exp << 23 | mant);
    }
  }
  return bits;
}

testing::AssertionResult SameBytes(const std::vector<uint8_t>& got,
                                   const std::vector<uint8_t>& want, size_t elem_bytes,
                                   const std::string& what) {
  if (got.size() != want.size()) {
    return testing::AssertionFailure() << what << ": " << got.size() << " bytes, want " << want.size();
  }
  for (size_t i = 0; i < got.size(); i += elem_bytes) {
    if (std::memcmp(got.data() + i, want.data() + i, elem_bytes) != 0) {
      uint32_t g = 0, w = 0;
      std::memcpy(&g, got.data() + i, elem_bytes);
      std::memcpy(&w, want.data() + i, elem_bytes);
      return testing::AssertionFailure() << what << ": element " << i / elem_bytes << " gave 0x"
                                         << std::hex << g << ", want 0x" << w;
    }
  }
  return testing::AssertionSuccess();
}

}  // namespace amn::test
