#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/stream/: byte 0 = max_dims selector (1 << (b % 12)),
bytes 1-2 = chunking seed, then a batch (uint32 LE count + frames). Valid batches of
every flag combination and a few broken ones. Deterministic:
    python3 fuzz/gen_stream_corpus.py
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_frame_corpus import DTYPES, dtype_payload, frame, frame_v2  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "stream")


def batch(frames, count=None):
    return struct.pack("<I", len(frames) if count is None else count) + b"".join(frames)


def main():
    os.makedirs(OUT, exist_ok=True)
    f = [frame([1.0, -2.5, 0.0]), frame([0.5] * 3, flags=1), frame([2.0, 3.0], flags=2),
         frame([7.0] * 4, flags=3), frame([])]
    cases = {
        "empty_batch": batch([]),
        "one": batch(f[:1]),
        "mixed_flags": batch(f),
        "count_too_large": batch(f[:2], count=9),
        "count_short": batch(f[:3], count=2),
        "truncated": batch(f)[:-3],
        "bad_magic_1": batch([f[0], b"XMBD" + f[1][4:]]),
        "trailing": batch(f[:2]) + b"\x00",
        "dims16_zlib": batch([frame([float(i) for i in range(16)], flags=1)] * 3),
        # version-2 frames of every dtype (the stream's dest and dest_raw paths)
        "dtypes_all": batch([frame_v2(c, 8 * (c + 1), dtype_payload(b, 8 * (c + 1), c), flags=c % 4)
                             for c, _, b in DTYPES]),
        "dtypes_big": batch([frame_v2(c, 64, dtype_payload(b, 64, c), flags=(c + 1) % 4)
                             for c, _, b in DTYPES]),
    }
    for i, (name, body) in enumerate(sorted(cases.items())):
        for sel, seed in ((3, i), (5, 256 + 3 * i)):
            with open(os.path.join(OUT, "%s_%d" % (name, seed % 9)), "wb") as fh:
                fh.write(bytes([sel]) + struct.pack("<H", seed) + body)


if __name__ == "__main__":
    main()
