// Shared checks for the ggml block families through amn::DequantGgml: the
// scalar reference of any quantized ggml type, a placed-buffer comparison
// against it, and the gguf_reference golden fixtures.
#ifndef AMN_TESTS_GGML_CHECK_H_
#define AMN_TESTS_GGML_CHECK_H_

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "amn/ggml_dequant.h"

namespace amn::test {

size_t GgmlBlockBytes(GgmlType type);
std::string GgmlName(GgmlType type);

// The scalar reference's output bytes for whole blocks of `type`.
std::vector<uint8_t> GgmlReference(GgmlType type, const std::vector<uint8_t>& blocks,
                                   ElemType out);

// DequantGgml with input and output placed at the given byte offsets from a
// 64-byte boundary (canaries after the output) against GgmlReference, bit
// for bit; a failure names the call, the first differing element and its
// block's bytes.
testing::AssertionResult MatchesGgmlReference(GgmlType type, const std::vector<uint8_t>& blocks,
                                              ElemType out, size_t in_offset = 0,
                                              size_t out_offset = 0);

// Every gguf_reference (and ollama_reference) fixture whose type is in
// `types`, through DequantGgml to BF16 against its golden bytes. Returns the
// number of files checked; failures are reported with the file and element.
size_t CheckGoldenFixtures(std::span<const GgmlType> types);

}  // namespace amn::test

#endif  // AMN_TESTS_GGML_CHECK_H_
