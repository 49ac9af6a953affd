// The fp8_reference, gptq_reference, awq_reference and bnb_reference fixture files
// (../shared/fixtures/README.md) split into their sections: the tensors as a
// checkpoint stores them and the canonical library's BF16 output.
#ifndef AMN_TESTS_QUANT_FIXTURE_FILES_H_
#define AMN_TESTS_QUANT_FIXTURE_FILES_H_

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "amn/elem_type.h"
#include "kernels/ref/float_convert_ref.h"
#include "tests/fixtures.h"

namespace amn::test {

// Cuts consecutive sections off a byte vector; ok() is false once a section
// runs past the end, so a malformed fixture fails the test instead of
// reading out of bounds.
class SectionReader {
 public:
  explicit SectionReader(const std::vector<uint8_t>& bytes, size_t at) : bytes_(bytes), at_(at) {}
  std::vector<uint8_t> Take(uint64_t n) {
    if (!ok_ || n > bytes_.size() - at_) {
      ok_ = false;
      return {};
    }
    std::vector<uint8_t> out(bytes_.begin() + static_cast<long>(at_),
                             bytes_.begin() + static_cast<long>(at_ + n));
    at_ += n;
    return out;
  }
  bool ok() const { return ok_; }
  bool at_end() const { return at_ == bytes_.size(); }

 private:
  const std::vector<uint8_t>& bytes_;
  size_t at_;
  bool ok_ = true;
};

inline uint32_t HeaderField(const std::vector<uint8_t>& bytes, size_t index) {
  return 4 * index + 4 <= bytes.size() ? LoadLe32(bytes.data() + 4 * index) : 0;
}

// The safetensors dtype of a fixture scale_dtype code (0 F32, 1 BF16, 2 F16).
inline std::string ScaleDtypeName(uint32_t code) {
  return code == 0 ? "F32" : code == 1 ? "BF16" : "F16";
}

inline ElemType ScaleElemType(uint32_t code) {
  return code == 0 ? ElemType::kF32 : code == 1 ? ElemType::kBf16 : ElemType::kF16;
}

// A row-major [rows, cols] matrix of 16-bit elements, transposed: the
// fixtures' GEMM-native [in, out] output becomes nn.Linear's [out, in].
inline std::vector<uint8_t> TransposeU16(const std::vector<uint8_t>& m, size_t rows, size_t cols) {
  std::vector<uint8_t> t(m.size());
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) std::memcpy(&t[2 * (c * rows + r)], &m[2 * (r * cols + c)], 2);
  }
  return t;
}

// GPTQ (44-byte header) and AWQ (36-byte header) files.
struct PackedLinearFixture {
  std::string name;
  uint32_t bits = 0, group_size = 0, in = 0, out = 0, scale_dtype = 0;
  std::vector<uint8_t> qweight, scales, qzeros, g_idx, expected;  // expected: BF16 [in][out]
};

inline std::optional<PackedLinearFixture> ReadGptqFixture(const std::filesystem::path& path) {
  const std::vector<uint8_t> bytes = ReadBytes(path);
  if (bytes.size() < 44) return std::nullopt;
  PackedLinearFixture f;
  f.name = path.filename().string();
  f.bits = HeaderField(bytes, 0);
  f.group_size = HeaderField(bytes, 1);
  f.in = HeaderField(bytes, 2);
  f.out = HeaderField(bytes, 3);
  f.scale_dtype = HeaderField(bytes, 4);
  SectionReader r(bytes, 44);
  f.qweight = r.Take(HeaderField(bytes, 6));
  f.scales = r.Take(HeaderField(bytes, 7));
  f.qzeros = r.Take(HeaderField(bytes, 8));
  f.g_idx = r.Take(HeaderField(bytes, 9));
  f.expected = r.Take(HeaderField(bytes, 10));
  if (!r.ok() || !r.at_end()) return std::nullopt;
  return f;
}

inline std::optional<PackedLinearFixture> ReadAwqFixture(const std::filesystem::path& path) {
  const std::vector<uint8_t> bytes = ReadBytes(path);
  if (bytes.size() < 36) return std::nullopt;
  PackedLinearFixture f;
  f.name = path.filename().string();
  f.bits = HeaderField(bytes, 0);
  f.group_size = HeaderField(bytes, 1);
  f.in = HeaderField(bytes, 2);
  f.out = HeaderField(bytes, 3);
  f.scale_dtype = HeaderField(bytes, 4);
  SectionReader r(bytes, 36);
  f.qweight = r.Take(HeaderField(bytes, 5));
  f.scales = r.Take(HeaderField(bytes, 6));
  f.qzeros = r.Take(HeaderField(bytes, 7));
  f.expected = r.Take(HeaderField(bytes, 8));
  if (!r.ok() || !r.at_end()) return std::nullopt;
  return f;
}

// fp8_reference files (28-byte header): scheme 0 (128 x 128 block scales,
// weight_scale_inv), 1 (one per-tensor scale), 2 (one scale per row).
struct Fp8Fixture {
  std::string name;
  uint32_t scheme = 0, scale_dtype = 0, rows = 0, cols = 0;
  std::vector<uint8_t> weight, scales;  // E4M3 [rows][cols]; scales as stored
  std::vector<uint8_t> expected;        // BF16 [rows][cols]

  // The scale grid's group: (128, 128), (rows, cols) or (1, cols).
  uint64_t group_rows() const { return scheme == 0 ? 128 : scheme == 1 ? rows : 1; }
  uint64_t group_cols() const { return scheme == 0 ? 128 : cols; }
};

inline std::optional<Fp8Fixture> ReadFp8Fixture(const std::filesystem::path& path) {
  const std::vector<uint8_t> bytes = ReadBytes(path);
  if (bytes.size() < 28) return std::nullopt;
  Fp8Fixture f;
  f.name = path.filename().string();
  f.scheme = HeaderField(bytes, 0);
  f.scale_dtype = HeaderField(bytes, 1);
  f.rows = HeaderField(bytes, 2);
  f.cols = HeaderField(bytes, 3);
  if (f.scheme > 2 || f.scale_dtype > 2 || HeaderField(bytes, 4) != uint64_t{f.rows} * f.cols ||
      HeaderField(bytes, 6) != 2 * HeaderField(bytes, 4)) {
    return std::nullopt;
  }
  SectionReader r(bytes, 28);
  f.weight = r.Take(HeaderField(bytes, 4));
  f.scales = r.Take(HeaderField(bytes, 5));
  f.expected = r.Take(HeaderField(bytes, 6));
  if (!r.ok() || !r.at_end()) return std::nullopt;
  return f;
}

// A gguf_reference (or ollama_reference) file: ggml blocks and the golden
// BF16 of their n elements (fixtures/README.md, 16-byte header).
struct GgmlBlockFixture {
  uint32_t type = 0, n = 0;
  std::vector<uint8_t> blocks, golden_bf16;
};

inline std::optional<GgmlBlockFixture> ReadGgmlBlockFixture(const std::filesystem::path& path) {
  const std::vector<uint8_t> bytes = ReadBytes(path);
  if (bytes.size() < 16) return std::nullopt;
  GgmlBlockFixture f;
  f.type = HeaderField(bytes, 0);
  f.n = HeaderField(bytes, 1);
  if (HeaderField(bytes, 3) != 2 * uint64_t{f.n}) return std::nullopt;
  SectionReader r(bytes, 16);
  f.blocks = r.Take(HeaderField(bytes, 2));
  f.golden_bf16 = r.Take(HeaderField(bytes, 3));
  if (!r.ok() || !r.at_end()) return std::nullopt;
  return f;
}

// The stored scales widened to F32 exactly by the scalar reference
// conversions (not the dispatched kernels under test).
inline std::vector<float> Fp8FixtureScales(const Fp8Fixture& f) {
  const size_t size = f.scale_dtype == 0 ? 4 : 2;
  std::vector<float> scales(f.scales.size() / size);
  for (size_t i = 0; i < scales.size(); ++i) {
    const uint8_t* q = f.scales.data() + i * size;
    const auto half = static_cast<uint16_t>(q[0] | q[1] << 8);
    const uint32_t bits = f.scale_dtype == 0   ? LoadLe32(q)
                          : f.scale_dtype == 1 ? ref::Bf16ToF32Bits(half)
                                               : ref::F16ToF32Bits(half);
    std::memcpy(&scales[i], &bits, sizeof(bits));
  }
  return scales;
}

// bitsandbytes files: 4-bit (format 0 plain, 2 double quant; 40-byte
// header) and INT8 (format 1; 24-byte header).
struct BnbFixture {
  std::string name;
  uint32_t format = 0;
  // 4-bit
  uint32_t elements = 0, block_size = 0;
  float nested_offset = 0.0f;
  std::vector<uint8_t> packed, absmax, quant_map, nested_absmax, nested_quant_map;
  // INT8
  uint32_t rows = 0, cols = 0;
  std::vector<uint8_t> weight, scb;
  std::vector<uint8_t> expected;  // BF16, flat (4-bit) or [rows][cols] (INT8)
};

inline std::optional<BnbFixture> ReadBnbFixture(const std::filesystem::path& path) {
  const std::vector<uint8_t> bytes = ReadBytes(path);
  if (bytes.size() < 24) return std::nullopt;
  BnbFixture f;
  f.name = path.filename().string();
  f.format = HeaderField(bytes, 0);
  if (f.format == 1) {
    f.rows = HeaderField(bytes, 1);
    f.cols = HeaderField(bytes, 2);
    SectionReader r(bytes, 24);
    f.weight = r.Take(HeaderField(bytes, 3));
    f.scb = r.Take(HeaderField(bytes, 4));
    f.expected = r.Take(HeaderField(bytes, 5));
    if (!r.ok() || !r.at_end()) return std::nullopt;
    return f;
  }
  if (bytes.size() < 40 || (f.format != 0 && f.format != 2)) return std::nullopt;
  f.elements = HeaderField(bytes, 1);
  f.block_size = HeaderField(bytes, 2);
  const uint32_t offset_bits = HeaderField(bytes, 9);
  std::memcpy(&f.nested_offset, &offset_bits, 4);
  SectionReader r(bytes, 40);
  f.packed = r.Take(HeaderField(bytes, 3));
  f.absmax = r.Take(HeaderField(bytes, 4));
  f.quant_map = r.Take(HeaderField(bytes, 5));
  f.nested_absmax = r.Take(HeaderField(bytes, 6));
  f.nested_quant_map = r.Take(HeaderField(bytes, 7));
  f.expected = r.Take(HeaderField(bytes, 8));
  if (!r.ok() || !r.at_end()) return std::nullopt;
  return f;
}

}  // namespace amn::test

#endif  // AMN_TESTS_QUANT_FIXTURE_FILES_H_
