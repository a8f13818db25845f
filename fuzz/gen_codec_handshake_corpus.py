#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/codec_handshake/: byte 0 selects HELLO (0) or READY
(1), the rest is the JSON body. Valid messages in the shapes docs/CODEC.md shows, and one
broken message per parser rule (wrong types, duplicate keys, NUL escapes, missing required
READY fields, malformed hashes, malformed JSON). Deterministic; run from anywhere:
    python3 fuzz/gen_codec_handshake_corpus.py
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "codec_handshake")
H = "sha256:" + "0123456789abcdef" * 4

HELLO = {
    "min": {"codec_version": "0.5"},
    "full": {"codec_version": "0.3", "modalities": ["text-tokens", "image-latents"],
             "accept_tokenizers": ["llama3", "cl100k_base"], "accept_latent_spaces": ["sd-vae"],
             "accept_decoders": ["x"], "accept_pipelines": ["p"], "accept_safety_policies": ["s"],
             "accept_transports": ["ws"], "accept_encoding": ["msgpack", "protobuf"],
             "unknown": {"nested": [1, 2, None]}},
    "no-version": {"accept_tokenizers": ["o200k_base"]},
    "no-match": {"codec_version": "0.5", "accept_tokenizers": ["gpt2", "bert"]},
    "utf8": {"codec_version": "0.5", "accept_tokenizers": ["t\u00f6k\U0001F600", "\u65e5"]},
}
HELLO_RAW = {
    "bad-type": '{"codec_version":5}',
    "bad-list": '{"codec_version":"0.5","accept_tokenizers":"llama3"}',
    "bad-item": '{"codec_version":"0.5","modalities":["a",1]}',
    "dup": '{"codec_version":"0.5","codec_version":"0.6"}',
    "nul": '{"codec_version":"0.\\u00005"}',
    "nul-item": '{"codec_version":"0.5","accept_tokenizers":["a\\u0000"]}',
    "not-object": '["codec_version"]',
    "truncated": '{"codec_version":"0.5","accept_tokeni',
    "escapes": '{"codec_version":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u0001"}',
}

READY_BASE = {"codec_version": "0.5", "tokenizer_id": "llama3",
              "map_url": "https://maps.example/llama3.json", "map_hash": H}
READY = {
    "min": READY_BASE,
    "full": dict(READY_BASE, modality="text-tokens", min_codec_version="0.3",
                 required_features=["tokens", "detok"], safety_policy_id="p",
                 safety_policy_hash=H, transport="ws", encoding="msgpack"),
    "latents": {"codec_version": "0.5", "modality": "image-latents", "latent_space_id": "sd",
                "latent_map_url": "u", "latent_map_hash": H, "decoder_runtime": "onnx",
                "pipeline": "x"},
    "missing-version": {k: v for k, v in READY_BASE.items() if k != "codec_version"},
    "missing-map": {k: v for k, v in READY_BASE.items() if k != "map_url"},
    "bad-hash": dict(READY_BASE, map_hash="sha256:ABC"),
    "bad-policy-hash": dict(READY_BASE, safety_policy_hash="md5:00"),
    # pins as the peers write them: read, and normalised to sha256: + lower case
    "pins-upper": dict(READY_BASE, map_hash="SHA256:" + H[7:].upper(), safety_policy_id="p",
                       safety_policy_hash="sha256:" + H[7:].upper(), latent_map_hash="SHA256:" + H[7:]),
    "pin-bad-prefix": dict(READY_BASE, map_hash="Sha256:" + H[7:]),
}
READY_RAW = {
    "bad-type": '{"codec_version":"0.5","tokenizer_id":7}',
    "bad-features": '{"codec_version":"0.5","modality":"x","required_features":[true]}',
    "dup": '{"codec_version":"0.5","modality":"x","modality":"y"}',
    "garbage": '\x00\xff{"',
}


def write(name, sel, body):
    data = bytes([sel]) + (body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass"))
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        os.remove(os.path.join(OUT, old))
    for k, v in HELLO.items():
        write("hello-" + k, 0, json.dumps(v, ensure_ascii=False))
    for k, v in HELLO_RAW.items():
        write("hello-" + k, 0, v)
    for k, v in READY.items():
        write("ready-" + k, 1, json.dumps(v))
    for k, v in READY_RAW.items():
        write("ready-" + k, 1, v.encode("latin-1"))


if __name__ == "__main__":
    main()
