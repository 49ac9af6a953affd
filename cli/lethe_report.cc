#include "cli/lethe_report.h"

#include <cmath>
#include <cstdio>

namespace amn::cli {
namespace {

double Mean(const QuantError& e) {
  return e.elements == 0 ? 0.0 : e.sum_abs / static_cast<double>(e.elements);
}

double RelativeRmse(const QuantError& e) {
  return e.sum_sq_ref == 0 ? 0.0 : std::sqrt(e.sum_sq_err / e.sum_sq_ref);
}

}  // namespace

nlohmann::json LetheJson(const QuantError& e) {
  return {{"elements", e.elements}, {"lethe_distance", Mean(e)}, {"max_abs_error", e.max_abs},
          {"relative_rmse", RelativeRmse(e)}};
}

void PrintLethe(const QuantError& e) {
  std::printf("Lethe distance: %.6g (mean absolute error over %llu elements)\n", Mean(e),
              static_cast<unsigned long long>(e.elements));
  std::printf("Max abs error:  %.6g\n", e.max_abs);
  std::printf("Relative RMSE:  %.6g\n", RelativeRmse(e));
}

}  // namespace amn::cli
