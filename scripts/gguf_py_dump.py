#!/usr/bin/env python3
"""Dumps a GGUF file as gguf-py (the `gguf` package, what gguf-dump uses) reads it, as one JSON
document on stdout: the independent reference our reader is compared with in the tests.

  python3 scripts/gguf_py_dump.py FILE [--hash]

{"kv": [{"key", "type", "elem_type", "value"}], "tensors": [{"name", "type", "shape", "offset",
"n_bytes", "sha256"?}]}. Arrays are listed in full. Shapes are in ggml order (shape[0]
contiguous); offsets are absolute; --hash adds the sha256 of each tensor's bytes.
"""
import hashlib
import json
import sys

from gguf import GGUFReader, GGUFValueType


def field_value(field):
    t = field.types[0]
    if t == GGUFValueType.ARRAY:
        elem = field.types[1] if len(field.types) > 1 else None
        # Read the parts directly: field.contents(i) per element is far slower on 262k-token vocabularies.
        if elem == GGUFValueType.STRING:
            items = [bytes(field.parts[i]).decode("utf-8") for i in field.data]
        else:
            items = [field.parts[i][0].item() for i in field.data]
        return elem, items
    return None, field.contents()


def main():
    path = sys.argv[1]
    want_hash = "--hash" in sys.argv
    r = GGUFReader(path, "r")
    kv = []
    for name, field in r.fields.items():
        if name.startswith("GGUF."):
            continue  # gguf-py's pseudo-fields for the header
        elem, value = field_value(field)
        kv.append({
            "key": name,
            "type": field.types[0].name,
            "elem_type": elem.name if elem is not None else None,
            "value": value,
        })
    tensors = []
    for t in r.tensors:
        e = {
            "name": t.name,
            "type": t.tensor_type.name,
            "shape": [int(x) for x in t.shape],
            "offset": int(t.data_offset),
            "n_bytes": int(t.n_bytes),
        }
        if want_hash:
            e["sha256"] = hashlib.sha256(t.data.tobytes()).hexdigest()
        tensors.append(e)
    json.dump({"kv": kv, "tensors": tensors}, sys.stdout)


if __name__ == "__main__":
    main()
