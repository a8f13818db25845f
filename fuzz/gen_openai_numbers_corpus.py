#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/openai_numbers/: comma-separated number texts for
fuzz_openai_numbers (float32 midpoints and neighbours, long fractions, subnormals, the range
edges, integers, exponent forms, and texts that are not JSON numbers). Deterministic; run
from anywhere:
    python3 fuzz/gen_openai_numbers_corpus.py
"""
import os
import random
import struct
from fractions import Fraction

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "openai_numbers")


def exact(bits):
    return Fraction(struct.unpack("<f", struct.pack("<I", bits))[0])


def positional(x):
    ip = x.numerator // x.denominator
    fr, digits = x - ip, []
    while fr:
        fr *= 10
        d = fr.numerator // fr.denominator
        digits.append(str(d))
        fr -= d
    return str(ip) + ("." + "".join(digits) if digits else "")


def main():
    rng = random.Random(11)
    os.makedirs(OUT, exist_ok=True)
    seeds = {
        "issue_texts": "0.50000000000000000000,0.95000000000000000000,0.5000000298023223876953125,"
                       "5.000000298023223876953125e-1",
        "shortest": ",".join("%.9g" % (rng.gauss(0, 1) / 40) for _ in range(64)),
        "fixed21": ",".join("%.21f" % (rng.gauss(0, 1) / 40) for _ in range(16)),
        "edges": "3.4028234663852886e38,3.4028235677973366e38,3.4028235677973367e38,1e39,"
                 "1.401298464324817e-45,7.006492321624085e-46,7.006492321624086e-46,1e-50,-0,0e0",
        "ints": "16777216,16777217,16777218,9007199254740993,18446744073709551616,1",
        "long_fraction": "0." + "3" * 300 + ",0." + "0" * 44 + "1",
        "exponents": "1E+2,1e-2,-1.5E-7,2e0,1e308,1e-308,1e400,1e-400,123456789e-50",
        "not_numbers": "+1,01,1.,.5,1e,NaN,0x10,--1,1e+",
        "whitespace": " 1,\t2 ,\n3\r\n, 4.5e1 ",
        "empty": "",
    }
    mids = []
    for _ in range(8):
        b = rng.randrange(0x00800000, 0x7F000000)
        m = (exact(b) + exact(b + 1)) / 2
        mids.append(positional(m))
    seeds["midpoints"] = ",".join(mids)
    # JSON.stringify of float32 values widened to double (17 significant digits; repr is the
    # same shortest double text), and double neighbours of float32 midpoints (-12..12 ulps,
    # 19 digits): the 16..24-digit fast path and its midpoint margin (decimal.h).
    f32 = lambda x: struct.unpack("<f", struct.pack("<f", x))[0]
    seeds["stringify17"] = ",".join(repr(f32(rng.gauss(0, 1) / 40)) for _ in range(48))
    near = []
    for _ in range(12):
        b = rng.randrange(0x30000000, 0x50000000)
        m = (struct.unpack("<f", struct.pack("<I", b))[0] + struct.unpack("<f", struct.pack("<I", b + 1))[0]) / 2
        k = rng.randrange(-12, 13)
        d = struct.unpack("<d", struct.pack("<q", struct.unpack("<q", struct.pack("<d", m))[0] + k))[0]
        near.append("%.18e" % d)
    seeds["near_midpoints"] = ",".join(near)
    for name, text in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(text.encode())


if __name__ == "__main__":
    main()
