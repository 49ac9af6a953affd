// Every kernel of the table (dispatch/kernel_table.h), through the registry,
// on every supported target: the probe proves which target ran, and the
// dispatched kernel writes the scalar reference's bytes for several block
// counts at misaligned addresses, without touching the canaries. A kernel
// added to the table is tested here with no further code. Also checks the
// registry against the ggml type table (block layouts, every decodable type
// present) so the two lists cannot drift apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "amn/ggml_dequant.h"
#include "amn/kernel_registry.h"
#include "tests/kernel_check.h"
#include "tests/target_param.h"

namespace amn::test {
namespace {

// Input units per call: whole blocks (or elements) of the kernel. Big units
// (GPTQ's 2048-element unit, AWQ's 512-element row) get fewer of them so the
// emulated fleet stays quick.
std::vector<size_t> UnitCounts(const KernelInfo& kernel) {
  if (kernel.out_unit_bytes != 0) return {1, 3, 9};  // encoders: 256-element units
  if (kernel.in_block_bytes == 0) return {1, 7, 64, 257, 1000};
  if (kernel.block_elems >= 512) return {1, 2, 5};
  return {1, 3, 17};
}

class KernelTable : public PerTarget {};

TEST_P(KernelTable, EveryKernelMatchesItsReference) {
  ASSERT_FALSE(Kernels().empty());
  uint32_t seed = 1;
  for (const KernelInfo& kernel : Kernels()) {
    SCOPED_TRACE(std::string(kernel.name));
    // The kernel's own dispatch table ran the forced target (a TU that lacks
    // a target would fall back silently).
    EXPECT_EQ(kernel.probe(), GetParam());
    const size_t unit_bytes = KernelInBytes(kernel, kernel.block_elems);
    for (const size_t units : UnitCounts(kernel)) {
      const std::vector<uint8_t> input = PseudoRandomBytes(units * unit_bytes, seed++);
      EXPECT_TRUE(MatchesReference(kernel, input, 0, 0)) << units << " units";
      EXPECT_TRUE(MatchesReference(kernel, input, 1, 3)) << units << " units, misaligned";
    }
  }
}

AMN_INSTANTIATE_PER_TARGET(KernelTable);

TEST(KernelRegistry, NamesAreUniqueAndSayTheirOutput) {
  std::set<std::string> names;
  for (const KernelInfo& kernel : Kernels()) {
    const std::string name(kernel.name);
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
    if (kernel.out_unit_bytes != 0) {
      // Encoders say their input: "<in>_to_<scheme>".
      const std::string prefix = std::string(ElemTypeName(kernel.in)) + "_to_";
      EXPECT_EQ(name.compare(0, prefix.size(), prefix), 0) << name;
      EXPECT_EQ(kernel.in_block_bytes, 0u) << name;
    } else {
      const std::string suffix = "_to_" + std::string(ElemTypeName(kernel.out));
      EXPECT_TRUE(name.size() > suffix.size() &&
                  name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
          << name;
    }
    EXPECT_NE(kernel.run, nullptr);
    EXPECT_NE(kernel.run_reference, nullptr);
    EXPECT_NE(kernel.probe, nullptr);
    EXPECT_GE(kernel.block_elems, 1u);
  }
}

// "q4_k_to_bf16" -> "Q4_K"; "nvfp4_gguf_to_f32" -> "NVFP4" (the stem "nvfp4"
// is compressed-tensors NVFP4's).
std::string GgmlTypeNameOf(const KernelInfo& kernel) {
  std::string stem(kernel.name.substr(0, kernel.name.find("_to_")));
  if (stem.ends_with("_gguf")) stem.resize(stem.size() - 5);
  std::transform(stem.begin(), stem.end(), stem.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return stem;
}

TEST(KernelRegistry, GgmlEntriesMatchTheGgmlTypeTable) {
  std::set<std::string> in_registry;
  for (const KernelInfo& kernel : Kernels()) {
    // Decoders only: the ggml encoders ("<in>_to_<type>") have F32 inputs.
    if (kernel.family.substr(0, 5) != "ggml_" || kernel.out_unit_bytes != 0) continue;
    const std::string type = GgmlTypeNameOf(kernel);
    in_registry.insert(type);
    const GgmlTypeInfo* info = nullptr;
    for (uint32_t id = 0; id < 64 && info == nullptr; ++id) {
      const GgmlTypeInfo* candidate = FindGgmlType(id);
      if (candidate != nullptr && candidate->name == type) info = candidate;
    }
    ASSERT_NE(info, nullptr) << kernel.name << ": no ggml type " << type;
    EXPECT_EQ(kernel.block_elems, info->block_elems) << kernel.name;
    EXPECT_EQ(kernel.in_block_bytes, info->block_bytes) << kernel.name;
  }
  // Every quantized type DequantGgml decodes has its registry kernels.
  for (uint32_t id = 0; id < 64; ++id) {
    const GgmlTypeInfo* info = FindGgmlType(id);
    if (info == nullptr || !GgmlTypeDecodable(info->type)) continue;
    EXPECT_TRUE(in_registry.count(std::string(info->name)) == 1)
        << info->name << " is decodable but has no registry kernel";
  }
}

// The ggml encoders ("<in>_to_<type>", family ggml_encode): each unit of
// block_elems inputs gives whole blocks of the type, ggml's bytes each.
TEST(KernelRegistry, GgmlEncodersMatchTheGgmlTypeTable) {
  size_t encoders = 0;
  for (const KernelInfo& kernel : Kernels()) {
    if (kernel.family != "ggml_encode") continue;
    ++encoders;
    std::string type(kernel.name.substr(kernel.name.find("_to_") + 4));
    std::transform(type.begin(), type.end(), type.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    const GgmlTypeInfo* info = nullptr;
    for (uint32_t id = 0; id < 64 && info == nullptr; ++id) {
      const GgmlTypeInfo* candidate = FindGgmlType(id);
      if (candidate != nullptr && candidate->name == type) info = candidate;
    }
    ASSERT_NE(info, nullptr) << kernel.name << ": no ggml type " << type;
    ASSERT_EQ(kernel.block_elems % info->block_elems, 0u) << kernel.name;
    EXPECT_EQ(kernel.out_unit_bytes, kernel.block_elems / info->block_elems * info->block_bytes)
        << kernel.name;
  }
  EXPECT_EQ(encoders, 3u * 12u);  // bf16/f16/f32 x the twelve simple types
}

}  // namespace
}  // namespace amn::test
