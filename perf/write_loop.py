#!/usr/bin/env python3
"""Writes MIB MiB of random bytes to a new file with plain write(2) calls of
4 MiB, optionally fsync'd before closing: the buffered-write path that a
decoded output takes, without amn (docs/performance/remember-vs-cp.md, "remember of
quantized models against cp on the VM").

    python3 perf/write_loop.py OUT [--mib 937] [--fsync]
"""
import argparse
import os

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("out")
parser.add_argument("--mib", type=int, default=937)
parser.add_argument("--fsync", action="store_true")
args = parser.parse_args()

piece = os.urandom(4 << 20)
fd = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
try:
    for _ in range(args.mib // 4):
        os.write(fd, piece)
    if args.fsync:
        os.fsync(fd)
finally:
    os.close(fd)
