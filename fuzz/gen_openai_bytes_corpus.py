#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/openai_bytes/: vLLM encoding_format bytes bodies with
their metadata JSON (every embed_dtype, both endiannesses and "native", items out of
order, multi-dim shapes) and bytes_only bodies, one broken metadata per error class (gap,
overlap, trailing bytes, a size not the shape's, dtype / endianness not the asked ones,
duplicate index, missing fields), in fuzz_openai_bytes's layout: option byte, 2-byte
little-endian metadata length, metadata, body. Deterministic; run from anywhere:
    python3 fuzz/gen_openai_bytes_corpus.py
"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "openai_bytes")
DT = {"float32": (0, 4), "float16": (1, 2), "bfloat16": (2, 2), "fp8_e4m3": (3, 1), "fp8_e5m2": (4, 1)}


def seed(dt, endian, items, body, be=False, keep=False, count2=False):
    meta = json.dumps({"id": "embd-1", "created": 1, "model": "m", "data": items,
                       "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
    opt = DT[dt][0] | (16 if be else 0) | (32 if keep else 0) | (128 if count2 else 0)
    return bytes([opt]) + struct.pack("<H", len(meta)) + meta + body


def items(dt, endian, dims, n, order=None, shape=None):
    w = DT[dt][1] * dims
    order = order or list(range(n))
    return [{"index": i, "embed_dtype": dt, "endianness": endian, "start": i * w, "end": (i + 1) * w,
             "shape": shape or [dims]} for i in order]


seeds = {}
for dt, (code, w) in DT.items():
    body = bytes((i * 29 + 3) & 0x7b for i in range(2 * 4 * w))
    seeds["bytes_%s_le" % dt] = seed(dt, "little", items(dt, "little", 4, 2, [1, 0]), body, count2=True)
    seeds["bytes_%s_be_keep" % dt] = seed(dt, "big", items(dt, "big", 4, 2), body, be=True, keep=True)
seeds["bytes_native_shape2"] = seed("float16", "native", items("float16", "native", 8, 1, shape=[2, 4]), bytes(16))
seeds["bytes_empty"] = seed("float32", "little", [], b"")
it = items("float16", "little", 4, 2)
it[1]["start"] += 2
seeds["err_gap"] = seed("float16", "little", it, bytes(18))
it = items("float16", "little", 4, 2)
it[1]["start"] -= 2
seeds["err_overlap"] = seed("float16", "little", it, bytes(16))
seeds["err_trailing"] = seed("float16", "little", items("float16", "little", 4, 2), bytes(20))
it = items("float16", "little", 4, 1)
it[0]["shape"] = [3]
seeds["err_shape"] = seed("float16", "little", it, bytes(8))
seeds["err_dtype"] = seed("float16", "little", items("bfloat16", "little", 4, 1), bytes(8))
seeds["err_endian"] = seed("float16", "little", items("float16", "big", 4, 1), bytes(8))
it = items("float16", "little", 4, 2)
it[1]["index"] = 0
seeds["err_dup_index"] = seed("float16", "little", it, bytes(16))
it = items("float16", "little", 4, 1)
del it[0]["end"]
seeds["err_no_end"] = seed("float16", "little", it, bytes(8))
# bytes_only: dims = (metadata length & 63) + 1, here 8 dims of f16 (a 7-byte dummy metadata)
seeds["only_f16"] = bytes([1 | 64]) + struct.pack("<H", 7) + b"ignored" + bytes(range(32))
seeds["only_ubinary_keep"] = bytes([8 | 64 | 32]) + struct.pack("<H", 15) + b"x" * 15 + bytes(range(8))
seeds["only_bad_length"] = bytes([2 | 64]) + struct.pack("<H", 7) + b"ignored" + bytes(31)

os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print("%d seeds in %s" % (len(seeds), OUT))
