// Sizes as amn prints them: binary (IEC) units everywhere, labelled as such
// (KiB = 1024 bytes, MiB = 2^20, GiB = 2^30, TiB = 2^40), the same units the
// --max-* limits take. JSON output carries plain byte counts.
#ifndef AMN_CLI_UNITS_H_
#define AMN_CLI_UNITS_H_

#include <cstdint>
#include <string>

namespace amn::cli {

// "512 B", "45.6 KiB", "302 MiB", "4.56 GiB", "1.50 TiB".
std::string FormatBytes(uint64_t bytes);

// A rate of bytes per second in the same units: "302 MiB/s".
std::string FormatRate(double bytes_per_second);

}  // namespace amn::cli

#endif  // AMN_CLI_UNITS_H_
