"""anamnesis: dequantize, quantize and convert model weights (libamn).

The verbs of the amn CLI and per-tensor access as numpy arrays, over the
installed libamn (docs/python.md)::

    import anamnesis
    model = anamnesis.parse("model-FP8.safetensors")
    for t in model.tensors(to="bf16"):
        w = model.dequantize(t["name"], to="bf16", threads=4)  # numpy array
    anamnesis.remember("model-FP8.safetensors", "model-bf16.safetensors")

BF16 arrays are returned as raw uint16 bit patterns, or as
ml_dtypes.bfloat16 (the same bits, viewed) when ml_dtypes is importable and
bf16="auto" or "ml_dtypes"; never upcast. FP8 tensors that are kept as
stored come back as uint8 codes. Failures raise anamnesis.Error (a
RuntimeError) carrying libamn's message, with .code ("invalid_argument",
"truncated", ...), .amn_message and .tensor.
"""

from ._amn import Error, Model as _Model
from ._amn import default_forget_output_path, default_output_path

__all__ = [
    "Error", "Model", "parse", "inspect", "tensors", "remember", "forget", "convert",
    "default_output_path", "default_forget_output_path", "bfloat16",
]

try:  # optional: numpy's bfloat16 dtype from JAX's ml_dtypes
    import ml_dtypes as _ml_dtypes
    bfloat16 = _ml_dtypes.bfloat16
except ImportError:
    bfloat16 = None


def _bf16_view(array, info_dtype, bf16):
    if bf16 not in ("auto", "uint16", "ml_dtypes"):
        raise ValueError("bf16=%r: expected 'auto', 'uint16' or 'ml_dtypes'" % (bf16,))
    if info_dtype != "BF16" or bf16 == "uint16":
        return array
    if bfloat16 is None:
        if bf16 == "ml_dtypes":
            raise ImportError("bf16='ml_dtypes' needs the ml_dtypes package")
        return array
    return array.view(bfloat16)


class Model:
    """A parsed model: headers read once (Model.open / anamnesis.parse)."""

    def __init__(self, path, verify=False):
        self._model = _Model.open(str(path), verify)

    @property
    def path(self):
        return self._model.path

    def warnings(self):
        """What parsing skipped, one line each."""
        return self._model.warnings()

    def inspect(self, to=None, keep_passthrough=False):
        """What remember with these options would write (amn inspect --json)."""
        return self._model.inspect(to, keep_passthrough)

    def tensors(self, to=None):
        """The tensors remember writes with `to`, as dicts (name, dtype,
        shape, bytes, source_dtype, scheme, quantized, converts, shard)."""
        return self._model.tensors(to)

    def stored_tensors(self):
        """Every stored tensor with its role (amn inspect --tensors)."""
        return self._model.stored_tensors()

    def metadata(self):
        return self._model.metadata()

    def dequantize(self, name, to=None, threads=1, use_mmap=True, bf16="auto"):
        """Tensor `name` as a numpy array of its output dtype and shape: the
        bytes remember --to `to` writes for it. threads: 1 decodes on the
        calling thread, n uses n, 0 one per core (same bytes for any)."""
        array = self._model.dequantize(name, to, threads, use_mmap)
        dtype = "BF16" if array.dtype.str == "<u2" and _is_bf16(self, name, to) else None
        return _bf16_view(array, dtype, bf16)

    def arrays(self, to=None, threads=1, use_mmap=True, bf16="auto"):
        """(name, array) for every output tensor, one at a time."""
        for t in self.tensors(to):
            array = self._model.dequantize(t["name"], to, threads, use_mmap)
            yield t["name"], _bf16_view(array, t["dtype"], bf16)

    def remember(self, output=None, to=None, keep_passthrough=False, threads=0,
                 overwrite=False, use_mmap=True):
        """Writes the dequantized model (amn remember); returns the path."""
        if output is None:
            output = default_output_path(str(self.path), to)
        self._model.remember(str(output), to, keep_passthrough, threads, overwrite, use_mmap)
        return output

    def forget(self, output=None, scheme=None, fp8_format="e4m3", block_size=64, only="",
               skip="", like=None, threads=0, overwrite=False, use_mmap=True):
        """Writes the model quantized (amn forget); returns the report."""
        if output is None:
            if scheme is None:
                raise ValueError("forget without output= needs scheme=")
            output = default_forget_output_path(str(self.path), scheme)
        return self._model.forget(str(output), scheme, fp8_format, block_size, only, skip,
                                  None if like is None else str(like), threads, overwrite,
                                  use_mmap)

    def convert(self, output, scheme="", format=None, gguf_kv=(), gguf_metadata=None,
                imatrix=None, tensor_types=(), threads=0, overwrite=False, use_mmap=True):
        """Writes the model in another container (amn convert); returns the report."""
        return self._model.convert(str(output), scheme, format, list(gguf_kv),
                                   None if gguf_metadata is None else str(gguf_metadata),
                                   None if imatrix is None else str(imatrix),
                                   list(tensor_types), threads, overwrite, use_mmap)


def _is_bf16(model, name, to):
    for t in model.tensors(to):
        if t["name"] == name:
            return t["dtype"] == "BF16"
    return False


def parse(path, verify=False):
    """Opens a model (headers only): a Model."""
    return Model(path, verify)


def inspect(path, to=None, keep_passthrough=False):
    return parse(path).inspect(to, keep_passthrough)


def tensors(path, to=None):
    return parse(path).tensors(to)


def remember(input, output=None, **options):
    return parse(input).remember(output, **options)


def forget(input, output=None, **options):
    return parse(input).forget(output, **options)


def convert(input, output, **options):
    return parse(input).convert(output, **options)
