#!/usr/bin/env bash
# `amn remember` of files whose tensors keep their dtype (.npz/.pth without
# --to, or any input with flags that keep its dtypes) against `cp` of the
# output it writes, each followed by `sync` (issue 18's goal: within 1.05x
# cp). Per input: remember as built (tensors copied file to file with
# copy_file_range), remember with AMN_NO_COPY_FILE_RANGE=1 (pread + write,
# the path before issue 18), and cp, interleaved so all three see the same
# machine; best of N wall times, and the peak RSS (/usr/bin/time -v) of the
# best run. Prints one Markdown row per input.
#   perf/remember_vs_cp.sh INPUT [INPUT...]
# Env: AMN (default build/gcc/cli/amn), REPS (default 3), OUT (scratch dir,
# default a fresh one under /tmp), FLAGS (extra remember flags, e.g. "-j 2").
# Make inputs with /usr/bin/python3 perf/array_model.py DIR --gib 1.1.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: perf/remember_vs_cp.sh INPUT [INPUT...]" >&2; exit 2; }
amn=${AMN:-build/gcc/cli/amn}
reps=${REPS:-3}
out=${OUT:-$(mktemp -d /tmp/amn-remember-vs-cp.XXXXXX)}
flags=${FLAGS:-}

# Wall seconds of "$@" followed by sync; the peak RSS in KiB goes to $out/rss.
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
# Best of the "seconds rss" pairs given: the fastest, with its RSS.
best() { printf '%s\n' "$@" | sort -g | head -1; }

echo "$("$amn" --version | head -1); flags: ${flags:-none}; best of $reps"
echo
echo "| input | output MiB | remember s (RSS MiB) | remember, AMN_NO_COPY_FILE_RANGE=1 s (RSS MiB) | cp s | remember / cp | no-copy / cp |"
echo "|---|---|---|---|---|---|---|"
for input in "$@"; do
  r=() n=() c=()
  for _ in $(seq "$reps"); do
    rm -f "$out/r.safetensors" "$out/n.safetensors" "$out/c.safetensors"
    # shellcheck disable=SC2086
    t=$(seconds "$amn" remember "$input" -o "$out/r.safetensors" --force -q $flags)
    r+=("$t $(cat "$out/rss")")
    rm -f "$out/r.safetensors"
    # shellcheck disable=SC2086
    t=$(seconds env AMN_NO_COPY_FILE_RANGE=1 "$amn" remember "$input" -o "$out/n.safetensors" --force -q $flags)
    n+=("$t $(cat "$out/rss")")
    t=$(seconds cp "$out/n.safetensors" "$out/c.safetensors")
    c+=("$t")
    cmp -s "$out/n.safetensors" "$out/c.safetensors"
  done
  # The copy path's output is the same bytes as the read-and-write one.
  "$amn" remember "$input" -o "$out/r.safetensors" --force -q $flags
  cmp "$out/r.safetensors" "$out/n.safetensors"
  size=$(stat -c %s "$out/n.safetensors")
  read -r br brss <<<"$(best "${r[@]}")"
  read -r bn bnrss <<<"$(best "${n[@]}")"
  bc_=$(best "${c[@]}")
  printf '| %s | %d | %.2f (%d) | %.2f (%d) | %.2f | %.2f | %.2f |\n' "$(basename "$input")" \
    $((size / 1048576)) "$br" $((brss / 1024)) "$bn" $((bnrss / 1024)) "$bc_" \
    "$(echo "$br / $bc_" | bc -l)" "$(echo "$bn / $bc_" | bc -l)"
done
rm -f "$out/r.safetensors" "$out/n.safetensors" "$out/c.safetensors" "$out/time.txt" "$out/rss"
