"""Writes NPY/NPZ/PyTorch files for array_formats_cli_test and what numpy.load
and torch.load(weights_only=True) read back from them (the independent
reference): expected-KIND.json maps each file to its arrays in order, each with
the safetensors dtype, shape and the hex of its contiguous little-endian
bytes, plus the bytes after `--to` where the test converts.

Usage: python3 array_formats_crosscheck.py OUTDIR [numpy|torch]
Exit 77 when the module is missing (the test skips).
"""
import json
import sys

out, kind = sys.argv[1], sys.argv[2]
try:
    import numpy as np
    if kind == "torch":
        import torch
except ImportError:
    sys.exit(77)

NP_NAMES = {"bool": "BOOL", "int8": "I8", "uint8": "U8", "int16": "I16", "uint16": "U16",
            "int32": "I32", "uint32": "U32", "int64": "I64", "uint64": "U64",
            "float16": "F16", "float32": "F32", "float64": "F64"}


def np_entry(name, a):
    if a.dtype.kind == "V":  # JAX bfloat16, stored as raw 2-byte values
        dtype, le = "BF16", np.ascontiguousarray(a).view("<u2")
    else:
        dtype = NP_NAMES[a.dtype.newbyteorder("=").name]
        le = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"))
    return {"name": name, "dtype": dtype, "shape": list(a.shape), "hex": le.tobytes().hex()}


def numpy_files():
    rng = np.random.default_rng(7)
    arrays = {
        "f32": rng.standard_normal((3, 5)).astype(np.float32),
        "f64": rng.standard_normal(7),
        "f16": rng.standard_normal((2, 3)).astype(np.float16),
        "i8": np.arange(-5, 5, dtype=np.int8),
        "u16": np.arange(9, dtype=np.uint16) * 7000,
        "i64": np.array([-(2**62), 3, 2**40], dtype=np.int64),
        "u64": np.array([2**63 + 5], dtype=np.uint64),
        "flags": np.array([True, False, True]),
        "be_f32": rng.standard_normal(4).astype(">f4"),
        "be_i64": np.array([1, -2, 2**50], dtype=">i8"),
        "be_f16": rng.standard_normal((2, 2)).astype(">f2"),
        "fortran": np.asfortranarray(rng.standard_normal((2, 3, 4)).astype(np.float32)),
        "be_fortran": np.asfortranarray(np.arange(12, dtype=">i4").reshape(3, 4)),
        "scalar": np.float32(2.5) * np.ones((), np.float32),
        "empty": np.zeros((0, 3), np.float32),
        "bf16": (np.arange(6, dtype=np.uint16) + 0x3F80).view("V2").reshape(2, 3),
    }
    np.savez(f"{out}/stored.npz", **arrays)
    np.savez_compressed(f"{out}/compressed.npz", **arrays)
    np.save(f"{out}/fortran.npy", arrays["fortran"])
    expected = {}
    for file in ("stored.npz", "compressed.npz"):
        with np.load(f"{out}/{file}") as z:
            expected[file] = [np_entry(n, z[n]) for n in z.files]
    expected["fortran.npy"] = [np_entry("fortran", np.load(f"{out}/fortran.npy"))]
    # --to f32: numpy's own astype for the float arrays (F64 rounds once to F32).
    with np.load(f"{out}/stored.npz") as z:
        to_f32 = []
        for n in z.files:
            a = z[n]
            if a.dtype.kind == "f":
                a = a.astype("<f4")
            to_f32.append(np_entry(n, a) if a.dtype.kind != "V" else None)
        expected["stored.npz --to f32"] = to_f32
    return expected


def torch_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().tobytes()
    return t.numpy().tobytes()


def torch_files():
    names = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16",
             torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32", torch.int16: "I16",
             torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL"}
    g = torch.Generator().manual_seed(3)
    base = torch.randn(4, 6, generator=g)
    sd = {
        "f32": torch.randn(3, 4, generator=g),
        "f64": torch.randn(5, generator=g, dtype=torch.float64),
        "f16": torch.randn(2, 3, generator=g).half(),
        "bf16": torch.randn(2, 5, generator=g).bfloat16(),
        "i64": torch.tensor([-(2**62), 1, 2**40]),
        "i32": torch.arange(-3, 3, dtype=torch.int32),
        "i16": torch.arange(4, dtype=torch.int16) * 1000,
        "i8": torch.tensor([-128, 127], dtype=torch.int8),
        "u8": torch.arange(5, dtype=torch.uint8),
        "mask": torch.tensor([True, False]),
        "transposed": base.t(),                 # shares base's storage, strides (1, 6)
        "every_other": base[1:, ::2],           # storage offset 6, strides (6, 2)
        "base": base,
        "param": torch.nn.Parameter(torch.randn(2, 2, generator=g)),
        "scalar": torch.tensor(1.5),
        "empty": torch.zeros(0, 4),
        "nested": {"layer": {"weight": torch.randn(3, 2, generator=g).t()}},
    }
    torch.save(sd, f"{out}/model.pth")
    loaded = torch.load(f"{out}/model.pth", weights_only=True)

    def flatten(prefix, value, rows):
        if isinstance(value, dict):
            for k, v in value.items():
                flatten(f"{prefix}{k}.", v, rows)
        else:
            rows.append((prefix[:-1], value))
        return rows

    rows = flatten("", loaded, [])
    expected = {"model.pth": [{"name": n, "dtype": names[t.dtype], "shape": list(t.shape),
                               "hex": torch_bytes(t.detach()).hex()} for n, t in rows]}
    expected["model.pth --to bf16"] = [
        {"name": n, "dtype": "BF16" if t.is_floating_point() else names[t.dtype],
         "shape": list(t.shape),
         "hex": torch_bytes(t.detach().to(torch.bfloat16) if t.is_floating_point() else t.detach()).hex()}
        for n, t in rows]
    return expected


expected = numpy_files() if kind == "numpy" else torch_files()
with open(f"{out}/expected-{kind}.json", "w") as f:
    json.dump(expected, f)
