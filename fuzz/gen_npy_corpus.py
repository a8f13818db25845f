#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/npy/ (deterministic; python3 stdlib only).

An input is a whole .npy file, as `embd encode` reads it (fuzz_npy.c). The seeds: headers
as numpy writes them (versions 1.0, 2.0 and 3.0; '<f4', '>f4', '<f8', '>f8'; 2-D, 1-D,
empty; Fortran order with one row) with a few data elements, and broken ones: the
18-byte header whose dtype scan ran past its buffer (issue 11), a cut header, a NUL
inside it, keys twice, unknown keys, (N) instead of (N,), leading zeros, a scalar shape,
too many dims, a huge shape, an unsupported dtype with control characters, a version 4.

    python3 fuzz/gen_npy_corpus.py     # rewrites fuzz/corpus/npy/
"""
import os
import sys
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_corpus import write_corpus  # noqa: E402
MAGIC = b"\x93NUMPY"


def npy(d, major=1, data=b"", pad=True):
    text = d.encode("latin-1")
    pre = 10 if major == 1 else 12
    if pad:
        total = pre + len(text) + 1
        text += b" " * ((-total) % 64) + b"\n"
    ln = struct.pack("<H", len(text)) if major == 1 else struct.pack("<I", len(text))
    return MAGIC + bytes([major, 0]) + ln + text + data


def main():
    f4 = struct.pack("<6f", 1.0, -2.5, 3.25, 0.0, -0.0, 1e-45)
    f8 = struct.pack("<4d", 1.0, -2.5, 3.5e38, 1e300)
    seeds = {
        "f4_2x3": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", data=f4),
        "f4be_2x3": npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }",
                        data=struct.pack(">6f", 1, 2, 3, 4, 5, 6)),
        "f8_2x2": npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", data=f8),
        "f8be_1d": npy("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }",
                       data=struct.pack(">2d", 1.5, -1e-300)),
        "f4_1d": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", data=f4[:12]),
        "f4_0x8": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 8), }"),
        "f4_fortran_1row": npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 3), }", data=f4[:12]),
        "v2": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }", major=2, data=f4[:8]),
        "v3": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }", major=3, data=f4[:8]),
        "dquote_keys": npy('{"descr": "<f4", "fortran_order": False, "shape": (1, 1)}', data=f4[:4]),
        "no_trailing_comma": npy("{'descr':'<f4','fortran_order':False,'shape':(2,3)}", data=f4),
        "key_order": npy("{'shape': (1, 2), 'fortran_order': False, 'descr': '<f4', }", data=f4[:8]),
        # broken
        "overread_issue11": bytes.fromhex("934e554d50590100080027646573637227 3a"),
        "cut_header": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }")[:40],
        "nul_inside": npy("{'descr': '<f4\x00', 'fortran_order': False, 'shape': (2, 3), }"),
        "descr_twice": npy("{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }",
                           data=f8[:8]),
        "shape_twice": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), 'shape': (2, 1)}"),
        "unknown_key": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), 'x': 1}"),
        "shape_not_tuple": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3), }"),
        "shape_leading_zero": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (03,), }"),
        "shape_scalar": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (), }"),
        "shape_3d": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }"),
        "shape_huge": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 3), }"),
        "shape_big": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967295), }"),
        "dtype_i4_ctrl": npy("{'descr': '<i4\x1b[31m', 'fortran_order': False, 'shape': (1, 1), }"),
        "fortran_bad": npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1, 1), }"),
        "text_after": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), } x"),
        "no_newline": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }", pad=False),
        "version4": MAGIC + b"\x04\x00" + b"\x10\x00\x00\x00" + b"{" * 16,
        "v2_len_huge": MAGIC + b"\x02\x00" + b"\xff\xff\xff\x7f",
        "not_npy": b"\x93NUMPX\x01\x00",
        "empty": b"",
    }
    assert seeds["overread_issue11"] == bytes([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x08, 0x00,
                                               0x27, 0x64, 0x65, 0x73, 0x63, 0x72, 0x27, 0x3a])
    write_corpus("npy", seeds)


if __name__ == "__main__":
    main()
