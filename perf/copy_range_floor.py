#!/usr/bin/env python3
"""The floor for `remember` of kept tensors on this machine: copy_file_range
of a file's bytes from SRC_OFFSET to a new file after HEAD bytes, 4 MiB per
call as the engine does, then fsync. With SRC_OFFSET - HEAD not a multiple
of the page size (as a safetensors header and an NPZ member's data offset
make it) every destination page is written from two source pages; compare
with 0 0. Time it with `sync` around, as perf/remember_vs_cp.sh does:

  sync; time (/usr/bin/python3 perf/copy_range_floor.py IN OUT 1000 3368; sync)
"""
import os
import sys

src, dst, src_offset, head = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fi = os.open(src, os.O_RDONLY)
fo = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fo, b" " * head)
end, at = os.fstat(fi).st_size, src_offset
while at < end:
    n = os.copy_file_range(fi, fo, min(4 << 20, end - at), at)
    if n <= 0:
        break
    at += n
os.fsync(fo)
