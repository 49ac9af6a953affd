"""The Python module anamnesis (docs/python.md), run by ctest (python_module)
with Debian's python3 and numpy and PYTHONPATH at the built package.

Anchors: the fp8_reference fixtures' expected BF16 (PyTorch's bytes, from
AMN_FIXTURES_DIR or ../shared/fixtures; skipped when absent), F16 values
numpy converts itself, and the amn CLI's output files (AMN_CLI).
"""
import json
import os
import pathlib
import struct
import subprocess
import tempfile
import threading
import unittest

import numpy as np

import anamnesis

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = pathlib.Path(os.environ.get("AMN_FIXTURES_DIR") or ROOT.parent / "shared" / "fixtures")
CLI = os.environ.get("AMN_CLI")

NORM_F16 = np.array([1.0, 2.0, -2.0, 0.0], dtype="<f2")
NORM_BF16_BITS = [0x3F80, 0x4000, 0xC000, 0x0000]  # the same values as BF16


def write_safetensors(path, tensors):
    """tensors: [(name, dtype, shape, bytes)], laid out in order."""
    header, data = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def read_fp8_fixture(path):
    """fixtures/README.md fp8_reference: 28-byte header, weight, scales, expected."""
    raw = path.read_bytes()
    scheme, scale_dtype, rows, cols, wlen, slen, elen = struct.unpack_from("<7I", raw, 0)
    weight = raw[28:28 + wlen]
    scales = raw[28 + wlen:28 + wlen + slen]
    expected = np.frombuffer(raw[28 + wlen + slen:28 + wlen + slen + elen], dtype="<u2")
    return scheme, ["F32", "BF16", "F16"][scale_dtype], rows, cols, weight, scales, expected


def fp8_model(directory, fixture):
    scheme, scale_dtype, rows, cols, weight, scales, expected = read_fp8_fixture(fixture)
    if scheme == 0:
        scale = ("layer.weight_scale_inv", [(rows + 127) // 128, (cols + 127) // 128])
    elif scheme == 1:
        scale = ("layer.weight_scale", [1])
    else:
        scale = ("layer.weight_scale", [rows, 1])
    path = pathlib.Path(directory) / "model-FP8.safetensors"
    write_safetensors(path, [("model.norm.weight", "F16", [4], NORM_F16.tobytes()),
                             ("layer.weight", "F8_E4M3", [rows, cols], weight),
                             (scale[0], scale_dtype, scale[1], scales)])
    return path, rows, cols, expected


def fp8_fixtures():
    files = sorted((FIXTURES / "fp8_reference").glob("*.bin"))
    if not files:
        raise unittest.SkipTest(f"fixtures not found at {FIXTURES}/fp8_reference; set AMN_FIXTURES_DIR")
    return files


class PerTensorArrays(unittest.TestCase):
    def test_fp8_fixtures_match_pytorch_bytes(self):
        for fixture in fp8_fixtures():
            with self.subTest(fixture=fixture.name), tempfile.TemporaryDirectory() as d:
                path, rows, cols, expected = fp8_model(d, fixture)
                model = anamnesis.parse(path)
                names = [t["name"] for t in model.tensors()]
                self.assertEqual(sorted(names), ["layer.weight", "model.norm.weight"])
                for threads in (1, 3):
                    w = model.dequantize("layer.weight", to="bf16", threads=threads, bf16="uint16")
                    self.assertEqual(w.dtype, np.dtype("<u2"))
                    self.assertEqual(w.shape, (rows, cols))
                    self.assertTrue(w.flags.c_contiguous)
                    np.testing.assert_array_equal(w.reshape(-1), expected)

    def test_dtypes_shapes_and_bf16_bits(self):
        with tempfile.TemporaryDirectory() as d:
            path = pathlib.Path(d) / "m.safetensors"
            ids = np.arange(6, dtype="<i8")
            write_safetensors(path, [("norm.weight", "F16", [4], NORM_F16.tobytes()),
                                     ("ids", "I64", [2, 3], ids.tobytes())])
            model = anamnesis.Model(path)
            bf16 = model.dequantize("norm.weight", to="bf16", bf16="uint16")
            self.assertEqual((bf16.dtype, bf16.shape), (np.dtype("<u2"), (4,)))
            self.assertEqual(bf16.tolist(), NORM_BF16_BITS)
            f16 = model.dequantize("norm.weight", to="f16")
            self.assertEqual(f16.dtype, np.float16)
            np.testing.assert_array_equal(f16, NORM_F16)
            f32 = model.dequantize("norm.weight", to="f32")
            self.assertEqual(f32.dtype, np.float32)
            np.testing.assert_array_equal(f32, NORM_F16.astype(np.float32))
            kept = model.dequantize("ids", to="f32")  # integers keep their dtype
            self.assertEqual((kept.dtype, kept.shape), (np.dtype("<i8"), (2, 3)))
            np.testing.assert_array_equal(kept.reshape(-1), ids)
            # bf16="auto": ml_dtypes.bfloat16 when importable, else raw uint16;
            # the same bits either way, never upcast.
            auto = model.dequantize("norm.weight", to="bf16")
            if anamnesis.bfloat16 is None:
                self.assertEqual(auto.dtype, np.dtype("<u2"))
                with self.assertRaises(ImportError):
                    model.dequantize("norm.weight", to="bf16", bf16="ml_dtypes")
            else:
                self.assertEqual(auto.dtype, np.dtype(anamnesis.bfloat16))
            self.assertEqual(auto.view("<u2").tolist(), NORM_BF16_BITS)
            arrays = dict(model.arrays(to="f16"))
            self.assertEqual(sorted(arrays), ["ids", "norm.weight"])
            info = {t["name"]: t for t in model.tensors(to="f16")}
            self.assertEqual(info["ids"]["shape"], (2, 3))
            self.assertFalse(info["ids"]["converts"])
            self.assertEqual(info["norm.weight"]["dtype"], "F16")

    def test_python_threads_decode_one_model_at_once(self):
        # The GIL is released while decoding: 4 Python threads share a Model.
        fixture = fp8_fixtures()[0]
        with tempfile.TemporaryDirectory() as d:
            path, rows, cols, expected = fp8_model(d, fixture)
            model = anamnesis.parse(path)
            results = [None] * 4

            def work(i):
                results[i] = [model.dequantize("layer.weight", bf16="uint16", threads=2)
                              for _ in range(5)]

            threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for arrays in results:
                for a in arrays:
                    np.testing.assert_array_equal(a.reshape(-1), expected)


class Errors(unittest.TestCase):
    def test_companion_name_raises_amn_message(self):
        for fixture in fp8_fixtures()[:1]:
            with tempfile.TemporaryDirectory() as d:
                path, *_ = fp8_model(d, fixture)
                model = anamnesis.parse(path)
                with self.assertRaises(anamnesis.Error) as caught:
                    model.dequantize("layer.weight_scale_inv")
                self.assertIn('no tensor named "layer.weight_scale_inv"', str(caught.exception))
                self.assertIn("companions are part of their weight", str(caught.exception))
                self.assertEqual(caught.exception.code, "invalid argument")
                self.assertIsInstance(caught.exception, RuntimeError)
                with self.assertRaises(ValueError):
                    model.dequantize("layer.weight", to="q4")

    def test_truncated_file_raises(self):
        with tempfile.TemporaryDirectory() as d:
            path = pathlib.Path(d) / "cut.safetensors"
            write_safetensors(path, [("norm.weight", "F16", [4], NORM_F16.tobytes())])
            path.write_bytes(path.read_bytes()[:-3])
            with self.assertRaises(anamnesis.Error) as caught:
                anamnesis.parse(path)
            self.assertIn("cut.safetensors", str(caught.exception))


@unittest.skipUnless(CLI, "AMN_CLI (the amn binary) not set")
class VerbsMatchTheCli(unittest.TestCase):
    def test_remember_writes_the_cli_file(self):
        for fixture in fp8_fixtures():
            with self.subTest(fixture=fixture.name), tempfile.TemporaryDirectory() as d:
                path, *_ = fp8_model(d, fixture)
                for to in (None, "f32"):
                    ours = pathlib.Path(d) / f"py-{to}.safetensors"
                    cli = pathlib.Path(d) / f"cli-{to}.safetensors"
                    anamnesis.remember(path, ours, to=to, threads=2)
                    args = [CLI, "remember", "-q", str(path), "-o", str(cli)]
                    subprocess.run(args + (["--to", to] if to else []), check=True)
                    self.assertEqual(ours.read_bytes(), cli.read_bytes())
                self.assertEqual(anamnesis.inspect(path)["format"], "safetensors")
                self.assertTrue(anamnesis.inspect(path)["quantized"])

    def test_forget_and_convert_write_the_cli_files(self):
        with tempfile.TemporaryDirectory() as d:
            rng = np.random.default_rng(7)
            weight = rng.standard_normal((64, 128)).astype("<f2")
            path = pathlib.Path(d) / "plain.safetensors"
            write_safetensors(path, [("model.layers.0.mlp.up_proj.weight", "F16", [64, 128],
                                      weight.tobytes()),
                                     ("model.norm.weight", "F16", [4], NORM_F16.tobytes())])
            ours, cli = pathlib.Path(d) / "py-nf4.safetensors", pathlib.Path(d) / "cli-nf4.safetensors"
            report = anamnesis.forget(path, ours, scheme="nf4")
            subprocess.run([CLI, "forget", "-q", str(path), "-o", str(cli), "--scheme", "nf4"], check=True)
            self.assertEqual(ours.read_bytes(), cli.read_bytes())
            self.assertEqual([t["name"] for t in report["tensors"]], ["model.layers.0.mlp.up_proj.weight"])
            self.assertEqual(report["total"]["elements"], 64 * 128)
            ours, cli = pathlib.Path(d) / "py.gguf", pathlib.Path(d) / "cli.gguf"
            report = anamnesis.convert(path, ours, scheme="f16")
            subprocess.run([CLI, "convert", "-q", str(path), "-o", str(cli), "--scheme", "f16"], check=True)
            self.assertEqual(ours.read_bytes(), cli.read_bytes())
            self.assertEqual((report["format"], report["total_tensors"]), ("gguf", 2))


if __name__ == "__main__":
    unittest.main(verbosity=2)
