// What `amn bench --json` says about the machine, so runs on different
// machines can be told apart and compared: the CPU's model name and its
// last-level cache size (which decides whether the "stream" size of --quick
// really streams).
#ifndef AMN_PERF_CPU_DESCRIPTION_H_
#define AMN_PERF_CPU_DESCRIPTION_H_

#include <cstddef>
#include <string>

namespace amn::perf {

struct CpuDescription {
  std::string model;       // /proc/cpuinfo "model name" (or "Hardware"); empty if unknown
  size_t llc_bytes = 0;    // last-level data/unified cache of CPU 0; 0 if unknown
  int llc_level = 0;       // its level (2, 3, ...); 0 if unknown
  std::string llc_source;  // where llc_bytes came from: "sysfs", "sysconf" or ""
};

// Linux: the cache from /sys/devices/system/cpu/cpu0/cache (the kernel's
// view), else glibc's sysconf(_SC_LEVEL{3,2}_CACHE_SIZE) (CPUID on x86).
CpuDescription DescribeCpu();

}  // namespace amn::perf

#endif  // AMN_PERF_CPU_DESCRIPTION_H_
