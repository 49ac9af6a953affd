#!/usr/bin/env python3
"""Runs llama.cpp's llama_model_quantize (what `llama-quantize IN OUT FTYPE
NTHREAD` runs) from node-llama-cpp's prebuilt libllama, for timing it beside
`amn convert --scheme q4_k_m` (perf/convert_vs_llama_quantize.sh).

  perf/llama_quantize.py IN.gguf OUT.gguf FTYPE [NTHREAD]   (FTYPE 15: Q4_K_M)

Library: $AMN_LLAMA_ORACLE, else build/oracles/... (`bash .ci/install-deps
oracles`). Prints the wall seconds of the call. The params struct is llama.h's
of that llama.cpp (tests/llama_quant_oracle.cc checks the same layout)."""
import ctypes
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.environ.get("AMN_LLAMA_ORACLE") or os.path.join(
    ROOT, "build/oracles/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libllama.v0.4.0.so")


class Params(ctypes.Structure):  # llama_model_quantize_params, 64 bytes
    _fields_ = [("nthread", ctypes.c_int32), ("ftype", ctypes.c_int32),
                ("output_tensor_type", ctypes.c_int32), ("token_embedding_type", ctypes.c_int32),
                ("allow_requantize", ctypes.c_bool), ("quantize_output_tensor", ctypes.c_bool),
                ("only_copy", ctypes.c_bool), ("pure", ctypes.c_bool),
                ("keep_split", ctypes.c_bool), ("dry_run", ctypes.c_bool),
                ("imatrix", ctypes.c_void_p), ("kv_overrides", ctypes.c_void_p),
                ("tt_overrides", ctypes.c_void_p), ("prune_layers", ctypes.c_void_p),
                ("max_buf_size", ctypes.c_size_t)]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    assert ctypes.sizeof(Params) == 64
    lib = ctypes.CDLL(LIB)
    lib.llama_model_quantize_default_params.restype = Params
    lib.llama_model_quantize.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(Params)]
    lib.llama_model_quantize.restype = ctypes.c_uint32
    log = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)(lambda *a: None)
    lib.llama_log_set(log, None)
    lib.llama_backend_init()
    p = lib.llama_model_quantize_default_params()
    p.ftype = int(sys.argv[3])
    p.nthread = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    start = time.monotonic()
    rc = lib.llama_model_quantize(sys.argv[1].encode(), sys.argv[2].encode(), ctypes.byref(p))
    seconds = time.monotonic() - start
    if rc != 0:
        sys.exit("llama_model_quantize failed")
    print(f"{seconds:.3f}")


if __name__ == "__main__":
    main()
