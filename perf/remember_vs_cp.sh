#!/usr/bin/env bash
# `amn remember` of files whose tensors keep their dtype (.npz/.pth without
# --to, or any input with flags that keep its dtypes) against `cp` of the
# output it writes, each followed by `sync` (issue 18's goal: within 1.05x
# cp). Per input, each round runs: remember as built (copy_file_range only
# where it spares the kernel moving the bytes, else pread + write),
# remember with AMN_COPY_FILE_RANGE=1 (every kept tensor copied file to
# file), remember with AMN_NO_COPY_FILE_RANGE=1 (pread + write only), and
# cp, interleaved so all four see the same machine. Prints one Markdown row
# per input: min and median wall seconds of each over the rounds, the peak
# RSS (/usr/bin/time -v) of each one's fastest run, and min / min and
# median / median against cp.
#   perf/remember_vs_cp.sh INPUT [INPUT...]
# Env: AMN (default build/gcc/cli/amn), REPS (rounds, default 3), OUT
# (scratch dir, default a fresh one under /tmp), FLAGS (extra remember
# flags, e.g. "-j 2").
# Make inputs with /usr/bin/python3 perf/array_model.py DIR --gib 1.1.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: perf/remember_vs_cp.sh INPUT [INPUT...]" >&2; exit 2; }
amn=${AMN:-build/gcc/cli/amn}
reps=${REPS:-3}
out=${OUT:-$(mktemp -d /tmp/amn-remember-vs-cp.XXXXXX)}
flags=${FLAGS:-}

# shellcheck source=perf/timing.sh
. "$(dirname "${BASH_SOURCE[0]}")/timing.sh"
# This script's own seconds (after timing.sh's): the same, and the peak RSS
# in KiB goes to $out/rss.
seconds() {
  local start end
  sync
  start=$(date +%s.%N)
  /usr/bin/time -v -o "$out/time.txt" "$@" >/dev/null
  sync
  end=$(date +%s.%N)
  awk -F': ' '/Maximum resident set size/ {print $2}' "$out/time.txt" >"$out/rss"
  echo "$end - $start" | bc -l
}
# "min/median (RSS MiB)" of the pairs given.
cell() {
  local b brss
  read -r b brss <<<"$(best "$@")"
  printf '%.2f/%.2f (%d)' "$b" "$(median "$@")" $((brss / 1024))
}
# "min/min median/median" ratios of one path's pairs to cp's ($cmin, $cmed).
ratio() {
  local b
  b=$(best "$@" | cut -d' ' -f1)
  printf '%.2f/%.2f' "$(echo "$b / $cmin" | bc -l)" "$(echo "$(median "$@") / $cmed" | bc -l)"
}

echo "$("$amn" --version | head -1); flags: ${flags:-none}; $reps rounds; seconds min/median"
echo
echo "| input | output MiB | remember (RSS MiB) | AMN_COPY_FILE_RANGE=1 (RSS MiB) | AMN_NO_COPY_FILE_RANGE=1 (RSS MiB) | cp | remember / cp | forced copy / cp | no copy / cp |"
echo "|---|---|---|---|---|---|---|---|---|"
for input in "$@"; do
  r=() f=() n=() c=()
  for _ in $(seq "$reps"); do
    rm -f "$out/r.safetensors" "$out/f.safetensors" "$out/n.safetensors" "$out/c.safetensors"
    # shellcheck disable=SC2086
    t=$(seconds "$amn" remember "$input" -o "$out/r.safetensors" --force -q $flags)
    r+=("$t $(cat "$out/rss")")
    # shellcheck disable=SC2086
    t=$(seconds env AMN_COPY_FILE_RANGE=1 "$amn" remember "$input" -o "$out/f.safetensors" --force -q $flags)
    f+=("$t $(cat "$out/rss")")
    rm -f "$out/r.safetensors" "$out/f.safetensors"
    # shellcheck disable=SC2086
    t=$(seconds env AMN_NO_COPY_FILE_RANGE=1 "$amn" remember "$input" -o "$out/n.safetensors" --force -q $flags)
    n+=("$t $(cat "$out/rss")")
    t=$(seconds cp "$out/n.safetensors" "$out/c.safetensors")
    c+=("$t 0")
    cmp -s "$out/n.safetensors" "$out/c.safetensors"
  done
  # Every path writes the same bytes.
  "$amn" remember "$input" -o "$out/r.safetensors" --force -q $flags
  AMN_COPY_FILE_RANGE=1 "$amn" remember "$input" -o "$out/f.safetensors" --force -q $flags
  cmp "$out/r.safetensors" "$out/n.safetensors"
  cmp "$out/f.safetensors" "$out/n.safetensors"
  size=$(stat -c %s "$out/n.safetensors")
  cmin=$(best "${c[@]}" | cut -d' ' -f1)
  cmed=$(median "${c[@]}")
  printf '| %s | %d | %s | %s | %s | %.2f/%.2f | %s | %s | %s |\n' "$(basename "$input")" \
    $((size / 1048576)) "$(cell "${r[@]}")" "$(cell "${f[@]}")" "$(cell "${n[@]}")" \
    "$cmin" "$cmed" "$(ratio "${r[@]}")" "$(ratio "${f[@]}")" "$(ratio "${n[@]}")"
done
rm -f "$out/r.safetensors" "$out/f.safetensors" "$out/n.safetensors" "$out/c.safetensors" \
  "$out/time.txt" "$out/rss"
