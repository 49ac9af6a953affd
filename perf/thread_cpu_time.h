// Thread CPU time of repeated calls, for the peer tools that compare encoders
// in one process: on a shared, loaded machine wall time mostly measures the
// other tenants, while CLOCK_THREAD_CPUTIME_ID counts only this thread.
#ifndef AMN_PERF_THREAD_CPU_TIME_H_
#define AMN_PERF_THREAD_CPU_TIME_H_

#include <time.h>

#include <algorithm>
#include <functional>
#include <vector>

namespace amn::perf {

inline double ThreadNs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

struct CpuTiming {
  double min_ns, median_ns;
};

// One warm-up call, then `reps` timed calls: the best and the median.
inline CpuTiming TimeCpu(const std::function<void()>& call, int reps) {
  call();
  std::vector<double> ns;
  for (int r = 0; r < std::max(reps, 1); ++r) {
    const double t0 = ThreadNs();
    call();
    ns.push_back(ThreadNs() - t0);
  }
  std::sort(ns.begin(), ns.end());
  return {ns.front(), ns[ns.size() / 2]};
}

}  // namespace amn::perf

#endif  // AMN_PERF_THREAD_CPU_TIME_H_
