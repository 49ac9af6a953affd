#!/usr/bin/env python3
"""Writes a Llama-shaped state dict of about the requested size twice, as
model.npz (numpy.savez: F32 arrays, stored members) and model.pth
(torch.save: BF16 weights, F32 norms), for timing `remember` of files whose
dtypes are kept against `cp` (perf/remember_vs_cp.sh).

  /usr/bin/python3 perf/array_model.py OUT_DIR [--gib 1.1] [--hidden 2048] [--seed 0]

Needs numpy, and torch for the .pth (Debian: python3-numpy, python3-torch)."""
import argparse
import os

import numpy as np


def shapes_for(gib, h, elem_bytes):
    inter, vocab = h * 11 // 4, 32000
    per_layer = elem_bytes * (4 * h * h + 3 * h * inter) + 4 * 2 * h
    fixed = elem_bytes * 2 * vocab * h + 4 * h
    layers = max(1, int((gib * 2**30 - fixed) // per_layer))
    shapes = {"model.embed_tokens.weight": (vocab, h), "model.norm.weight": (h,),
              "lm_head.weight": (vocab, h)}
    for i in range(layers):
        p = f"model.layers.{i}."
        for n in ("q_proj", "k_proj", "v_proj", "o_proj"):
            shapes[p + f"self_attn.{n}.weight"] = (h, h)
        shapes[p + "mlp.gate_proj.weight"] = (inter, h)
        shapes[p + "mlp.up_proj.weight"] = (inter, h)
        shapes[p + "mlp.down_proj.weight"] = (h, inter)
        shapes[p + "input_layernorm.weight"] = (h,)
        shapes[p + "post_attention_layernorm.weight"] = (h,)
    return shapes, layers


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--gib", type=float, default=1.1)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)

    shapes, layers = shapes_for(args.gib, args.hidden, 4)
    arrays = {n: (np.ones(s, np.float32) if len(s) == 1
                  else rng.standard_normal(s, dtype=np.float32) * np.float32(0.02))
              for n, s in shapes.items()}
    np.savez(os.path.join(args.out, "model.npz"), **arrays)
    size = sum(a.nbytes for a in arrays.values())
    print(f"model.npz: {layers} layers, {size / 2**30:.2f} GiB of F32")
    del arrays

    try:
        import torch
    except ImportError:
        print("no torch: model.pth not written")
        return
    shapes, layers = shapes_for(args.gib, args.hidden, 2)
    g = torch.Generator().manual_seed(args.seed)
    sd = {n: (torch.ones(s) if len(s) == 1 else (torch.randn(s, generator=g) * 0.02).bfloat16())
          for n, s in shapes.items()}
    torch.save(sd, os.path.join(args.out, "model.pth"))
    size = sum(t.numel() * t.element_size() for t in sd.values())
    print(f"model.pth: {layers} layers, {size / 2**30:.2f} GiB (BF16 weights, F32 norms)")


if __name__ == "__main__":
    main()
