#!/usr/bin/env bash
# `amn remember` of quantized models (GPTQ, AWQ, bitsandbytes, FP8, GGUF) to
# their default output against `cp -r` of that output, each followed by
# `sync` (issue 18's goals: FP8 within 1.0x cp, the others within 1.1x).
# Per input: one remember makes the reference output that cp copies; then
# each round runs, interleaved so all three see the same machine, remember
# with the ring writer (the default), cp -r of the reference, and remember
# with AMN_OUTPUT_WRITER=mapped, every output compared with the reference.
# Prints one Markdown row per input: min and median wall seconds of each
# over the rounds and min / min, median / median against cp.
#   perf/remember_quantized_vs_cp.sh INPUT [INPUT...]
# Env: AMN (default build/gcc/cli/amn), REPS (rounds, default 6), OUT
# (scratch dir on the file system to measure, default a fresh one under
# /tmp), FLAGS (extra remember flags, e.g. "-j 2").
# Make inputs with /usr/bin/python3 perf/int4_model.py DIR --format gptq|awq,
# perf/plain_model.py then `amn forget --scheme nf4|int8|fp8` or
# `amn convert --scheme q8_0` (docs/performance/remember-vs-cp.md).
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: perf/remember_quantized_vs_cp.sh INPUT [INPUT...]" >&2; exit 2; }
amn=${AMN:-build/gcc/cli/amn}
reps=${REPS:-6}
out=${OUT:-$(mktemp -d /tmp/amn-remember-quantized-vs-cp.XXXXXX)}
flags=${FLAGS:-}

# shellcheck source=perf/timing.sh
. "$(dirname "${BASH_SOURCE[0]}")/timing.sh"
# Every file of the output equals the reference's.
same() { diff -r -q "$out/ref" "$1" >/dev/null || { echo "$1 differs from the reference" >&2; exit 1; }; }

echo "$("$amn" --version | head -1); flags: ${flags:-none}; $reps rounds; seconds min/median"
echo
echo "| input | output MiB | remember, ring | remember, mapped | cp -r | ring / cp | mapped / cp |"
echo "|---|---|---|---|---|---|---|"
for input in "$@"; do
  rm -rf "$out/ref" "$out/ring" "$out/mapped" "$out/copy"
  # shellcheck disable=SC2086
  "$amn" remember "$input" -o "$out/ref" -q $flags
  ring=() mapped=() copy=()
  for _ in $(seq "$reps"); do
    sync
    # shellcheck disable=SC2086
    ring+=("$(seconds "$amn" remember "$input" -o "$out/ring" -q $flags)")
    same "$out/ring"
    rm -rf "$out/ring"
    sync
    copy+=("$(seconds cp -r "$out/ref" "$out/copy")")
    rm -rf "$out/copy"
    sync
    # shellcheck disable=SC2086
    mapped+=("$(seconds env AMN_OUTPUT_WRITER=mapped "$amn" remember "$input" -o "$out/mapped" -q $flags)")
    same "$out/mapped"
    rm -rf "$out/mapped"
  done
  cmin=$(best "${copy[@]}")
  cmed=$(median "${copy[@]}")
  printf '| %s | %d | %.2f/%.2f | %.2f/%.2f | %.2f/%.2f | %.2f/%.2f | %.2f/%.2f |\n' \
    "$(basename "$input")" $(($(du -sb "$out/ref" | cut -f1) / 1048576)) \
    "$(best "${ring[@]}")" "$(median "${ring[@]}")" \
    "$(best "${mapped[@]}")" "$(median "${mapped[@]}")" "$cmin" "$cmed" \
    "$(echo "$(best "${ring[@]}") / $cmin" | bc -l)" \
    "$(echo "$(median "${ring[@]}") / $cmed" | bc -l)" \
    "$(echo "$(best "${mapped[@]}") / $cmin" | bc -l)" \
    "$(echo "$(median "${mapped[@]}") / $cmed" | bc -l)"
  rm -rf "$out/ref"
done
