// What quantization took, as `forget` and `convert` report it: the Lethe
// distance (mean absolute error), max abs error and relative RMSE of a
// QuantError, as text lines and as JSON fields (docs/cli.md).
#ifndef AMN_CLI_LETHE_REPORT_H_
#define AMN_CLI_LETHE_REPORT_H_

#include <nlohmann/json.hpp>

#include "amn/quantize.h"

namespace amn::cli {

// {elements, lethe_distance, max_abs_error, relative_rmse}.
nlohmann::json LetheJson(const QuantError& error);
// The three lines "Lethe distance: ...", "Max abs error: ...", "Relative RMSE: ...".
void PrintLethe(const QuantError& error);

}  // namespace amn::cli

#endif  // AMN_CLI_LETHE_REPORT_H_
