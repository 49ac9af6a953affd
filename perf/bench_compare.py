#!/usr/bin/env python3
"""Compare machines: one `amn bench --json` run per machine, side by side.

    amn bench --isa-all --json > $(hostname).json     # on each machine
    perf/bench_compare.py [--size stream|cache] host-a.json host-b.json ...

Prints Markdown, one row per kernel, one column per file: the time / floor
of the best target that file timed for that kernel (its lowest ratio, with
the target's name). Each ratio is taken against the floors measured in its
own run, so machines with different memory are judged by the same rule; the
ns per element of different machines are not compared.
"""

import argparse
import json
import os


def best_by_kernel(path, size):
    """{kernel: (ratio_to_floor, target)} of the run's best SIMD target."""
    with open(path, encoding="utf-8") as f:
        run = json.load(f)
    targets = set(run["targets"])
    best = {}
    for r in run["results"]:
        if r["size"] != size or r["target"] not in targets:
            continue
        entry = (r["ratio_to_floor"], r["target"])
        if r["kernel"] not in best or entry < best[r["kernel"]]:
            best[r["kernel"]] = entry
    return (run.get("cpu") or {}).get("model"), best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=("stream", "cache"), default="stream",
                        help="which rows to compare (default: stream)")
    parser.add_argument("runs", nargs="+", help="amn bench --json files")
    args = parser.parse_args()
    runs = [(os.path.basename(p),) + best_by_kernel(p, args.size) for p in args.runs]
    print("| kernel | " + " | ".join("%s (%s)" % (name, cpu) for name, cpu, _ in runs) + " |")
    print("|---|" + "---|" * len(runs))
    kernels = sorted(set().union(*(best.keys() for _, _, best in runs)))
    for kernel in kernels:
        cells = []
        for _, _, best in runs:
            cells.append("%.2f %s" % best[kernel] if kernel in best else "–")
        print("| %s | %s |" % (kernel, " | ".join(cells)))


if __name__ == "__main__":
    main()
