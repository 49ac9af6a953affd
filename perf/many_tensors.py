#!/usr/bin/env python3
"""Times `amn inspect` and `amn remember` on inputs with many tiny tensors.

Planning and writing must stay O(n log n) in the tensor count (issue 20):
this generates, for each count N,
  * a safetensors file of N BF16 tensors of 8x8,
  * a safetensors file of N empty F32 tensors (shape [0]),
  * an NPZ of N stored members, each an F32 array of 8x8,
runs `amn inspect` and `amn remember --to bf16` on each and prints seconds.
Plain Python (struct, zipfile): no numpy needed.

  perf/many_tensors.py build/gcc/cli/amn [--counts 25000,100000,1000000] [--dir /tmp/x]
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile


def write_safetensors(path, n, dtype, shape, elem_bytes):
    nbytes = elem_bytes
    for d in shape:
        nbytes *= d
    header = {}
    for i in range(n):
        header[f"t{i:07d}"] = {"dtype": dtype, "shape": shape,
                               "data_offsets": [i * nbytes, (i + 1) * nbytes]}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        f.write(bytes(n * nbytes))


def npy_bytes(rows, cols):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }" % (rows, cols)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + bytes(4 * rows * cols)


def write_npz(path, n):
    member = npy_bytes(8, 8)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        for i in range(n):
            z.writestr(f"a{i:07d}.npy", member)


def timed(cmd):
    start = time.perf_counter()
    result = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        return f"exit {result.returncode}: {result.stderr.strip()[:120]}"
    return f"{seconds:.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("amn")
    parser.add_argument("--counts", default="25000,100000,1000000")
    parser.add_argument("--dir", default=None, help="scratch directory (default: a new temporary one)")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    scratch = args.dir or tempfile.mkdtemp(prefix="amn_many_tensors_")
    os.makedirs(scratch, exist_ok=True)
    print(f"| input | tensors | inspect s | remember s |")
    print(f"|---|---:|---:|---:|")
    try:
        for n in [int(c) for c in args.counts.split(",")]:
            cases = [
                ("safetensors, BF16 8x8", "st8x8.safetensors",
                 lambda p: write_safetensors(p, n, "BF16", [8, 8], 2)),
                ("safetensors, empty", "empty.safetensors",
                 lambda p: write_safetensors(p, n, "F32", [0], 4)),
                ("NPZ, F32 8x8 stored", "members.npz", lambda p: write_npz(p, n)),
            ]
            for label, name, make in cases:
                path = os.path.join(scratch, name)
                out = os.path.join(scratch, "out.safetensors")
                make(path)
                inspect = timed([args.amn, "inspect", path])
                if os.path.exists(out):
                    os.remove(out)
                remember = timed([args.amn, "remember", "--quiet", "--to", "bf16", path, "-o", out])
                print(f"| {label} | {n:,} | {inspect} | {remember} |", flush=True)
                os.remove(path)
                if os.path.exists(out):
                    os.remove(out)
    finally:
        if args.dir is None:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
