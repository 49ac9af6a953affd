"""One safetensors file from tensors given as name -> (dtype, shape, write),
for the perf/ model generators (plain_model.py, int4_model.py): the header
in the dicts' order, padded with spaces to 8 bytes as the safetensors
library pads it, then each tensor's bytes from write(rng), in the same
order."""
import json
import struct

import numpy as np

ELEMENT_BYTES = {"BF16": 2, "F16": 2, "F32": 4, "I32": 4, "U8": 1}


def write_safetensors(path, tensors, rng, metadata=None):
    """Writes the file; returns the size of its tensor data in bytes."""
    header, offset = {}, 0
    for name, (dtype, shape, _) in tensors.items():
        n = ELEMENT_BYTES[dtype] * int(np.prod(shape))
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, (_, _, write) in tensors.items():
            f.write(write(rng))
    return offset
