#!/usr/bin/env python3
"""Searches for a two-lookup strict base64 decode for the sse42/avx2 kernels, and shows
that the family below has none (issue 15, item 3: strict decoding at the speed of a
decoder that checks one block in four).

    scripts/search_base64_avx2_hash.py        prints one line per family; exit 0

The sse42/avx2 kernels (src/arch/x86/base64_x86_template.h) validate and translate with
three pshufb lookups per vector (LO by the low nibble, HI by the high nibble, ROLL by
their sum). Turbo-Base64's avx2 decoder translates with two (after aqrit):

    hash = avg_epu8(pshufb(T1, x), x >> k)      (x >> k: a 32-bit shift, so the top k
                                                 bits of each byte come from the next one)
    v    = x + pshufb(T2, hash)                 (wrapping or signed-saturating add)

and checks only one vector in four with two more lookups. If tables T1, T2 existed with
which v lies in 0..63 exactly for the 64 alphabet characters and outside it for all 256
byte values, an OR of a group's v would validate it for free, and a strict decoder would
need two lookups per vector. This script tries every such pair: for each low nibble L,
every T1[L] that keeps the index's bit 7 clear for valid characters whatever the next
byte holds (avg's low 4 bits depend only on bits of x; its bit 7 must not be set by the
junk bits or pshufb would zero the offset), i.e. every distinct way the eight high
nibbles of column L can land in the 16 buckets; then it requires one offset per bucket
(the class of every valid character in it) that keeps every invalid byte in the bucket
outside 0..63. Bytes >= 0x80 get T1 = 0 (pshufb zeroes on the index's bit 7).

Result, for shifts k = 1..4 and both add semantics: no solution. The search stops at low
nibble 10 or 11 (':' ';' '[' '{' next to the digit, upper- and lower-case buckets) for
k = 2 and 3, and at the first column for k = 1 and 4 (their buckets cannot separate the
classes at all). Without the validation constraint the same search finds translation
tables at once (the last line it prints), so the search itself works. So, in this
family, a strict decoder needs the third lookup.
"""
import sys


def offset_class(x):
    """value - character for the 64 characters of the standard alphabet, else None."""
    if 0x41 <= x <= 0x5A:
        return (0 - 0x41) % 256  # 'A'..'Z' -> 0..25
    if 0x61 <= x <= 0x7A:
        return (26 - 0x61) % 256  # 'a'..'z' -> 26..51
    if 0x30 <= x <= 0x39:
        return (52 - 0x30) % 256  # '0'..'9' -> 52..61
    if x == 0x2B:
        return (62 - 0x2B) % 256  # '+'
    if x == 0x2F:
        return (63 - 0x2F) % 256  # '/'
    return None


def signed(v):
    return v - 256 if v > 127 else v


def in_range(x, off, saturating):
    if saturating:
        return 0 <= signed(x) + signed(off) <= 63
    return (x + off) % 256 < 64


def search(k, saturating, validate=True):
    # a + ((0x7A >> k) | junk) + 1 < 256 keeps avg's bit 7 clear for every valid byte
    amax = 254 - ((0x7A >> k) | (0xFF << (8 - k)) & 0xFF)

    def outside(x, off):
        return validate and in_range(x, off, saturating)

    def bucket(a, x):
        return ((a + (x >> k) + 1) >> 1) & 15

    # per low nibble: the distinct bucket maps of its 8 ASCII high nibbles, with one T1
    options = []
    for lo in range(16):
        seen = {}
        for a in range(amax + 1):
            seen.setdefault(tuple(bucket(a, h * 16 + lo) for h in range(8)), a)
        options.append(list(seen.items()))
    high = [(x, bucket(0, x)) for x in range(128, 256)]
    deepest = [0]

    def rec(lo, offsets, invalid, t1):
        deepest[0] = max(deepest[0], lo)
        if lo == 16:
            if any(b in offsets and outside(x, offsets[b]) for x, b in high):
                return None
            return t1, offsets
        for key, a in options[lo]:
            offs, ok, inv = dict(offsets), True, list(invalid)
            for h in range(8):
                x, b = h * 16 + lo, key[h]
                c = offset_class(x)
                if c is None:
                    inv.append((x, b))
                elif offs.setdefault(b, c) != c:
                    ok = False
                    break
            if ok and not any(b in offs and outside(x, offs[b]) for x, b in inv):
                found = rec(lo + 1, offs, inv, t1 + [a])
                if found:
                    return found
        return None

    return rec(0, {}, [], []), deepest[0]


def main():
    for k in (1, 2, 3, 4):
        for saturating in (False, True):
            found, deepest = search(k, saturating)
            add = "adds_epi8" if saturating else "add_epi8"
            if found:
                print(f"k={k} {add}: T1={found[0]} T2 buckets={found[1]}")
            else:
                print(f"k={k} {add}: none (the search reached low nibble {deepest})")
    # The search itself works: without the validation constraint it finds translation
    # tables at once (for k = 3 those of aqrit's loose decoder).
    found, _ = search(3, False, validate=False)
    print(f"k=3 add_epi8, translation only (no validation): T1={found[0] if found else None}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
