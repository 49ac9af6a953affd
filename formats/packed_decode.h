// Dequantizing one packed safetensors weight (GPTQ, AWQ, bitsandbytes,
// compressed-tensors, MXFP4) from views of its bytes: the glue between a
// detected QuantWeight and the kernel API of its family. The engine maps the
// input files and calls this per chunk of output rows.
#ifndef AMN_FORMATS_PACKED_DECODE_H_
#define AMN_FORMATS_PACKED_DECODE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "amn/elem_type.h"
#include "amn/status.h"
#include "formats/dtype.h"
#include "formats/quant_scheme.h"

namespace amn::formats {

// A tensor's bytes in the plan's input files.
struct InputSpan {
  size_t file = 0;
  uint64_t offset = 0;  // absolute, in the file
  uint64_t bytes = 0;
  Dtype dtype = Dtype::kU8;
};

struct PackedJob {
  QuantWeight weight;  // kind and parameters (its TensorRefs are not used)
  InputSpan codes;
  std::array<std::optional<InputSpan>, kPartCount> parts;
  // The output as a [rows, row_elems] matrix: the unit the engine chunks.
  uint64_t rows = 0;
  uint64_t row_elems = 0;
};

// The job of `w`, given where each of its tensors lives.
PackedJob MakePackedJob(const QuantWeight& w, const InputSpan& codes,
                        const std::array<std::optional<InputSpan>, kPartCount>& parts);

// The bytes of the job's tensors (same indexing as PackedJob).
struct PackedViews {
  std::span<const std::byte> codes;
  std::array<std::span<const std::byte>, kPartCount> parts;
};

// Writes output rows [row_begin, row_end) of `job` as out_type.
Status DecodePackedRows(const PackedJob& job, const PackedViews& views, uint64_t row_begin,
                        uint64_t row_end, ElemType out_type, std::span<std::byte> out);

}  // namespace amn::formats

#endif  // AMN_FORMATS_PACKED_DECODE_H_
