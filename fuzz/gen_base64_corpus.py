#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/base64/ (deterministic; python3 stdlib only).

Layout of an input, as fuzz_base64.c reads it: byte 0 = flags (bit 0 URL, bit 1 NOPAD)
| start offset from a 64-byte boundary (bits 2-7); the rest is the text to decode (and
the raw bytes to encode). The seeds: the RFC 4648 vectors, valid texts of lengths around
the vector block sizes (16, 32, 64 characters and more) in both alphabets, padded and
not, an embedding-sized text, and broken ones (bad characters, misplaced and partial
padding, non-zero trailing bits, bad lengths).

    python3 fuzz/gen_base64_corpus.py     # rewrites fuzz/corpus/base64/
"""
import base64
import os
import sys
import random

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_corpus import write_corpus  # noqa: E402
URL, NOPAD = 1, 2


def seed(flags, off, text):
    assert 0 <= flags < 4 and 0 <= off < 64
    return bytes([flags | off << 2]) + text


def enc(raw, flags):
    t = base64.urlsafe_b64encode(raw) if flags & URL else base64.b64encode(raw)
    return t.rstrip(b"=") if flags & NOPAD else t


def main():
    rng = random.Random(0xB64)
    seeds = {"empty": b"", "flags_only": seed(0, 0, b"")}
    for i, raw in enumerate([b"f", b"fo", b"foo", b"foob", b"fooba", b"foobar"]):
        seeds[f"rfc_{raw.decode()}"] = seed(0, 0, enc(raw, 0))
        seeds[f"rfc_{raw.decode()}_nopad"] = seed(NOPAD, 1, enc(raw, NOPAD))
    for i, n in enumerate([11, 12, 13, 23, 24, 25, 46, 47, 48, 49, 95, 96, 97, 191, 192, 300,
                           768, 1537]):
        flags = i % 4
        off = [0, 1, 15, 33, 63][i % 5]
        raw = bytes(rng.getrandbits(8) for _ in range(n))
        seeds[f"valid_{n:04d}_f{flags}_off{off:02d}"] = seed(flags, off, enc(raw, flags))
    # one 1536-dim float32 embedding (6144 bytes -> 8192 characters)
    import struct
    vec = struct.pack("<16f", *[rng.uniform(-1, 1) for _ in range(16)]) * 96
    seeds["embedding_1536"] = seed(0, 0, enc(vec, 0))
    good = enc(bytes(rng.getrandbits(8) for _ in range(96)), 0)  # 128 characters
    for name, pos, ch in [("star", 0, b"*"), ("space_mid", 64, b" "), ("newline_end", 127, b"\n"),
                          ("high_bit", 17, b"\x80"), ("nul", 100, b"\x00"),
                          ("eq_body", 31, b"="), ("dash_std", 5, b"-"), ("under_std", 48, b"_")]:
        t = bytearray(good)
        t[pos:pos + 1] = ch
        seeds[f"bad_{name}"] = seed(0, 3, bytes(t))
    t = bytearray(enc(bytes(rng.getrandbits(8) for _ in range(96)), URL))
    t[70:71] = b"+"
    seeds["bad_plus_url"] = seed(URL, 0, bytes(t))
    t[70:71] = b"/"
    seeds["bad_slash_url"] = seed(URL | NOPAD, 0, bytes(t))
    for name, flags, text in [("pad_partial", NOPAD, b"Zm9vZg="), ("pad_excess", 0, b"Zm9vZ==="),
                              ("pad_all", 0, b"===="), ("pad_nonfinal", 0, b"Zg==Zm9v"),
                              ("trail_1", 0, b"Zh=="), ("trail_2", 0, b"Zm9="),
                              ("trail_nopad", NOPAD, b"Zm9"), ("len_mod4", 0, b"Zm9vZg"),
                              ("len_1", NOPAD, b"Zm9vZ"), ("pad_after", 0, b"Zg=a")]:
        seeds[name] = seed(flags, 0, text)
    write_corpus("base64", seeds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
