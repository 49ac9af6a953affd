#!/usr/bin/env python3
"""PyTorch CPU peer timings for the dequantizers and quantizers `amn bench` measures.

Times the PyTorch CPU formulation that each canonical Python library uses
(written here with torch ops after reading that library's code; the function
each one follows is named in its builder below) on ONE thread, at the two
sizes of `amn bench` (65,536 output elements cache-resident and 4096 x 11008
streaming), median of --reps timed runs after a warm-up, on synthetic random
inputs in the on-disk layouts. Each timing covers everything from the packed
tensors to the output tensor in the output dtype, as amn's kernels do.

Prints ns per output element per amn row name (e.g. gptq4_to_bf16) and
output dtype, as a table or (--json) as JSON for perf/compare_torch.sh.

Not a test and not a build dependency: without torch it says how to install
it and exits 0 with "skipped". Needs Python 3 and torch only.
"""

import argparse
import json
import math
import statistics
import sys
import time

CACHE_ELEMS = 65536
STREAM_ROWS, STREAM_COLS = 4096, 11008  # DESIGN.md section 8: 45,088,768 elements
QUICK_STREAM_ROWS, QUICK_STREAM_COLS = 2048, 4096  # 2^23, as `amn bench --quick`
CACHE_ROWS, CACHE_COLS = 256, 256

torch = None  # imported in main() so that a missing torch is a clean skip


# ---------------------------------------------------------------------------
# Helpers


def int32_index(idx):
    """torch < 2.0 refuses int32 index tensors; the libraries index with
    int32 (bitsandbytes) or whatever they built, so cast only when needed."""
    return idx if INT32_INDEX_OK else idx.long()


def random_int32(*shape):
    return torch.randint(-(2**31), 2**31, shape, dtype=torch.int32)


def random_u8(*shape):
    return torch.randint(0, 256, shape, dtype=torch.uint8)


def random_scales(*shape, dtype):
    # Positive, weight-scale-like magnitudes.
    return (torch.rand(*shape) * 0.01 + 1e-3).to(dtype)


def e4m3_table():
    """The 256 E4M3FN values (0x7F/0xFF NaN), for torch without float8."""
    values = []
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        exp = (code >> 3) & 0xF
        man = code & 0x7
        if exp == 0xF and man == 0x7:
            values.append(float("nan"))
        elif exp == 0:
            values.append(sign * man * 2.0**-9)
        else:
            values.append(sign * (1 + man / 8) * 2.0 ** (exp - 7))
    return torch.tensor(values, dtype=torch.float32)


def e4m3_to_f32(codes_u8):
    """`t.to(torch.float32)` of an E4M3 tensor. Native on torch >= 2.1; older
    torch has no float8 dtype, so a 256-entry table lookup stands in."""
    if HAS_FLOAT8:
        return codes_u8.view(torch.float8_e4m3fn).to(torch.float32)
    return E4M3_LUT[codes_u8.long()]


def out_dtype(name):
    return {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[name]


def matrix_shape(n_elems, quick):
    if n_elems == CACHE_ELEMS:
        return CACHE_ROWS, CACHE_COLS
    return (QUICK_STREAM_ROWS, QUICK_STREAM_COLS) if quick else (STREAM_ROWS, STREAM_COLS)


# ---------------------------------------------------------------------------
# Formulations. Each builder gets (rows, cols, dtype, orientation) for an
# output of rows x cols = n elements, makes its inputs once, and returns the
# function to time. For GPTQ/AWQ, rows = out_features and cols = in_features.

GROUP_SIZE = 128


def gptq_shift_table(bits):
    if bits == 3:
        # GPTQModel's 3-bit shift table: 32 values over 3 words, two of them
        # straddling a word boundary (fixed up in gptq_dequant).
        return torch.tensor(
            [[0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 0],
             [0, 1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31],
             [0, 2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 0]],
            dtype=torch.int32).reshape(1, 3, 12)
    return torch.arange(0, 32, bits, dtype=torch.int32).unsqueeze(0)


def gptq_dequant(qweight, qzeros, scales, g_idx, bits, wf, dtype, orientation, v1=True):
    """GPTQModel `PackableQuantLinear.dequantize_weight`
    (gptqmodel/nn_modules/qlinear/__init__.py), bits 2/3/4/8, after
    `convert_gptq_v1_to_v2_format` (v1 checkpoints store zero - 1; GPTQModel
    adds the 1 once at load time, amn per call, so it is timed here as one
    `+ 1` on the unpacked zeros). Scales are cast to f32 first, as the
    fixture reference did (stock GPTQModel multiplies in the f16 scale dtype),
    so the bytes are the ones amn produces. g_idx gather as in the library
    (`scales[g_idx.long()] * (weight - zeros[g_idx.long()])`). The library
    returns [in, out]; out_in adds `.t().contiguous()` for nn.Linear layout.
    `wf` is gptq_shift_table(bits) (a buffer GPTQModel builds once)."""
    wf_zero = wf.unsqueeze(0)
    wf_neg_one = wf.unsqueeze(-1)
    dequant_dtype = torch.int16 if bits == 8 else torch.int8
    maxq = 2**bits - 1
    if bits != 3:
        pack_factor = 32 // bits
        zeros = torch.bitwise_right_shift(
            qzeros.unsqueeze(2).expand(-1, -1, pack_factor), wf_zero).to(dequant_dtype)
        zeros = torch.bitwise_and(zeros, maxq).reshape(scales.shape)
        weight = torch.bitwise_and(
            torch.bitwise_right_shift(
                qweight.unsqueeze(1).expand(-1, pack_factor, -1), wf_neg_one).to(dequant_dtype),
            maxq)
    else:
        z = qzeros.reshape(qzeros.shape[0], qzeros.shape[1] // 3, 3, 1).expand(-1, -1, -1, 12)
        z = z >> wf_zero
        z[:, :, 0, 10] = (z[:, :, 0, 10] & 0x3) | ((z[:, :, 1, 0] << 2) & 0x4)
        z[:, :, 1, 11] = (z[:, :, 1, 11] & 0x1) | ((z[:, :, 2, 0] << 1) & 0x6)
        z = z & 0x7
        zeros = torch.cat([z[:, :, 0, :11], z[:, :, 1, 1:12], z[:, :, 2, 1:11]], dim=2)
        zeros = zeros.reshape(scales.shape)
        w = qweight.reshape(qweight.shape[0] // 3, 3, 1, qweight.shape[1]).expand(-1, -1, 12, -1)
        w = (w >> wf_neg_one) & 0x7
        w[:, 0, 10] = (w[:, 0, 10] & 0x3) | ((w[:, 1, 0] << 2) & 0x4)
        w[:, 1, 11] = (w[:, 1, 11] & 0x1) | ((w[:, 2, 0] << 1) & 0x6)
        w = w & 0x7
        weight = torch.cat([w[:, 0, :11], w[:, 1, 1:12], w[:, 2, 1:11]], dim=1)
    if v1:
        zeros = zeros + 1
    weight = weight.reshape(weight.shape[0] * weight.shape[1], weight.shape[2])
    g = g_idx.long()
    out = (scales.to(torch.float32)[g] * (weight - zeros[g])).to(dtype)  # [in, out]
    if orientation == "out_in":
        out = out.t().contiguous()
    return out


def build_gptq(bits):
    def build(rows, cols, dtype, orientation):
        n_out, k_in = rows, cols
        groups = math.ceil(k_in / GROUP_SIZE)
        qweight = random_int32(k_in * bits // 32, n_out)
        qzeros = random_int32(groups, n_out * bits // 32)
        scales = random_scales(groups, n_out, dtype=torch.float16)
        g_idx = torch.arange(k_in, dtype=torch.int32) // GROUP_SIZE
        wf = gptq_shift_table(bits)
        return lambda: gptq_dequant(qweight, qzeros, scales, g_idx, bits, wf, dtype, orientation)

    return build


AWQ_REVERSE_ORDER = [0, 4, 1, 5, 2, 6, 3, 7]


def awq_dequant(qweight, qzeros, scales, group_size, dtype, orientation):
    """AutoAWQ `dequantize_gemm` (awq/utils/packing_utils.py): `unpack_awq`
    (shift each int32 by arange(0, 32, 4), to int8), `reverse_awq_order`,
    `& 0xF`, scales and zeros `repeat_interleave(group_size, dim=0)`, then
    `(iweight - izeros) * scales`. Scales cast to f32 first (the fixture
    reference's single rounding; stock AutoAWQ multiplies in f16). Result
    [in, out]; out_in adds `.t().contiguous()`."""
    bits = 4
    shifts = torch.arange(0, 32, bits)
    iweights = torch.bitwise_right_shift(qweight[:, :, None], shifts[None, None, :]).to(torch.int8)
    iweights = iweights.view(iweights.shape[0], -1)
    izeros = torch.bitwise_right_shift(qzeros[:, :, None], shifts[None, None, :]).to(torch.int8)
    izeros = izeros.view(izeros.shape[0], -1)
    order = torch.arange(iweights.shape[-1], dtype=torch.int32).view(-1, 32 // bits)
    order = int32_index(order[:, AWQ_REVERSE_ORDER].view(-1))
    izeros = izeros[:, order]
    iweights = iweights[:, order]
    iweights = torch.bitwise_and(iweights, (2**bits) - 1)
    izeros = torch.bitwise_and(izeros, (2**bits) - 1)
    s = scales.to(torch.float32).repeat_interleave(group_size, dim=0)
    izeros = izeros.repeat_interleave(group_size, dim=0)
    out = ((iweights - izeros) * s).to(dtype)
    if orientation == "out_in":
        out = out.t().contiguous()
    return out


def build_awq(rows, cols, dtype, orientation):
    n_out, k_in = rows, cols
    groups = math.ceil(k_in / GROUP_SIZE)
    qweight = random_int32(k_in, n_out // 8)
    qzeros = random_int32(groups, n_out // 8)
    scales = random_scales(groups, n_out, dtype=torch.float16)
    return lambda: awq_dequant(qweight, qzeros, scales, GROUP_SIZE, dtype, orientation)


def build_ct_int(bits):
    """compressed-tensors pack-quantized, symmetric, group strategy (group
    128), BF16 scales: `unpack_from_int32` (compressors/quantized_compressors/
    pack_quantized.py: int32 zeros, one strided assignment
    `(value >> bits*i) & mask` per position, drop padding, subtract 2^(bits-1),
    `.to(int8)`), then the group path of `dequantize` (quantization/lifecycle/
    forward.py: unflatten to [rows, groups, group_size], `_dequantize`:
    `x_q.to(scale.dtype) * scale`, in the scale dtype), then `.to(out)`.
    Output [out, in], the stored orientation."""

    def build(rows, cols, dtype, orientation):
        pack_factor = 32 // bits
        packed = random_int32(rows, math.ceil(cols / pack_factor))
        groups = math.ceil(cols / GROUP_SIZE)
        scale = random_scales(rows, groups, dtype=torch.bfloat16)
        mask = (1 << bits) - 1

        def run():
            unpacked = torch.zeros((packed.shape[0], packed.shape[1] * pack_factor), dtype=torch.int32)
            for i in range(pack_factor):
                unpacked[:, i::pack_factor] = (packed >> (bits * i)) & mask
            unpacked = unpacked[:, :cols]
            unpacked = (unpacked - (2**bits) // 2).to(torch.int8)
            x = unpacked.unflatten(-1, (groups, GROUP_SIZE))
            w = x.to(scale.dtype) * scale.unsqueeze(-1)
            return w.flatten(-2, -1).to(dtype)

        return run

    return build


# bitsandbytes' 4-bit codebooks (bitsandbytes functional `get_4bit_type`).
NF4_CODE = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
            -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
            0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
            0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
            0.7229568362236023, 1.0]
FP4_CODE = [v / 12.0 for v in (0.0, 0.0625, 8.0, 12.0, 4.0, 6.0, 2.0, 3.0,
                               -0.0, -0.0625, -8.0, -12.0, -4.0, -6.0, -2.0, -3.0)]
BNB_BLOCK = 64
BNB_NESTED_BLOCK = 256


def bnb_dequantize_4bit(packed, absmax, code, n, dtype, blocksize=BNB_BLOCK, code_dtype=None):
    """bitsandbytes backends/default/ops.py `_dequantize_4bit_impl` (the
    CPU/PyTorch fallback of `dequantize_4bit`): int32 buffer, high nibble to
    the even element, codebook cast to the output dtype and indexed, times
    absmax per block (f32), then `.to(dtype)`. n is a multiple of the block.
    Rounding the codebook to a 16-bit output dtype before the multiply makes
    that path round twice: its BF16/F16 bytes differ from the CUDA kernel's
    (and amn's) for some elements; --check-fixtures shows both
    (code_dtype=float32 is the single-rounding variant)."""
    out_dq = torch.empty(packed.size(0) * 2, dtype=torch.int32)
    out_dq[1::2] = packed & 0xF
    out_dq[::2] = packed >> 4
    out_dq = code.to(code_dtype or dtype)[int32_index(out_dq)][:n]
    out = out_dq.view(-1, blocksize) * absmax.view(-1, 1)
    return out.reshape(-1).to(dtype)


def build_bnb4(quant_type, double_quant):
    """NF4/FP4 `dequantize_4bit` as above. Double quant recovers absmax per
    call as bitsandbytes' default `gemm_4bit` path does:
    `dequantize_blockwise(absmax_u8, nested_absmax, nested_code, 256, f32)`
    (`code[A.int()]`, view(-1, 256) * nested_absmax, `.to(f32)`) `+ offset`.
    Flat output of n elements (the stored [out, in] order)."""

    def build(rows, cols, dtype, orientation):
        n = rows * cols
        packed = random_u8(n // 2)
        code = torch.tensor(NF4_CODE if quant_type == "nf4" else FP4_CODE, dtype=torch.float32)
        blocks = n // BNB_BLOCK
        if not double_quant:
            absmax = torch.rand(blocks) * 0.1

            def run():
                return bnb_dequantize_4bit(packed, absmax, code, n, dtype)

            return run
        absmax_u8 = random_u8(blocks)
        nested_absmax = torch.rand(math.ceil(blocks / BNB_NESTED_BLOCK)) * 0.1
        nested_code = torch.linspace(-1.0, 1.0, 256)
        offset = torch.tensor(0.05)

        def run():
            absmax = bnb_nested_absmax(absmax_u8, nested_absmax, nested_code, offset)
            return bnb_dequantize_4bit(packed, absmax, code, n, dtype)

        return run

    return build


def bnb_nested_absmax(absmax_u8, nested_absmax, nested_code, offset):
    """bitsandbytes default `dequantize_blockwise` (code[A.int()], padded to
    the nested block, view(-1, 256) * nested_absmax, `.to(f32)`) `+ offset`,
    as its default `gemm_4bit` recovers a double-quant absmax."""
    blocks = absmax_u8.numel()
    a = nested_code[int32_index(absmax_u8.reshape(-1).int())]
    rem = a.shape[-1] % BNB_NESTED_BLOCK
    if rem:
        a = torch.nn.functional.pad(a, (0, BNB_NESTED_BLOCK - rem))
    a = (a.view(-1, BNB_NESTED_BLOCK) * nested_absmax.view(-1, 1)).to(torch.float32)
    return a.reshape(-1)[:blocks] + offset


def int8_rowwise_dequant(a, scb, dtype):
    """bitsandbytes `int8_vectorwise_dequant` (functional.py / default
    backend): `A * stats.view(-1, 1) * 7.874015718698502e-3` in f32, then
    `.to(dtype)`. [out, in]."""
    return (a * scb.view(-1, 1) * 7.874015718698502e-3).to(dtype)


def build_int8_rowwise(rows, cols, dtype, orientation):
    a = torch.randint(-128, 128, (rows, cols), dtype=torch.int8)
    scb = torch.rand(rows) * 10
    return lambda: int8_rowwise_dequant(a, scb, dtype)


E2M1_MAGNITUDES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def build_nvfp4(rows, cols, dtype, orientation):
    """compressed-tensors NVFP4 (compressors/quantized_compressors/
    nvfp4_quantized.py `decompress_weight`): `unpack_fp4_from_uint8` (low
    nibble first, sign bit 3, magnitude table, `* where(sign, -1, 1)`,
    `.to(bf16)`), then the group-16 `dequantize` / `_dequantize` with
    `scale = weight_scale / global_scale` (E4M3 / F32 -> F32),
    `x_q.to(scale.dtype) * scale`, `.to(bf16)` (the unpacked dtype); other
    output dtypes convert that BF16 result. [out, in]."""
    packed = random_u8(rows, cols // 2)
    weight_scale = random_u8(rows, cols // 16) & 0x7E  # finite E4M3 below 256
    global_scale = torch.tensor([448.0 * 6.0 / 2.5], dtype=torch.float32)
    table = torch.tensor(E2M1_MAGNITUDES, dtype=torch.float32)

    def run():
        a_flat = packed.flatten()
        high = (a_flat & 0xF0) >> 4
        low = a_flat & 0x0F
        combined = torch.stack((low, high), dim=1).flatten()
        signs = (combined & 0x08).to(torch.bool)
        abs_vals = (combined & 0x07).to(torch.long)
        values = table[abs_vals] * torch.where(signs, -1.0, 1.0)
        x_q = values.reshape(rows, cols).to(torch.bfloat16)
        scale = e4m3_to_f32(weight_scale) / global_scale
        x = x_q.unflatten(-1, (cols // 16, 16))
        w = (x.to(scale.dtype) * scale.unsqueeze(-1)).to(torch.bfloat16)
        return w.flatten(-2, -1).to(dtype)

    return run


FP4_VALUES = [+0.0, +0.5, +1.0, +1.5, +2.0, +3.0, +4.0, +6.0,
              -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def build_mxfp4(rows, cols, dtype, orientation):
    """transformers integrations/mxfp4.py `convert_moe_packed_tensors`
    (gpt-oss): `scales.to(int32) - 127`, FP4 table in the target dtype, low
    nibble to the even element, `torch.ldexp(sub, exp, out=sub)`, reshape and
    `.transpose(1, 2).contiguous()`. One expert: blocks [1, R, G, 16] with
    R = rows, G * 32 = cols; the output is [1, G*32, R]."""
    groups = cols // 32
    blocks = random_u8(1, rows, groups, 16)
    scales = torch.randint(120, 135, (1, rows, groups), dtype=torch.uint8)

    def run():
        exps = scales.to(torch.int32) - 127
        lut = torch.tensor(FP4_VALUES, dtype=dtype)
        *prefix_shape, g, b = blocks.shape
        rows_total = math.prod(prefix_shape) * g
        blk = blocks.reshape(rows_total, b)
        exp = exps.reshape(rows_total, 1)
        out = torch.empty(rows_total, b * 2, dtype=dtype)
        idx_lo = (blk & 0x0F).to(torch.long)
        idx_hi = (blk >> 4).to(torch.long)
        out[:, 0::2] = lut[idx_lo]
        out[:, 1::2] = lut[idx_hi]
        torch.ldexp(out, exp, out=out)
        out = out.reshape(*prefix_shape, g, b * 2).view(*prefix_shape, g * b * 2)
        return out.transpose(1, 2).contiguous()

    return run


FP8_BLOCK = 128


def fp8_block_dequant(codes, scale, dtype):
    """FP8 E4M3 with block scales (the fixture reference and amn/fp8_dequant.h):
    `weight.to(float32) * scale.to(float32)`, each scale broadcast over its
    block of rows/scale_rows x cols/scale_cols, then `.to(dtype)`. [out, in]."""
    rows, cols = codes.shape
    sr, sc = scale.shape
    w = e4m3_to_f32(codes).view(sr, rows // sr, sc, cols // sc)
    s = scale.to(torch.float32)[:, None, :, None]
    return (w * s).to(dtype).view(rows, cols)


def build_e4m3_scaled(rows, cols, dtype, orientation):
    codes = random_u8(rows, cols)
    codes = torch.where((codes & 0x7F) == 0x7F, codes ^ 0x40, codes)  # no NaN, as amn bench
    scale = random_scales(math.ceil(rows / FP8_BLOCK), math.ceil(cols / FP8_BLOCK), dtype=torch.bfloat16)
    return lambda: fp8_block_dequant(codes, scale, dtype)


# ---------------------------------------------------------------------------
# --check-fixtures: run the formulations above on the real-model fixtures of
# /work/shared/fixtures (layouts in its README.md) and count the BF16 outputs
# whose bits differ from the expected ones, i.e. from amn's results. This
# shows that what is timed computes what amn computes.

SCALE_DTYPES = {0: "float32", 1: "bfloat16", 2: "float16"}


class Reader:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = bytearray(f.read())
        self.pos = 0

    def u32(self, count):
        import struct
        values = struct.unpack_from("<%dI" % count, self.data, self.pos)
        self.pos += 4 * count
        return values

    def f32(self):
        import struct
        (value,) = struct.unpack_from("<f", self.data, self.pos)
        self.pos += 4
        return value

    def tensor(self, n_bytes, dtype, shape):
        t = torch.frombuffer(self.data, dtype=torch.uint8, count=n_bytes, offset=self.pos).clone()
        self.pos += n_bytes
        return t.view(dtype).reshape(shape)


def mismatches(out, expected_bits):
    got = out.contiguous().view(torch.int16).reshape(-1)
    return int((got != expected_bits.reshape(-1)).sum()), got.numel()


def check_fixtures(root):
    import glob
    import os
    rows = []
    for path in sorted(glob.glob(os.path.join(root, "gptq_reference", "*.bin"))):
        r = Reader(path)
        bits, gs, k_in, n_out, sdt, _, qw_len, sc_len, qz_len, gi_len, ex_len = r.u32(11)
        sdt = getattr(torch, SCALE_DTYPES[sdt])
        qweight = r.tensor(qw_len, torch.int32, (k_in * bits // 32, n_out))
        scales = r.tensor(sc_len, sdt, (-1, n_out))
        qzeros = r.tensor(qz_len, torch.int32, (scales.shape[0], -1))
        g_idx = (r.tensor(gi_len, torch.int32, (k_in,)) if gi_len
                 else torch.arange(k_in, dtype=torch.int32) // gs)
        expected = r.tensor(ex_len, torch.int16, (k_in, n_out))
        out = gptq_dequant(qweight, qzeros, scales, g_idx, bits, gptq_shift_table(bits),
                           torch.bfloat16, "in_out")
        rows.append(("gptq%d" % bits, path) + mismatches(out, expected))
    for path in sorted(glob.glob(os.path.join(root, "awq_reference", "*.bin"))):
        r = Reader(path)
        _, gs, k_in, n_out, sdt, qw_len, sc_len, qz_len, ex_len = r.u32(9)
        sdt = getattr(torch, SCALE_DTYPES[sdt])
        qweight = r.tensor(qw_len, torch.int32, (k_in, n_out // 8))
        scales = r.tensor(sc_len, sdt, (-1, n_out))
        qzeros = r.tensor(qz_len, torch.int32, (scales.shape[0], n_out // 8))
        expected = r.tensor(ex_len, torch.int16, (k_in, n_out))
        out = awq_dequant(qweight, qzeros, scales, gs, torch.bfloat16, "in_out")
        rows.append(("awq4", path) + mismatches(out, expected))
    for path in sorted(glob.glob(os.path.join(root, "bnb_reference", "*.bin"))):
        r = Reader(path)
        (fmt,) = r.u32(1)
        if fmt == 1:
            n_out, k_in, w_len, scb_len, ex_len = r.u32(5)
            a = r.tensor(w_len, torch.int8, (n_out, k_in))
            scb = r.tensor(scb_len, torch.float32, (n_out,))
            expected = r.tensor(ex_len, torch.int16, (n_out, k_in))
            rows.append(("int8_rowwise", path) + mismatches(int8_rowwise_dequant(a, scb, torch.bfloat16), expected))
            continue
        n, bs, w_len, am_len, qm_len, nam_len, nqm_len, ex_len = r.u32(8)
        offset = r.f32()
        packed = r.tensor(w_len, torch.uint8, (-1,))
        nb = n // bs
        absmax = r.tensor(am_len, torch.float32 if fmt == 0 else torch.uint8, (nb,))
        quant_map = r.tensor(qm_len, torch.float32, (16,))
        if fmt == 2:
            nested_absmax = r.tensor(nam_len, torch.float32, (-1,))
            nested_code = r.tensor(nqm_len, torch.float32, (256,))
            absmax = bnb_nested_absmax(absmax, nested_absmax, nested_code, torch.tensor(offset))
        expected = r.tensor(ex_len, torch.int16, (n,))
        # The default backend indexes its own CODE table, not the stored map.
        kind = "fp4" if quant_map[1] > 0 else "nf4"
        code = torch.tensor(FP4_CODE if kind == "fp4" else NF4_CODE, dtype=torch.float32)
        name = kind + ("_dq" if fmt == 2 else "")
        out = bnb_dequantize_4bit(packed, absmax, code, n, torch.bfloat16, blocksize=bs,
                                  code_dtype=torch.float32)
        rows.append((name, path) + mismatches(out, expected))
        # As timed: the default backend's codebook rounded to BF16 first.
        out = bnb_dequantize_4bit(packed, absmax, code, n, torch.bfloat16, blocksize=bs)
        rows.append((name + "*", path) + mismatches(out, expected))
    for path in sorted(glob.glob(os.path.join(root, "fp8_reference", "*.bin"))):
        r = Reader(path)
        scheme, sdt, n_rows, n_cols, w_len, sc_len, ex_len = r.u32(7)
        sdt = getattr(torch, SCALE_DTYPES[sdt])
        codes = r.tensor(w_len, torch.uint8, (n_rows, n_cols))
        scale_shape = {0: (math.ceil(n_rows / FP8_BLOCK), math.ceil(n_cols / FP8_BLOCK)),
                       1: (1, 1), 2: (n_rows, 1)}[scheme]
        scale = r.tensor(sc_len, sdt, scale_shape)
        expected = r.tensor(ex_len, torch.int16, (n_rows, n_cols))
        rows.append(("e4m3_scaled", path) + mismatches(fp8_block_dequant(codes, scale, torch.bfloat16), expected))
    bad = 0
    for kind, path, n_bad, n_all in rows:
        print("%-13s %-35s %6d of %6d BF16 outputs differ" % (kind, os.path.basename(path), n_bad, n_all))
        bad += n_bad != 0 and not kind.endswith("*")
    if not rows:
        print("torch_peer: no fixtures under %s" % root)
    print("* = bitsandbytes' default CPU backend as timed: it casts the codebook to the output "
          "dtype before multiplying by absmax, so 16-bit outputs round twice and may differ "
          "from the CUDA kernel (the fixtures) and amn; the unstarred line rounds once")
    return 1 if bad or not rows else 0


# ---------------------------------------------------------------------------
# Quantizers (amn's encoder rows <in>_to_nf4 / _fp4 / _int8_rowwise, timed by
# `amn bench` with the QuantError sums on). Each builder gets the INPUT
# dtype; the timed call goes from the BF16/F16/F32 tensor to the packed
# codes and the side values (absmax / SCB), as amn's encoders do.

# bitsandbytes' get_4bit_type("nf4") / ("fp4") codebooks (functional.py).
NF4_CODE = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
            -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
            0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
            0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0]
FP4_CODE = [v / 12 for v in (0.0, 0.0625, 8.0, 12.0, 4.0, 6.0, 2.0, 3.0,
                             -0.0, -0.0625, -8.0, -12.0, -4.0, -6.0, -2.0, -3.0)]


def bnb_quantize_4bit(a, code, blocksize=BNB_BLOCK):
    """bitsandbytes' pure-torch 4-bit quantize (backends/default/ops.py
    _quantize_4bit_impl): per block absmax = |A|.max, scaled = clamp(A *
    (1 / absmax), -1, 1), code = argmin(|scaled[..., None] - codebook|)
    (a broadcast over the 16 codebook entries), two codes per byte. In the
    input's dtype, as the library runs it. n is a multiple of blocksize."""
    n = a.numel()
    blocks = a.reshape(n // blocksize, blocksize)
    absmax = blocks.abs().max(dim=-1)[0].float()
    scaled = torch.clamp(blocks * (1 / absmax.view(-1, 1)), -1, 1).reshape(-1)
    q = torch.argmin(torch.abs(scaled.view(-1, 1) - code.to(scaled.dtype)), dim=-1).to(torch.uint8)
    packed = (q[::2] << 4) | q[1::2]
    return packed, absmax


def build_quant_bnb4(codebook):
    def build(rows, cols, in_dtype, orientation):
        a = torch.randn(rows, cols).to(in_dtype)
        code = torch.tensor(codebook, dtype=torch.float32)
        return lambda: bnb_quantize_4bit(a, code)

    return build


def build_quant_int8_rowwise(rows, cols, in_dtype, orientation):
    """bitsandbytes int8_vectorwise_quant (default CPU backend, threshold 0):
    SCB = |A|.max per row (f32), codes = round(A * (127 / SCB)) to int8."""
    a = torch.randn(rows, cols).to(in_dtype)

    def run():
        scb = torch.abs(a).max(dim=-1)[0].float()
        codes = torch.round(a * (127.0 / scb.unsqueeze(-1))).to(torch.int8)
        return codes, scb

    return run


# (amn row scheme name, builder, what it follows): rows <in dtype>_to_<scheme>.
QUANTIZERS = [
    ("nf4", build_quant_bnb4(NF4_CODE), "bitsandbytes _quantize_4bit_impl (broadcast argmin, blocks of 64)"),
    ("fp4", build_quant_bnb4(FP4_CODE), "bitsandbytes _quantize_4bit_impl (broadcast argmin, blocks of 64)"),
    ("int8_rowwise", build_quant_int8_rowwise, "bitsandbytes int8_vectorwise_quant: round(x * 127 / absmax)"),
]


# (amn row base name, builder, orientations, what it follows)
KERNELS = [
    ("e4m3_scaled", build_e4m3_scaled, ["out_in"], "weight.to(f32) * scale, .to(out)"),
    ("gptq2", build_gptq(2), ["out_in", "in_out"], "GPTQModel dequantize_weight"),
    ("gptq3", build_gptq(3), ["out_in", "in_out"], "GPTQModel dequantize_weight (3-bit)"),
    ("gptq4", build_gptq(4), ["out_in", "in_out"], "GPTQModel dequantize_weight"),
    ("gptq8", build_gptq(8), ["out_in", "in_out"], "GPTQModel dequantize_weight"),
    ("awq4", build_awq, ["out_in", "in_out"], "AutoAWQ dequantize_gemm"),
    ("ct_int4", build_ct_int(4), ["out_in"], "compressed-tensors unpack_from_int32 + _dequantize"),
    ("ct_int8", build_ct_int(8), ["out_in"], "compressed-tensors unpack_from_int32 + _dequantize"),
    ("nf4", build_bnb4("nf4", False), ["flat"], "bitsandbytes default _dequantize_4bit_impl"),
    ("fp4", build_bnb4("fp4", False), ["flat"], "bitsandbytes default _dequantize_4bit_impl"),
    ("nf4_dq", build_bnb4("nf4", True), ["flat"], "bitsandbytes dequantize_blockwise + _dequantize_4bit_impl"),
    ("int8_rowwise", build_int8_rowwise, ["out_in"], "bitsandbytes int8_vectorwise_dequant"),
    ("nvfp4", build_nvfp4, ["out_in"], "compressed-tensors unpack_fp4_from_uint8 + _dequantize"),
    ("mxfp4_st", build_mxfp4, ["transposed"], "transformers convert_moe_packed_tensors"),
]

# amn's registry rows for the packed GPTQ/AWQ layers are the nn.Linear
# [out, in] orientation (kOutIn): that one is compared; in_out is extra.
PRIMARY_ORIENTATION = {"out_in", "flat", "transposed"}


# ---------------------------------------------------------------------------
# Timing, as perf/measure.cc's TimeCalls: one warm-up call, then `reps`
# batches, each of enough calls to last >= min_batch_s; per-call median.


def time_calls(fn, reps, min_batch_s=2e-4):
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    batch = 1 if first >= min_batch_s else math.ceil(min_batch_s / max(first, 1e-9))
    per_call = []
    for _ in range(max(reps, 1)):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        per_call.append((time.perf_counter() - start) / batch)
    return statistics.median(per_call), min(per_call), max(per_call)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernel", default="", help="only rows whose name contains this text")
    p.add_argument("--dtypes", default="bf16,f32", help="output dtypes, of bf16,f16,f32 (default bf16,f32)")
    p.add_argument("--sizes", default="cache,stream", help="cache, stream or both (default both)")
    p.add_argument("--reps", type=int, default=5, help="timed runs per measurement, >= 5 (default 5)")
    p.add_argument("--quick", action="store_true", help="streaming size 2^23 elements, as `amn bench --quick`")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--list", action="store_true", help="list the row names and exit")
    p.add_argument("--check-fixtures", metavar="DIR",
                   help="instead of timing, run the formulations on the fixtures under DIR "
                        "(e.g. /work/shared/fixtures) and count BF16 outputs that differ")
    return p.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    dtypes = [d for d in args.dtypes.split(",") if d]
    if args.list:  # needs no torch: perf/compare_torch.sh asks for the names first
        for base, _, _, _ in KERNELS:
            for dt in dtypes:
                name = "%s_to_%s" % (base, dt)
                if args.kernel in name:
                    print(name)
        for scheme, _, _ in QUANTIZERS:
            for dt in dtypes:
                name = "%s_to_%s" % (dt, scheme)
                if args.kernel in name:
                    print(name)
        return 0
    global torch, INT32_INDEX_OK, HAS_FLOAT8, E4M3_LUT
    try:
        import torch as torch_module
    except ImportError:
        msg = ("torch_peer: skipped: PyTorch is not importable by %s. Install it, e.g. "
               "Debian/Ubuntu: apt-get install python3-torch (then run with /usr/bin/python3); "
               "or: pip install torch --index-url https://download.pytorch.org/whl/cpu" % sys.executable)
        if args.json:
            print(json.dumps({"skipped": msg}))
        else:
            print(msg)
        return 0
    torch = torch_module
    torch.set_num_threads(1)
    torch.set_grad_enabled(False)
    HAS_FLOAT8 = hasattr(torch, "float8_e4m3fn")
    try:
        torch.zeros(2)[torch.zeros(1, dtype=torch.int32)]
        INT32_INDEX_OK = True
    except (IndexError, RuntimeError):
        INT32_INDEX_OK = False
    E4M3_LUT = e4m3_table()
    torch.manual_seed(0x616D6E)
    if args.check_fixtures:
        return check_fixtures(args.check_fixtures)

    sizes = [s for s in args.sizes.split(",") if s]
    reps = max(args.reps, 5)
    notes = []
    if not HAS_FLOAT8:
        notes.append("torch %s has no float8: E4M3 -> f32 is a 256-entry table lookup" % torch.__version__)
    if not INT32_INDEX_OK:
        notes.append("torch %s needs int64 index tensors: int32 indices get a .long()" % torch.__version__)

    results = []
    for base, builder, orientations, follows in KERNELS:
        for dt in dtypes:
            name = "%s_to_%s" % (base, dt)
            if args.kernel not in name:
                continue
            for orientation in orientations:
                for size in sizes:
                    n = CACHE_ELEMS if size == "cache" else None
                    rows, cols = matrix_shape(n if n else -1, args.quick)
                    fn = builder(rows, cols, out_dtype(dt), orientation)
                    out = fn()
                    assert out.numel() == rows * cols and out.dtype == out_dtype(dt), name
                    median, lo, hi = time_calls(fn, reps)
                    del out, fn
                    n_elems = rows * cols
                    results.append({
                        "kernel": name, "out": dt, "size": size, "orientation": orientation,
                        "primary": orientation in PRIMARY_ORIENTATION,
                        "shape": [rows, cols], "n_elems": n_elems,
                        "ns_per_elem": median * 1e9 / n_elems,
                        "ns_per_elem_min": lo * 1e9 / n_elems,
                        "ns_per_elem_max": hi * 1e9 / n_elems,
                        "follows": follows,
                    })
                    if not args.json:
                        r = results[-1]
                        print("%-20s %-10s %-6s %10.4f ns/el  (%d x %d; %s)" % (
                            name, orientation, size, r["ns_per_elem"], rows, cols, follows), flush=True)
    for scheme, builder, follows in QUANTIZERS:
        for dt in dtypes:
            name = "%s_to_%s" % (dt, scheme)
            if args.kernel not in name:
                continue
            for size in sizes:
                n = CACHE_ELEMS if size == "cache" else None
                rows, cols = matrix_shape(n if n else -1, args.quick)
                fn = builder(rows, cols, out_dtype(dt), "flat")
                fn()
                median, lo, hi = time_calls(fn, reps)
                del fn
                n_elems = rows * cols
                results.append({
                    "kernel": name, "out": scheme, "size": size, "orientation": "flat",
                    "primary": True, "shape": [rows, cols], "n_elems": n_elems,
                    "ns_per_elem": median * 1e9 / n_elems,
                    "ns_per_elem_min": lo * 1e9 / n_elems,
                    "ns_per_elem_max": hi * 1e9 / n_elems,
                    "follows": follows,
                })
                if not args.json:
                    r = results[-1]
                    print("%-20s %-10s %-6s %10.4f ns/el  (%d x %d; %s)" % (
                        name, "flat", size, r["ns_per_elem"], rows, cols, follows), flush=True)
    if args.json:
        print(json.dumps({"torch_version": torch.__version__, "threads": torch.get_num_threads(),
                          "reps": reps, "notes": notes, "results": results}, indent=2))
    else:
        print("torch %s, %d thread, median of %d runs after a warm-up" % (
            torch.__version__, torch.get_num_threads(), reps))
        for note in notes:
            print("note: " + note)
        print("out_in rows of GPTQ/AWQ include .t().contiguous() (amn's rows are [out, in]); "
              "in_out rows are the library's own [in, out] result")
    return 0


INT32_INDEX_OK = True
HAS_FLOAT8 = False
E4M3_LUT = None

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
