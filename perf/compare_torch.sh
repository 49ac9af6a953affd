#!/usr/bin/env bash
# amn's dequantizers and quantizers (rows <in>_to_nf4 / _fp4 / _int8_rowwise)
# vs their PyTorch CPU formulations (perf/torch_peer.py), one thread each, at
# amn bench's two sizes. Prints one table: per row, amn's best target and its
# ns/element (cache, stream), amn's streaming time over the bandwidth floor,
# the PyTorch ns/element and PyTorch / amn. AMN_ISA=AVX2 (etc.) in the
# environment caps amn's targets, so "best" is then the capped target.
# Rows whose amn kernel is not in this build print "n/a"; without PyTorch the
# torch columns print "skipped". Not a test; nothing here asserts a speed.
#
# Usage: perf/compare_torch.sh [--quick] [--kernel TEXT] [--reps N]
#                              [--dtypes bf16,f32] [--markdown]
# Environment: AMN (default build/gcc/cli/amn), PYTHON (default: the first of
# python3, /usr/bin/python3 that can import torch).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
amn="${AMN:-$root/build/gcc/cli/amn}"
quick=()
kernel=""
reps=5
dtypes="bf16,f32"
markdown=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=(--quick); shift ;;
    --kernel) kernel="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --dtypes) dtypes="$2"; shift 2 ;;
    --markdown) markdown=1; shift ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare_torch.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  for candidate in python3 /usr/bin/python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import torch' 2>/dev/null; then
      python="$candidate"
      break
    fi
  done
  python="${python:-python3}"  # torch_peer.py then reports "skipped"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

peer=("$python" "$root/perf/torch_peer.py" --dtypes "$dtypes" --reps "$reps" --kernel "$kernel")
mapfile -t rows < <("${peer[@]}" --list)
if [[ ${#rows[@]} -eq 0 ]]; then
  echo "compare_torch.sh: no row matches --kernel '$kernel'" >&2
  exit 2
fi

# amn: one `amn bench` per row (--kernel is a substring filter, so the merge
# below keeps only the exact name). Exit status 2 = no such kernel here.
if [[ ! -x "$amn" ]]; then
  echo "compare_torch.sh: no amn binary at $amn (build it: cmake --preset gcc &&" \
       "cmake --build --preset gcc --target amn; or set AMN=...): amn columns are n/a" >&2
fi
for row in "${rows[@]}"; do
  [[ -x "$amn" ]] || break
  echo "amn bench --kernel $row ..." >&2
  if ! "$amn" bench -q --json "${quick[@]}" --reps "$reps" --kernel "$row" \
      >"$work/amn_$row.json" 2>/dev/null; then
    rm -f "$work/amn_$row.json"
  fi
done

echo "PyTorch ($python) ..." >&2
"${peer[@]}" "${quick[@]}" --json >"$work/torch.json"

"$python" - "$work" "$markdown" "${rows[@]}" <<'EOF'
import json
import os
import sys

work, markdown, rows = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
with open(os.path.join(work, "torch.json")) as f:
    peer = json.load(f)
skipped = peer.get("skipped")
torch_ns = {}
for r in peer.get("results", []):
    if r["primary"]:
        torch_ns[(r["kernel"], r["size"])] = r["ns_per_elem"]


def amn_best(row):
    """Fastest non-reference target per size: (target, ns/el, x floor)."""
    path = os.path.join(work, "amn_%s.json" % row)
    if not os.path.exists(path):
        return {}, None
    with open(path) as f:
        report = json.load(f)
    best = {}
    for r in report["results"]:
        if r["kernel"] != row or r["target"] == "reference":
            continue
        if r["size"] not in best or r["ns_per_elem"] < best[r["size"]][1]:
            best[r["size"]] = (r["target"], r["ns_per_elem"], r["ratio_to_floor"])
    return best, report


def fmt(v, spec):
    return "n/a" if v is None else spec % v


header = ["kernel", "amn target", "amn cache ns/el", "amn stream ns/el", "amn stream x floor",
          "torch cache ns/el", "torch stream ns/el", "torch/amn cache", "torch/amn stream"]
table = []
floors = None
for row in rows:
    best, report = amn_best(row)
    if report is not None and floors is None:
        floors = report["floors"]
    cache, stream = best.get("cache"), best.get("stream")
    targets = sorted({b[0] for b in (cache, stream) if b})
    tc = torch_ns.get((row, "cache"))
    ts = torch_ns.get((row, "stream"))
    missing_torch = "skipped" if skipped else "n/a"
    table.append([
        row,
        "/".join(targets) if targets else "n/a",
        fmt(cache and cache[1], "%.4f"),
        fmt(stream and stream[1], "%.4f"),
        fmt(stream and stream[2], "%.2f"),
        fmt(tc, "%.3f") if tc is not None else missing_torch,
        fmt(ts, "%.3f") if ts is not None else missing_torch,
        fmt(tc / cache[1] if tc and cache else None, "%.1f"),
        fmt(ts / stream[1] if ts and stream else None, "%.1f"),
    ])

if markdown:
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|")
    for t in table:
        print("| " + " | ".join(t) + " |")
else:
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(header)]
    print("  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths))))
    for t in table:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(t, widths))))
print()
print("One thread each; ns per element (output element; input element for quantizers, whose "
      "amn timing includes the QuantError sums), median of the runs. amn: fastest target per "
      "size; x floor = amn's streaming time / its bandwidth floor (1.0 = memory limit).")
if floors:
    # The fastest of the first amn run (floors are measured around each
    # kernel; each row's own floor is in its "floor" record).
    cache = ", ".join("%.1f GB/s at %d KiB" % (c["write_gbps"], c["bytes"] >> 10)
                      for c in floors.get("cache", []))
    print("amn floors: write %.1f GB/s, copy traffic %.1f GB/s, cache write %s" % (
        floors["write_gbps"], floors["copy_traffic_gbps"], cache or "n/a"))
if skipped:
    print(skipped)
else:
    print("PyTorch %s; GPTQ/AWQ torch rows include .t().contiguous() to amn's [out, in] rows." % (
        peer["torch_version"]))
    for note in peer.get("notes", []):
        print("note: " + note)
EOF
