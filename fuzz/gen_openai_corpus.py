#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/openai/: OpenAI-compatible embeddings responses (float
and base64 forms, shuffled indexes, usage variants) and one broken body per error class,
each behind fuzz_openai's option byte. Deterministic; run from anywhere:
    python3 fuzz/gen_openai_corpus.py
"""
import base64
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "openai")


def b64(vals):
    return base64.b64encode(b"".join(struct.pack("<f", v) for v in vals)).decode()


def doc(rows, form="float", order=None, usage=True, model="text-embedding-3-small"):
    order = order or list(range(len(rows)))
    items = []
    for i in order:
        emb = rows[i] if form == "float" or (form == "mixed" and i % 2 == 0) else b64(rows[i])
        items.append({"object": "embedding", "index": i, "embedding": emb})
    d = {"object": "list", "data": items, "model": model}
    if usage:
        d["usage"] = {"prompt_tokens": 2 * len(rows), "total_tokens": 2 * len(rows)}
    return json.dumps(d).encode()


def main():
    os.makedirs(OUT, exist_ok=True)
    rows = [[(i * 7 + j * 3) % 17 / 8.0 - 1.0 for j in range(4)] for i in range(3)]
    cases = {
        "float3": (0, doc(rows)),
        "b64_3": (1, doc(rows, "b64")),
        "mixed3_shuffled": (0, doc(rows, "mixed", [2, 0, 1])),
        "b64_expect3_pad": (1 | (3 << 1), doc(rows, "b64", [1, 2, 0])),
        "float_maxdims4": (8, doc(rows)),
        "one_expect1": (2, doc(rows[:1])),
        "no_usage": (0, doc(rows, usage=False)),
        "bad_usage": (0, doc(rows).replace(b'"prompt_tokens": 6', b'"prompt_tokens": -6')),
        "empty_data": (0, b'{"data": []}'),
        "escaped_b64": (0, b'{"data":[{"index":0,"embedding":"\\/\\/9\\/fw=="}]}'),
        "f32_length": (0, b'{"data":[{"index":0,"embedding":"AAAAAAA="}]}'),
        "bad_char": (0, b'{"data":[{"index":0,"embedding":"AAA*AAAA"}]}'),
        "null_emb": (0, b'{"data":[{"index":0,"embedding":null}]}'),
        "str_in_array": (0, b'{"data":[{"index":0,"embedding":[1,"2"]}]}'),
        "dup_index": (0, b'{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}'),
        "dims_mismatch": (0, b'{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[1,2]}]}'),
        "midpoint": (0, b'{"data":[{"index":0,"embedding":[7.038531e-26,1e-45,3.4028235e38]}]}'),
        "truncated": (0, doc(rows)[:-7]),
        "trailing": (0, doc(rows) + b" x"),
    }
    for name, (sel, body) in cases.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(bytes([sel]) + body)


if __name__ == "__main__":
    main()
