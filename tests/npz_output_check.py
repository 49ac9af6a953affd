"""Reads an `amn convert --to npz` output back with numpy and zipfile (no
amn): every member is stored, CRC-checked (zipfile.testzip), named NAME.npy,
and numpy.load gives the names, dtypes, shapes and bytes of the reference
safetensors file (amn remember of the same input, parsed here with json).

Usage: python3 npz_output_check.py OUT.npz REFERENCE.safetensors
Exit 0: every check passed; 1: a check failed (one line each); 77: numpy
cannot be imported (the test skips)."""
import json
import struct
import sys
import zipfile

try:
    import numpy as np
except ImportError:
    sys.exit(77)

DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
          "I8": "|i1", "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "|u1", "BOOL": "|b1"}


def main():
    npz_path, ref_path = sys.argv[1], sys.argv[2]
    failures = []
    with open(ref_path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__", None)
    with zipfile.ZipFile(npz_path) as z:
        try:
            bad = z.testzip()
        except zipfile.BadZipFile as e:
            print(f"not a valid ZIP: {e}")
            sys.exit(1)
        if bad is not None:
            failures.append(f"CRC-32 of {bad} is wrong")
        for info in z.infolist():
            if info.compress_type != zipfile.ZIP_STORED:
                failures.append(f"{info.filename} is compressed")
            if not info.filename.endswith(".npy"):
                failures.append(f"{info.filename} is not NAME.npy")
    with np.load(npz_path, allow_pickle=False) as npz:
        if sorted(npz.files) != sorted(header):
            failures.append(f"names {sorted(npz.files)} != {sorted(header)}")
        for name in npz.files:
            if name not in header:
                continue
            a, t = npz[name], header[name]
            if a.dtype.str != DTYPES[t["dtype"]]:
                failures.append(f"{name}: dtype {a.dtype.str}, expected {t['dtype']}")
            if list(a.shape) != t["shape"]:
                failures.append(f"{name}: shape {a.shape}, expected {t['shape']}")
            begin, end = t["data_offsets"]
            if a.tobytes() != data[begin:end]:
                failures.append(f"{name}: values differ from the reference")
    for f in failures:
        print(f)
    sys.exit(1 if failures else 0)


main()
