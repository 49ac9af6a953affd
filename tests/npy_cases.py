"""Writes NPY / NPZ files with numpy for tests/npy_test.cc, and beside each
array the bytes numpy says it holds: row-major (C order), little-endian.

usage: npy_cases.py OUT_DIR   (writes OUT_DIR/manifest.json and the files it names)
"""
import json
import os
import sys
import zipfile

import numpy as np

OUT = sys.argv[1]
RNG = np.random.default_rng(20240611)

# numpy dtype -> the safetensors-style name the parser reports.
NAMES = {
    "b1": "BOOL", "i1": "I8", "i2": "I16", "i4": "I32", "i8": "I64",
    "u1": "U8", "u2": "U16", "u4": "U32", "u8": "U64",
    "f2": "F16", "f4": "F32", "f8": "F64", "V2": "BF16",
}


def values(dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return RNG.integers(0, 2, size=shape).astype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(info.min, info.max, size=shape, dtype=dtype.newbyteorder("="),
                            endpoint=True).astype(dtype)
    if dtype.kind == "V":  # bfloat16 as 2-byte voids over uint16 bit patterns
        return RNG.integers(0, 1 << 16, size=shape, dtype=np.uint16).view(dtype)
    return (RNG.standard_normal(size=shape) * 100).astype(dtype)


def expected_bytes(a):
    return np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()


def describe(name, a, expected_file):
    with open(os.path.join(OUT, expected_file), "wb") as f:
        f.write(expected_bytes(a))
    return {
        "name": name,
        "dtype": NAMES[a.dtype.str[1:]],
        "shape": list(a.shape),
        "big_endian": a.dtype.byteorder == ">",
        "fortran": bool(a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous),
        "expected": expected_file,
    }


npy_cases = []


def save_npy(case, a, version=None):
    path = os.path.join(OUT, case + ".npy")
    with open(path, "wb") as f:
        np.lib.format.write_array(f, a, version=version)
    with open(path, "rb") as f:
        major = f.read(8)[6]
    entry = describe(case, a, case + ".expected")
    entry.update(file=case + ".npy", major=major)
    npy_cases.append(entry)


# Every dtype, C order, in both byte orders where that means something.
for code in ["b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"]:
    save_npy("c_" + code, values("<" + code if code[1] != "1" else "|" + code, (3, 5)))
for code in [">f4", ">i8", ">f2", ">u2", ">i4", ">f8"]:
    save_npy("be_" + code[1:], values(code, (4, 3)))

# Fortran order (numpy writes fortran_order True and the column-major bytes).
save_npy("fortran_f4_2d", np.asfortranarray(values("<f4", (5, 7))))
save_npy("fortran_i2_3d", np.asfortranarray(values("<i2", (3, 4, 5))))
save_npy("fortran_be_f8_3d", np.asfortranarray(values(">f8", (2, 3, 4))))
save_npy("fortran_u1_4d", np.asfortranarray(values("|u1", (2, 3, 1, 4))))

# 0-d and empty arrays.
save_npy("scalar_f4", np.array(3.5, dtype="<f4"))
save_npy("scalar_be_i8", np.array(-7, dtype=">i8"))
save_npy("empty_f4", np.zeros((0,), dtype="<f4"))
save_npy("empty_i2_3d", np.zeros((3, 0, 2), dtype="<i2"))
save_npy("empty_fortran", np.asfortranarray(np.zeros((0, 4, 2), dtype="<f8")))

# Header versions 2.0 and 3.0.
save_npy("v2_f4", values("<f4", (6, 2)), version=(2, 0))
save_npy("v3_i4", values("<i4", (2, 9)), version=(3, 0))
save_npy("v2_fortran_be_f2", np.asfortranarray(values(">f2", (3, 4))), version=(2, 0))

# bfloat16 as numpy writes an ml_dtypes array's bytes: '|V2' (what np.save
# writes for a 2-byte void) and '<V2' (ml_dtypes' own descr), the latter
# with a hand-written header.
save_npy("bf16_pipe_v2", values("V2", (4, 6)))
bf16 = values("V2", (3, 2))
with open(os.path.join(OUT, "bf16_lt_v2.npy"), "wb") as f:
    np.lib.format.write_array_header_1_0(
        f, {"descr": "<V2", "fortran_order": False, "shape": bf16.shape})
    f.write(bf16.tobytes())
entry = describe("bf16_lt_v2", bf16, "bf16_lt_v2.expected")
entry.update(file="bf16_lt_v2.npy", major=1)
npy_cases.append(entry)

# Archives: stored (savez) and deflated (savez_compressed), the same arrays.
archive_arrays = {
    "W_dec": values("<f4", (16, 8)),
    "bias": values(">f8", (8,)),
    "mask": values("|b1", (3, 3)),
    "idx": np.asfortranarray(values("<i8", (4, 5, 2))),
    "half": values("<f2", (33,)),
    "scalar": np.array(2, dtype="<u2"),
    "empty": np.zeros((0, 3), dtype="<f4"),
    "bf16": values("V2", (5, 4)),
}
npz_cases = []
for case, save in [("stored", np.savez), ("deflated", np.savez_compressed)]:
    save(os.path.join(OUT, case + ".npz"), **archive_arrays)
    npz_cases.append({
        "file": case + ".npz",
        "arrays": [describe(name, a, case + "_" + name + ".expected")
                   for name, a in archive_arrays.items()],
    })

# Archives numpy would not write, each with the status code it must give.
def npy_bytes(header_text, data, version=(1, 0)):
    text = header_text.encode("latin1")
    preamble = 10 if version[0] == 1 else 12
    text += b" " * ((-(preamble + len(text) + 1)) % 64) + b"\n"
    length = len(text).to_bytes(preamble - 8, "little")
    return b"\x93NUMPY" + bytes(version) + length + text + data


GOOD = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
bad_npz_cases = []
for case, members, code in [
    ("not_npy_member", [("a.npy", npy_bytes(GOOD, bytes(8))), ("notes.txt", b"hello")],
     "kInvalid"),
    ("only_suffix", [(".npy", npy_bytes(GOOD, bytes(8)))], "kInvalid"),
    ("version_4", [("a.npy", npy_bytes(GOOD, bytes(8), (4, 0)))], "kUnsupported"),
    ("complex", [("a.npy", npy_bytes(GOOD.replace("<f4", "<c8"), bytes(16)))], "kUnsupported"),
    ("extra_key", [("a.npy", npy_bytes(GOOD[:-1] + "'x': 1}", bytes(8)))], "kInvalid"),
    ("data_short", [("a.npy", npy_bytes(GOOD, bytes(7)))], "kTruncated"),
    ("data_long", [("a.npy", npy_bytes(GOOD, bytes(9)))], "kInvalid"),
    ("header_past_member", [("a.npy", npy_bytes(GOOD, bytes(8))[:40])], "kTruncated"),
    ("tiny_member", [("a.npy", b"\x93NUM")], "kTruncated"),
]:
    for method, suffix in [(zipfile.ZIP_STORED, "_stored"), (zipfile.ZIP_DEFLATED, "_deflated")]:
        with zipfile.ZipFile(os.path.join(OUT, case + suffix + ".npz"), "w", method) as z:
            for name, data in members:
                z.writestr(name, data)
        bad_npz_cases.append({"file": case + suffix + ".npz", "code": code})

with open(os.path.join(OUT, "manifest.json"), "w") as f:
    json.dump({"npy": npy_cases, "npz": npz_cases, "bad_npz": bad_npz_cases}, f, indent=1)
