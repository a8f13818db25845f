#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/crc32/ (deterministic; python3 stdlib only).

Layout of an input, as fuzz_crc32.c reads it: byte 0 = split count (bits 0-1) | start
offset from a 64-byte boundary (bits 2-7); bytes 1-4 = initial CRC (little-endian);
2 bytes per split point (little-endian); then the message. The seeds cover the lengths
around the kernels' block sizes (16, 32, 64, 128, 256 bytes and more), every split count,
a few offsets and initial CRCs, and the check value "123456789". About 20 KB in all.

    python3 fuzz/gen_corpus.py            # rewrites fuzz/corpus/crc32/
"""
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def seed(off, init, cuts, msg):
    assert 0 <= off < 64 and len(cuts) <= 3
    out = bytes([len(cuts) | off << 2]) + struct.pack("<I", init)
    for c in cuts:
        out += struct.pack("<H", c)
    return out + msg


def write_corpus(name, seeds):
    """Replaces fuzz/corpus/<name>/ with `seeds` (file name -> bytes): what every generator
    here that writes a name -> bytes table ends with (the old files go, so that a renamed
    seed leaves no stale one behind)."""
    outdir = os.path.join(HERE, "corpus", name)
    os.makedirs(outdir, exist_ok=True)
    for f in os.listdir(outdir):
        os.unlink(os.path.join(outdir, f))
    total = 0
    for n, data in sorted(seeds.items()):
        with open(os.path.join(outdir, n), "wb") as fp:
            fp.write(data)
        total += len(data)
    print(f"{outdir}: {len(seeds)} files, {total} bytes")


def main():
    rng = random.Random(0x0E3BD)
    seeds = {
        "empty": b"",
        "header_only": seed(0, 0, [], b""),
        "check_123456789": seed(0, 0, [], b"123456789"),
        "check_split_4": seed(0, 0, [4], b"123456789"),
        "zeros_64_init_ffffffff": seed(0, 0xFFFFFFFF, [], bytes(64)),
        "ones_256_off1": seed(1, 0, [128], b"\xff" * 256),
    }
    lengths = [1, 3, 4, 7, 12, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 79, 127, 128, 129,
               191, 192, 255, 256, 257, 383, 511, 512, 513, 1023, 1024, 1025, 2048, 4096]
    for i, n in enumerate(lengths):
        off = [0, 16, 1, 63, 8, 33][i % 6]
        k = i % 4
        cuts = sorted(rng.randrange(n + 1) for _ in range(k))
        init = rng.getrandbits(32) if i % 3 else 0
        msg = bytes(rng.getrandbits(8) for _ in range(n))
        seeds[f"len{n:04d}_off{off:02d}_k{k}"] = seed(off, init, cuts, msg)
    write_corpus("crc32", seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
