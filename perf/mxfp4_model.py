#!/usr/bin/env python3
"""Writes a synthetic gpt-oss-shaped MXFP4 model (safetensors + config.json),
for timing `remember` of its experts, which amn writes in the transposed
layout transformers loads (gate_up_proj [E, 2880, 5760], down_proj
[E, 2880, 2880]; docs/schemes/fp4.md).

Per layer, the expert tensors of a gpt-oss checkpoint (names, dtypes and
shapes as gpt-oss checkpoints store them and their loaders read them:
blocks [E, 2I, H/32, 16] and [E, H, I/32, 16]; gpt-oss-20b has hidden H =
intermediate I = 2880, so 90 groups of 32 per row):
  model.layers.L.mlp.experts.gate_up_proj_blocks  U8   [E, 5760, 90, 16]
  model.layers.L.mlp.experts.gate_up_proj_scales  U8   [E, 5760, 90]
  model.layers.L.mlp.experts.gate_up_proj_bias    BF16 [E, 5760]
  model.layers.L.mlp.experts.down_proj_blocks     U8   [E, 2880, 90, 16]
  model.layers.L.mlp.experts.down_proj_scales     U8   [E, 2880, 90]
  model.layers.L.mlp.experts.down_proj_bias       BF16 [E, 2880]
with config.json's quantization_config {"quant_method": "mxfp4"}. Code
bytes are uniform; E8M0 scales uniform in 116..124 (magnitudes up to
6 * 2^-3), biases zero. Attention, router and embeddings are left out:
they are plain BF16, which remember copies.

  perf/mxfp4_model.py OUT_DIR [--layers 2] [--experts 8] [--seed 0]

Needs numpy (Debian: python3-numpy, /usr/bin/python3)."""
import argparse
import json
import os

import numpy as np

from safetensors_file import write_safetensors

HIDDEN = 2880
GROUPS = HIDDEN // 32


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--experts", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    e = a.experts

    def codes(rows):
        return lambda rng: rng.integers(0, 256, size=(e, rows, GROUPS, 16), dtype=np.uint8).tobytes()

    def scales(rows):
        return lambda rng: rng.integers(116, 125, size=(e, rows, GROUPS), dtype=np.uint8).tobytes()

    def zeros(n):
        return lambda rng: bytes(n)

    tensors = {}
    for layer in range(a.layers):
        p = f"model.layers.{layer}.mlp.experts."
        for proj, rows in (("gate_up_proj", 2 * HIDDEN), ("down_proj", HIDDEN)):
            tensors[p + proj + "_bias"] = ("BF16", [e, rows], zeros(2 * e * rows))
            tensors[p + proj + "_blocks"] = ("U8", [e, rows, GROUPS, 16], codes(rows))
            tensors[p + proj + "_scales"] = ("U8", [e, rows, GROUPS], scales(rows))
    # In name order.
    tensors = dict(sorted(tensors.items()))
    rng = np.random.default_rng(a.seed)
    size = write_safetensors(os.path.join(a.out, "model.safetensors"), tensors, rng,
                             metadata={"format": "pt"})
    config = {
        "architectures": ["GptOssForCausalLM"],
        "model_type": "gpt_oss",
        "hidden_size": HIDDEN,
        "intermediate_size": HIDDEN,
        "num_hidden_layers": a.layers,
        "num_local_experts": e,
        "torch_dtype": "bfloat16",
        "quantization_config": {"quant_method": "mxfp4"},
    }
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    print(f"{a.out}: {size / 2**20:.0f} MiB of tensors")


if __name__ == "__main__":
    main()
