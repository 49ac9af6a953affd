// Binary size units (units.h).
#include "cli/units.h"

#include <cstdio>

namespace amn::cli {

std::string FormatBytes(uint64_t bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024;
  char text[32];
  const double b = static_cast<double>(bytes);
  if (b >= kTiB) {
    std::snprintf(text, sizeof(text), "%.2f TiB", b / kTiB);
  } else if (b >= kGiB) {
    std::snprintf(text, sizeof(text), "%.2f GiB", b / kGiB);
  } else if (b >= kMiB) {
    std::snprintf(text, sizeof(text), "%.0f MiB", b / kMiB);
  } else if (b >= kKiB) {
    std::snprintf(text, sizeof(text), "%.1f KiB", b / kKiB);
  } else {
    std::snprintf(text, sizeof(text), "%llu B", static_cast<unsigned long long>(bytes));
  }
  return text;
}

std::string FormatRate(double bytes_per_second) {
  const double rate = bytes_per_second > 0 ? bytes_per_second : 0;
  return FormatBytes(static_cast<uint64_t>(rate)) + "/s";
}

}  // namespace amn::cli
