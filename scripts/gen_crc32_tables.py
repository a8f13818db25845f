#!/usr/bin/env python3
"""Generate src/core/crc32_tables.h: slice-by-16 tables and carry-less folding constants
for CRC-32 (zlib, reflected polynomial 0xEDB88320).

Usage: python3 scripts/gen_crc32_tables.py > src/core/crc32_tables.h

Bit conventions (the "reflected" domain every kernel works in)
---------------------------------------------------------------
A message bit stream is a polynomial whose first bit (bit 0 of byte 0) is the
highest-degree coefficient.  A 128-bit register loaded little-endian from 16
message bytes therefore has register bit m = coefficient of x^(127-m); its low
qword (the first 8 bytes) is the high half A_hi, its high qword is A_lo.

A 64-bit clmul operand "in reflected form" has bit i = coefficient of x^(63-i).
The carry-less product of two such operands has bit m = coefficient of
x^(126-m) of the polynomial product: one degree short of the register
convention.  Every multiplier below is therefore x^(N-1) mod G rather than
x^N mod G, so that

    clmul(A_hi, K_hi) ^ clmul(A_lo, K_lo)   with
    K_hi = x^(8*D + 64 - 1) mod G,   K_lo = x^(8*D - 1) mod G

is congruent (mod G) to A * x^(8*D), i.e. the 16 bytes A moved D bytes
forward, ready to be XORed into the register D bytes later.  The script
checks this claim by folding random messages in Python and comparing with
zlib.crc32 before it prints anything.

Final reduction: once everything is folded into one 16-byte register R with
nothing after it, CRC_raw(0, R) is exactly the CRC still owed, so kernels
finish with the slice-by-16 table step over R's 16 bytes, two ARMv8 crc32x
instructions, or the three-multiply Barrett reduction modelled by
barrett_finish() below (and checked against the table step).

Short messages fold every 16-byte chunk straight to the message end in one step,
which needs the multipliers for every distance 1..255 (embd_crc32_fold_by).

The Barrett frame: barrett_finish() first turns R into a 96-bit y with
y = clmul(R_first8, x^95 mod G) ^ (R >> 64), the constant 32-bit reflected in a
qword's low half. Read generally, a 64-bit operand whose last byte is E bytes
before the message end enters y multiplied by bitrev32(x^(8E+31) mod G) (E = 8:
x^95; E = 0: 1, the shift). So a 16-byte chunk D bytes before the end can be
folded straight into y with the pair { x^(8D+95), x^(8D+31) } mod G in that
form (embd_crc32_fold_y, D = 0..511; D = 0 is the first step itself): every
chunk of a short message, the last one included, goes into y in one parallel
step and only Barrett's two dependent multiplies follow (self_test_fold_y() checks
it). The AVX-512 kernel also ends its long loop that way: its four accumulators,
the blocks after them and a partial last block lie within 511 bytes of the end.
"""
import random
import sys
import zlib

POLY_REFLECTED = 0xEDB88320
G = (1 << 32) | int(f"{POLY_REFLECTED:032b}"[::-1], 2)  # x^32 + ... + 1, bit d = coef x^d


def pmod(a: int, m: int) -> int:
    dm = m.bit_length() - 1
    while a.bit_length() - 1 >= dm:
        a ^= m << (a.bit_length() - 1 - dm)
    return a


def xpow_mod(n: int) -> int:
    """x^n mod G as an integer with bit d = coefficient of x^d."""
    r, base = 1, 2
    while n:
        if n & 1:
            r = pmod(clmul(r, base), G)
        base = pmod(clmul(base, base), G)
        n >>= 1
    return r


def xpow_mod_big(k: int) -> int:
    """x^(2^k) mod G by repeated squaring (2^k is too large to loop over bits)."""
    r = 2
    for _ in range(k):
        r = pmod(clmul(r, r), G)
    return r


def clmul(a: int, b: int) -> int:
    r = 0
    while b:
        if b & 1:
            r ^= a
        a <<= 1
        b >>= 1
    return r


def bitrev(v: int, width: int) -> int:
    return int(f"{v:0{width}b}"[::-1], 2)


def reflected64(k: int) -> int:
    """Polynomial (bit d = coef x^d, degree < 64) as a 64-bit reflected operand."""
    return bitrev(k, 64)


def fold_consts(dist_bytes: int):
    hi = reflected64(xpow_mod(8 * dist_bytes + 64 - 1))
    lo = reflected64(xpow_mod(8 * dist_bytes - 1))
    return lo, hi


# ---- slice-by-16 tables -------------------------------------------------------

def byte_table():
    t = []
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ (POLY_REFLECTED if c & 1 else 0)
        t.append(c)
    return t


def slice_tables(n=16):
    t0 = byte_table()
    tabs = [t0]
    for _ in range(1, n):
        prev = tabs[-1]
        tabs.append([(prev[b] >> 8) ^ t0[prev[b] & 0xFF] for b in range(256)])
    return tabs


TABLES = slice_tables()


def crc_raw16(data: bytes) -> int:
    """CRC_raw(state 0) of exactly 16 bytes with the slice-by-16 step."""
    c = 0
    for i, b in enumerate(data):
        c ^= TABLES[15 - i][b]
    return c


# ---- self-test: fold random messages the way the kernels do -------------------

def fold_crc(msg: bytes, init: int, dist: int) -> int:
    """Fold 16-byte lanes `dist` bytes apart (dist/16 accumulators), then tree-reduce."""
    assert len(msg) % 16 == 0 and len(msg) >= dist and dist % 16 == 0
    m = bytearray(msg)
    x = (~init) & 0xFFFFFFFF
    for i in range(4):
        m[i] ^= (x >> (8 * i)) & 0xFF
    lanes = dist // 16
    acc = [int.from_bytes(m[16 * i:16 * i + 16], "little") for i in range(lanes)]
    lo, hi = fold_consts(dist)
    for off in range(dist, len(m), dist):
        for i in range(lanes):
            a = acc[i]
            nxt = int.from_bytes(m[off + 16 * i:off + 16 * i + 16], "little")
            acc[i] = clmul(a & (2**64 - 1), hi) ^ clmul(a >> 64, lo) ^ nxt
    # reduce lanes: lane i is (lanes-1-i)*16 bytes before the end
    r = acc[-1]
    for i in range(lanes - 1):
        lo_i, hi_i = fold_consts(16 * (lanes - 1 - i))
        a = acc[i]
        r ^= clmul(a & (2**64 - 1), hi_i) ^ clmul(a >> 64, lo_i)
    return (~crc_raw16(r.to_bytes(16, "little"))) & 0xFFFFFFFF


def self_test():
    rng = random.Random(1)
    for dist in (16, 32, 64, 128, 256):
        for _ in range(20):
            n = dist * rng.randint(1, 6)
            msg = bytes(rng.getrandbits(8) for _ in range(n))
            init = rng.getrandbits(32)
            want = zlib.crc32(msg, init)
            got = fold_crc(msg, init, dist)
            if got != want:
                sys.exit(f"self-test failed: dist={dist} len={n}: {got:#x} != {want:#x}")


def self_test_fold_by():
    """Fold a register r bytes forward over a partial last block, as the kernels' tails do."""
    rng = random.Random(2)
    for r in range(1, FOLD_BY_N):
        msg = bytes(rng.getrandbits(8) for _ in range(16 + r))
        init = rng.getrandbits(32)
        m = bytearray(msg)
        x = (~init) & 0xFFFFFFFF
        for i in range(4):
            m[i] ^= (x >> (8 * i)) & 0xFF
        a = int.from_bytes(m[:16], "little")
        lo, hi = fold_consts(r)
        folded = clmul(a & (2**64 - 1), hi) ^ clmul(a >> 64, lo)  # < 2^128, ends at the end
        tail = int.from_bytes(bytes(max(0, 16 - r)) + bytes(m[16:])[-16:], "little") if r <= 16 else None
        if tail is None:
            # longer tails: CRC_raw over the tail bytes with the folded register as prefix
            want = zlib.crc32(msg, init)
            got = (~crc_raw_bytes_from(folded.to_bytes(16, "little"), m[16:])) & 0xFFFFFFFF
        else:
            want = zlib.crc32(msg, init)
            got = (~crc_raw16((folded ^ tail).to_bytes(16, "little"))) & 0xFFFFFFFF
        if got != want:
            sys.exit(f"fold_by self-test failed: r={r}")


def crc_raw_bytes_from(prefix16: bytes, rest: bytes) -> int:
    """CRC_raw(0, prefix16 placed to end where `rest` ends, overlapping: prefix16 ^ last 16)."""
    # folded register ends at the message end: XOR it onto the last 16 bytes of `rest`
    buf = bytearray(rest)
    for i in range(16):
        buf[len(buf) - 16 + i] ^= prefix16[i]
    c = 0
    for b in buf:
        c = (c >> 8) ^ TABLES[0][(c ^ b) & 0xFF]
    return c


FOLD_DISTANCES = (16, 32, 48, 64, 128, 192, 256, 512, 1024)


# ---- Barrett reduction constants ------------------------------------------------

def pdiv(a: int, m: int) -> int:
    """Quotient of the polynomial division a / m (bit d = coefficient of x^d)."""
    q, dm = 0, m.bit_length() - 1
    while a.bit_length() - 1 >= dm:
        sh = a.bit_length() - 1 - dm
        q |= 1 << sh
        a ^= m << sh
    return q


MU95 = pdiv(1 << 95, G)  # floor(x^95 / G), degree 63
BARRETT_X95 = bitrev(xpow_mod(95), 32)  # x^95 mod G, 32-bit reflected, in a qword's low half
BARRETT_MU = bitrev(MU95, 64)
BARRETT_POLY = bitrev(G, 33)  # G with its x^32 term, 33-bit reflected


def barrett_finish(r: int) -> int:
    """The x86 kernels' finish of a folded 16-byte register r (crc32_x86_common.h), modelled
    on the integers the instructions see: one multiply folds the first 8 bytes into the
    last 8 (128 -> 96 bits), then Barrett with floor(x^95 / G) and G gives CRC_raw(0, r)
    in bits 64..95."""
    m64 = 2**64 - 1
    y = clmul(r & m64, BARRETT_X95) ^ (r >> 64)
    q = clmul(y & m64, BARRETT_MU)
    y ^= clmul(q & m64, BARRETT_POLY)
    return (y >> 64) & 0xFFFFFFFF


def fold_y_consts(d: int):
    """{ multiplier of the low qword (first 8 bytes), of the high qword } into the Barrett
    frame for a 16-byte chunk d bytes before the end (32-bit reflected, low halves)."""
    return bitrev(xpow_mod(8 * d + 95), 32), bitrev(xpow_mod(8 * d + 31), 32)


def barrett_y(y: int) -> int:
    m64 = 2**64 - 1
    q = clmul(y & m64, BARRETT_MU)
    y ^= clmul(q & m64, BARRETT_POLY)
    return (y >> 64) & 0xFFFFFFFF


def self_test_fold_y():
    """Every 16-byte chunk folded straight into the Barrett frame, as the kernels'
    short-message path does, gives zlib's CRC."""
    rng = random.Random(4)
    m64 = 2**64 - 1
    if fold_y_consts(0) != (BARRETT_X95, 1):
        sys.exit("fold_y self-test failed: distance 0 is not the Barrett first step")
    for n in list(range(16, 16 * (FOLD_Y_N // 16 + 1), 16)) * 4:
        msg = bytes(rng.getrandbits(8) for _ in range(n))
        init = rng.getrandbits(32)
        m = bytearray(msg)
        x = (~init) & 0xFFFFFFFF
        for i in range(4):
            m[i] ^= (x >> (8 * i)) & 0xFF
        y = 0
        for c in range(n // 16):
            a = int.from_bytes(m[16 * c:16 * c + 16], "little")
            klo, khi = fold_y_consts(n - 16 * c - 16)
            y ^= clmul(a & m64, klo) ^ clmul(a >> 64, khi)
        if y >> 95 or (~barrett_y(y)) & 0xFFFFFFFF != zlib.crc32(msg, init):
            sys.exit(f"fold_y self-test failed: len={n}")


def xpow_mod_signed(n: int) -> int:
    """x^n mod G for any integer n: x is invertible because G has a constant term, and
    x^-1 = (G - 1) / x."""
    if n >= 0:
        return xpow_mod(n)
    xinv, r = (G ^ 1) >> 1, 1
    for _ in range(-n):
        r = pmod(clmul(r, xinv), G)
    return r


def fold_head_consts(n: int):
    """For an n-byte message (16 <= n <= 64) loaded from its start into a 64-byte register
    with zeros after it: the Barrett-frame pair of each 16-byte lane (lo qword first), 0
    for a lane wholly past the end. A lane that ends e bytes past the end has the distance
    -e: its trailing zeros make the operand divisible by x^(8e), so x^(8d+31) with d < 0
    (a power of x^-1) still gives the operand's exact place."""
    out = []
    for lane in range(4):
        if 16 * lane >= n:
            out += [0, 0]
            continue
        d = n - 16 * (lane + 1)
        out += [bitrev(xpow_mod_signed(8 * d + 95), 32), bitrev(xpow_mod_signed(8 * d + 31), 32)]
    return out


def self_test_fold_head():
    """16..64-byte messages, loaded from their start with the inverted CRC XORed into the
    first 4 bytes and zeros after them, folded with fold_head_consts, give zlib's CRC."""
    rng = random.Random(5)
    m64 = 2**64 - 1
    if pmod(clmul(2, (G ^ 1) >> 1), G) != 1:
        sys.exit("fold_head self-test failed: x^-1")
    for n in list(range(16, 65)) * 8:
        msg = bytes(rng.getrandbits(8) for _ in range(n))
        init = rng.getrandbits(32)
        m = bytearray(msg) + bytearray(64 - n)
        x = (~init) & 0xFFFFFFFF
        for i in range(4):
            m[i] ^= (x >> (8 * i)) & 0xFF
        k = fold_head_consts(n)
        y = 0
        for lane in range(4):
            a = int.from_bytes(m[16 * lane:16 * lane + 16], "little")
            y ^= clmul(a & m64, k[2 * lane]) ^ clmul(a >> 64, k[2 * lane + 1])
        if y >> 95 or (~barrett_y(y)) & 0xFFFFFFFF != zlib.crc32(msg, init):
            sys.exit(f"fold_head self-test failed: len={n}")


def self_test_barrett():
    rng = random.Random(3)
    for _ in range(2000):
        r = rng.getrandbits(128)
        if barrett_finish(r) != crc_raw16(r.to_bytes(16, "little")):
            sys.exit(f"Barrett self-test failed for {r:#x}")


FOLD_BY_N = 256
FOLD_Y_N = 512


def main():
    self_test()
    self_test_fold_by()
    self_test_barrett()
    self_test_fold_y()
    self_test_fold_head()
    out = []
    w = out.append
    w("/* GENERATED by scripts/gen_crc32_tables.py -- do not edit. */")
    w("/* CRC-32 (zlib), reflected polynomial 0xEDB88320. See the script for the bit")
    w(" * conventions; it verifies the folding constants against zlib before printing. */")
    w("#ifndef EMBD_CRC32_TABLES_H")
    w("#define EMBD_CRC32_TABLES_H")
    w("#include <stdint.h>")
    w("")
    w("/* Library-internal: hidden, so that position-independent code reaches the tables")
    w(" * directly instead of through the GOT (one load less before the 12-byte CRC's first")
    w(" * lookup and before the folding kernels' first multiplier). */")
    w("#if defined(__GNUC__) && !defined(_WIN32)")
    w("#define EMBD_CRC32_TABLE_DECL extern __attribute__((visibility(\"hidden\")))")
    w("#else")
    w("#define EMBD_CRC32_TABLE_DECL extern")
    w("#endif")
    w("/* The folding tables start on a cache line: the AVX-512 kernel loads 64 bytes of")
    w(" * multipliers per block, and a table only 32-byte aligned by the linker's choice split")
    w(" * every one of those loads across two lines. */")
    w("#if defined(__GNUC__)")
    w("#define EMBD_CRC32_LINE_ALIGNED __attribute__((aligned(64)))")
    w("#else")
    w("#define EMBD_CRC32_LINE_ALIGNED")
    w("#endif")
    w("")
    w("/* embd_crc32_slice[k][b]: CRC_raw of byte b followed by k zero bytes. */")
    w("EMBD_CRC32_TABLE_DECL const uint32_t embd_crc32_slice[16][256];")
    w("")
    w("/* Folding multipliers, 64-bit reflected operands. FOLD_<D>_LO multiplies the")
    w(" * high qword (later 8 bytes) of a 16-byte lane, FOLD_<D>_HI the low qword, to move")
    w(" * the lane D bytes forward. */")
    for d in FOLD_DISTANCES:
        lo, hi = fold_consts(d)
        w(f"#define EMBD_CRC32_FOLD_{d}_LO UINT64_C(0x{lo:016x}) /* x^{8*d-1} mod G */")
        w(f"#define EMBD_CRC32_FOLD_{d}_HI UINT64_C(0x{hi:016x}) /* x^{8*d+63} mod G */")
    w("")
    w("/* Barrett finish of a folded register (crc32_x86_common.h; modelled and checked by")
    w(" * barrett_finish() in the script): its first 8 bytes folded into the last 8 with")
    w(" * x^95 mod G (32-bit reflected), then floor(x^95 / G) (64-bit reflected) and G")
    w(" * (33-bit reflected). */")
    w(f"#define EMBD_CRC32_BARRETT_X95 UINT64_C(0x{BARRETT_X95:016x}) /* x^95 mod G */")
    w(f"#define EMBD_CRC32_BARRETT_MU UINT64_C(0x{BARRETT_MU:016x}) /* floor(x^95 / G) */")
    w(f"#define EMBD_CRC32_BARRETT_POLY UINT64_C(0x{BARRETT_POLY:016x}) /* G */")
    w("")
    w("/* embd_crc32_x2n[k] = x^(2^k) mod G, 32-bit reflected (bit i = coef x^(31-i)),")
    w(" * for crc32_combine. */")
    w("EMBD_CRC32_TABLE_DECL const uint32_t embd_crc32_x2n[64];")
    w("")
    w("/* The multipliers { FOLD_d_HI, FOLD_d_LO } that move a 16-byte lane d bytes forward")
    w(f" * (d = 1..{FOLD_BY_N - 1}), in the order a 128-bit load wants them (low qword multiplies")
    w(" * the lane's low qword), at embd_crc32_fold_by[d % 16][15 - d / 16]: the entry for")
    w(" * d - 16 follows the one for d, so one 32-byte load gives the multipliers of two")
    w(" * adjacent lanes. EMBD_CRC32_FOLD_BY(d) is the address. For folding every 16-byte chunk")
    w(" * of a short message (or of the bytes after the main loop) straight to the message end")
    w(" * in one step, and a register over a partial last block. */")
    w(f"#define EMBD_CRC32_FOLD_BY_N {FOLD_BY_N}")
    w("EMBD_CRC32_TABLE_DECL const uint64_t embd_crc32_fold_by[16][16][2];")
    w("#define EMBD_CRC32_FOLD_BY(d) (embd_crc32_fold_by[(d) & 15][15 - ((d) >> 4)])")
    w("")
    w(f"/* The same layout for d = 0..{FOLD_Y_N - 1}")
    w(f" * (embd_crc32_fold_y[d % 16][{FOLD_Y_N // 16 - 1} - d / 16]), multipliers into the Barrett")
    w(" * frame (see the script):")
    w(" * { x^(8d+95), x^(8d+31) } mod G, 32-bit reflected in the qwords' low halves. A")
    w(" * 16-byte chunk d bytes before the end folded with these is ready for Barrett's two")
    w(" * multiplies; d = 0 is { x^95, 1 }, Barrett's own first step. */")
    w(f"#define EMBD_CRC32_FOLD_Y_N {FOLD_Y_N}")
    w(f"EMBD_CRC32_TABLE_DECL const uint64_t embd_crc32_fold_y[16][{FOLD_Y_N // 16}][2];")
    w(f"#define EMBD_CRC32_FOLD_Y(d) \\\n  (embd_crc32_fold_y[(d) & 15][{FOLD_Y_N // 16 - 1} - ((d) >> 4)])")
    w("")
    w("/* For a message of n = 16..64 bytes loaded from its start into 64 bytes with zeros")
    w(" * after it (the inverted CRC XORed into its first 4 bytes): embd_crc32_fold_head[n - 16]")
    w(" * holds each 16-byte lane's pair into the Barrett frame, laid out like one 64-byte")
    w(" * load of embd_crc32_fold_y; 0 for lanes wholly past the end. A lane that runs past")
    w(" * the end by e bytes sits at the distance -e (x^-1 exists mod G; see the script). */")
    w("EMBD_CRC32_TABLE_DECL const uint64_t embd_crc32_fold_head[49][8];")
    w("")
    w("#ifdef EMBD_CRC32_TABLES_DEFINE")
    w(f"EMBD_CRC32_LINE_ALIGNED const uint64_t embd_crc32_fold_y[16][{FOLD_Y_N // 16}][2] = {{")
    for r in range(16):
        w("  {")
        for j in range(FOLD_Y_N // 16):
            d = r + 16 * (FOLD_Y_N // 16 - 1 - j)
            klo, khi = fold_y_consts(d)
            w(f"    {{UINT64_C(0x{klo:016x}), UINT64_C(0x{khi:016x})}}, /* {d} */")
        w("  },")
    w("};")
    w("")
    w("EMBD_CRC32_LINE_ALIGNED const uint64_t embd_crc32_fold_head[49][8] = {")
    for n in range(16, 65):
        k = [f"UINT64_C(0x{v:08x})" for v in fold_head_consts(n)]
        w(f"  {{{', '.join(k[:4])}, /* {n} */")
        w(f"   {', '.join(k[4:])}}},")
    w("};")
    w("")
    w("EMBD_CRC32_LINE_ALIGNED const uint64_t embd_crc32_fold_by[16][16][2] = {")
    assert FOLD_BY_N == 256
    for r in range(16):
        w("  {")
        for j in range(16):
            d = r + 16 * (15 - j)
            if d == 0:
                w("    {0, 0}, /* unused */")
                continue
            lo, hi = fold_consts(d)
            w(f"    {{UINT64_C(0x{hi:016x}), UINT64_C(0x{lo:016x})}}, /* {d} */")
        w("  },")
    w("};")
    w("")
    w("const uint32_t embd_crc32_x2n[64] = {")
    x2n = [bitrev(xpow_mod(1 << k) if k < 40 else xpow_mod_big(k), 32) for k in range(64)]
    for i in range(0, 64, 6):
        w("  " + ", ".join(f"0x{v:08x}" for v in x2n[i:i + 6]) + ",")
    w("};")
    w("const uint32_t embd_crc32_slice[16][256] = {")
    for k, t in enumerate(TABLES):
        w("  {")
        for i in range(0, 256, 6):
            w("    " + ", ".join(f"0x{v:08x}" for v in t[i:i + 6]) + ",")
        w("  },")
    w("};")
    w("#endif")
    w("")
    w("#endif")
    print("\n".join(out))


if __name__ == "__main__":
    main()
