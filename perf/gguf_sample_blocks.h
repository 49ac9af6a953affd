// The GGUF blocks `amn bench` decodes: what amn's own encoder makes of
// weight-like values, as a quantized model file holds, instead of random
// bytes (whose f16 scales are Inf/NaN in 3 % of cases, which real files
// never are, and which send blocks and whole groups of blocks down the
// decoders' special paths: docs/performance/README.md, Method).
#ifndef AMN_PERF_GGUF_SAMPLE_BLOCKS_H_
#define AMN_PERF_GGUF_SAMPLE_BLOCKS_H_

#include <cstdint>
#include <span>

#include "amn/kernel_registry.h"

namespace amn::perf {

// kSampleElems elements of blocks of the GGUF type the decoder `kernel`
// reads (ggml_legacy, ggml_kquant, ggml_iquant families), quantized once
// per type and kept; empty for other kernels and types amn cannot encode.
inline constexpr uint64_t kSampleElems = 65536;
std::span<const uint8_t> GgufSampleBlocks(const KernelInfo& kernel);

}  // namespace amn::perf

#endif  // AMN_PERF_GGUF_SAMPLE_BLOCKS_H_
