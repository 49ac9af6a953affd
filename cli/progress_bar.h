// A one-line progress bar on stderr (tensors, bytes, rate, ETA), drawn only
// when stderr is a terminal and not silenced; redrawn at most 10 times a
// second.
#ifndef AMN_CLI_PROGRESS_BAR_H_
#define AMN_CLI_PROGRESS_BAR_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "amn/model.h"

namespace amn::cli {

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

// "4.56 GB", "302 MB", "45.6 KB", "512 B" (binary units, as the seeds print).
std::string FormatBytes(uint64_t bytes);

}  // namespace amn::cli

#endif  // AMN_CLI_PROGRESS_BAR_H_
