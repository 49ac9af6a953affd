// Reads the CPU model and last-level cache size for `amn bench --json`.
#include "perf/cpu_description.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>

namespace amn::perf {
namespace {

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string Trim(const std::string& s) {
  const size_t begin = s.find_first_not_of(" \t");
  const size_t end = s.find_last_not_of(" \t\r\n");
  return begin == std::string::npos ? "" : s.substr(begin, end - begin + 1);
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  std::string hardware;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = Trim(line.substr(0, colon));
    if (key == "model name") return Trim(line.substr(colon + 1));
    if (key == "Hardware" && hardware.empty()) hardware = Trim(line.substr(colon + 1));
  }
  return hardware;  // many Arm kernels print no "model name"
}

// sysfs sizes read like "32768K" or "1M".
size_t ParseCacheSize(const std::string& text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return 0;
  switch (*end) {
    case 'K': return static_cast<size_t>(value) << 10;
    case 'M': return static_cast<size_t>(value) << 20;
    case 'G': return static_cast<size_t>(value) << 30;
    default: return static_cast<size_t>(value);
  }
}

bool LlcFromSysfs(CpuDescription& cpu) {
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string level = ReadLine(dir + "/level");
    if (level.empty()) break;
    if (ReadLine(dir + "/type") == "Instruction") continue;
    const int n = std::atoi(level.c_str());
    const size_t bytes = ParseCacheSize(ReadLine(dir + "/size"));
    if (n >= cpu.llc_level && bytes > 0) {
      cpu.llc_level = n;
      cpu.llc_bytes = bytes;
    }
  }
  if (cpu.llc_bytes == 0) return false;
  cpu.llc_source = "sysfs";
  return true;
}

void LlcFromSysconf(CpuDescription& cpu) {
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
  const std::pair<int, int> levels[] = {{3, _SC_LEVEL3_CACHE_SIZE}, {2, _SC_LEVEL2_CACHE_SIZE}};
  for (const auto& [level, name] : levels) {
    const long bytes = sysconf(name);
    if (bytes > 0) {
      cpu.llc_level = level;
      cpu.llc_bytes = static_cast<size_t>(bytes);
      cpu.llc_source = "sysconf";
      return;
    }
  }
#else
  (void)cpu;
#endif
}

}  // namespace

CpuDescription DescribeCpu() {
  CpuDescription cpu;
  cpu.model = CpuModel();
  if (!LlcFromSysfs(cpu)) LlcFromSysconf(cpu);
  return cpu;
}

}  // namespace amn::perf
