#!/usr/bin/env bash
# Multi-thread scaling of `amn remember` and `amn forget` against the
# machine's multi-thread memory bandwidth (issue 18), on a bare machine: needs
# bash and coreutils only (no python, bc, awk or /usr/bin/time; the timing,
# sync and peak RSS come from perf/timed_run).
#
#   perf/thread_scaling.sh WORK_DIR [--gib 4] [--threads "1 2 4 8 16"] [--reps 2]
#                          [--budget 330] [--hidden 2048]
#
# Steps: bandwidth_mt (copy/write floor per thread count); synthetic_model
# writes a Llama-shaped BF16 model of --gib GiB; `amn forget --scheme fp8` and
# `amn convert --scheme q8_0` make the FP8 and GGUF inputs; then, --reps
# rounds, every -j N: remember FP8 -> BF16, remember GGUF Q8_0 -> BF16,
# forget BF16 -> fp8, forget BF16 -> nf4, plus `cp` of the BF16 model once
# per round. Each run starts after the previous output is removed and synced;
# "s" is the command's wall time, "s+sync" adds the sync(2) after it. GB/s is
# memory traffic, (input bytes + output bytes) / s, compared with
# bandwidth_mt's copy GB/s (read + write) at the same thread count. Best of
# the rounds. A step that fails is logged and the run goes on; runs that would
# start after --budget seconds are skipped (and shown as skipped), so the
# whole script ends in about budget + one run. Exit status 1 if an amn run
# failed (the report is complete either way), 2 for bad arguments.
#
# Env: AMN     the amn command, words split on spaces (default: the bundle's
#              amn when run from a perf/bundle.sh directory, else build/gcc/cli/amn)
#      TOOLS   directory of synthetic_model, bandwidth_mt, timed_run
#      LOADER  command prefix for those tools (the bundle's loader), may be empty
#      OUT     if set, the report is also written to $OUT/thread_scaling.md
#              and the command log to $OUT/thread_scaling.log
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$here/ld-linux-x86-64.so.2" ] && [ -f "$here/amn" ]; then  # a perf/bundle.sh directory
  bundle_prefix="$here/ld-linux-x86-64.so.2 --library-path $here/lib"
  : "${AMN:=$bundle_prefix $here/amn}" "${TOOLS:=$here}" "${LOADER:=$bundle_prefix}"
else
  : "${AMN:=build/gcc/cli/amn}" "${TOOLS:=build/gcc/perf}" "${LOADER:=}"
fi
read -r -a amn <<<"$AMN"
read -r -a loader <<<"$LOADER"

work="" gib=4 threads="1 2 4 8 16" reps=2 budget=330 hidden=2048
while [ $# -gt 0 ]; do
  case "$1" in
    --gib) gib=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --hidden) hidden=$2; shift 2 ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) if [ -z "$work" ]; then work=$1; shift; else echo "unknown argument: $1" >&2; exit 2; fi ;;
  esac
done
if [ -z "$work" ]; then echo "usage: perf/thread_scaling.sh WORK_DIR [--gib 4] [--threads \"1 2 4 8 16\"] [--reps 2] [--budget 330]" >&2; exit 2; fi
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd)
report_dir=${OUT:-$work}
mkdir -p "$report_dir" || report_dir=$work
report=$report_dir/thread_scaling.md
log=$report_dir/thread_scaling.log
: >"$report"
: >"$log"
start_s=$SECONDS

say() { printf '%s\n' "$*" | tee -a "$report"; }
note() { printf '%s\n' "$*" >>"$log"; printf '%s\n' "$*" >&2; }
fixed2() {  # fixed2 NUM DEN: NUM/DEN with two decimals, integers only
  local q=$(( ($1 * 100 + $2 / 2) / $2 ))
  printf '%d.%02d' $((q / 100)) $((q % 100))
}
size_of() {  # bytes of a file or of every file under a directory
  local total=0 f n
  while IFS= read -r f; do
    n=$(stat -c %s "$f" 2>/dev/null || wc -c <"$f")
    total=$((total + n))
  done < <(find "$1" -type f 2>/dev/null)
  echo "$total"
}
# timed LABEL CMD...: runs CMD through timed_run --sync, logging its output;
# sets t_ns, t_sync_ns, t_rss_kib, t_status (t_status=255 if timed_run failed).
timed() {
  local label=$1 line
  shift
  note "== $label: $*"
  line=$(${loader[@]+"${loader[@]}"} "$TOOLS/timed_run" --sync --log "$log" -- "$@")
  if [ -z "$line" ]; then t_ns=0 t_sync_ns=0 t_rss_kib=0 t_status=255; note "   timed_run failed"; return; fi
  read -r t_ns t_sync_ns t_rss_kib t_status <<<"$line"
  note "   status $t_status, $(fixed2 "$t_ns" 1000000000) s, sync $(fixed2 "$t_sync_ns" 1000000000) s, peak RSS $((t_rss_kib / 1024)) MiB"
}

for tool in synthetic_model bandwidth_mt timed_run; do
  if [ ! -f "$TOOLS/$tool" ]; then echo "missing $TOOLS/$tool (build the perf tools or use perf/bundle.sh)" >&2; exit 1; fi
done

say "# amn multi-thread scaling"
say ""
say "* date: $(date -u '+%Y-%m-%d %H:%M UTC' 2>/dev/null); host: $(uname -srm)"
say "* CPU: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//'), $(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN) CPUs online"
say "* memory: $(grep -m1 MemTotal /proc/meminfo 2>/dev/null | tr -s ' ' | cut -d' ' -f2-3); work dir $work on $(stat -f -c %T "$work" 2>/dev/null || echo '?')"
say "* amn: $("${amn[@]}" --version 2>&1 | head -1); active target: $("${amn[@]}" targets 2>/dev/null | sed -n 's/^Active: \([^.]*\).*/\1/p')"
say "* command: AMN=\"$AMN\" $0 $work --gib $gib --threads \"$threads\" --reps $reps --budget $budget --hidden $hidden"
say ""

# Space: the BF16 model, FP8 (~0.55x), GGUF Q8_0 (~0.55x) and one output (1x).
gib_int=${gib%%.*} gib_frac=${gib#"$gib_int"}; gib_frac=${gib_frac#.}00
need_kib=$(( (10#${gib_int:-0} * 100 + 10#${gib_frac:0:2}) * 1048576 * 32 / 1000 ))
avail_kib=$(df -Pk "$work" 2>/dev/null | tail -1 | tr -s ' ' | cut -d' ' -f4)
if [ -n "$avail_kib" ] && [ "$avail_kib" -lt "$need_kib" ] 2>/dev/null; then
  note "warning: $work has $((avail_kib / 1048576)) GiB free; about $((need_kib / 1048576)) GiB are needed"
fi

# 1. The bandwidth floor per thread count.
declare -A copy_c write_c  # centi-GB/s
list=$(echo "$threads" | tr ' ' ',')
note "== bandwidth_mt --threads $list --reps 3"
bw=$(${loader[@]+"${loader[@]}"} "$TOOLS/bandwidth_mt" --threads "$list" --reps 3 2>>"$log")
printf '%s\n' "$bw" >>"$log"
while read -r n c w _; do
  case "$n" in [0-9]*) copy_c[$n]=$((10#${c/./})) write_c[$n]=$((10#${w/./})) ;; esac
done <<<"$bw"
say "## Memory bandwidth floor (bandwidth_mt)"
say ""
say "$(grep '^#' <<<"$bw" | sed 's/^# */* /')"
say ""
say "| threads | copy GB/s (read + write) | write GB/s |"
say "|---|---|---|"
for j in $threads; do
  if [ -n "${copy_c[$j]:-}" ]; then
    say "| $j | $(fixed2 "${copy_c[$j]}" 100) | $(fixed2 "${write_c[$j]}" 100) |"
  else
    say "| $j | failed | failed |"
  fi
done
say ""

# 2. The inputs.
bf16=$work/bf16 fp8=$work/fp8 gguf=$work/q8_0.gguf out=$work/out
rm -rf "$bf16" "$fp8" "$gguf" "$out"
timed "synthetic_model" ${loader[@]+"${loader[@]}"} "$TOOLS/synthetic_model" "$bf16" --gib "$gib" --hidden "$hidden"
say "* synthetic_model --gib $gib: status $t_status, $(fixed2 "$t_ns" 1000000000) s"
timed "forget fp8 (input)" "${amn[@]}" forget "$bf16" -o "$fp8" --scheme fp8 --force -q
say "* amn forget --scheme fp8 (FP8 input): status $t_status, $(fixed2 "$t_ns" 1000000000) s"
timed "convert q8_0 (input)" "${amn[@]}" convert "$bf16" -o "$gguf" --scheme q8_0 --force -q
say "* amn convert --scheme q8_0 (GGUF input): status $t_status, $(fixed2 "$t_ns" 1000000000) s"
bf16_bytes=$(size_of "$bf16") fp8_bytes=$(size_of "$fp8") gguf_bytes=$(size_of "$gguf")
say "* sizes: BF16 $((bf16_bytes / 1048576)) MiB, FP8 $((fp8_bytes / 1048576)) MiB, GGUF Q8_0 $((gguf_bytes / 1048576)) MiB"
say ""

# 3. The runs. ops: name|input|amn arguments after -j N
ops=("remember FP8 -> BF16|$fp8|remember $fp8 -o $out --force -q"
     "remember GGUF Q8_0 -> BF16|$gguf|remember $gguf -o $out --force -q"
     "forget BF16 -> fp8|$bf16|forget $bf16 -o $out --scheme fp8 --force -q"
     "forget BF16 -> nf4|$bf16|forget $bf16 -o $out --scheme nf4 --force -q")
declare -A best_ns best_sync_ns best_rss traffic failed
cp_best_ns=0 cp_best_sync_ns=0 skipped=0 failures=0
descending=$(printf '%s\n' $threads | sort -rn | tr '\n' ' ')
for round in $(seq "$reps"); do
  for j in $descending; do  # the widest first: the numbers that matter most
    for op in "${ops[@]}"; do
      IFS='|' read -r name input args <<<"$op"
      key="$name|$j"
      if [ $((SECONDS - start_s)) -ge "$budget" ]; then skipped=$((skipped + 1)); continue; fi
      rm -rf "$out"; sync
      read -r -a argv <<<"$args"
      timed "$name -j $j (round $round)" "${amn[@]}" -j "$j" "${argv[@]}"
      if [ "$t_status" != 0 ]; then failed[$key]=$t_status failures=$((failures + 1)); continue; fi
      if [ -z "${best_ns[$key]:-}" ] || [ "$t_ns" -lt "${best_ns[$key]}" ]; then
        best_ns[$key]=$t_ns best_sync_ns[$key]=$((t_ns + t_sync_ns)) best_rss[$key]=$t_rss_kib
        traffic[$key]=$(( $(size_of "$input") + $(size_of "$out") ))
      fi
    done
  done
  if [ $((SECONDS - start_s)) -lt "$budget" ]; then
    rm -rf "$out"; sync
    timed "cp of the BF16 model (round $round)" cp -r "$bf16" "$out"
    if [ "$t_status" = 0 ] && { [ "$cp_best_ns" = 0 ] || [ "$t_ns" -lt "$cp_best_ns" ]; }; then
      cp_best_ns=$t_ns cp_best_sync_ns=$((t_ns + t_sync_ns))
    fi
  else
    skipped=$((skipped + 1))
  fi
done
rm -rf "$out"

say "## amn -j N (best of $reps; s: the command, s+sync: with the sync(2) after it)"
say ""
say "GB/s = (input + output bytes) / s; floor = bandwidth_mt copy GB/s at the same thread count."
say ""
say "| run | -j | s | s+sync | GB/s | % of copy floor | speed-up vs -j1 | peak RSS MiB |"
say "|---|---|---|---|---|---|---|---|"
for op in "${ops[@]}"; do
  IFS='|' read -r name _ <<<"$op"
  one=${best_ns["$name|1"]:-}
  for j in $threads; do
    key="$name|$j"
    ns=${best_ns[$key]:-}
    if [ -z "$ns" ]; then
      if [ -n "${failed[$key]:-}" ]; then say "| $name | $j | failed (exit ${failed[$key]}) | | | | | |"
      else say "| $name | $j | skipped (budget) | | | | | |"; fi
      continue
    fi
    bytes=${traffic[$key]}
    pct="-"
    if [ -n "${copy_c[$j]:-}" ] && [ "${copy_c[$j]}" -gt 0 ]; then
      pct=$(fixed2 $((bytes * 1000000 / (ns * copy_c[$j]))) 100)  # copy_c: centi-GB/s
    fi
    speedup="-"
    [ -n "$one" ] && speedup=$(fixed2 "$one" "$ns")
    say "| $name | $j | $(fixed2 "$ns" 1000000000) | $(fixed2 "${best_sync_ns[$key]}" 1000000000) | $(fixed2 "$bytes" "$ns") | $pct | $speedup | $((best_rss[$key] / 1024)) |"
  done
done
if [ "$cp_best_ns" != 0 ]; then
  say "| cp -r of the BF16 model | - | $(fixed2 "$cp_best_ns" 1000000000) | $(fixed2 "$cp_best_sync_ns" 1000000000) | $(fixed2 $((2 * bf16_bytes)) "$cp_best_ns") | | | |"
fi
say ""
[ "$skipped" -gt 0 ] && say "* $skipped runs skipped: past the --budget of $budget s"
say "* total $((SECONDS - start_s)) s; command log: $log"
[ "$failures" -gt 0 ] && say "* $failures runs failed: see the command log"
[ -n "${OUT:-}" ] && echo "report: $report" >&2
[ "$failures" -eq 0 ]  # exit status 1 when any amn run failed
