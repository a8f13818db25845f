#!/usr/bin/env python3
"""Decimal texts and the float32 nearest each, computed exactly with fractions.

The oracle of tests/test_openai.c (test_oracle): every JSON number must become the float32
nearest its decimal text, rounded once (ties to even). Each output line is

    <text> <bits>

with <bits> the float32 as 8 hex digits, or "inf" when the nearest float32 is an infinity
(the decoder's EMBD_ERR_OPENAI_SHAPE "out of the float32 range"); an OUT ending in .inc
gets the same as C initializers instead, ORACLE("<text>", 0x<bits>, <is_inf>), which the
build makes and test_openai.c includes. The value comes from
rational arithmetic on the text itself (Fraction), never through a double or numpy, so
nothing is rounded twice. Cases: float32 midpoints and their neighbours in positional and
exponent form, "0." followed by 19 to 800 digits, integers around 2^24 and 2^64, the
subnormals, the largest float and its midpoint, numbers beyond float32 and double range,
unit vectors printed with %.9g / %.17g / %.21f / %.25f, the texts of the exactness issue.

Usage: gen_f32_oracle.py OUT [SEED]   (deterministic for a seed)
"""
import random
import struct
import sys
from fractions import Fraction

MIN_SUB = Fraction(1, 2**149)


def f32_nearest(x: Fraction):
    """The float32 nearest x (ties to even) as its 32-bit pattern, or None for infinity."""
    neg = x < 0
    a = -x if neg else x
    sign = 0x80000000 if neg else 0
    if a == 0:
        return sign
    # e: 2^e <= a < 2^(e+1)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    elif Fraction(2) ** (e + 1) <= a:
        e += 1
    ulp = Fraction(2) ** (e - 23) if e >= -126 else MIN_SUB
    q = a / ulp
    n = q.numerator // q.denominator
    rem = q - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    v = n * ulp
    if v >= Fraction(2) ** 128:
        return None
    bits = struct.unpack("<I", struct.pack("<f", float(v)))[0]  # v is exact in a double
    assert Fraction(struct.unpack("<f", struct.pack("<I", bits))[0]) == v
    return sign | bits


def f32_value(bits):
    return Fraction(struct.unpack("<f", struct.pack("<I", bits))[0])


def positional(x: Fraction, max_digits=1200):
    """The exact decimal expansion of a dyadic rational (finite), positional."""
    neg = x < 0
    a = -x if neg else x
    ip = a.numerator // a.denominator
    fr = a - ip
    digits = []
    while fr and len(digits) < max_digits:
        fr *= 10
        d = fr.numerator // fr.denominator
        digits.append(str(d))
        fr -= d
    assert fr == 0, "not a finite decimal within max_digits"
    s = str(ip) + ("." + "".join(digits) if digits else "")
    return ("-" if neg else "") + s


def exponent_form(s: str):
    """The same value as d.ddd...e<x> (from a positional text)."""
    neg = s.startswith("-")
    if neg:
        s = s[1:]
    ip, _, fp = s.partition(".")
    digits = (ip + fp).lstrip("0")
    if not digits:
        return ("-" if neg else "") + "0e0"
    # value = 0.<ip+fp> * 10^len(ip); position of the first significant digit:
    lead = len(ip + fp) - len((ip + fp).lstrip("0"))
    exp = len(ip) - lead - 1
    digits = digits.rstrip("0") or "0"
    m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return ("-" if neg else "") + m + "e" + str(exp)


def main():
    out = sys.argv[1]
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 2093)
    texts = []

    def add(t):
        texts.append(t)

    # The exactness issue's own texts (simdjson 3.0.1 got these wrong).
    for t in ["0.50000000000000000000", "0.95000000000000000000", "0.5000000298023223876953125",
              "5.000000298023223876953125e-1", "0.1", "7.038531e-26", "16777217", "1e-50",
              "-1E+2", "3.4028235677973366e38"]:
        add(t)

    # Midpoints between neighbouring floats and their neighbours, positional and exponent.
    def float_bits_sample():
        yield 0x00000001  # smallest subnormal
        yield 0x00000002
        yield 0x007FFFFF  # largest subnormal
        yield 0x00800000  # FLT_MIN
        yield 0x3F800000
        yield 0x4B7FFFFF  # below 2^24
        yield 0x7F7FFFFE
        for _ in range(260):
            e = rng.randrange(0, 255)
            yield (e << 23) | rng.randrange(0, 1 << 23)
        for _ in range(40):
            yield rng.randrange(1, 1 << 23)  # subnormals

    for b in float_bits_sample():
        f = f32_value(b)
        g = f32_value(b + 1)
        mid = (f + g) / 2
        for v in (mid, f, g):
            p = positional(v)
            add(p)
            add(exponent_form(p))
        # just below and just above the midpoint: 10^-k off, k past the expansion
        p = positional(mid)
        k = len(p.partition(".")[2]) + rng.randrange(1, 30)
        for v in (mid - Fraction(1, 10**k), mid + Fraction(1, 10**k)):
            q = positional(v, max_digits=k + 5)
            add(q)
            add(exponent_form(q))

    # The largest float, its midpoint to 2^128 (rounds to infinity: even), and around it.
    fmax = f32_value(0x7F7FFFFF)
    top = fmax + Fraction(2) ** 103
    for v in (fmax, top, top - Fraction(1, 10**5), top + 1, Fraction(2) ** 128):
        p = positional(v)
        add(p)
        add(exponent_form(p))

    # "0." followed by 19 to 800 digits.
    for n in list(range(19, 60)) + [100, 200, 400, 800]:
        for _ in range(3):
            d = "".join(rng.choice("0123456789") for _ in range(n))
            add("0." + d)
        add("0." + "5" + "0" * (n - 1))
        add("0." + "9" * n)
        add("0." + "0" * (n - 1) + "1")

    # Integers: around 2^24, 2^53, 2^64, and many digits.
    for base in (2**24, 2**53, 2**64, 10**19, 10**38):
        for d in range(-3, 4):
            add(str(base + d))
    for n in (20, 25, 30, 38, 39, 40, 60, 310, 400):
        add(str(rng.randrange(10 ** (n - 1), 10**n)))

    # Beyond the float32 and the double range, tiny and huge exponents.
    for t in ["1e39", "3.5e38", "1e308", "1.8e308", "1e400", "1e-400", "1e-46", "1e-45", "7e-46",
              "1.4e-45", "0e0", "0.0",
              "0.000000000000000000000000000000000000000000001401298464324817", "123456789e-50",
              "0.00000000000000000000000000000000000000001", "1e38", "340282356779733661637539395458142568448"]:
        add(t)
    # Exponents too large for Fraction to expand: their float32 is known.
    huge = [("0e-999999999999", 0), ("1e-99999999999", 0), ("1e99999999999", None),
            ("0.0e99999999999", 0), ("123e-4294967296", 0), ("1e4294967297", None)]

    # Unit vectors printed as servers and scripts print them.
    for fmt in ("%.9g", "%.17g", "%.21f", "%.25f", "%.8e", "%.30e"):
        for _ in range(120):
            x = rng.gauss(0, 1) / 40
            add(fmt % x)

    # Random decimals of every shape.
    for _ in range(2000):
        nd = rng.choice([1, 2, 5, 8, 9, 10, 15, 17, 19, 20, 21, 25, 40])
        d = "".join(rng.choice("0123456789") for _ in range(nd)).lstrip("0") or "0"
        e = rng.randrange(-60, 45)
        cut = rng.randrange(0, len(d) + 1)
        t = (d[:cut] or "0") + ("." + d[cut:] if d[cut:] else "")
        if rng.random() < 0.5:
            t += rng.choice("eE") + rng.choice(["", "+", "-"]) + str(abs(e)) if rng.random() < 0.7 else ""
        add(t)

    with open(out, "w") as f:
        def put(s, v):
            # the sign comes from the text, so "-0e0" is -0
            if v is not None and s.startswith("-"):
                v |= 0x80000000
            if out.endswith(".inc"):
                f.write('ORACLE("%s", 0x%08xu, %d)\n' % (s, v or 0, v is None))
            else:
                f.write("%s %s\n" % (s, "inf" if v is None else "%08x" % v))

        for t in texts:
            x = abs(Fraction(t))  # Fraction parses the JSON number grammar exactly
            v = f32_nearest(x)
            put(t, v)
            put(t[1:] if t.startswith("-") else "-" + t, v)
        for t, v in huge:
            put(t, v)
            put("-" + t, v)


if __name__ == "__main__":
    main()
