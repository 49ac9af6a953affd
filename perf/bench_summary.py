#!/usr/bin/env python3
"""Summarize one `amn bench --json` run against issue 18's goals.

    amn bench --targets AVX3_DL,AVX2,SSE4 --reps 3 -q --json > run.json
    perf/bench_summary.py run.json

Prints Markdown: per output type (F32, BF16, F16) and target, how many
decoder rows (every kernel whose output is F32, BF16 or F16: the decoders
and the plain conversions) stream within 1.2x and 1.5x their floor, the
median and range of time / floor, how many cache-resident rows are within
3x the L2 write floor (6x for the I-quants, `iq*` inputs), and how many rows
read below 1.0 (a floor that a kernel beats is not a floor: such a run says
more about the floors than about the kernels). Then the encoders (every
other kernel): streaming time / floor of each one's BF16 input per target.
Every figure is a ratio taken in that one run.
"""

import json
import statistics
import sys

OUTPUTS = ("f32", "bf16", "f16")


def split_name(kernel):
    source, _, output = kernel.rpartition("_to_")
    return source, output


def ratio_cell(ratios):
    if not ratios:
        return "–"
    return "%.2f (%.2f–%.2f)" % (statistics.median(ratios), min(ratios), max(ratios))


def rows_by(results, size):
    """{(kernel, target): ratio_to_floor}; looked up by the run's targets
    only, so the scalar reference's rows are never counted."""
    return {(r["kernel"], r["target"]): r["ratio_to_floor"] for r in results if r["size"] == size}


def main(path):
    with open(path, encoding="utf-8") as f:
        run = json.load(f)
    targets = run["targets"]
    stream = rows_by(run["results"], "stream")
    cache = rows_by(run["results"], "cache")
    kernels = sorted({k for k, _ in stream} | {k for k, _ in cache})
    decoders = [k for k in kernels if split_name(k)[1] in OUTPUTS]
    encoders = [k for k in kernels if split_name(k)[1] not in OUTPUTS]

    cpu = run.get("cpu") or {}
    print("cpu: %s; last-level cache %s bytes; reps %s; targets %s" %
          (cpu.get("model"), run.get("llc_bytes_used"), run.get("reps"),
           ", ".join(targets)))
    print()
    print("| output | target | stream ≤ 1.2× | stream ≤ 1.5× | stream × floor "
          "| cache ≤ 3× (non-I) | cache × L2 floor | I-quants ≤ 6× | below 1.0 |")
    print("|---|---|---:|---:|---|---:|---|---:|---:|")
    for output in OUTPUTS:
        names = [k for k in decoders if split_name(k)[1] == output]
        for target in targets:
            s = [stream[k, target] for k in names if (k, target) in stream]
            c_plain = [cache[k, target] for k in names
                       if (k, target) in cache and not k.startswith("iq")]
            c_iq = [cache[k, target] for k in names
                    if (k, target) in cache and k.startswith("iq")]
            c_all = c_plain + c_iq
            below = sum(r < 1.0 for r in s + c_all)
            print("| %s | %s | %d of %d | %d | %s | %d of %d | %s | %d of %d | %d |" % (
                output.upper(), target,
                sum(r <= 1.2 for r in s), len(s), sum(r <= 1.5 for r in s),
                ratio_cell(s),
                sum(r <= 3.0 for r in c_plain), len(c_plain), ratio_cell(c_all),
                sum(r <= 6.0 for r in c_iq), len(c_iq), below))
    print()
    all_s = {t: [stream[k, t] for k in decoders if (k, t) in stream] for t in targets}
    print("All decoder rows: " + "; ".join(
        "%s %d of %d within 1.2×, %d within 1.5×, median %.2f" % (
            t, sum(r <= 1.2 for r in v), len(v), sum(r <= 1.5 for r in v),
            statistics.median(v))
        for t, v in all_s.items() if v))
    print()
    if encoders:
        # One row per encoded type, its BF16 input (what `forget` and
        # `convert` mostly read), streaming time / floor per target.
        print("| encoder, BF16 input | " + " | ".join(targets) + " |")
        print("|---|" + "---:|" * len(targets))
        for kernel in encoders:
            if split_name(kernel)[0] != "bf16":
                continue
            cells = ["%.2f" % stream[kernel, t] if (kernel, t) in stream else "–"
                     for t in targets]
            print("| %s | %s |" % (kernel, " | ".join(cells)))
        print()
        print("Encoders (every input) within 1.5× streaming: " + "; ".join(
            "%s %d of %d" % (t, sum(stream[k, t] <= 1.5 for k in encoders if (k, t) in stream),
                             sum((k, t) in stream for k in encoders))
            for t in targets))

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bench_summary.py RUN.json  (from amn bench --json)")
    main(sys.argv[1])
