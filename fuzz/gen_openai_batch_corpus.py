#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/openai_batch/: batch output lines (OpenAI Batch API,
Azure, Together, vLLM run_batch) in their documented shapes: float and base64 bodies, vLLM
dtypes and byte orders, keys in other orders, unknown keys, both kinds of failed request,
vLLM's error forms, escaped custom_ids, and a few broken lines, each behind
fuzz_openai_batch's option byte (dtype low 4 bits, big-endian bit 4, KEEP_DTYPE bit 5,
expected_dims 4 bit 6). Deterministic; run from anywhere:
    python3 fuzz/gen_openai_batch_corpus.py
"""
import base64
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "openai_batch")

# embd_dtype values (embd/convert.h)
F32, F16, BF16, INT8 = 0, 1, 2, 5
BE, KEEP, DIMS4 = 16, 32, 64
V = [1.0, -2.0, 0.5, 0.15625]


def body(emb, extra=None):
    d = {"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": emb}],
         "model": "text-embedding-3-small", "usage": {"prompt_tokens": 3, "total_tokens": 3}}
    if extra:
        d.update(extra)
    return d


def line(custom_id="doc-1", status=200, b=None, error=None, order=None):
    d = {"id": "batch_req_1", "custom_id": custom_id,
         "response": None if status is None else {"status_code": status, "request_id": "req_1", "body": b},
         "error": error}
    if order:
        d = {k: d[k] for k in order}
    return json.dumps(d, ensure_ascii=False).encode() + b"\n"


def main():
    os.makedirs(OUT, exist_ok=True)
    f32le = base64.b64encode(struct.pack("<4f", *V)).decode()
    f16be = base64.b64encode(struct.pack(">4e", *V)).decode()
    f16le = base64.b64encode(struct.pack("<4e", *V)).decode()
    cases = {
        "float": (0, line(b=body(V))),
        "float_dims4": (DIMS4, line(b=body(V))),
        "b64_f32": (0, line(b=body(f32le))),
        "b64_f16_be": (F16 | BE, line(b=body(f16be))),
        "b64_f16_le_keep": (F16 | KEEP, line(b=body(f16le))),
        "b64_bf16": (BF16, line(b=body(base64.b64encode(bytes([0x80, 0x3f, 0, 0xc0, 0, 0x3f, 0x20, 0x3e])).decode()))),
        "int8_list": (INT8, line(b=body([1, -2, 127, -128]))),
        # numbers that are not fp8-e5m2 values: float32 accepts them, KEEP_DTYPE refuses them
        "fp8_numbers": (4, line(b=body([1, -2, 127, -128]))),
        "fp8_numbers_keep": (4 | KEEP, line(b=body([1, -2, 0.5, -128]))),
        "reordered": (0, line(b=body(V), order=["error", "response", "id", "custom_id"])),
        "body_first": (0, b'{"custom_id":"k","response":{"body":{"data":[{"embedding":[3,4.5],"index":1},'
                          b'{"index":0,"embedding":[0.25,-0.5]}]},"status_code":200}}\r\n'),
        "unknown_keys": (0, b'{"x":{"a":[1,{"b":null}]},"custom_\\u0069d":"k","response":{"status_code":201,'
                            b'"headers":{},"body":{"data":[{"index":0,"embedding":[1]}],"z":1e5}},"error":null}'),
        "fail_400": (0, line("doc-2", 400, {"error": {"message": "too long", "type": "invalid_request_error",
                                                      "param": None, "code": "context_length_exceeded"}})),
        "expired": (0, line("doc-3", None, None, {"code": "batch_expired", "message": "expired"})),
        "vllm_string_error": (0, line("v1", 400, None, "Request must have a model")),
        "vllm_error_response": (0, line("v2", 404, None, {"error": {"message": "no model", "type": "NotFoundError",
                                                                    "param": None, "code": 404}})),
        "custom_id_escapes": (0, b'{"custom_id":"a\\tb\\\\c\\u00e9\\ud83d\\ude00\\u0000","response":null,'
                                 b'"error":{"message":"m\\n","code":7}}'),
        "custom_id_utf8": (0, line("\u65e5\u672c-7", b=body(V))),
        "not_batch": (0, json.dumps(body(V)).encode()),
        "status_no_body": (0, b'{"custom_id":"a","response":{"status_code":200}}'),
        "trailing": (0, line(b=body(V)) + b"{}"),
        "cut": (0, line(b=body(V))[:60]),
        "bad_body": (0, line(b=body([1, "x"]))),
    }
    for name, (sel, text) in sorted(cases.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(bytes([sel]) + text)
    print(f"wrote {len(cases)} files to {OUT}")


if __name__ == "__main__":
    main()
