#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/codec_session/: byte 0 = max_payload selector
(0 -> default, else 1 << (b % 16)), bytes 1-2 = chunking seed and delivery mode, then a
Codec session stream ([type u8][payload_len u32 BE][payload]). Valid streams of every
frame type, the spec's worked example, newer frame types (0x07 and up: opaque by
default, an error with the strict bit 0x10 of byte 0, so every case is written with
both policies), and broken ones (TOKENS length, EOS payload, bad UTF-8, truncation,
too large). Deterministic:
    python3 fuzz/gen_codec_session_corpus.py
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "codec_session")


def frame(t, payload=b""):
    return bytes([t]) + struct.pack(">I", len(payload)) + payload


def tokens(ids):
    return frame(2, b"".join(struct.pack(">I", i) for i in ids))


def main():
    os.makedirs(OUT, exist_ok=True)
    hello = frame(0, b'{"codec_version":"0.5","accept_tokenizers":["meta-llama/llama-3"]}')
    ready = frame(1, b'{"codec_version":"0.5","tokenizer_id":"meta-llama/llama-3"}')
    session = hello + ready + tokens([50001, 50002, 50003]) + tokens([]) + \
        frame(5, b"\x01\x02") + frame(6, b"\xff" * 9) + frame(4, "stopped \u2713".encode()) + frame(3)
    cases = {
        "worked_example": tokens([50001, 50002, 50003]),
        "eos": frame(3),
        "session": session,
        "many_tokens": b"".join(tokens(range(i, i + i % 7)) for i in range(40)) + frame(3),
        "unknown_type": frame(2, b"\0\0\0\1") + b"\x07\0\0\0\0",
        "tokens_len7": frame(2, b"\0" * 7),
        "eos_payload": frame(3, b"x"),
        "bad_utf8_overlong": frame(0, b"{\xc0\xaf}"),
        "bad_utf8_surrogate": frame(4, b"\xed\xa0\x80"),
        "bad_utf8_truncated": frame(1, b"ab\xe2\x82"),
        "truncated": session[:-9],
        "huge_len": b"\x06\xff\xff\xff\xff" + b"\0" * 8,
        # Newer types: 7 bytes in a 0x07 (no TOKENS rule), bad UTF-8 in 0x1f (no text rule),
        # 0x20 and 0xff (not selectable for forwarding), one truncated, one too large.
        "newer_types": tokens([1]) + frame(7, b"\x01" * 7) + frame(0x1F, b"\xc0\xaf") +
        frame(0x20, b"z") + frame(0xFF) + tokens([2]) + frame(3),
        "newer_truncated": frame(0x07, b"abcdef")[:-2],
        "newer_huge": b"\x80\xff\xff\xff\xff" + b"\0" * 8,
    }
    for i, (name, body) in enumerate(sorted(cases.items())):
        for sel, seed in ((0, i), (5, 256 + 3 * i), (9, 512 + 7 * i), (0x10, 768 + i),
                          (0x15, 1024 + 5 * i)):
            with open(os.path.join(OUT, "%s_%d" % (name, sel)), "wb") as fh:
                fh.write(bytes([sel]) + struct.pack("<H", seed) + body)


if __name__ == "__main__":
    main()
