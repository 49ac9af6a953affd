// `amn convert`'s run, shared with `amn forget --scheme <ggml type>`, which
// writes the same GGUF through it (one path for both verbs).
#ifndef AMN_CLI_CONVERT_RUN_H_
#define AMN_CLI_CONVERT_RUN_H_

#include <string>
#include <vector>

#include "cli/command_support.h"
#include "cli/global_options.h"

namespace amn::cli {

struct ConvertCliOptions {
  std::string path, output, to, scheme, gguf_metadata, imatrix;
  std::vector<std::string> gguf_kv, tensor_types;
  LimitOptions limits;
  bool force = false, quiet = false, no_mmap = false, json = false;
};

int RunConvert(const ConvertCliOptions& options, const GlobalOptions& globals);

// A scheme name that is a ggml block type (q4_k, Q8_0, iq4_nl, mxfp4,
// tq1_0, q4_k_m, mostly_q2_k ...): GGUF output, whether or not convert encodes it.
bool IsGgmlSchemeName(const std::string& name);

}  // namespace amn::cli

#endif  // AMN_CLI_CONVERT_RUN_H_
