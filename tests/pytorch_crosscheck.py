"""Writes PyTorch checkpoints with torch.save and, beside them, what torch
itself says they hold, for tests/pytorch_test.cc.

usage: pytorch_crosscheck.py OUT_DIR

expected.json: {file: {"tensors": [{name, shape, dtype, hex}], "error": ...}}
where hex is the tensor's row-major contiguous bytes, little-endian, as
torch holds them (the independent reference for ReadPytorch's views).
"""
import collections
import json
import os
import sys
import zipfile

import torch

DTYPES = {
    torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
    torch.int64: "I64", torch.int32: "I32", torch.int16: "I16", torch.int8: "I8",
    torch.uint8: "U8", torch.bool: "BOOL",
}


def row_major_hex(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    if t.dtype == torch.bool:
        t = t.to(torch.uint8)
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes().hex()


def describe(named):
    return [{"name": n, "shape": list(t.shape), "dtype": DTYPES[t.dtype], "hex": row_major_hex(t)}
            for n, t in named]


def save(out, file, obj, named):
    torch.save(obj, os.path.join(out, file))
    return {"tensors": describe(named)}


def big_endian_copy(out, src, dst, element_bytes):
    """src rewritten as torch would write it on a big-endian machine: every
    storage's elements byte-swapped, byteorder 'big'."""
    with zipfile.ZipFile(os.path.join(out, src)) as zin, \
            zipfile.ZipFile(os.path.join(out, dst), "w", zipfile.ZIP_STORED) as zout:
        prefix = zin.namelist()[0].split("/")[0]
        for info in zin.infolist():
            data = zin.read(info.filename)
            key = info.filename[len(prefix) + len("/data/"):]
            if info.filename.startswith(prefix + "/data/") and key in element_bytes:
                n = element_bytes[key]
                data = b"".join(data[i:i + n][::-1] for i in range(0, len(data), n))
            if info.filename == prefix + "/byteorder":
                continue
            zout.writestr(info.filename, data)
        zout.writestr(prefix + "/byteorder", "big")


def rewrite(out, src, dst, change):
    """dst: src with each entry's bytes passed through change(name, data)
    (None drops the entry), under the folder named after dst."""
    folder = dst[:-len(".pth")]
    with zipfile.ZipFile(os.path.join(out, src)) as zin, \
            zipfile.ZipFile(os.path.join(out, dst), "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            name = folder + info.filename[info.filename.index("/"):]
            data = change(name, zin.read(info.filename))
            if data is not None:
                zout.writestr(name, data)


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    expected = {}

    # One tensor per dtype, plus a scalar and an empty tensor.
    dtypes = {}
    for i, dt in enumerate(DTYPES):
        if dt.is_floating_point:
            t = torch.randn(2, 3).to(dt)
        elif dt == torch.bool:
            t = torch.tensor([[True, False, True], [False, False, True]])
        else:
            t = torch.arange(-3 if dt != torch.uint8 else 250, 3 if dt != torch.uint8 else 256).to(dt).reshape(2, 3)
        dtypes["t_" + DTYPES[dt].lower()] = t
    dtypes["scalar"] = torch.tensor(7.5, dtype=torch.float64)
    dtypes["empty"] = torch.zeros(0, 3)
    expected["dtypes.pth"] = save(out, "dtypes.pth", dtypes, list(dtypes.items()))

    # Views: transposes, steps, offsets, a broadcast (stride 0), shared storages.
    base = torch.arange(60, dtype=torch.float32).reshape(6, 10)
    views = collections.OrderedDict()
    views["t"] = base.T
    views["steps"] = base[1::2, 2::3]
    views["row"] = base[4]
    views["tail"] = base[3:, 5:]
    views["expanded"] = torch.arange(3, dtype=torch.int16).reshape(3, 1).expand(3, 4)
    views["column"] = torch.arange(5, dtype=torch.float32).reshape(5, 1)
    expected["views.pth"] = save(out, "views.pth", views, list(views.items()))

    # Nested containers, int keys, non-tensor values, parameters, a module.
    lin = torch.nn.Linear(3, 2)
    nested = {
        "model": lin.state_dict(),
        "enc": {"layers": [{"w": torch.ones(2, 2)}, {"w": torch.full((2,), 3.0)}]},
        "opt": {"state": {0: {"step": torch.tensor(4.0)}}, "lr": 0.1, "name": "sgd"},
        "pair": (torch.tensor([1, 2], dtype=torch.int32), 5),
        "param": torch.nn.Parameter(torch.tensor([0.5, -0.5])),
        "tied": lin.weight,
    }
    named = [("model.weight", lin.weight), ("model.bias", lin.bias),
             ("enc.layers.0.w", nested["enc"]["layers"][0]["w"]),
             ("enc.layers.1.w", nested["enc"]["layers"][1]["w"]),
             ("opt.state.0.step", nested["opt"]["state"][0]["step"]),
             ("pair.0", nested["pair"][0]), ("param", nested["param"]), ("tied", lin.weight)]
    expected["nested.pth"] = save(out, "nested.pth", nested, named)

    # A tensor alone.
    alone = torch.arange(4, dtype=torch.int64)
    expected["alone.pth"] = save(out, "alone.pth", alone, [("tensor", alone)])

    # Big-endian: the same values read back from swapped storages.
    be = {"f": torch.randn(3), "h": torch.randn(2, 2).half(), "q": torch.tensor([1, -2, 3 << 40]),
          "b": torch.tensor([1, 2, 255], dtype=torch.uint8)}
    expected["little.pth"] = save(out, "little.pth", be, list(be.items()))
    big_endian_copy(out, "little.pth", "big.pth", {"0": 4, "1": 2, "2": 8, "3": 1})
    expected["big.pth"] = expected["little.pth"]

    # Refused: complex and sparse tensors.
    torch.save({"c": torch.zeros(2, dtype=torch.complex64)}, os.path.join(out, "complex.pth"))
    expected["complex.pth"] = {"error": "unsupported", "tensor": "c"}
    torch.save({"s": torch.eye(3).to_sparse()}, os.path.join(out, "sparse.pth"))
    expected["sparse.pth"] = {"error": "unsupported", "tensor": "s"}

    # Malformed: a view past its storage, a disallowed global, a storage
    # member missing or shorter than its declared elements.
    class OutOfBounds:
        def __reduce__(self):
            return (torch._utils._rebuild_tensor_v2,
                    (torch.zeros(4).storage(), 2, (3,), (1,), False, collections.OrderedDict()))
    torch.save({"ok": torch.ones(2), "bad": OutOfBounds()}, os.path.join(out, "oob.pth"))
    expected["oob.pth"] = {"error": "invalid", "tensor": "bad"}
    rewrite(out, "little.pth", "global.pth",
            lambda name, data: data.replace(b"ctorch._utils\n_rebuild_tensor_v2\n", b"cos\nsystem\n", 1)
            if name.endswith("data.pkl") else data)
    expected["global.pth"] = {"error": "invalid", "message": "disallowed global 'os.system'"}
    rewrite(out, "little.pth", "missing.pth", lambda name, data: None if name.endswith("/data/1") else data)
    expected["missing.pth"] = {"error": "invalid", "message": "missing/data/1' is not in the zip"}
    rewrite(out, "little.pth", "short.pth", lambda name, data: data[:-1] if name.endswith("/data/2") else data)
    expected["short.pth"] = {"error": "invalid", "message": "declares 3 elements"}
    rewrite(out, "little.pth", "nopkl.pth", lambda name, data: None if name.endswith("data.pkl") else data)
    expected["nopkl.pth"] = {"error": "invalid", "message": "data.pkl"}

    # Legacy (non-zip) serialization.
    torch.save({"x": torch.ones(1)}, os.path.join(out, "legacy.pth"), _use_new_zipfile_serialization=False)

    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)


if __name__ == "__main__":
    main()
