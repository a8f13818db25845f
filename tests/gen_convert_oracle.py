#!/usr/bin/env python3
"""Writes tests/test_convert.c's independent oracle (a C include) for the dtype conversions.

  python3 gen_convert_oracle.py OUT.inc

Nothing here comes from embd's C code:
  * f16 -> f32 of all 65,536 halves, and f32 -> f16 of a fixed input set: numpy's float16
    casts (astype), when numpy imports; otherwise ORACLE_HAVE_NUMPY is 0 and
    ORACLE_NO_NUMPY_REASON says why (the test then skips those parts, loudly).
  * bf16 -> f32: numpy, (u16 << 16) viewed as float32, the definition.
  * f32 -> bf16, fp8 e4m3fn / e5m2 <-> f32: exact rational arithmetic (fractions) from the
    formats' definitions (IEEE 754 round to nearest, ties to even; OCP FP8 with torch's
    float8_e4m3fn overflow rule), no numpy needed.
NaNs: numpy may keep a signaling NaN signaling, and gives 0x7c01 for a NaN whose payload
would truncate to zero; the test compares NaNs by sign and payload bits below the quiet
bit (see test_convert.c). Here a NaN from the definitions is written as the quiet NaN of its
sign (payload 0): fp8 NaNs carry no payload worth checking.
"""
import math
import struct
import sys
from fractions import Fraction

OUT = sys.argv[1]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bits_f32(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def exact_f32_bits(fr, neg):
    """Bits of the float32 equal to the exact value fr (must be representable)."""
    x = float(fr)
    assert Fraction(x) == fr
    b = f32_bits(x)
    assert Fraction(bits_f32(b)) == fr
    return b | (0x80000000 if neg else 0)


# ---- fp8 decode from the OCP definitions ---------------------------------------------
def e4m3_value(b):
    s, e, m = b >> 7, (b >> 3) & 15, b & 7
    if e == 15 and m == 7:
        return None, s
    if e == 0:
        return Fraction(m, 8) * Fraction(1, 2**6), s
    return (1 + Fraction(m, 8)) * Fraction(2) ** (e - 7), s


def e5m2_value(b):
    s, e, m = b >> 7, (b >> 2) & 31, b & 3
    if e == 31:
        return ("inf" if m == 0 else None), s
    if e == 0:
        return Fraction(m, 4) * Fraction(1, 2**14), s
    return (1 + Fraction(m, 4)) * Fraction(2) ** (e - 15), s


def decode_bits(v, s):
    if v is None:
        return 0x7FC00000 | (s << 31)
    if v == "inf":
        return 0x7F800000 | (s << 31)
    return exact_f32_bits(v, s)


# ---- round to nearest even into a binary format, from the definition ------------------
def round_format(v, mbits, emin):
    """|v| (a Fraction > 0) rounded to the nearest value with `mbits` fraction bits and
    minimum normal exponent emin (subnormals below), exponent unbounded above; ties to
    even. Returns (exponent field, mantissa field) with the field meaning of the format
    (exponent field 0: subnormal), or the exponent field past the top for overflow checks
    by the caller."""
    # the quantum at v's binade (never below the subnormal quantum)
    e = math.frexp(float(v))[1] - 1  # v is a float32 value: exact
    assert Fraction(2) ** e <= v < Fraction(2) ** (e + 1)
    e = max(e, emin)
    q = Fraction(2) ** (e - mbits)
    k = v / q
    n = int(k)  # floor, k > 0
    rem = k - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    # n * q: renormalise
    if n == 0:
        return 0, 0
    if n >= 2 ** (mbits + 1):  # carried into the next binade
        n //= 2
        e += 1
    if n < 2**mbits:  # subnormal (only possible at e == emin)
        return 0, n
    return e - emin + 1, n - 2**mbits


def enc_binary(x_bits, ebits, mbits):
    """IEEE binary format with ebits/mbits (bf16: 8/7, f16: 5/10): RNE, overflow to inf,
    NaN -> quiet NaN of the sign with the upper payload bits."""
    s = x_bits >> 31
    a = x_bits & 0x7FFFFFFF
    top = (1 << ebits) - 1
    if a > 0x7F800000:
        pay = (a & 0x7FFFFF) >> (23 - mbits)
        return (s << (ebits + mbits)) | (top << mbits) | (1 << (mbits - 1)) | pay
    if a == 0x7F800000:
        return (s << (ebits + mbits)) | (top << mbits)
    v = Fraction(bits_f32(a))
    if v == 0:
        return s << (ebits + mbits)
    bias = (1 << (ebits - 1)) - 1
    ef, mf = round_format(v, mbits, 1 - bias)
    if ef >= top:
        return (s << (ebits + mbits)) | (top << mbits)
    return (s << (ebits + mbits)) | (ef << mbits) | mf


def enc_e4m3(x_bits):
    s = x_bits >> 31
    a = x_bits & 0x7FFFFFFF
    if a >= 0x7F800000:
        return (s << 7) | 0x7F
    v = Fraction(bits_f32(a))
    if v == 0:
        return s << 7
    ef, mf = round_format(v, 3, -6)
    if ef > 15 or (ef == 15 and mf == 7):  # rounds past 448: NaN (torch's e4m3fn)
        return (s << 7) | 0x7F
    return (s << 7) | (ef << 3) | mf


def enc_e5m2(x_bits):
    s = x_bits >> 31
    a = x_bits & 0x7FFFFFFF
    if a > 0x7F800000:
        return (s << 7) | 0x7F
    if a == 0x7F800000:
        return (s << 7) | 0x7C
    v = Fraction(bits_f32(a))
    if v == 0:
        return s << 7
    ef, mf = round_format(v, 2, -14)
    if ef >= 31:
        return (s << 7) | 0x7C
    return (s << 7) | (ef << 2) | mf


# ---- the encode input set -------------------------------------------------------------
def encode_inputs():
    xs = []
    # specials
    xs += [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
           0xFF800001, 0x7FA00000, 0x7FFFFFFF, 0xFFFFFFFF, 0x7F802000, 0x7FBFE000, 0x7F801FFF,
           0x7F7FFFFF, 0xFF7FFFFF, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x00400000]
    # f16 grid: every subnormal half, every 3rd of the first normal and the top binade,
    # every 61st elsewhere; each with the float32s at and next to it and the midpoint to
    # the next half and its neighbours
    hs = (list(range(0, 0x0400)) + list(range(0x0400, 0x0800, 3)) + list(range(0x7800, 0x7C00, 3))
          + list(range(0x0800, 0x7800, 61)) + [0x7BFF])
    for h in hs:
        lo = f32_bits(float(Fraction(hf_value(h))))
        hi = f32_bits(float(Fraction(hf_value(h + 1)))) if h + 1 <= 0x7C00 else None
        xs += [lo, lo + 1, lo - 1 if lo else 0]
        if hi is not None:
            mid = (Fraction(bits_f32(lo)) + Fraction(bits_f32(hi))) / 2
            m = f32_bits(float(mid))
            assert Fraction(bits_f32(m)) == mid
            xs += [m, m - 1, m + 1]
    # the f16 overflow edge: 65504, 65519.99, 65520
    xs += [0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x47800000]
    # bf16 grid: every exponent, mantissa top bits in a spread, the rounding bits all ways
    for e in range(0, 256):
        for m7 in (0, 1, 0x7F):
            for low in (0x7FFF, 0x8000, 0x8001, 0x4000):
                xs.append((e << 23) | (m7 << 16) | low)
    # fp8 grids: every e4m3/e5m2 value and the midpoints to the next one
    for enc, val in ((3, e4m3_value), (2, e5m2_value)):
        for b in range(0, 0x7F):
            v0, _ = val(b)
            v1, _ = val(b + 1)
            if v0 is None or v1 is None or v0 == "inf" or v1 == "inf":
                continue
            m = (v0 + v1) / 2
            for v in (v0, m):
                if v == 0:
                    continue
                x = f32_bits(float(v))
                xs += [x, x - 1, x + 1]
    xs += [f32_bits(448.0), f32_bits(464.0), f32_bits(465.0), f32_bits(479.0), f32_bits(480.0),
           f32_bits(57344.0), f32_bits(61439.0), f32_bits(61440.0)]
    # pseudo-random (a fixed LCG: reproducible without numpy)
    r = 0x656D6264
    for _ in range(3000):
        r = (r * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
        xs.append(r >> 32)
    out = []
    for x in xs:
        x &= 0xFFFFFFFF
        out.append(x)
        out.append(x ^ 0x80000000)
    return sorted(set(out))


def hf_value(h):
    """Value of a non-negative finite binary16 (or 0x7c00 -> 65536 as the next 'value')."""
    e, m = h >> 10, h & 0x3FF
    if e == 0:
        return Fraction(m, 1024) * Fraction(1, 2**14)
    return (1 + Fraction(m, 1024)) * Fraction(2) ** (e - 15)


def main():
    lines = ["/* Generated by tests/gen_convert_oracle.py: do not edit. */"]
    try:
        import numpy as np  # noqa: F401

        have_np = True
        reason = ""
    except Exception as e:  # pragma: no cover
        have_np = False
        reason = "%s has no numpy (%s)" % (sys.executable, e)

    xs = encode_inputs()
    lines.append("#define ORACLE_HAVE_NUMPY %d" % (1 if have_np else 0))
    lines.append('#define ORACLE_NO_NUMPY_REASON "%s"' % reason.replace('"', "'"))
    lines.append('#define ORACLE_PYTHON "%s"' % sys.executable)

    def arr(name, ctype, vals, fmt):
        lines.append("static const %s %s[%d] = {" % (ctype, name, len(vals)))
        for i in range(0, len(vals), 8):
            lines.append("  " + ", ".join(fmt % v for v in vals[i:i + 8]) + ",")
        lines.append("};")

    if have_np:
        u16 = np.arange(65536, dtype=np.uint16)
        f16 = u16.view(np.float16).astype(np.float32).view(np.uint32)
        bf16 = (u16.astype(np.uint32) << 16).view(np.float32).view(np.uint32)
        arr("oracle_f16_to_f32", "uint32_t", [int(v) for v in f16], "0x%08x")
        arr("oracle_bf16_to_f32", "uint32_t", [int(v) for v in bf16], "0x%08x")
        x = np.array(xs, dtype=np.uint32)
        with np.errstate(all="ignore"):
            enc16 = x.view(np.float32).astype(np.float16).view(np.uint16)
        arr("oracle_enc_f16", "uint16_t", [int(v) for v in enc16], "0x%04x")
    arr("oracle_e4m3_to_f32", "uint32_t", [decode_bits(*e4m3_value(b)) for b in range(256)], "0x%08x")
    arr("oracle_e5m2_to_f32", "uint32_t", [decode_bits(*e5m2_value(b)) for b in range(256)], "0x%08x")
    arr("oracle_enc_in", "uint32_t", xs, "0x%08x")
    arr("oracle_enc_bf16", "uint16_t", [enc_binary(x, 8, 7) for x in xs], "0x%04x")
    arr("oracle_enc_f16_exact", "uint16_t", [enc_binary(x, 5, 10) for x in xs], "0x%04x")
    arr("oracle_enc_e4m3", "uint8_t", [enc_e4m3(x) for x in xs], "0x%02x")
    arr("oracle_enc_e5m2", "uint8_t", [enc_e5m2(x) for x in xs], "0x%02x")
    # self-checks of the definitions against known values
    assert enc_binary(f32_bits(1.0), 5, 10) == 0x3C00
    assert enc_binary(f32_bits(65504.0), 5, 10) == 0x7BFF
    assert enc_binary(f32_bits(65520.0), 5, 10) == 0x7C00
    assert enc_binary(f32_bits(2.0**-24), 5, 10) == 0x0001
    assert enc_binary(f32_bits(2.0**-25), 5, 10) == 0x0000  # tie to even (0)
    assert enc_e4m3(f32_bits(448.0)) == 0x7E and enc_e4m3(f32_bits(-464.0)) == 0xFE
    assert enc_e4m3(f32_bits(465.0)) == 0x7F
    assert decode_bits(*e4m3_value(0x7E)) == f32_bits(448.0)
    assert decode_bits(*e5m2_value(0x7B)) == f32_bits(57344.0)
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")


main()
