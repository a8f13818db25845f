#!/usr/bin/env python3
"""Writes tests/data/tokmap-small.json: a small Codec tokenizer map (schema v0.1) for the
tokmap tests, made here (nothing downloaded), and prints its sha256 (hashlib: the
independent value tests/test_tokmap.c checks embd_tokmap_sha256 and the loader against).

Layout (vocab_size 300), SentencePiece-like:
  0..2      <unk> <s> </s>            tokens and special_tokens
  3..258    <0x00>..<0xFF>            byte_fallback_start 3, byte_fallback_end 258
  259..296  text pieces: ASCII, multi-byte UTF-8 (2, 3 and 4 bytes), a NUL, escapes
  297, 298  not in the map (unknown ids below vocab_size)
  299       <|end_of_turn|>           special only: no "tokens" entry (renders its name)
Deterministic; run from anywhere:  python3 scripts/gen_tokmap_small.py
"""
import hashlib
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data",
                   "tokmap-small.json")

PIECES = [
    "Hello", " world", "!", " ", "\n", "\t", "The", " quick", " brown", " fox",  # 259..268
    "\u00e9", " caf\u00e9", "\u00e9t\u00e9", "\u03a9", "\u65e5\u672c", "\u8a9e",  # 269..274
    "\U0001F600", "\U0001F680 go", "a\u0000b", "\"quoted\"", "back\\slash",  # 275..279
    "\u00fc", "\u00df", "\u20ac", "\U00010348", "<0x41>", "0", "1", "2", "42", "x",  # 280..289
    " the", " of", " and", ",", ".", "\u2581hi", "end",  # 290..296
]


def build():
    tokens = {"0": "<unk>", "1": "<s>", "2": "</s>"}
    for b in range(256):
        tokens[str(3 + b)] = "<0x%02X>" % b
    for i, p in enumerate(PIECES):
        tokens[str(259 + i)] = p
    assert 259 + len(PIECES) == 297
    return {
        "id": "embd-test-small-v1",
        "version": "0.1.0",
        "vocab_size": 300,
        "tokens": tokens,
        "special_tokens": {"<unk>": 0, "<s>": 1, "</s>": 2, "<|end_of_turn|>": 299},
        "byte_fallback_start": 3,
        "byte_fallback_end": 258,
        "published_at": "2025-05-05T00:00:00Z",
    }


def main():
    data = (json.dumps(build(), ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    with open(OUT, "wb") as f:
        f.write(data)
    print("wrote %s: %d bytes, %d tokens, sha256:%s" % (
        os.path.normpath(OUT), len(data), len(build()["tokens"]), hashlib.sha256(data).hexdigest()))


if __name__ == "__main__":
    main()
