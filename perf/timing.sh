# shellcheck shell=bash
# Wall-clock helpers the perf/*_vs_*.sh scripts share (sourced, not run).
# Benchmarks, not tests: nothing here asserts a time.

# Wall seconds of "$@" (its stdout dropped) followed by sync, the sync inside
# the time: what a user waits for until the bytes are on disk.
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  sync
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

# The smallest of the numbers given (first fields of "seconds rest" pairs
# sort the same way).
best() { printf '%s\n' "$@" | sort -g | head -1; }

# The median of the first fields given (the lower middle one for an even
# count).
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
