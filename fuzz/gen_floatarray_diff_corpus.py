#!/usr/bin/env python3
"""Seed corpus for fuzz/fuzz_floatarray_diff.c: texts of JSON array elements (what follows
an embedding's '['), long enough for the SIMD kernels' 64-byte windows: shortest round-trip
float32 texts compact and pretty, exponents, long digit strings, midpoints, and each grammar
fault placed after a run of good numbers. Deterministic; writes fuzz/corpus/floatarray_diff/."""
import os
import random
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "floatarray_diff")
os.makedirs(out, exist_ok=True)
rng = random.Random(35)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def shortest(x):
    x = f32(x)
    for p in range(1, 10):
        t = "%.*g" % (p, x)
        if f32(float(t)) == x:
            return t
    return "%.9g" % x


def vals(n, scale=0.05):
    return [rng.gauss(0, scale) for _ in range(n)]


seeds = {
    "compact": ",".join(shortest(v) for v in vals(200)),
    "pretty": ",\n        ".join(shortest(v) for v in vals(120)) + "\n      ",
    "exponents": ",".join(shortest(v * 1e-4) for v in vals(100)),
    "mixed_forms": ",".join(rng.choice(["%.9g", "%.17g", "%.6e", "%.3E", "%.12f"]) % v for v in vals(100, 3)),
    "integers": ",".join(str(rng.randrange(-10**7, 10**7)) for _ in range(150)),
    "long_digits": ",".join("0." + "".join(rng.choice("0123456789") for _ in range(rng.randrange(14, 24)))
                            for _ in range(60)),
    "midpoints": ",".join(repr((f32(v) + struct.unpack("<f", struct.pack("<I", struct.unpack("<I", struct.pack("<f", f32(v)))[0] + 1))[0]) / 2)
                          for v in vals(80) if v > 0),
    "ws": ", ".join(shortest(v) for v in vals(80)) + " ,\t1 ,\r\n2",
}
good = ",".join(shortest(v) for v in vals(12))
for i, fault in enumerate(["01", "-", "1.", ".5", "1e", "1e+", "1.2.3", "1e5e3", "+1", "-01", "1e5.3",
                           "--1", "1-2", "1 2", ",", "]", "1E400", "00.5", "1.e5", "\"1\"", "1,,2",
                           "9e-400", "1.5e0003", "0e99999999999", "1" * 70]):
    seeds["fault_%02d" % i] = good + "," + fault + "," + good
for name, text in seeds.items():
    with open(os.path.join(out, name), "w") as f:
        f.write(text)
print("%d seeds in %s" % (len(seeds), out))
