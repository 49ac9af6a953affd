// Terminal progress bar for long jobs.
#include "cli/progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace amn::cli {

std::string FormatBytes(uint64_t bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  char text[32];
  const double b = static_cast<double>(bytes);
  if (b >= kGiB) {
    std::snprintf(text, sizeof(text), "%.2f GB", b / kGiB);
  } else if (b >= kMiB) {
    std::snprintf(text, sizeof(text), "%.0f MB", b / kMiB);
  } else if (b >= kKiB) {
    std::snprintf(text, sizeof(text), "%.1f KB", b / kKiB);
  } else {
    std::snprintf(text, sizeof(text), "%llu B", static_cast<unsigned long long>(bytes));
  }
  return text;
}

ProgressBar::ProgressBar(bool enabled)
    : enabled_(enabled && isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

void ProgressBar::Update(const RememberProgress& p) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool done = p.bytes_done >= p.bytes_total;
  if (!done && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double fraction =
      p.bytes_total == 0 ? 1.0 : static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total);
  const double rate = seconds > 0 ? static_cast<double>(p.bytes_done) / seconds : 0;
  const double eta = rate > 0 ? static_cast<double>(p.bytes_total - p.bytes_done) / rate : 0;
  constexpr int kWidth = 24;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < kWidth) bar += '>';
  bar.resize(kWidth, ' ');
  std::fprintf(stderr, "\r\033[K[%s] %zu/%zu tensors  %s/%s  %s/s  ETA %.0fs", bar.c_str(),
               p.tensors_done, p.tensors_total, FormatBytes(p.bytes_done).c_str(),
               FormatBytes(p.bytes_total).c_str(), FormatBytes(static_cast<uint64_t>(rate)).c_str(),
               eta);
  std::fflush(stderr);
}

}  // namespace amn::cli
