#!/usr/bin/env python3
"""Writes golden dequantization vectors for zinc-quant's bit-exactness test.

For each format: random blocks whose f16 scale fields hold random *finite* f16 values (normal and
subnormal, both signs), dequantized by gguf-py (`gguf.quants.dequantize`), an implementation
independent of ours. Outputs, in tests/fixtures/quant/:
  <TYPE>.blocks  the raw block bytes
  <TYPE>.f32     gguf-py's output, little-endian f32

Run once (the vectors are committed):
  python3 -m venv /tmp/gguf-venv && /tmp/gguf-venv/bin/pip install gguf==0.19.0 numpy
  /tmp/gguf-venv/bin/python scripts/gen_quant_golden.py
"""
import pathlib

import numpy as np
import gguf
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "quant"

# type -> (number of blocks, byte offsets of f16 scale fields inside a block)
FORMATS = {
    T.F32: (256, None),
    T.F16: (256, "all"),
    T.BF16: (256, "all-bf16"),
    T.Q4_0: (128, [0]),
    T.Q4_1: (128, [0, 2]),
    T.Q5_0: (128, [0]),
    T.Q5_1: (128, [0, 2]),
    T.Q8_0: (128, [0]),
    T.Q2_K: (24, [80, 82]),
    T.Q3_K: (24, [108]),
    T.Q4_K: (24, [0, 2]),
    T.Q5_K: (24, [0, 2]),
    T.Q6_K: (24, [208]),
    T.IQ4_NL: (128, [0]),
    T.IQ4_XS: (24, [0]),
    T.MXFP4: (256, []),  # the E8M0 exponent byte takes every value 0..255
}


def finite_f16(rng, n):
    bits = rng.integers(0, 1 << 16, size=n, dtype=np.uint32).astype(np.uint16)
    # Exponent 31 is inf/NaN: move those into the normal range.
    bad = (bits & 0x7C00) == 0x7C00
    bits[bad] &= 0xBFFF
    return bits


def main():
    rng = np.random.default_rng(20261130)
    OUT.mkdir(parents=True, exist_ok=True)
    print("gguf-py", gguf.__version__ if hasattr(gguf, "__version__") else "(version unknown)")
    for qtype, (n_blocks, scales) in FORMATS.items():
        block_size, type_size = gguf.GGML_QUANT_SIZES[qtype]
        raw = rng.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
        if scales == "all":
            raw = finite_f16(rng, n_blocks * type_size // 2).view(np.uint8).reshape(n_blocks, type_size)
        elif scales == "all-bf16":
            f = rng.standard_normal(n_blocks * type_size // 2).astype(np.float32) * 100
            raw = (f.view(np.uint32) >> 16).astype(np.uint16).view(np.uint8).reshape(n_blocks, type_size)
        elif scales is None:
            f = rng.standard_normal(n_blocks * type_size // 4).astype(np.float32)
            raw = f.view(np.uint8).reshape(n_blocks, type_size)
        else:
            for off in scales:
                raw[:, off:off + 2] = finite_f16(rng, n_blocks).view(np.uint8).reshape(n_blocks, 2)
        values = dequantize(raw.reshape(-1), qtype).astype(np.float32).reshape(-1)
        assert values.size == n_blocks * block_size
        name = qtype.name
        (OUT / f"{name}.blocks").write_bytes(raw.tobytes())
        (OUT / f"{name}.f32").write_bytes(values.astype("<f4").tobytes())
        print(f"{name}: {n_blocks} blocks, {values.size} values")


if __name__ == "__main__":
    main()
