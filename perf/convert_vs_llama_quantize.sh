#!/usr/bin/env bash
# `amn convert` of a BF16 safetensors model straight to GGUF Q4_K_M against
# llama.cpp's llama_model_quantize (perf/llama_quantize.py, node-llama-cpp's
# prebuilt libllama) of the BF16 GGUF of the same model, one thread and all
# threads, interleaved in each round. llama-quantize needs the GGUF first:
# its time here excludes making it (amn convert --scheme bf16, timed and
# printed apart). Every time ends with `sync`; best of REPS per row.
#   perf/convert_vs_llama_quantize.sh MODEL_DIR
# Env: AMN (default build/gcc/cli/amn), REPS (3), OUT (scratch dir),
# SCHEME (q4_k_m) with FTYPE (15). Make a model with perf/plain_model.py.
set -euo pipefail
model=${1:?usage: perf/convert_vs_llama_quantize.sh MODEL_DIR}
amn=${AMN:-build/gcc/cli/amn}
reps=${REPS:-3}
scheme=${SCHEME:-q4_k_m}
ftype=${FTYPE:-15}
out=${OUT:-$(mktemp -d /tmp/amn-vs-llama-quantize.XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
cores=$(nproc)

# shellcheck source=perf/timing.sh
. "$(dirname "${BASH_SOURCE[0]}")/timing.sh"

echo "input: $model ($(du -cb "$model"/*.safetensors | tail -1 | cut -f1) bytes); $cores cores"
echo "BF16 GGUF for llama-quantize: $(seconds "$amn" convert "$model" -o "$out/bf16.gguf" \
  --scheme bf16 --force -q) s"
echo
echo "| threads | amn convert s | llama_model_quantize s | amn / llama |"
echo "|---|---:|---:|---:|"
for threads in 1 "$cores"; do
  a=() l=()
  for _ in $(seq "$reps"); do
    rm -f "$out/amn.gguf" "$out/llama.gguf"
    a+=("$(seconds "$amn" convert "$model" -o "$out/amn.gguf" --scheme "$scheme" -j "$threads" -q)")
    l+=("$(seconds /usr/bin/python3 "$here/llama_quantize.py" "$out/bf16.gguf" "$out/llama.gguf" \
      "$ftype" "$threads")")
  done
  ba=$(best "${a[@]}") bl=$(best "${l[@]}")
  printf '| %s | %.2f | %.2f | %.2f |\n' "$threads" "$ba" "$bl" "$(echo "$ba / $bl" | bc -l)"
done
ls -l "$out/amn.gguf" "$out/llama.gguf"
rm -rf "$out"
