#!/usr/bin/env bash
# A fuzz campaign: runs libFuzzer targets of a fuzz build for SECONDS each,
# JOBS at a time, with the same corpus and seed directories as their ctest
# smoke runs (read from ctest, so the seed list lives in fuzz/CMakeLists.txt
# only), and prints one Markdown row per target: executions, edges covered
# (libFuzzer's `cov`), features, corpus size, minutes, crashes.
# Usage: fuzz/campaign.sh BUILD_DIR SECONDS [JOBS] [TARGET...]
#   e.g. fuzz/campaign.sh build/clang-asan 600 2 safetensors_fuzz gguf_fuzz
# Every target of the build when none is named. Logs and any crash inputs
# stay in BUILD_DIR/fuzz/campaign/<target>/.
set -euo pipefail

build=${1:?usage: campaign.sh BUILD_DIR SECONDS [JOBS] [TARGET...]}
seconds=${2:?usage: campaign.sh BUILD_DIR SECONDS [JOBS] [TARGET...]}
jobs=${3:-1}
shift $(( $# < 3 ? $# : 3 ))

# Each fuzz test's command line (ctest's JSON), one per line: NAME ARGV...
commands=$(ctest --test-dir "$build" -L fuzz --show-only=json-v1 | python3 -c '
import json, shlex, sys
for test in json.load(sys.stdin)["tests"]:
    name = test["name"].removeprefix("fuzz/")
    argv = test.get("command") or []
    if argv and argv[0].endswith("_fuzz"):
        print(name, shlex.join(argv))
')
if [ $# -eq 0 ]; then
  set -- $(awk '{print $1}' <<<"$commands")
fi

run_one() {
  local target=$1 line dir
  line=$(awk -v t="$target" '$1 == t { $1 = ""; print substr($0, 2) }' <<<"$commands")
  if [ -z "$line" ]; then echo "campaign: no fuzz target '$target' in $build" >&2; return 1; fi
  dir="$build/fuzz/campaign/$target"
  mkdir -p "$dir/corpus"
  eval "set -- $line"
  local binary=$1; shift
  shift  # the smoke run's -max_total_time
  # The smoke run's scratch corpus is replaced by the campaign's own; the
  # seed directories after it are kept.
  local rest=()
  for arg in "$@"; do
    case "$arg" in -print_final_stats=*) ;; */corpus/"$target") ;; *) rest+=("$arg") ;; esac
  done
  "$binary" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$dir/" \
    "$dir/corpus" "${rest[@]}" >"$dir/log" 2>&1 || true
}

for target in "$@"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_one "$target" &
done
wait

echo "| target | executions | edges (cov) | features (ft) | corpus | minutes | crashes |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for target in "$@"; do
  dir="$build/fuzz/campaign/$target"
  log="$dir/log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  done_line=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$done_line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$done_line")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$done_line")
  crashes=$(find "$dir" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' \
            -o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' | wc -l)
  if grep -q 'ERROR: \(AddressSanitizer\|libFuzzer\|LeakSanitizer\)\|runtime error:' "$log"; then
    crashes=$(( crashes > 0 ? crashes : 1 ))
  fi
  echo "| $target | ${execs:-?} | ${cov:-?} | ${ft:-?} | ${corp:-?} | $(( seconds / 60 )) | $crashes |"
done
