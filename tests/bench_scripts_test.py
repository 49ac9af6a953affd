"""perf/bench_summary.py and perf/bench_compare.py on small runs written here
in `amn bench --json`'s record format (docs/cli.md): what they print is
checked against the ratios put in, counted by hand."""

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "perf"))
import bench_summary  # noqa: E402

COMPARE = os.path.join(HERE, "..", "perf", "bench_compare.py")


def record(kernel, target, size, ratio):
    return {"kernel": kernel, "target": target, "size": size, "ratio_to_floor": ratio}


def summary_problems(tmp):
    targets = ["AVX2", "SSE4"]
    results = [
        # Decoders to F32 on AVX2: streaming 1.1 and 1.2 (within 1.2), 1.4
        # (within 1.5), 0.95 (below 1.0, within both); cache: plain 2.0 and
        # 4.0, the I-quant 5.0 (within 6).
        record("q4_0_to_f32", "AVX2", "stream", 1.1),
        record("q4_0_to_f32", "AVX2", "cache", 2.0),
        record("gptq4_to_f32", "AVX2", "stream", 1.4),
        record("gptq4_to_f32", "AVX2", "cache", 4.0),
        record("iq2_xxs_to_f32", "AVX2", "stream", 0.95),
        record("bf16_to_f32", "AVX2", "stream", 1.2),  # at the goal: within
        record("iq2_xxs_to_f32", "AVX2", "cache", 5.0),
        # On SSE4 every row is outside the goals.
        record("q4_0_to_f32", "SSE4", "stream", 2.0),
        record("q4_0_to_f32", "SSE4", "cache", 3.5),
        record("gptq4_to_f32", "SSE4", "stream", 3.0),
        record("gptq4_to_f32", "SSE4", "cache", 7.0),
        record("iq2_xxs_to_f32", "SSE4", "stream", 4.0),
        record("iq2_xxs_to_f32", "SSE4", "cache", 6.5),
        # The reference's rows are not counted.
        record("q4_0_to_f32", "reference", "stream", 0.5),
        # An encoder; its F16 input is not listed in the BF16 table.
        record("bf16_to_nf4", "AVX2", "stream", 1.3),
        record("bf16_to_nf4", "SSE4", "stream", 9.0),
        record("f16_to_nf4", "AVX2", "stream", 1.2),
    ]
    run = {"cpu": {"model": "test"}, "llc_bytes_used": 1 << 20, "reps": 3,
           "targets": targets, "results": results}
    path = write_run(tmp, "run.json", run)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench_summary.main(path)
    text = out.getvalue()
    expected = [
        "| F32 | AVX2 | 3 of 4 | 4 | 1.15 (0.95–1.40) | 1 of 2 | 4.00 (2.00–5.00) | 1 of 1 | 1 |",
        "| F32 | SSE4 | 0 of 3 | 0 | 3.00 (2.00–4.00) | 0 of 2 | 6.50 (3.50–7.00) | 0 of 1 | 0 |",
        "| BF16 | AVX2 | 0 of 0 | 0 | – | 0 of 0 | – | 0 of 0 | 0 |",
        "All decoder rows: AVX2 3 of 4 within 1.2×, 4 within 1.5×, median 1.15; "
        "SSE4 0 of 3 within 1.2×, 0 within 1.5×, median 3.00",
        "| bf16_to_nf4 | 1.30 | 9.00 |",
        "Encoders (every input) within 1.5× streaming: AVX2 2 of 2; SSE4 0 of 1",
    ]
    missing = [line for line in expected if line not in text.splitlines()]
    if "f16_to_nf4 |" in text.replace("bf16_to_nf4 |", ""):
        missing.append("(f16_to_nf4 must not be in the BF16-input table)")
    if missing:
        print(text)
    return missing


def compare_problems(tmp):
    # Machine a: AVX2 beats SSE4 on q4_0 (the lower ratio is the best);
    # machine b timed only SSE4 and no gptq4. Cache rows and the
    # reference must not be picked.
    a = write_run(tmp, "a.json", {"cpu": {"model": "cpu-a"}, "targets": ["AVX2", "SSE4"],
                                  "results": [
                                      record("q4_0_to_f32", "SSE4", "stream", 1.9),
                                      record("q4_0_to_f32", "AVX2", "stream", 1.3),
                                      record("q4_0_to_f32", "AVX2", "cache", 1.0),
                                      record("q4_0_to_f32", "reference", "stream", 1.1),
                                      record("gptq4_to_f32", "AVX2", "stream", 2.5),
                                  ]})
    b = write_run(tmp, "b.json", {"cpu": {"model": "cpu-b"}, "targets": ["SSE4"],
                                  "results": [record("q4_0_to_f32", "SSE4", "stream", 1.7)]})
    text = subprocess.run([sys.executable, "-B", COMPARE, a, b], check=True,
                          capture_output=True, text=True).stdout
    expected = [
        "| kernel | a.json (cpu-a) | b.json (cpu-b) |",
        "| gptq4_to_f32 | 2.50 AVX2 | – |",
        "| q4_0_to_f32 | 1.30 AVX2 | 1.70 SSE4 |",
    ]
    missing = [line for line in expected if line not in text.splitlines()]
    if missing:
        print(text)
    return missing


def write_run(tmp, name, run):
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(run, f)
    return path


def main():
    with tempfile.TemporaryDirectory() as tmp:
        missing = summary_problems(tmp) + compare_problems(tmp)
    if missing:
        print("missing lines:\n" + "\n".join(missing))
        return 1
    print("bench_summary and bench_compare: every expected line printed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
