"""Writes .npz and .pth files with numpy.savez / torch.save for
copy_path_cli_test: tensors over several 4 MiB engine chunks, in each float
dtype, next to ones that cannot be copied as stored (Fortran order, big
endian, a strided view, a deflated member). For the tensors named in
EXPECTED it also writes NAME.FILE.bin, the C-order little-endian bytes the
writer's own library reads back (the independent reference).

Usage: python3 copy_path_files.py OUTDIR
Exit 77 when numpy or torch is missing (the test skips that part).
"""
import sys

out = sys.argv[1]
try:
    import numpy as np
except ImportError:
    sys.exit(77)

rng = np.random.default_rng(18)
arrays = {
    "big_f32": rng.standard_normal(1_200_001).astype(np.float32),  # 4.8 MB: 2 chunks
    "wide_f16": rng.standard_normal((1024, 2049)).astype(np.float16),  # 4.2 MB
    "f64": rng.standard_normal(300_007),
    "i64": np.arange(-5, 600_000, dtype=np.int64),  # 4.8 MB
    "bf16": (np.arange(2_200_001, dtype=np.uint32) % 65536).astype(np.uint16).view("V2"),
    "u8": np.arange(777, dtype=np.uint8),
    "fortran": np.asfortranarray(rng.standard_normal((300, 500)).astype(np.float32)),
    "be_f32": rng.standard_normal(1000).astype(">f4"),
    "empty": np.zeros((0, 3), np.float32),
}
np.savez(f"{out}/big.npz", **arrays)
np.savez_compressed(f"{out}/big_compressed.npz", big_f32=arrays["big_f32"], fortran=arrays["fortran"])
with np.load(f"{out}/big.npz") as z:
    for name in ("big_f32", "wide_f16", "i64"):
        open(f"{out}/{name}.big.npz.bin", "wb").write(np.ascontiguousarray(z[name]).tobytes())

try:
    import torch
except ImportError:
    sys.exit(77)
g = torch.Generator().manual_seed(18)
base = torch.randn(1200, 900, generator=g)  # 4.3 MB
sd = {
    "big_f32": torch.randn(1_100_003, generator=g),
    "bf16": torch.randn(1500, 1501, generator=g).bfloat16(),
    "f16": torch.randn(2_100_001, generator=g).half(),
    "i32": torch.arange(-100, 300_000, dtype=torch.int32),
    "base": base,
    "transposed": base.t(),  # shares base's storage: gathered
    "rows": base[100:1100],  # storage offset, contiguous: copied
    "nested": {"w": torch.randn(64, 64, generator=g)},
}
torch.save(sd, f"{out}/big.pth")
loaded = torch.load(f"{out}/big.pth")
for name in ("big_f32", "rows"):
    open(f"{out}/{name}.big.pth.bin", "wb").write(loaded[name].contiguous().numpy().tobytes())
open(f"{out}/bf16.big.pth.bin", "wb").write(
    loaded["bf16"].contiguous().view(torch.int16).numpy().tobytes())
