#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/framer/: byte 0 = reader (% 7) and limit (/ 7 % 16),
byte 1 = largest chunk - 1, bytes 2-3 = chunking seed and callback stop (fuzz/fuzz_framer.c),
then a stream for that reader: EMBD frames (flags 0-3, a batch), Codec session frames,
msgpack maps and protobuf CodecFrames, valid, truncated and corrupted. Deterministic:
    python3 fuzz/gen_framer_corpus.py
"""
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_codec_modes_corpus import mp_uint, varint  # noqa: E402  (the msgpack and protobuf integers)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "framer")


def embd(vals, flags=0):
    raw = b"".join(struct.pack("<f", v) for v in vals)
    head = b"EMBD" + bytes([1, flags, 0, 0]) + struct.pack("<I", len(vals))
    head += struct.pack("<I", zlib.crc32(head))
    pay = raw
    if flags & 1:
        z = zlib.compress(raw)
        pay = struct.pack("<I", len(z)) + z
    tr = struct.pack("<I", zlib.crc32(pay)) if flags & 2 else b""
    return head + pay + tr


def codec(t, payload=b""):
    return bytes([t]) + struct.pack(">I", len(payload)) + payload


def tokens(ids):
    return codec(2, b"".join(struct.pack(">I", i) for i in ids))


def msgpack(ids, done=False):
    arr = (bytes([0x90 | len(ids)]) if len(ids) < 16 else b"\xdc" + struct.pack(">H", len(ids)))
    return b"\x82\xa3ids" + arr + b"".join(mp_uint(i) for i in ids) + b"\xa4done" + (b"\xc3" if done else b"\xc2")


def proto(ids, done=False):
    packed = b"".join(varint(i) for i in ids)
    m = (b"\x0a" + varint(len(packed)) + packed if ids else b"") + (b"\x10\x01" if done else b"")
    return struct.pack(">I", len(m)) + m


def main():
    os.makedirs(OUT, exist_ok=True)
    frames = b"".join(embd([i * 0.5 + k for k in range(i * 5 % 40)], i % 4) for i in range(12))
    batch = struct.pack("<I", 12) + frames
    session = codec(0, b'{"codec_version":"0.5"}') + b"".join(tokens(range(i, i + i % 9)) for i in range(20)) + codec(3)
    mp = b"".join(msgpack(list(range(i * 100, i * 100 + i % 20)), i == 9) for i in range(10))
    pb = b"".join(proto(list(range(i * 300, i * 300 + 1 + i % 20)), i == 9) for i in range(10))
    streams = {0: frames, 1: batch, 2: frames, 3: session, 4: session, 5: mp, 6: pb}
    n = 0
    for kind, s in streams.items():
        variants = {"valid": s, "cut": s[: len(s) * 2 // 3], "flip": s[:40] + bytes([s[40] ^ 0x20]) + s[41:]}
        for name, body in variants.items():
            for chunk, stop in ((0, 3), (6, 3), (63, 1)):
                head = bytes([kind, chunk, 0x35, (stop << 6) | 0x12])
                with open(os.path.join(OUT, "%d_%s_%d_%d" % (kind, name, chunk, stop)), "wb") as f:
                    f.write(head + body)
                n += 1
    print("wrote %d files to %s" % (n, OUT))


if __name__ == "__main__":
    main()
