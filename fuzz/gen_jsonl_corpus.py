#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/jsonl/ (deterministic; python3 stdlib only).

Layout of an input, as fuzz_jsonl.c reads it: byte 0 = options (bits 0-1: the
--max-record choice: 0 default, 1: 1 + byte 1, 2: 64 + 16 * byte 1, 3: unlimited; bit 2:
--dims = byte 2), byte 1 = the max-record parameter, byte 2 = the dims, then the JSON lines
text. The seeds: good files (blank lines, white space, CRLF, no final newline, float32
edge values, exponents, long digit strings), every error the reader reports (a line not
starting with '[', NUL bytes, null, NaN, a number beyond float32, leading zeros, a dot
without digits, missing commas, text after the array, dims that change, --dims), and lines
over a small --max-record, with the offending byte first and after white space.

    python3 fuzz/gen_jsonl_corpus.py     # rewrites fuzz/corpus/jsonl/
"""
import os
import sys
import random

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gen_corpus import write_corpus  # noqa: E402


def seed(text, maxsel=0, maxpar=0, dims=None):
    b0 = maxsel | (4 if dims is not None else 0)
    return bytes([b0, maxpar, dims or 0]) + (text if isinstance(text, bytes) else text.encode())


def main():
    rng = random.Random(0x150A1)
    vecs = "".join("[" + ",".join("%.9g" % rng.uniform(-2, 2) for _ in range(8)) + "]\n"
                   for _ in range(16))
    seeds = {
        "good_16x8": seed(vecs),
        "good_dims": seed("[1,2,3]\n[4,5,6]\n", dims=3),
        "good_ws": seed("\n [ 1 , 2 ]\r\n\n[3,4]  \n\t\n"),
        "good_no_final_newline": seed("[1.5,-2]\n[0,1e-45]"),
        "good_edges": seed("[3.4028234663852886e38,-3.4028234e38,1.17549435e-38,1e-46,-0,0.0]\n"),
        "good_exponents": seed("[1E5,1e+5,1e-5,-2.5E-3,0e0]\n"),
        "good_long_digits": seed("[" + "1" * 38 + "," + "9" * 39 + ".5" + "," + "0." + "3" * 60 + "]\n"),
        "good_empty_arrays": seed("[]\n[ ]\n"),
        "good_bound": seed("[1,2,3]\n[4,5,6]\n", maxsel=1, maxpar=6),
        "empty": seed(""),
        "bad_not_bracket": seed("{\"a\": 1}\n"),
        "bad_zeros": seed(b"\x00" * 64),
        "bad_ws_then_x": seed("   \t x" + " " * 100),
        "bad_null": seed("[1,null]\n"),
        "bad_nan": seed("[NaN]\n"),
        "bad_inf": seed("[1,1e39]\n"),
        "bad_inf_long": seed("[" + "9" * 40 + "]\n"),
        "bad_leading_zero": seed("[01]\n"),
        "bad_dot": seed("[1.]\n"),
        "bad_hex": seed("[0x10]\n"),
        "bad_comma": seed("[1 2]\n"),
        "bad_trailing_comma": seed("[1,2,]\n"),
        "bad_after": seed("[1,2] x\n"),
        "bad_unterminated": seed("[1,2\n"),
        "bad_dims_change": seed("[1,2]\n[1,2,3]\n"),
        "bad_want_dims": seed("[1,2]\n", dims=3),
        "bad_ctrl": seed("[1,\x1b[31m]\n"),
        "bad_utf8": seed("[1,\xe2\x82\xac]\n".encode("latin-1")),
        "over_bound": seed("[1,2,3,4,5,6,7,8,9]\n", maxsel=1, maxpar=8),
        "over_bound_ws": seed(" " * 300 + "[1]\n", maxsel=2, maxpar=10),
        "over_bound_last": seed("[1]\n[1,2,3,4,5,6,7,8,9,10,11,12]", maxsel=1, maxpar=16),
        "unlimited": seed("[" + ",".join(["1.25"] * 200) + "]\n", maxsel=3),
    }
    write_corpus("jsonl", seeds)


if __name__ == "__main__":
    main()
