#!/usr/bin/env python3
"""Writes a synthetic 4-bit AutoAWQ (GEMM) or GPTQ Llama-shaped model
(safetensors + config.json), for timing `remember` of them against `cp` of
its output.

The shapes and names are perf/plain_model.py's (the same --gib gives the same
layers); the layouts are what the checkpoints hold (checked against
../shared/fixtures README: awq_reference, gptq_reference, and
safetensors_reference awq.safetensors / gptq.safetensors). Each
q/k/v/o/gate/up/down projection of a layer with in_features x out_features
becomes, for --format awq (AutoAWQ GEMM):
  PREFIX.qweight  I32 [in, out/8]        4-bit codes packed along out
  PREFIX.qzeros   I32 [in/group, out/8]  4-bit zero points, same packing
  PREFIX.scales   F16 [in/group, out]
(no g_idx), with AutoAWQ's quantization_config {"quant_method": "awq",
"bits": 4, "group_size": 128, "zero_point": true, "version": "gemm",
"modules_to_not_convert": null}; codes uniform (every nibble 0..15), zero
points 4..11 (as in the reference slice). For --format gptq (AutoGPTQ /
GPTQModel, checkpoint format v1, symmetric, no act-order unless --act-order):
  PREFIX.g_idx    I32 [in]               i / group (--act-order: a random
                                         permutation of 0..in-1, / group)
  PREFIX.qweight  I32 [in/8, out]        4-bit codes packed along in, LSB first
  PREFIX.qzeros   I32 [in/group, out/8]  stored zero - 1 = 7 in every field
  PREFIX.scales   F16 [in/group, out]
with a quantization_config as AutoGPTQ writes it {"quant_method": "gptq",
"bits": 4, "group_size": 128, "desc_act": false (--act-order: true),
"sym": true, ...}. Scales 0.005..0.02, no bias. Embeddings, lm_head and
norms stay F16 (torch_dtype float16): embeddings Gaussian (std 0.02), norms
1.0. Tensors are in the safetensors library's order.

  perf/int4_model.py OUT_DIR [--format awq|gptq] [--act-order] [--gib 1.0] [--hidden 2048]
                    [--group 128] [--seed 0]

--gib is the size of the BF16 model plain_model.py would write (about what
`remember` writes). Needs numpy (Debian: python3-numpy, /usr/bin/python3)."""
import argparse
import json
import os

import numpy as np

from safetensors_file import write_safetensors


def f16_bytes(rng, shape, lo=None, hi=None):
    if lo is None:
        x = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
    else:
        x = rng.uniform(lo, hi, size=shape).astype(np.float32)
    return x.astype("<f2").tobytes()


def packed_words(rng, rows, cols8, lo, hi):
    """rows x cols8 int32 words of eight 4-bit fields, each uniform in [lo, hi]."""
    if lo == 0 and hi == 15:
        return rng.integers(0, 2**32, size=(rows, cols8), dtype=np.uint32).astype("<u4").tobytes()
    nib = rng.integers(lo, hi + 1, size=(rows, cols8, 8), dtype=np.uint32)
    words = np.zeros((rows, cols8), dtype=np.uint32)
    for p in range(8):
        words |= nib[:, :, p] << np.uint32(4 * p)
    return words.astype("<u4").tobytes()


def quantization_config(fmt, group, act_order):
    if fmt == "awq":
        return {"quant_method": "awq", "bits": 4, "group_size": group, "zero_point": True,
                "version": "gemm", "modules_to_not_convert": None}
    return {"quant_method": "gptq", "bits": 4, "group_size": group, "damp_percent": 0.01,
            "desc_act": act_order, "sym": True, "true_sequential": True,
            "model_name_or_path": None, "model_file_base_name": "model"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--format", choices=("awq", "gptq"), default="awq")
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--group", type=int, default=128)
    ap.add_argument("--act-order", action="store_true",
                    help="gptq: g_idx of a shuffled input order (desc_act true)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.act_order and args.format != "gptq":
        ap.error("--act-order is for --format gptq (AWQ has no g_idx)")
    h, inter, vocab, g = args.hidden, args.hidden * 11 // 4, 32000, args.group
    per_layer = 2 * (4 * h * h + 3 * h * inter + 2 * h)  # as plain_model.py
    fixed = 2 * (2 * vocab * h + h)
    layers = max(1, int((args.gib * 2**30 - fixed) // per_layer))
    assert h % g == 0 and inter % g == 0 and h % 8 == 0 and inter % 8 == 0
    # name -> (dtype, shape, writer)
    tensors = {}
    tensors["model.embed_tokens.weight"] = ("F16", [vocab, h], lambda r: f16_bytes(r, [vocab, h]))
    for i in range(layers):
        p = f"model.layers.{i}."
        linears = [(f"self_attn.{n}", h, h) for n in ("q_proj", "k_proj", "v_proj", "o_proj")]
        linears += [("mlp.gate_proj", h, inter), ("mlp.up_proj", h, inter),
                    ("mlp.down_proj", inter, h)]
        for name, fin, fout in linears:
            q = p + name
            if args.format == "awq":
                tensors[q + ".qweight"] = ("I32", [fin, fout // 8],
                                           lambda r, a=fin, b=fout: packed_words(r, a, b // 8, 0, 15))
                tensors[q + ".qzeros"] = ("I32", [fin // g, fout // 8],
                                          lambda r, a=fin, b=fout: packed_words(r, a // g, b // 8, 4, 11))
            else:
                order = (lambda r, a: r.permutation(a)) if args.act_order else (
                    lambda r, a: np.arange(a))
                tensors[q + ".g_idx"] = ("I32", [fin], lambda r, a=fin, o=order:
                                         (o(r, a) // g).astype("<i4").tobytes())
                tensors[q + ".qweight"] = ("I32", [fin // 8, fout],
                                           lambda r, a=fin, b=fout: packed_words(r, a // 8, b, 0, 15))
                tensors[q + ".qzeros"] = ("I32", [fin // g, fout // 8],
                                          lambda r, a=fin, b=fout: packed_words(r, a // g, b // 8, 7, 7))
            tensors[q + ".scales"] = ("F16", [fin // g, fout],
                                      lambda r, a=fin, b=fout: f16_bytes(r, [a // g, b], 0.005, 0.02))
        for n in ("input_layernorm", "post_attention_layernorm"):
            tensors[p + n + ".weight"] = ("F16", [h], lambda r: np.ones(h, "<f2").tobytes())
    tensors["model.norm.weight"] = ("F16", [h], lambda r: np.ones(h, "<f2").tobytes())
    tensors["lm_head.weight"] = ("F16", [vocab, h], lambda r: f16_bytes(r, [vocab, h]))
    # In the order the safetensors library writes (fixtures README): larger
    # dtypes first (its dtype enum, descending: I32 before F16), then by name.
    tensors = dict(sorted(tensors.items(), key=lambda t: (t[1][0] != "I32", t[0])))
    os.makedirs(args.out, exist_ok=True)
    offset = write_safetensors(os.path.join(args.out, "model.safetensors"), tensors,
                               np.random.default_rng(args.seed), {"format": "pt"})
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": h,
              "intermediate_size": inter, "num_hidden_layers": layers,
              "num_attention_heads": h // 64, "num_key_value_heads": h // 64,
              "vocab_size": vocab, "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
              "rope_theta": 10000.0, "torch_dtype": "float16", "tie_word_embeddings": False,
              "quantization_config": quantization_config(args.format, g, args.act_order)}
    with open(os.path.join(args.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    print(f"{args.out}: {layers} layers, {offset / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
