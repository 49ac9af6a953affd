// The SIGBUS handler behind MappingGuard: a fixed table of guarded ranges
// read with lock-free atomics (async-signal-safe), a zero page mapped over a
// faulting page, and the previous handler chained for every other fault.
#include "formats/sigbus_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <utility>

namespace amn::formats {
namespace {

// Ranges guarded at once, over every thread of the process (each Remember
// maps one file per input it reads). A full table makes the engine read
// files instead of mapping them, so this bounds nothing but speed.
constexpr int kSlots = 256;

struct Slot {
  std::atomic<bool> used{false};
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> faulted{false};
  std::atomic<bool> writable{false};  // Access::kWrite: the stand-in page takes stores
};
static_assert(std::atomic<uintptr_t>::is_always_lock_free);
static_assert(std::atomic<bool>::is_always_lock_free);

Slot g_slots[kSlots];
std::mutex g_mutex;  // registration, installation and restoring
int g_registered = 0;
struct sigaction g_previous = {};
uintptr_t g_page_size = 4096;

// Hands a fault that is not ours to whatever would have seen it without us.
void Chain(int sig, siginfo_t* info, void* context) {
  if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN &&
      g_previous.sa_handler != nullptr) {
    g_previous.sa_handler(sig);
    return;
  }
  // Default action: restore it. A fault re-executes the faulting access on
  // return and dies of SIGBUS as it would have; a sent signal is re-raised
  // (blocked until this handler returns).
  struct sigaction fallback = {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(SIGBUS, &fallback, nullptr);
  if (info == nullptr || info->si_code <= 0) raise(SIGBUS);
}

extern "C" void OnSigbus(int sig, siginfo_t* info, void* context) {
  const uintptr_t address = info != nullptr ? reinterpret_cast<uintptr_t>(info->si_addr) : 0;
  if (info != nullptr && info->si_code > 0) {
    for (Slot& slot : g_slots) {
      if (!slot.used.load(std::memory_order_acquire)) continue;
      if (address < slot.begin.load(std::memory_order_relaxed) ||
          address >= slot.end.load(std::memory_order_relaxed)) {
        continue;
      }
      // Flag first: whoever later reads the zero page also sees the flag.
      slot.faulted.store(true, std::memory_order_seq_cst);
      void* page = reinterpret_cast<void*>(address & ~(g_page_size - 1));
      const int prot =
          slot.writable.load(std::memory_order_relaxed) ? PROT_READ | PROT_WRITE : PROT_READ;
      if (mmap(page, g_page_size, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
          MAP_FAILED) {
        return;  // the access is retried: a read sees zeros, a store goes nowhere
      }
      break;
    }
  }
  Chain(sig, info, context);
}

}  // namespace

MappingGuard MappingGuard::Register(const void* begin, size_t bytes, Access access) {
  MappingGuard guard;
  if (begin == nullptr || bytes == 0) return guard;
  std::lock_guard<std::mutex> lock(g_mutex);
  int free_slot = -1;
  for (int s = 0; s < kSlots && free_slot < 0; ++s) {
    if (!g_slots[s].used.load(std::memory_order_relaxed)) free_slot = s;
  }
  if (free_slot < 0) return guard;
  if (g_registered == 0) {
    g_page_size = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    struct sigaction action = {};
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGBUS, &action, &g_previous) != 0) return guard;
  }
  ++g_registered;
  Slot& slot = g_slots[free_slot];
  const uintptr_t start = reinterpret_cast<uintptr_t>(begin);
  slot.begin.store(start, std::memory_order_relaxed);
  slot.end.store(start + bytes, std::memory_order_relaxed);
  slot.faulted.store(false, std::memory_order_relaxed);
  slot.writable.store(access == Access::kWrite, std::memory_order_relaxed);
  slot.used.store(true, std::memory_order_release);
  guard.slot_ = free_slot;
  return guard;
}

MappingGuard::MappingGuard(MappingGuard&& other) noexcept : slot_(std::exchange(other.slot_, -1)) {}

MappingGuard& MappingGuard::operator=(MappingGuard&& other) noexcept {
  if (this != &other) {
    Release();
    slot_ = std::exchange(other.slot_, -1);
  }
  return *this;
}

MappingGuard::~MappingGuard() { Release(); }

bool MappingGuard::faulted() const {
  return slot_ >= 0 && g_slots[slot_].faulted.load(std::memory_order_seq_cst);
}

void MappingGuard::Release() {
  if (slot_ < 0) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_slots[slot_].used.store(false, std::memory_order_release);
  slot_ = -1;
  if (--g_registered == 0) sigaction(SIGBUS, &g_previous, nullptr);
}

}  // namespace amn::formats
