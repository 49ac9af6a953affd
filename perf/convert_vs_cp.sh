#!/usr/bin/env bash
# `amn convert` of a plain BF16 model to GGUF F16 against `cp` of the GGUF
# it wrote, both ending in `sync` (issue 16's goal: within 1.2x cp of the
# output size). Runs interleaved, REPS times, for each amn binary given, so
# two builds (before/after) see the same machine; one line per run.
#   perf/convert_vs_cp.sh MODEL_DIR AMN [AMN ...]
# Env: REPS (default 3), OUT (scratch dir, default a fresh one under /tmp).
# Make a model with perf/plain_model.py OUT_DIR --gib 1.
set -euo pipefail
model=${1:?usage: perf/convert_vs_cp.sh MODEL_DIR AMN [AMN ...]}
shift
reps=${REPS:-3}
out=${OUT:-$(mktemp -d /tmp/amn-convert-vs-cp.XXXXXX)}
# shellcheck source=perf/timing.sh
. "$(dirname "${BASH_SOURCE[0]}")/timing.sh"
for _ in $(seq "$reps"); do
  for amn in "$@"; do
    rm -f "$out/o.gguf" "$out/c.gguf"
    sync
    a=$(seconds "$amn" convert -q "$model" -o "$out/o.gguf" --scheme f16)
    c=$(seconds cp "$out/o.gguf" "$out/c.gguf")
    printf '%s: convert %.2f s, cp %.2f s, convert / cp %.2f\n' "$amn" "$a" "$c" "$(echo "$a / $c" | bc -l)"
  done
done
rm -f "$out/o.gguf" "$out/c.gguf"
