#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/openai_dtype/: responses of each server shape (vLLM
base64 of f16/bf16/fp8, Cohere embeddings by type and v1, Voyage/Mistral/Jina integer and
packed-bit lists and their base64, llama.cpp's per-item encoding_format) and one broken
body per new error class, each behind fuzz_openai_dtype's two option bytes (dtype, byte
order, keep, max_dims / expected_count, expected_dims). Deterministic; run from anywhere:
    python3 fuzz/gen_openai_dtype_corpus.py
"""
import base64
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "openai_dtype")
DT = {"f32": 0, "f16": 1, "bf16": 2, "e4m3": 3, "e5m2": 4, "int8": 5, "uint8": 6, "binary": 7, "ubinary": 8}


def sel(dt, be=False, keep=False, maxd=False, count=0, edims=False):
    return bytes([DT[dt] | (16 if be else 0) | (32 if keep else 0) | (64 if maxd else 0),
                  count | (4 if edims else 0)])


def b64(b):
    return base64.b64encode(b).decode()


def openai(embs):
    return json.dumps({"object": "list", "model": "m",
                       "data": [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(embs)],
                       "usage": {"prompt_tokens": 2, "total_tokens": 2}})


seeds = {
    "vllm_f16_le": sel("f16") + openai([b64(struct.pack("<8e", *range(8)))] * 2).encode(),
    "vllm_f16_be_keep": sel("f16", be=True, keep=True) + openai([b64(struct.pack(">8e", *range(8)))]).encode(),
    "vllm_bf16": sel("bf16", edims=True) + openai([b64(bytes(range(16)))]).encode(),
    "vllm_e4m3_keep": sel("e4m3", keep=True) + openai([b64(bytes(range(0, 64, 8)))]).encode(),
    "vllm_e5m2": sel("e5m2") + openai([b64(bytes(range(8))), b64(bytes(range(8, 16)))]).encode(),
    "vllm_float_f16_keep": sel("f16", keep=True) + openai([[0.5, -1.25, 2, 0]]).encode(),
    "f32_be_keep": sel("f32", be=True, keep=True) + openai([[1.5, 2], b64(struct.pack(">2f", 3, 4))]).encode(),
    "cohere_int8": sel("int8", count=1) + json.dumps(
        {"id": "c", "embeddings": {"float": [[0.5, 1]], "int8": [[-128, 127]], "ubinary": [[129]]},
         "texts": ["a"], "meta": {}, "response_type": "embeddings_by_type"}).encode(),
    "cohere_ubinary_keep": sel("ubinary", keep=True) + json.dumps(
        {"embeddings": {"int8": [[1]], "ubinary": [[129, 3], [0, 255]]}}).encode(),
    "cohere_base64": sel("f32") + json.dumps({"embeddings": {"base64": [b64(struct.pack("<2f", 1, 2))]}}).encode(),
    "cohere_v1": sel("f32", maxd=True) + json.dumps({"embeddings": [[1, 2], [3, 4]], "response_type":
                                                     "embeddings_floats"}).encode(),
    "cohere_missing": sel("uint8") + json.dumps({"embeddings": {"float": [[1]]}}).encode(),
    "voyage_binary": sel("binary", keep=True) + openai([[-128, 0, 127], [1, 2, 3]]).encode(),
    "voyage_uint8_b64": sel("uint8") + openai([b64(bytes(range(200, 216)))]).encode(),
    "mistral_int8": sel("int8", edims=True) + openai([[1, -2, 3, -4, 5, -6, 7, -8]]).encode(),
    "jina_ubinary": sel("ubinary", maxd=True) + openai([[255, 0]]).encode(),
    "llama_cpp": sel("f32") + json.dumps({"data": [{"embedding": b64(struct.pack("<2f", 1, 2)), "index": 0,
                                                    "object": "embedding", "encoding_format": "base64"}]}).encode(),
    "err_not_integer": sel("int8") + openai([[1, 0.5]]).encode(),
    "err_range": sel("uint8") + openai([[256]]).encode(),
    "err_f16_length": sel("f16") + openai(["AAAA"]).encode(),
    "err_f16_inexact": sel("f16", keep=True) + openai([[0.1]]).encode(),
    "err_both": sel("f32") + b'{"data":[],"embeddings":[]}',
}

os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print("%d seeds in %s" % (len(seeds), OUT))
