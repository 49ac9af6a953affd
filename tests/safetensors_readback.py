"""Reads an `amn remember` output back without amn: the safetensors header
with the json module, the tensor data with numpy. Checks the file layout the
safetensors reference writer (huggingface/safetensors `prepare`) produces and
transformers' loader needs, a model directory's index and config.json, and
the values the test expects.

Usage: python3 safetensors_readback.py MANIFEST.json
       python3 safetensors_readback.py --probe   (exit 0 when numpy imports)
Exit 0: every check passed; 1: a check failed (each failure on its own line);
77: numpy cannot be imported (the test skips).

MANIFEST (written by readback_cli_test.cc):
  output          the output file or directory
  to              "BF16"/"F16"/"F32", or null when dtypes were kept
  keep_passthrough
  quantized       whether the input had quantized weights
  input           optional safetensors file or directory: every float tensor
                  (F64/F32/F16/BF16) of it present in the output under the
                  same name must hold its values converted to the output
                  dtype; integer tensors must hold the same bytes
  expected        [{name, dtype, shape, and one of:
                    hex         the exact bytes,
                    from_dtype + hex   source values numpy converts,
                    near_bf16_hex      BF16 values the output rounds near}]
  absent          names no output file may hold
  metadata        __metadata__ entries every output file must keep
  copied          {file name: input path}: present with the same bytes
  not_copied      file names the output directory must not hold
  inspect         `amn inspect --json` of the output
  remembered_bytes  what `amn inspect --json` of the input predicted
"""
import json
import os
import sys

if len(sys.argv) != 2:
    sys.exit(__doc__)
try:
    import numpy as np
except ImportError:
    sys.exit(77)
if sys.argv[1] == "--probe":
    sys.exit(0)

# Element sizes, and the reference writer's dtype order: its Dtype enum,
# declared in increasing alignment, written highest first.
SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1, "I16": 2,
         "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8}
RANK = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "I16", "U16", "F16", "BF16",
        "I32", "U32", "F32", "F64", "I64", "U64"]
NUMPY = {"BOOL": "?", "U8": "u1", "I8": "i1", "I16": "<i2", "U16": "<u2", "I32": "<i4",
         "U32": "<u4", "I64": "<i8", "U64": "<u8", "F16": "<f2", "F32": "<f4", "F64": "<f8",
         "BF16": "<u2", "F8_E5M2": "u1", "F8_E4M3": "u1", "F8_E8M0": "u1"}
FLOATS = {"F64", "F32", "F16", "BF16"}
TORCH = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16"}

failures = []


def fail(where, what):
    failures.append(f"{where}: {what}")


def no_duplicates(pairs):
    """A JSON object as a dict in file order, refusing duplicate keys."""
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate keys in " + repr(keys))
    return dict(pairs)


class SafetensorsFile:
    """One file: header entries in file order, and numpy views of tensors."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        with open(path, "rb") as f:
            self.raw = f.read()
        n = int.from_bytes(self.raw[:8], "little")
        self.header_len = n
        text = self.raw[8:8 + n].decode("utf-8")
        self.pairs = list(json.loads(text, object_pairs_hook=no_duplicates).items())
        self.padding = text[len(text.rstrip(" ")):]
        self.text = text
        self.metadata = dict(self.pairs).get("__metadata__")
        self.tensors = [(k, v) for k, v in self.pairs if k != "__metadata__"]
        self.info = dict(self.tensors)

    def data(self, name):
        begin, end = self.info[name]["data_offsets"]
        return self.raw[8 + self.header_len + begin:8 + self.header_len + end]

    def values(self, name):
        """The tensor as float32 (floats) or its integer dtype, flat."""
        dtype = self.info[name]["dtype"]
        a = np.frombuffer(self.data(name), dtype=NUMPY[dtype])
        return to_f32(a, dtype) if dtype in FLOATS else a


def to_f32(a, dtype):
    if dtype == "BF16":
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a.astype(np.float32)


def f32_to(a, dtype):
    """float32 values as the raw little-endian bytes of `dtype`."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "F32":
        return a.astype("<f4").tobytes()
    if dtype == "F16":
        return a.astype("<f2").tobytes()  # IEEE round to nearest even, overflow to inf
    if dtype == "BF16":  # round to nearest even on the bit pattern (PyTorch)
        bits = a.view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF  # finite inputs only
        return rounded.astype("<u2").tobytes()
    raise ValueError(dtype)


def convert(raw, from_dtype, to_dtype):
    """Source bytes of `from_dtype` as `to_dtype` bytes; F64 goes through
    float32 first, as a C cast and PyTorch's .to() do."""
    a = np.frombuffer(raw, dtype=NUMPY[from_dtype])
    if from_dtype == to_dtype:
        return a.tobytes()
    return f32_to(to_f32(a, from_dtype), to_dtype)


def check_layout(st, manifest_metadata):
    where = st.path
    if len(st.raw) < 8:
        return fail(where, "shorter than 8 bytes")
    if st.header_len % 8 != 0:
        fail(where, f"header length {st.header_len} is not a multiple of 8")
    if st.padding.strip(" ") != "" or not st.text.rstrip(" ").endswith("}"):
        fail(where, "the header is not JSON padded with spaces")
    if not isinstance(st.metadata, dict):
        fail(where, "no __metadata__")
    else:
        if st.metadata.get("format") != "pt":
            fail(where, f"__metadata__ format is {st.metadata.get('format')!r}, not 'pt'")
        if not all(isinstance(v, str) for v in st.metadata.values()):
            fail(where, "__metadata__ values must be strings")
        for key, value in manifest_metadata.items():
            if st.metadata.get(key) != value:
                fail(where, f"__metadata__ lost {key}={value!r}")
    if st.metadata is not None and st.pairs[0][0] != "__metadata__":
        fail(where, "__metadata__ is not the first header key")
    expected_order = sorted((k for k, _ in st.tensors),
                            key=lambda k: (-RANK.index(st.info[k]["dtype"]), k.encode()))
    if [k for k, _ in st.tensors] != expected_order:
        fail(where, "tensors are not in the reference order (dtype, then name)")
    offset = 0
    for name, info in st.tensors:
        dtype, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        count = int(np.prod(shape, dtype=np.uint64)) if shape else 1
        if begin != offset:
            fail(where, f"{name}: begins at {begin}, the previous tensor ended at {offset}")
        if end - begin != count * SIZES[dtype]:
            fail(where, f"{name}: {end - begin} bytes for {dtype} {shape}")
        if begin % SIZES[dtype] != 0 or (8 + st.header_len + begin) % SIZES[dtype] != 0:
            fail(where, f"{name}: offset {begin} not aligned to {SIZES[dtype]}")
        offset = end
    if 8 + st.header_len + offset != len(st.raw):
        fail(where, f"data ends at {offset}, the file holds {len(st.raw) - 8 - st.header_len}")


def load_model(path):
    if os.path.isdir(path):
        return [SafetensorsFile(os.path.join(path, f)) for f in sorted(os.listdir(path))
                if f.endswith(".safetensors")]
    return [SafetensorsFile(path)]


def check_directory(out, files, manifest):
    index_path = os.path.join(out, "model.safetensors.index.json")
    if os.path.exists(index_path):
        with open(index_path) as f:
            index = json.load(f, object_pairs_hook=no_duplicates)
        weight_map = index.get("weight_map", {})
        held = {name: st.name for st in files for name, _ in st.tensors}
        if weight_map != held:
            fail(index_path, "weight_map does not name exactly the tensors each shard holds")
        total = sum(e - b for st in files for _, v in st.tensors for b, e in [v["data_offsets"]])
        metadata = index.get("metadata", {})
        if metadata.get("total_size") != total:
            fail(index_path, f"total_size {metadata.get('total_size')} != {total}")
        if "total_parameters" in metadata:
            params = sum(int(np.prod(v["shape"], dtype=np.uint64)) if v["shape"] else 1
                         for st in files for _, v in st.tensors)
            if metadata["total_parameters"] != params:
                fail(index_path, f"total_parameters {metadata['total_parameters']} != {params}")
    elif len(files) > 1:
        fail(out, "several shards and no model.safetensors.index.json")
    config_path = os.path.join(out, "config.json")
    if os.path.exists(config_path):
        with open(config_path) as f:
            config = json.load(f)
        if "quantization_config" in config:
            fail(config_path, "still has quantization_config")
        # What the files hold; with several float dtypes (--keep-passthrough),
        # the dequantized weights' type, or for an unquantized model the
        # dtype holding the most bytes (ties: the wider).
        floats = {}
        for st in files:
            for _, v in st.tensors:
                if v["dtype"] in FLOATS:
                    b, e = v["data_offsets"]
                    floats[v["dtype"]] = floats.get(v["dtype"], 0) + e - b
        if len(floats) == 1:
            want = TORCH[next(iter(floats))]
        elif manifest.get("quantized") or not floats:
            want = TORCH.get(manifest.get("to"))
        else:
            want = TORCH[max(floats, key=lambda d: (floats[d], RANK.index(d)))]
        if config.get("torch_dtype") != want:
            fail(config_path, f"torch_dtype {config.get('torch_dtype')!r}, the files hold {want!r}")
    for name, source in manifest.get("copied", {}).items():
        target = os.path.join(out, name)
        if not os.path.isfile(target):
            fail(out, f"{name} was not copied")
        elif open(target, "rb").read() != open(source, "rb").read():
            fail(out, f"{name} differs from the input's")
    for name in manifest.get("not_copied", []):
        if os.path.exists(os.path.join(out, name)):
            fail(out, f"{name} should not be in the output")


def check_values(files, manifest):
    where = {name: st for st in files for name, _ in st.tensors}
    to, keep = manifest.get("to"), manifest.get("keep_passthrough", False)
    if to is not None and not keep:
        for name, st in where.items():
            dtype = st.info[name]["dtype"]
            if dtype in FLOATS and dtype != to:
                fail(st.path, f"{name} is {dtype}; --to {to.lower()} asks for every float tensor in {to}")
    for name in manifest.get("absent", []):
        if name in where:
            fail(where[name].path, f"{name} should not be in the output")
    for e in manifest.get("expected", []):
        name = e["name"]
        if name not in where:
            fail("output", f"{name} is missing")
            continue
        st = where[name]
        info = st.info[name]
        if info["dtype"] != e["dtype"] or info["shape"] != e["shape"]:
            fail(st.path, f"{name} is {info['dtype']} {info['shape']}, expected {e['dtype']} {e['shape']}")
            continue
        got = st.data(name)
        if "near_bf16_hex" in e:
            want = to_f32(np.frombuffer(bytes.fromhex(e["near_bf16_hex"]), "<u2"), "BF16")
            if not np.allclose(st.values(name), want, rtol=2.0 ** -7, atol=2.0 ** -14):
                fail(st.path, f"{name}: values are not near the expected BF16 values")
            continue
        want = bytes.fromhex(e["hex"])
        if "from_dtype" in e:
            want = convert(want, e["from_dtype"], e["dtype"])
        if got != want:
            diff = next(i for i in range(min(len(got), len(want))) if got[i] != want[i]) \
                if len(got) == len(want) else "length"
            fail(st.path, f"{name}: bytes differ from the expectation (first at {diff})")
    if "input" in manifest:
        for st_in in load_model(manifest["input"]):
            for name, info in st_in.tensors:
                if name not in where:
                    continue
                st = where[name]
                out_dtype = st.info[name]["dtype"]
                if info["dtype"] in FLOATS:
                    if st.data(name) != convert(st_in.data(name), info["dtype"], out_dtype):
                        fail(st.path, f"{name}: not the input's {info['dtype']} values as {out_dtype}")
                elif info["dtype"] == out_dtype and st.data(name) != st_in.data(name):
                    fail(st.path, f"{name}: the input's bytes were not kept")


def check_inspect(files, manifest):
    counts = {}
    for st in files:
        for _, v in st.tensors:
            b, e = v["data_offsets"]
            n, size = counts.get(v["dtype"], (0, 0))
            counts[v["dtype"]] = (n + 1, size + e - b)
    total = sum(size for _, size in counts.values())
    if "inspect" in manifest:
        seen = {d["dtype"]: (d["tensors"], d["bytes"]) for d in manifest["inspect"]["dtypes"]}
        if seen != counts:
            fail("amn inspect of the output", f"dtypes {seen}, the files hold {counts}")
        if manifest["inspect"]["current_bytes"] != total:
            fail("amn inspect of the output", "current_bytes disagrees with the files")
    if "remembered_bytes" in manifest and manifest["remembered_bytes"] != total:
        fail("amn inspect of the input", f"predicted {manifest['remembered_bytes']} bytes, "
             f"remember wrote {total}")


def main():
    with open(sys.argv[1]) as f:
        manifest = json.load(f)
    out = manifest["output"]
    files = load_model(out)
    if not files:
        fail(out, "no .safetensors file")
    for st in files:
        check_layout(st, manifest.get("metadata", {}))
    if os.path.isdir(out):
        check_directory(out, files, manifest)
    check_values(files, manifest)
    check_inspect(files, manifest)
    for line in failures:
        print(line)
    print(f"{out}: {len(files)} file(s), {sum(len(st.tensors) for st in files)} tensors, "
          f"{len(failures)} failure(s)")
    return 1 if failures else 0


sys.exit(main())
