// Terminal progress bar for long jobs (progress_bar.h).
#include "cli/progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cli/units.h"
#include "formats/utf8.h"

namespace amn::cli {
namespace {

constexpr size_t kDefaultColumns = 80;
constexpr size_t kMaxBar = 30, kMinBar = 10;

std::string Join(const std::vector<std::string>& parts) {
  std::string line;
  for (const std::string& part : parts) {
    if (part.empty()) continue;
    line += (line.empty() ? "" : "  ") + part;
  }
  return line;
}

}  // namespace

size_t TerminalColumns() {
  if (const char* env = std::getenv("COLUMNS"); env != nullptr) {
    size_t columns = 0;
    const char* end = env + std::strlen(env);
    const auto [ptr, error] = std::from_chars(env, end, columns);
    if (error == std::errc() && ptr == end && columns > 0) return columns;
  }
  struct winsize size = {};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return kDefaultColumns;
}

std::string ProgressText(const RememberProgress& p, double seconds, size_t width) {
  const double fraction =
      p.bytes_total == 0 ? 1.0 : static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total);
  const double rate = seconds > 0 ? static_cast<double>(p.bytes_done) / seconds : 0;
  const double eta = rate > 0 ? static_cast<double>(p.bytes_total - p.bytes_done) / rate : 0;
  char percent[8], eta_text[32];
  std::snprintf(percent, sizeof(percent), "%3.0f%%", fraction * 100);
  std::snprintf(eta_text, sizeof(eta_text), "ETA %.0fs", eta);
  const std::string tensors =
      std::to_string(p.tensors_done) + "/" + std::to_string(p.tensors_total) + " tensors";
  const std::string bytes = FormatBytes(p.bytes_done) + "/" + FormatBytes(p.bytes_total);
  // Richest first; each later layout drops what matters least.
  const std::vector<std::vector<std::string>> layouts = {
      {percent, tensors, bytes, FormatRate(rate), eta_text},
      {percent, tensors, bytes},
      {percent, tensors},
      {percent},
  };
  for (const auto& fields : layouts) {
    const std::string text = Join(fields);
    if (text.size() > width) continue;
    // A bar in front when at least kMinBar cells and "[] " fit.
    if (width >= text.size() + kMinBar + 3) {
      const size_t cells = std::min(kMaxBar, width - text.size() - 3);
      const auto filled = static_cast<size_t>(fraction * static_cast<double>(cells));
      std::string bar(std::min(filled, cells), '=');
      if (bar.size() < cells) bar += '>';
      bar.resize(cells, ' ');
      return "[" + bar + "] " + text;
    }
    return text;
  }
  return std::string(percent).substr(0, width);
}

void DrawStatusLine(const std::string& text) {
  const size_t columns = TerminalColumns();
  const size_t width = columns > 1 ? columns - 1 : 0;
  std::fprintf(stderr, "\r%s\033[K", text.substr(0, formats::Utf8CutPoint(text, width)).c_str());
  std::fflush(stderr);
}

void ClearStatusLine() {
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

ProgressBar::ProgressBar(bool enabled)
    : enabled_(enabled && isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() {
  if (drawn_) ClearStatusLine();
}

void ProgressBar::Update(const RememberProgress& p) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool done = p.bytes_done >= p.bytes_total;
  if (!done && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const size_t columns = TerminalColumns();
  DrawStatusLine(ProgressText(p, seconds, columns > 1 ? columns - 1 : 0));
}

}  // namespace amn::cli
