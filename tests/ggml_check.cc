#include "tests/ggml_check.h"

#include <algorithm>
#include <cstring>
#include <iomanip>
#include <sstream>

#include "kernels/ref/ggml_iquant_ref.h"
#include "kernels/ref/ggml_kquant_ref.h"
#include "kernels/ref/ggml_legacy_ref.h"
#include "tests/fixtures.h"
#include "tests/kernel_check.h"

namespace amn::test {
namespace {

size_t OutBytes(ElemType t) { return t == ElemType::kF32 ? 4 : 2; }

}  // namespace

size_t GgmlBlockBytes(GgmlType type) {
  return FindGgmlType(static_cast<uint32_t>(type))->block_bytes;
}

std::string GgmlName(GgmlType type) {
  return std::string(FindGgmlType(static_cast<uint32_t>(type))->name);
}

std::vector<uint8_t> GgmlReference(GgmlType type, const std::vector<uint8_t>& blocks,
                                   ElemType out) {
  const GgmlTypeInfo* info = FindGgmlType(static_cast<uint32_t>(type));
  const size_t n_blocks = blocks.size() / info->block_bytes;
  std::vector<uint8_t> bytes(n_blocks * info->block_elems * OutBytes(out));
  const auto id = static_cast<uint32_t>(type);
  auto* f32 = reinterpret_cast<float*>(bytes.data());
  auto* u16 = reinterpret_cast<uint16_t*>(bytes.data());
  const bool done =
      ref::DequantGgmlLegacy(type, blocks.data(), n_blocks, out, bytes.data()) ||
      (out == ElemType::kF32 ? ref::DequantKQuantToF32(id, blocks.data(), n_blocks, f32) ||
                                   ref::DequantIQuantToF32(id, blocks.data(), n_blocks, f32)
       : out == ElemType::kBf16
           ? ref::DequantKQuantToBf16(id, blocks.data(), n_blocks, u16) ||
                 ref::DequantIQuantToBf16(id, blocks.data(), n_blocks, u16)
           : ref::DequantKQuantToF16(id, blocks.data(), n_blocks, u16) ||
                 ref::DequantIQuantToF16(id, blocks.data(), n_blocks, u16));
  EXPECT_TRUE(done) << "no reference for " << info->name;
  return bytes;
}

testing::AssertionResult MatchesGgmlReference(GgmlType type, const std::vector<uint8_t>& blocks,
                                              ElemType out, size_t in_offset, size_t out_offset) {
  const GgmlTypeInfo& info = *FindGgmlType(static_cast<uint32_t>(type));
  const std::vector<uint8_t> expected = GgmlReference(type, blocks, out);
  PlacedBuffer in(blocks.size(), in_offset, 0);
  if (!blocks.empty()) std::memcpy(in.data(), blocks.data(), blocks.size());
  PlacedBuffer got(expected.size(), out_offset, PlacedBuffer::kCanary);
  const Status status =
      DequantGgml(type, std::span<const uint8_t>(in.data(), blocks.size()), out,
                  std::span<std::byte>(reinterpret_cast<std::byte*>(got.data()), expected.size()));
  const auto what = [&] {
    return std::string(info.name) + "->" + std::string(ElemTypeName(out)) +
           " blocks=" + std::to_string(blocks.size() / info.block_bytes) +
           " offsets=" + std::to_string(in_offset) + "/" + std::to_string(out_offset);
  };
  if (!status.ok()) return testing::AssertionFailure() << what() << ": " << status.ToString();
  if (!got.CanaryIntact()) return testing::AssertionFailure() << what() << ": wrote past the output";
  const size_t w = OutBytes(out);
  for (size_t i = 0; i < expected.size(); i += w) {
    if (std::memcmp(got.data() + i, expected.data() + i, w) != 0) {
      uint32_t have = 0, want = 0;
      std::memcpy(&have, got.data() + i, w);
      std::memcpy(&want, expected.data() + i, w);
      const size_t element = i / w, block = element / info.block_elems;
      std::ostringstream hex;
      for (size_t k = 0; k < info.block_bytes; ++k) {
        hex << std::hex << std::setw(2) << std::setfill('0')
            << static_cast<unsigned>(blocks[block * info.block_bytes + k]);
      }
      return testing::AssertionFailure() << what() << ": element " << element << " gave 0x"
                                         << std::hex << have << ", reference 0x" << want
                                         << " (block " << hex.str() << ")";
    }
  }
  return testing::AssertionSuccess();
}

size_t CheckGoldenFixtures(std::span<const GgmlType> types) {
  size_t checked = 0;
  for (const char* family : {"gguf_reference", "ollama_reference"}) {
    for (const auto& path : FixtureFiles(family, ".bin")) {
      const std::vector<uint8_t> bytes = ReadBytes(path);
      if (bytes.size() < 16) {
        ADD_FAILURE() << path << ": shorter than the 16-byte header";
        continue;
      }
      const auto type = static_cast<GgmlType>(LoadLe32(bytes.data()));
      if (std::find(types.begin(), types.end(), type) == types.end()) continue;
      const uint32_t n = LoadLe32(bytes.data() + 4);
      const uint32_t raw_len = LoadLe32(bytes.data() + 8);
      const uint32_t golden_len = LoadLe32(bytes.data() + 12);
      if (bytes.size() != 16u + raw_len + golden_len || golden_len != size_t{n} * 2) {
        ADD_FAILURE() << path << ": inconsistent header";
        continue;
      }
      std::vector<uint8_t> out(golden_len);
      const Status status = DequantGgml(type, std::span(bytes.data() + 16, raw_len),
                                        ElemType::kBf16, std::as_writable_bytes(std::span(out)));
      if (!status.ok()) {
        ADD_FAILURE() << path << ": " << status.ToString();
        continue;
      }
      const uint8_t* golden = bytes.data() + 16 + raw_len;
      for (size_t i = 0; i < n; ++i) {
        if (std::memcmp(out.data() + 2 * i, golden + 2 * i, 2) != 0) {
          ADD_FAILURE() << path.filename() << " element " << i << ": got 0x" << std::hex
                        << (out[2 * i] | out[2 * i + 1] << 8) << ", want 0x"
                        << (golden[2 * i] | golden[2 * i + 1] << 8);
          break;
        }
      }
      ++checked;
    }
  }
  return checked;
}

}  // namespace amn::test
