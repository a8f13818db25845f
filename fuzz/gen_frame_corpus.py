#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/frame/: valid EMBD frames of every flag combination,
version-2 frames of every dtype (each with every flag combination) and a few broken ones
(one per error class). Deterministic; run from anywhere:
    python3 fuzz/gen_frame_corpus.py
"""
import os
import struct
import zlib

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "frame")


def header(flags, dims, version=1, magic=0x454D4244, pad=0):
    h = struct.pack(">I", magic) + bytes([version, flags]) + struct.pack("<HI", pad, dims)
    return h + struct.pack("<I", zlib.crc32(h))


# docs/FORMAT.md's dtype table: code, name, bits per element
DTYPES = [(0, "f32", 32), (1, "f16", 16), (2, "bf16", 16), (3, "fp8_e4m3", 8),
          (4, "fp8_e5m2", 8), (5, "int8", 8), (6, "uint8", 8), (7, "binary", 1),
          (8, "ubinary", 1)]


def header_v2(flags, dtype, dims, pad7=0):
    h = b"EMBD" + bytes([2, flags, dtype, pad7]) + struct.pack("<I", dims)
    return h + struct.pack("<I", zlib.crc32(h))


def body(payload, flags, level=6):
    """What follows a header (either version): the payload, zlib-compressed behind its
    length (flag 1), then its CRC-32 (flag 2)."""
    if flags & 1:
        z = zlib.compress(payload, level)
        payload = struct.pack("<I", len(z)) + z
    if flags & 2:
        payload += struct.pack("<I", zlib.crc32(payload))
    return payload


def frame_v2(dtype, dims, payload, flags=0, level=6):
    """A version-2 frame of `dims` elements whose little-endian bytes are `payload`."""
    return header_v2(flags, dtype, dims) + body(payload, flags, level)


def dtype_payload(bits, dims, salt=0):
    """Deterministic element bytes for `dims` elements of `bits` bits (NaNs included)."""
    n = dims * bits // 8
    return bytes(((i * 37 + salt * 11) ^ (i >> 1)) & 0xFF for i in range(n))


def frame(vals, flags=0, level=6, raw_payload=None, dims=None):
    payload = raw_payload if raw_payload is not None else b"".join(struct.pack("<f", v) for v in vals)
    dims = len(vals) if dims is None else dims
    return header(flags, dims) + body(payload, flags, level)


def main():
    os.makedirs(OUT, exist_ok=True)
    v3 = [1.0, -2.5, 0.0]
    v16 = [float(i) * 0.25 - 2.0 for i in range(16)]
    nan_bits = struct.pack("<4I", 0x7FC00001, 0xFF800000, 0x00000001, 0x80000000)
    seeds = {
        "known_3dims": frame(v3),
        "empty": frame([]),
        "dims16_crc": frame(v16, 2),
        "dims16_zlib": frame(v16, 1),
        "dims16_zlib_crc": frame(v16, 3, 9),
        "dims3_zlib_crc": frame(v3, 3),
        "specials": header(0, 4) + nan_bits,
        "specials_crc": frame(None or [], 2, raw_payload=nan_bits, dims=4),
        "bad_magic": header(0, 0, magic=0x454D4245),
        "bad_version": header(0, 0, version=2),
        "bad_padding": header(0, 0, pad=1),
        "unknown_flags": header(4, 0),
        "header_crc": frame(v3)[:12] + b"\0\0\0\0" + frame(v3)[16:],
        "truncated": frame(v3)[:-1],
        "too_small": frame(v3)[:15],
        "trailing": frame(v3) + b"\0",
        "zlib_trailing": header(1, 4) + struct.pack("<I", len(zlib.compress(b"\0" * 16)) + 2)
        + zlib.compress(b"\0" * 16) + b"\1\2",
        "zlib_bomb": frame([], 1, 9, raw_payload=b"\0" * 65536, dims=4),
        "zlib_short": frame([], 1, 9, raw_payload=b"\0" * 12, dims=4),
        "payload_crc_bad": frame(v3, 2)[:-1] + b"\xff",
    }
    for code, name, bits in DTYPES:
        dims = 16
        for flags in range(4):
            seeds["v2_%s_%d" % (name, flags)] = frame_v2(code, dims, dtype_payload(bits, dims, code), flags)
        seeds["v2_%s_empty" % name] = frame_v2(code, 0, b"")
    seeds["v2_bad_dtype"] = header_v2(0, 9, 0)
    seeds["v2_bad_pad7"] = header_v2(0, 5, 0, pad7=1)
    seeds["v2_packed_dims"] = header_v2(0, 8, 12) + b"\0\0"
    seeds["v2_f16_truncated"] = frame_v2(1, 4, b"\0" * 8)[:-1]
    seeds["v2_int8_zlib_f32_size"] = frame_v2(5, 4, b"\0" * 16, 1)[:16] + frame_v2(5, 16, b"\0" * 16, 1)[16:]
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(seeds)} files to {OUT}")


if __name__ == "__main__":
    main()
