#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/batch/: plain batches (uint32 LE count + frames) of
every flag combination, batches of version-2 frames of every dtype with their own dims,
and a few broken ones. Deterministic:
    python3 fuzz/gen_batch_corpus.py
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_frame_corpus import DTYPES, dtype_payload, frame, frame_v2  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "batch")


def batch(frames, count=None):
    return struct.pack("<I", len(frames) if count is None else count) + b"".join(frames)


def shared_cases():
    """The batches both corpora start from (fuzz/gen_stream_corpus.py prefixes each with its
    max_dims selector and chunking seed): name -> bytes."""
    f = [frame([1.0, -2.5, 0.0]), frame([0.5] * 3, flags=1), frame([2.0, 3.0], flags=2),
         frame([7.0] * 4, flags=3), frame([])]
    return f, {
        "empty_batch": batch([]),
        "one": batch(f[:1]),
        "mixed_flags": batch(f),
        "count_too_large": batch(f[:2], count=9),
        "count_short": batch(f[:3], count=2),
        "truncated": batch(f)[:-3],
        "bad_magic_1": batch([f[0], b"XMBD" + f[1][4:]]),
        "trailing": batch(f[:2]) + b"\x00",
        "dims16_zlib": batch([frame([float(i) for i in range(16)], flags=1)] * 3),
        # every dtype once, dims 8 * (code + 1), flags cycling: frames of their own dims
        # (the stream's dest and dest_raw paths)
        "dtypes_all": batch([frame_v2(c, 8 * (c + 1), dtype_payload(b, 8 * (c + 1), c), flags=c % 4)
                             for c, _, b in DTYPES]),
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    f, cases = shared_cases()
    cases.update({
        "plain3": batch([f[0]] * 3),
        "crc2": batch([f[2], frame([1.0, 2.0, 3.0], flags=2)]),
        "too_small": b"\x01\x00",
        "dtypes_f32_then_f16": batch([f[0], frame_v2(1, 3, dtype_payload(16, 3))]),
        "dtypes_bad_code": batch([f[0], frame_v2(1, 3, dtype_payload(16, 3))[:6] + b"\x0b"
                                  + frame_v2(1, 3, dtype_payload(16, 3))[7:]]),
    })
    for name, body in sorted(cases.items()):
        with open(os.path.join(OUT, name), "wb") as fh:
            fh.write(body)


if __name__ == "__main__":
    main()
