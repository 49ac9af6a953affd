#!/usr/bin/env bash
# `amn forget` of a plain BF16 model against `cp` of its input, both ending
# in `sync` (issue 15's goal: forget within 1.5x cp of the input). Best of
# N wall times per scheme, `cp` interleaved with each scheme so both see the
# same machine; prints one Markdown row per scheme.
#   perf/forget_vs_cp.sh MODEL_DIR [schemes...]   (default: every scheme)
# Env: AMN (default build/gcc/cli/amn), REPS (default 3), OUT (scratch dir,
# default a fresh one under /tmp), AMN_ISA to cap the target.
# Make a model with perf/plain_model.py OUT_DIR --gib 2.1.
set -euo pipefail
model=${1:?usage: perf/forget_vs_cp.sh MODEL_DIR [schemes...]}
shift
schemes=("$@")
if [ ${#schemes[@]} -eq 0 ]; then
  schemes=(fp8 fp8-per-channel fp8-fine-grained nf4 nf4-dq fp4 fp4-dq int8)
fi
amn=${AMN:-build/gcc/cli/amn}
reps=${REPS:-3}
out=${OUT:-$(mktemp -d /tmp/amn-forget-vs-cp.XXXXXX)}
input_bytes=$(du -cb "$model"/*.safetensors | tail -1 | cut -f1)

# shellcheck source=perf/timing.sh
. "$(dirname "${BASH_SOURCE[0]}")/timing.sh"

echo "input: $model, $((input_bytes / 1048576)) MiB; amn $("$amn" --version | head -1); AMN_ISA=${AMN_ISA:-native}"
echo
echo "| scheme | output MiB | forget s | cp s | forget / cp |"
echo "|---|---|---|---|---|"
for scheme in "${schemes[@]}"; do
  f=() c=()
  for _ in $(seq "$reps"); do
    rm -rf "$out/forget" "$out/cp"
    f+=("$(seconds "$amn" forget "$model" -o "$out/forget" --scheme "$scheme" --force -q)")
    mkdir -p "$out/cp"
    c+=("$(seconds cp -r "$model"/. "$out/cp/")")
  done
  size=$(du -cb "$out/forget" | tail -1 | cut -f1)
  bf=$(best "${f[@]}") bc_=$(best "${c[@]}")
  printf '| %s | %d | %.2f | %.2f | %.2f |\n' "$scheme" $((size / 1048576)) "$bf" "$bc_" \
    "$(echo "$bf / $bc_" | bc -l)"
done
rm -rf "$out/forget" "$out/cp"
