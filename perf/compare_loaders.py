"""amn inspect / amn remember against torch.load(weights_only=True) and
numpy.load on the same files, in one run (DESIGN.md §8: ratios from one run).

Files: the pth_reference / npz_reference fixtures (when AMN_FIXTURES_DIR or
../shared/fixtures has them) and generated ones: a ~300 MB PyTorch state dict
(F32 and BF16 tensors of Llama-like shapes, one transposed view) and the same
arrays as an .npz. Each command runs --reps times (median wall time). The peer
is timed twice: in-process (Python start-up and `import torch` not counted)
and as a `python3 -c` process, as a command-line user meets it; the amn
numbers always include process start-up. `cp` of the same file is the floor
for remember (the same bytes read and written). remember writes to a tmpfs-or-not directory beside the generated files:
the disk is part of what is measured, as for a user.

Usage: /usr/bin/python3 perf/compare_loaders.py [--amn build/gcc/cli/amn]
           [--workdir /tmp/amn_loaders] [--reps 5] [--mb 300] [--threads N]
Not a test; nothing here asserts a speed.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser()
parser.add_argument("--amn", default=os.path.join(root, "build/gcc/cli/amn"))
parser.add_argument("--workdir", default="/tmp/amn_loaders")
parser.add_argument("--reps", type=int, default=5)
parser.add_argument("--mb", type=int, default=300)
parser.add_argument("--threads", type=int, default=0)
args = parser.parse_args()

try:
    import numpy as np
    import torch
except ImportError as e:
    print(f"compare_loaders: needs numpy and torch ({e}); Debian: apt-get install python3-torch")
    sys.exit(0)

os.makedirs(args.workdir, exist_ok=True)


def median_seconds(fn):
    times = []
    for _ in range(args.reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_amn(*cmd):
    subprocess.run([args.amn, *cmd], check=True, stdout=subprocess.DEVNULL)


def generate():
    pth = os.path.join(args.workdir, f"model_{args.mb}mb.pth")
    npz = os.path.join(args.workdir, f"model_{args.mb}mb.npz")
    if os.path.exists(pth) and os.path.exists(npz):
        return pth, npz
    g = torch.Generator().manual_seed(0)
    sd, total, layer = {}, 0, 0
    while total < args.mb << 20:
        for name, shape in (("q_proj", (2048, 2048)), ("k_proj", (512, 2048)),
                            ("gate_proj", (5632, 2048)), ("norm", (2048,))):
            t = torch.randn(*shape, generator=g)
            sd[f"layers.{layer}.{name}.weight"] = t
            total += t.numel() * 4
        layer += 1
    sd["lm_head.weight.T"] = sd["layers.0.k_proj.weight"].t()  # a strided view of a shared storage
    sd["embed.bf16"] = torch.randn(4096, 2048, generator=g).bfloat16()
    torch.save(sd, pth)
    np.savez(npz, **{k: v.contiguous().float().numpy() for k, v in sd.items()})
    return pth, npz


def torch_load(path):  # eager in torch 1.13: every storage is read
    torch.load(path, weights_only=True, map_location="cpu")


def numpy_load(path):  # NpzFile is lazy: read every array
    with np.load(path) as z:
        for k in z.files:
            z[k]


PEER_PROCESS = {
    "torch.load": "import sys, torch; torch.load(sys.argv[1], weights_only=True, map_location='cpu')",
    "numpy.load": "import sys, numpy as np\nwith np.load(sys.argv[1]) as z:\n    [z[k] for k in z.files]",
}


def row(label, path, peer_name, peer):
    size = os.path.getsize(path)
    out = os.path.join(args.workdir, "out.safetensors")
    threads = ["-j", str(args.threads)] if args.threads else []
    t_inspect = median_seconds(lambda: run_amn("inspect", path))
    t_remember = median_seconds(lambda: run_amn("remember", "-q", "--force", *threads, path, "-o", out))
    # The copy floor: the same bytes read and written by cp (page cache as warm).
    t_copy = median_seconds(lambda: shutil.copyfile(path, out))
    t_peer = median_seconds(lambda: peer(path))
    t_peer_process = median_seconds(lambda: subprocess.run(
        [sys.executable, "-c", PEER_PROCESS[peer_name], path], check=True))
    os.remove(out)
    print(f"| {label} | {size / 2**20:.1f} MiB | {t_inspect * 1e3:.1f} ms | {t_remember * 1e3:.1f} ms "
          f"| {t_copy * 1e3:.1f} ms | {peer_name} {t_peer * 1e3:.1f} ms | {t_peer_process * 1e3:.0f} ms "
          f"| {t_peer / t_inspect:.1f}x / {t_peer_process / t_inspect:.1f}x "
          f"| {t_peer / t_remember:.2f}x / {t_peer_process / t_remember:.2f}x |")


print(f"torch {torch.__version__}, numpy {np.__version__}, {os.cpu_count()} cores, "
      f"median of {args.reps}")
print("| file | size | amn inspect | amn remember | cp (floor) | peer in-process | peer as a process "
      "| peer / inspect (in-process / process) | peer / remember (in-process / process) |")
print("|---|---|---|---|---|---|---|---|---|")
fixtures = os.environ.get("AMN_FIXTURES_DIR", os.path.join(root, "..", "shared", "fixtures"))
for family, ext, peer_name, peer in (("pth_reference", ".pth", "torch.load", torch_load),
                                     ("npz_reference", ".npz", "numpy.load", numpy_load)):
    folder = os.path.join(fixtures, family)
    if os.path.isdir(folder):
        for f in sorted(os.listdir(folder)):
            if f.endswith(ext):
                row(f, os.path.join(folder, f), peer_name, peer)
pth, npz = generate()
row(os.path.basename(pth), pth, "torch.load", torch_load)
row(os.path.basename(npz), npz, "numpy.load", numpy_load)
