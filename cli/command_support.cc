// Shared pieces of the model commands.
#include "cli/command_support.h"

#include <cstdio>
#include <string>

#include "cli/exit_codes.h"
#include "cli/printable.h"
#include "cli/units.h"

// A lock-free atomic store is async-signal-safe.
extern "C" void AmnOnInterrupt(int) { amn::cli::g_interrupted.store(true); }

namespace amn::cli {

// The library polls it between chunks and removes its temporary output.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

int Fail(const Status& status) {
  std::fprintf(stderr, "amn: %s\n", Printable(status.ToString()).c_str());
  switch (status.code()) {
    case StatusCode::kInvalidArgument: return kExitUsage;
    case StatusCode::kCancelled: return kExitInterrupted;
    default: return kExitFailure;
  }
}

InterruptGuard::InterruptGuard() {
  struct sigaction action = {};
  action.sa_handler = AmnOnInterrupt;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < kSignals.size(); ++i) {
    sigaction(kSignals[i], nullptr, &old_[i]);
    if (old_[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &action, nullptr);
  }
}

InterruptGuard::~InterruptGuard() {
  for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
}

void AddLimitOptions(CLI::App* cmd, LimitOptions& o) {
  cmd->add_flag("--verify", o.verify,
                "For ollama: and hf: names, recompute the sha256 of each blob (the Ollama model "
                "blob; the Hugging Face files stored by their sha256) and refuse a mismatch");
  const ParseLimits cap = ParseLimits::BuiltIn();
  auto size_option = [&](const char* name, uint64_t& field, const std::string& what) {
    cmd->add_option(name, field, what + " (default and largest allowed: " + FormatBytes(field) +
                                     "; K/M/G/T suffixes are powers of 1024)")
        ->transform(CLI::AsSizeValue(false))
        ->check(CLI::Range(uint64_t{0}, field))
        ->group("Limits (untrusted input)");
  };
  size_option("--max-bytes", o.limits.max_total_bytes, "Total tensor bytes a model may declare");
  size_option("--max-alloc", o.limits.max_single_allocation,
              "Largest single buffer or uncompressed ZIP member");
  size_option("--max-header", o.limits.max_header_bytes,
              "Largest header: safetensors JSON, ZIP directory, NPY header, data.pkl");
  cmd->add_option("--max-items", o.limits.max_item_count,
                  "Most tensors, metadata entries, ZIP members or pickle memo entries (default and "
                  "largest allowed: " + std::to_string(cap.max_item_count) + ")")
      ->check(CLI::Range(uint64_t{0}, cap.max_item_count))
      ->group("Limits (untrusted input)");
  cmd->add_option("--max-ratio", o.limits.max_decompression_ratio,
                  "Largest uncompressed/compressed ratio of a DEFLATE member (default and largest "
                  "allowed: " + std::to_string(cap.max_decompression_ratio) + ")")
      ->check(CLI::Range(uint64_t{1}, cap.max_decompression_ratio))
      ->group("Limits (untrusted input)");
}


}  // namespace amn::cli
