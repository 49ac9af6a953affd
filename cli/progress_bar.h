// A one-line progress bar on stderr (tensors, bytes, rate, ETA), drawn only
// when stderr is a terminal and not silenced; redrawn at most 10 times a
// second, and never wider than the terminal.
#ifndef AMN_CLI_PROGRESS_BAR_H_
#define AMN_CLI_PROGRESS_BAR_H_

#include <chrono>
#include <cstddef>
#include <string>

#include "amn/model.h"

namespace amn::cli {

// Columns of the terminal: $COLUMNS when it is a positive integer, else the
// window size of stderr (TIOCGWINSZ), else 80.
size_t TerminalColumns();

// The progress text after `seconds`, at most `width` columns (plain ASCII):
// the bar, then tensors, bytes, rate and ETA, dropping the least useful
// fields first when the line would not fit.
std::string ProgressText(const RememberProgress& progress, double seconds, size_t width);

// `text` as one status line on the terminal: cut to the terminal's width
// less one column (so it never wraps) and drawn over the previous one.
void DrawStatusLine(const std::string& text);
void ClearStatusLine();

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled);
  ~ProgressBar();  // clears the line
  void Update(const RememberProgress& progress);

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  bool drawn_ = false;
};

}  // namespace amn::cli

#endif  // AMN_CLI_PROGRESS_BAR_H_
