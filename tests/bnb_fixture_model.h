// A bnb_reference fixture (tests/quant_fixture_files.h) as the safetensors
// tensors transformers saves for one bitsandbytes layer: 4-bit with its
// companions and quant_state blob (Params4bit, QuantState.as_dict(packed=True)),
// or LLM.int8() with the module-level SCB and weight_format
// (Linear8bitLt._save_to_state_dict).
#ifndef AMN_TESTS_BNB_FIXTURE_MODEL_H_
#define AMN_TESTS_BNB_FIXTURE_MODEL_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures/safetensors_builder.h"
#include "tests/quant_fixture_files.h"

namespace amn::test {

// NF4 and FP4 codebooks differ at index 8: FP4 stores +0.0 there.
inline std::string Bnb4QuantType(const BnbFixture& f) {
  return LoadLe32(&f.quant_map[32]) == 0 ? "fp4" : "nf4";
}

// The 4-bit layer MODULE.weight (`weight` is that name) whose quant_state
// records `shape`.
inline void AddBnb4Layer(fixtures::SafetensorsBuilder& m, const BnbFixture& f,
                         const std::string& weight, const nlohmann::json& shape) {
  const std::string type = Bnb4QuantType(f);
  const uint64_t blocks = f.elements / f.block_size;
  m.Add(weight, "U8", {f.elements / 2, 1}, f.packed);
  m.Add(weight + ".absmax", f.format == 2 ? "U8" : "F32", {blocks}, f.absmax);
  m.Add(weight + ".quant_map", "F32", {16}, f.quant_map);
  nlohmann::json state = {{"shape", shape}, {"blocksize", f.block_size}, {"quant_type", type},
                          {"dtype", "bfloat16"}};
  if (f.format == 2) {
    m.Add(weight + ".nested_absmax", "F32", {f.nested_absmax.size() / 4}, f.nested_absmax);
    m.Add(weight + ".nested_quant_map", "F32", {256}, f.nested_quant_map);
    state["nested_blocksize"] = 256;
    state["nested_offset"] = static_cast<double>(f.nested_offset);  // exact: an f32 value
  }
  const std::string text = state.dump();
  m.Add(weight + ".quant_state.bitsandbytes__" + type, "U8", {text.size()},
        std::vector<uint8_t>(text.begin(), text.end()));
}

// The INT8 layer of module `module` (MODULE.weight, MODULE.SCB, MODULE.weight_format).
inline void AddBnbInt8Layer(fixtures::SafetensorsBuilder& m, const BnbFixture& f,
                            const std::string& module) {
  m.Add(module + ".weight", "I8", {f.rows, f.cols}, f.weight);
  m.Add(module + ".SCB", "F32", {f.rows}, f.scb);
  m.Add(module + ".weight_format", "U8", {}, {0});
}

}  // namespace amn::test

#endif  // AMN_TESTS_BNB_FIXTURE_MODEL_H_
