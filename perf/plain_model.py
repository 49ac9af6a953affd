#!/usr/bin/env python3
"""Writes a plain Llama-shaped BF16 model (safetensors + config.json) of about
the requested size, for timing `forget`/`convert`/`remember` against `cp`.

Values are Gaussian (std 0.02, like initialised weights) so the encoders do
real work; the names and config keys are transformers' LlamaForCausalLM ones,
so the quantized-tensor choice is the real one (q/k/v/o/gate/up/down
weights quantized; embeddings, norms and lm_head kept).

  perf/plain_model.py OUT_DIR [--gib 2.0] [--hidden 2048] [--seed 0]

Needs numpy (Debian: python3-numpy, /usr/bin/python3). perf/synthetic_model.cc
is the same model in C++ (no numpy; sharded above 5 GB like transformers; not
the same random bytes), for bare machines (perf/thread_scaling.sh)."""
import argparse
import json
import os

import numpy as np

from safetensors_file import write_safetensors


def bf16_bytes(rng, shape):
    x = (rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)).view(np.uint32)
    # Round to nearest even into the top 16 bits (no NaN can occur here).
    x = (x + 0x7FFF + ((x >> 16) & 1)) >> 16
    return x.astype("<u2").tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--gib", type=float, default=2.0)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    h, inter, vocab = args.hidden, args.hidden * 11 // 4, 32000
    per_layer = 2 * (4 * h * h + 3 * h * inter + 2 * h)
    fixed = 2 * (2 * vocab * h + h)
    layers = max(1, int((args.gib * 2**30 - fixed) // per_layer))
    shapes = {"model.embed_tokens.weight": [vocab, h], "model.norm.weight": [h],
              "lm_head.weight": [vocab, h]}
    for i in range(layers):
        p = f"model.layers.{i}."
        for n in ("q_proj", "k_proj", "v_proj", "o_proj"):
            shapes[p + f"self_attn.{n}.weight"] = [h, h]
        shapes[p + "mlp.gate_proj.weight"] = [inter, h]
        shapes[p + "mlp.up_proj.weight"] = [inter, h]
        shapes[p + "mlp.down_proj.weight"] = [h, inter]
        shapes[p + "input_layernorm.weight"] = [h]
        shapes[p + "post_attention_layernorm.weight"] = [h]
    # Norms 1.0, the rest Gaussian.
    tensors = {name: ("BF16", shape,
                      (lambda r, s=shape: np.full(s, 0x3F80, dtype="<u2").tobytes()) if len(shape) == 1
                      else (lambda r, s=shape: bf16_bytes(r, s)))
               for name, shape in shapes.items()}
    os.makedirs(args.out, exist_ok=True)
    offset = write_safetensors(os.path.join(args.out, "model.safetensors"), tensors,
                               np.random.default_rng(args.seed))
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": h,
              "intermediate_size": inter, "num_hidden_layers": layers,
              "num_attention_heads": h // 64, "num_key_value_heads": h // 64,
              "vocab_size": vocab, "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
              "rope_theta": 10000.0, "torch_dtype": "bfloat16", "tie_word_embeddings": False}
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    print(f"{args.out}: {layers} layers, {offset / 2**30:.2f} GiB of BF16")


if __name__ == "__main__":
    main()
