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
from gen_batch_corpus import batch, shared_cases  # noqa: E402
from gen_frame_corpus import DTYPES, dtype_payload, frame_v2  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "stream")


def main():
    os.makedirs(OUT, exist_ok=True)
    _, cases = shared_cases()
    cases["dtypes_big"] = batch([frame_v2(c, 64, dtype_payload(b, 64, c), flags=(c + 1) % 4)
                                 for c, _, b in DTYPES])
    for i, (name, body) in enumerate(sorted(cases.items())):
        for sel, seed in ((3, i), (5, 256 + 3 * i)):
            with open(os.path.join(OUT, "%s_%d" % (name, seed % 9)), "wb") as fh:
                fh.write(bytes([sel]) + struct.pack("<H", seed) + body)


if __name__ == "__main__":
    main()
