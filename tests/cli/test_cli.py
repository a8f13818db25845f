#!/usr/bin/env python3
"""Tests of the embd command-line tool: each subcommand on good and bad input, output,
message substrings and exit codes. Run by ctest (tests/CMakeLists.txt, label cli):

    test_cli.py EMBD_EXECUTABLE GROUP      GROUP: help cpu encode decode inspect verify
                                                  openai openai_dtype npy roundtrip big
                                                  tokens bench stream faults dtype_frames
                                                  formats | all
The numpy checks (group npy, partly roundtrip and dtype_frames) are skipped, with a
message, when numpy cannot be imported (Debian: python3-numpy)."""
import base64
import json
import os
import platform
import random
import struct
import subprocess
import sys
import zlib

import cli_harness
from cli_harness import check, expect, path, read, run, write

OPENAI = True  # False when the library was built with EMBD_WITH_OPENAI=OFF

try:
    import numpy as np
except ImportError:  # a pyenv/venv python without numpy: Debian's python3-numpy, same ABI
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import numpy as np
    except Exception:  # noqa: BLE001
        np = None


# ---- an independent EMBD encoder (docs/FORMAT.md), the oracle ---------------------------
def frame(vec, flags=0):
    payload = struct.pack("<%df" % len(vec), *vec)
    if flags & 1:
        z = zlib.compress(payload)
        payload = struct.pack("<I", len(z)) + z
    h = b"EMBD" + bytes([1, flags, 0, 0]) + struct.pack("<I", len(vec))
    h += struct.pack("<I", zlib.crc32(h))
    out = h + payload
    if flags & 2:
        out += struct.pack("<I", zlib.crc32(payload))
    return out


def batch(vecs, flags=0):
    return struct.pack("<I", len(vecs)) + b"".join(frame(v, flags) for v in vecs)


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def rand_vecs(n, d, seed=1):
    r = random.Random(seed)
    return [[f32(r.uniform(-2, 2)) for _ in range(d)] for _ in range(n)]


def jsonl(vecs):
    return "".join("[" + ",".join(repr(x) for x in v) + "]\n" for v in vecs)


def parse_jsonl(out):
    """The vectors of JSON lines output, each number read as the nearest float32 (the
    shortest text that round-trips through float32 need not round-trip through double)."""
    return [[x if x is None else f32(x) for x in json.loads(line)]
            for line in out.decode().splitlines() if line.strip()]


# ---- groups ------------------------------------------------------------------------------
def t_help():
    expect(["--help"], 0, out_has=["Commands:", "encode", "decode", "inspect", "verify",
                                   "openai", "cpu", "Exit status", "Examples"])
    expect(["--version"], 0, out_has=["embd 0."])
    for c in ["encode", "decode", "inspect", "verify", "openai", "cpu"]:
        out, _ = expect([c, "--help"], 0, out_has=["Usage: embd " + c, "Example"])
        expect(["help", c], 0, out_has=["Usage: embd " + c])
    # every command `embd --help` lists answers --help (no stubs: listed means built)
    out, _ = expect(["--help"], 0)
    text = out.decode()
    listed = [l.split()[0] for l in text.split("Commands:\n", 1)[1].split("\n\n", 1)[0].splitlines()]
    check(len(listed) >= 6, "--help lists the commands: %s" % listed)
    for c in listed:
        expect([c, "--help"], 0, out_has=["Usage: embd " + c])
    expect([], 2, err_has=["Usage: embd"])
    expect(["frobnicate"], 2, err_has=["unknown command 'frobnicate'"])
    expect(["decode", "--bogus"], 2, err_has=["Try 'embd decode --help'"])
    expect(["decode", "--to", "xml"], 2, err_has=["--to: 'xml'"])
    expect(["encode", "--level", "12", "x"], 2, err_has=["--level"])
    expect(["encode", "--from", "raw", "-"], 2, err_has=["needs --dims"])
    expect(["cpu"], 2, env={"EMBD_ISA": "bogus"}, err_has=["EMBD_ISA=bogus"])
    # a forced tier whose features are masked is refused, not run as a lower tier
    expect(["cpu"], 2, env={"EMBD_ISA": "avx2,-bmi2"}, err_has=["EMBD_ISA=avx2,-bmi2"])


def t_cpu():
    out, _ = expect(["cpu"], 0, out_has=["cpu features:", "kernels:", "crc32", "bswap32",
                                         "base64-decode", "base64-encode", "<- active",
                                         "scalar", "runnable"])
    text = out.decode()
    check(text.count("<- active") == 6, "cpu: one active implementation per kernel")
    check(text.count("active: ") == 6, "cpu: the active line per kernel")
    out, _ = expect(["cpu"], 0, env={"EMBD_ISA": "scalar"}, out_has=["EMBD_ISA:     scalar"])
    text = out.decode()
    check(text.count("active: scalar") == 6, "cpu: EMBD_ISA=scalar makes every kernel scalar:\n" + text)
    check("not runnable" in text or "avx" not in text, "cpu: masked implementations are not runnable")
    runnable = [l.split() for l in text.splitlines() if l.endswith("runnable") or "<- active" in l]
    runnable = [l for l in runnable if "not" not in l]
    check(all(l[1] == "tier" and l[2] == "scalar" for l in runnable),
          "cpu: under EMBD_ISA=scalar only tier-scalar code is runnable:\n" + text)
    # The emulations (another ISA's kernel through simde, for the tests) are no choice:
    # listed only with --emulated, and marked there (issue 31).
    out, _ = expect(["cpu"], 0)
    plain = out.decode().splitlines()
    check(not any("-simde" in l or "emulated" in l for l in plain),
          "cpu: no emulated rows by default:\n" + "\n".join(plain))
    out, _ = expect(["cpu", "--emulated"], 0)
    full = out.decode().splitlines()
    emu = [l for l in full if "-simde" in l]
    check(all(l.endswith("emulated (for tests, never picked)") for l in emu),
          "cpu --emulated: every simde row marked:\n" + "\n".join(emu))
    check([l for l in full if l not in emu] == plain,
          "cpu --emulated: the other lines as without it:\n" + "\n".join(full))
    check(not any(l.endswith("emulated (for tests, never picked)") for l in full if l not in emu),
          "cpu --emulated: only the simde rows marked")
    if platform.machine() in ("x86_64", "AMD64"):
        check(len(emu) > 0, "cpu --emulated: the x86 build lists its simde rows")


def t_encode():
    vecs = [[1.0, 2.5, -3.0], [0.1, 1e-45, 3.4028234663852886e38], [-0.0, 0.0, 7.0]]
    vecs = [[f32(x) for x in v] for v in vecs]
    src = write("a.jsonl", jsonl(vecs))
    expect(["encode", src, "-o", path("a.embd")], 0)
    check(read("a.embd") == batch(vecs), "encode jsonl: byte-identical to the reference batch")
    for fl, opts in [(1, ["--compress"]), (2, ["--payload-crc"]), (3, ["-z", "-c"])]:
        out, _ = expect(["encode", src] + opts, 0, name="encode " + " ".join(opts))
        if fl & 1:  # zlib streams may differ by level/strategy: decode and compare
            check(len(out) > 4 and out[9] == fl, "encode %s: flags byte %d" % (opts, fl))
            o2, _ = expect(["decode", "-"], 0, stdin=out)
            check(parse_jsonl(o2) == vecs, "encode %s: decodes back" % opts)
        else:
            check(out == batch(vecs, fl), "encode %s: byte-identical" % opts)
    # stdin, auto-detection by content
    out, _ = expect(["encode"], 0, stdin=jsonl(vecs).encode(), name="encode jsonl stdin")
    check(out == batch(vecs), "encode jsonl from stdin")
    # blank lines, whitespace
    out, _ = expect(["encode", "--from", "jsonl"], 0, stdin=b"\n [ 1 , 2 ]\r\n\n[3,4]  \n")
    check(out == batch([[1, 2], [3, 4]]), "encode: whitespace and blank lines")
    # raw
    raw = b"".join(struct.pack("<%df" % len(v), *v) for v in vecs)
    rp = write("a.f32", raw)
    out, _ = expect(["encode", "--dims", "3", rp], 0)
    check(out == batch(vecs), "encode raw file")
    out, _ = expect(["encode", "--from", "raw", "--dims", "3"], 0, stdin=raw)
    check(out == batch(vecs), "encode raw stdin")
    expect(["encode", "--dims", "4", rp], 1, err_has=["not a whole number of 4-dims", "left over"])
    expect(["encode", "--from", "raw", "--dims", "4"], 1, stdin=raw, err_has=["left over"])
    # bad JSON lines: line:column
    bad = [
        (b"[1,2]\n[1,x]\n", ["<stdin>:2:4:", "expected a number"]),
        (b"[1,2]\n[1,2,3]\n", ["<stdin>:2:1:", "3 values, line 1 had 2"]),
        (b"[1,null]\n", ["1:4:", "null is not a number"]),
        (b"[1,1e39]\n", ["1:4:", "beyond the float32 range"]),
        (b"[1,2\n", ["unexpected end of line"]),
        (b"[1,2] x\n", ["1:7:", "unexpected text after the array"]),
        (b"[01]\n", ["1:2:"]),
        (b"[1.]\n", ["1:2:"]),
        (b"[NaN]\n", ["1:2:"]),
        (b"[1 2]\n", ["1:4:", "expected ',' or ']'"]),
    ]
    if OPENAI:  # a JSON object: auto-detected as an OpenAI response, not a valid one
        bad.append((b"{\"a\":1}\n", ["<stdin>: ", "data"]))
    for data, subs in bad:
        expect(["encode"], 1, stdin=data, err_has=subs, name="encode bad %r" % data)
    expect(["encode", "--from", "jsonl"], 1, stdin=b"1,2\n", err_has=["1:1:", "expected '['"])
    expect(["encode", "--dims", "3", "--from", "jsonl"], 1, stdin=b"[1,2]\n", err_has=["--dims is 3"])
    # empty input
    expect(["encode"], 1, stdin=b"", err_has=["empty"])
    out, _ = expect(["encode", "--from", "jsonl"], 0, stdin=b"")
    check(out == struct.pack("<I", 0), "encode: empty jsonl is an empty batch")
    expect(["encode", "--from", "raw", "--dims", "2"], 0, stdin=b"")
    expect(["encode"], 2, stdin=b"garbage", err_has=["cannot tell the input format"])
    # I/O errors
    expect(["encode", path("missing.jsonl")], 3, err_has=["missing.jsonl: cannot open"])
    expect(["encode", src, "-o", path("nodir/x.embd")], 3, err_has=["cannot open for writing"])
    # a failed encode leaves no output file behind
    expect(["encode", "--from", "jsonl", "-o", path("fail.embd")], 1, stdin=b"[1]\n[x]\n")
    check(not os.path.exists(path("fail.embd")), "encode: failed output removed")


def t_decode():
    vecs = rand_vecs(20, 7)
    b = write("d.embd", batch(vecs))
    out, _ = expect(["decode", b], 0)
    check(parse_jsonl(out) == vecs, "decode: values exact through shortest round-trip text")
    # shortest form
    out, _ = expect(["decode"], 0, stdin=batch([[f32(0.1), 1.0, -0.0, f32(1e-45), 3.4028234663852886e38, 100.0, 1e6, 123456.0, f32(1.5e-5)]]))
    check(out == b"[0.1,1,-0,1e-45,3.4028235e+38,100,1e+06,123456,1.5e-05]\n", "decode: shortest forms: %r" % out)
    for fl in (1, 2, 3):
        out, _ = expect(["decode", "-"], 0, stdin=batch(vecs, fl))
        check(parse_jsonl(out) == vecs, "decode flags %d" % fl)
    # stream
    s = b"".join(frame(v, 2) for v in vecs)
    out, _ = expect(["decode", "--stream"], 0, stdin=s)
    check(parse_jsonl(out) == vecs, "decode --stream")
    expect(["decode"], 1, stdin=s, err_has=["try --stream"])
    # raw
    out, _ = expect(["decode", "--to", "raw", "-o", path("d.f32"), b], 0)
    check(read("d.f32") == b"".join(struct.pack("<7f", *v) for v in vecs), "decode --to raw")
    # NaN / inf -> null + one warning
    out, err = expect(["decode"], 0, stdin=batch([[float("nan"), float("inf"), 1.0], [float("-inf"), 0, 0]]),
                      err_has=["warning", "null"])
    check(out == b"[null,null,1]\n[null,0,0]\n", "decode: non-finite as null: %r" % out)
    check(err.count("warning: frame") == 1, "decode: warns once per run with the place")
    out, _ = expect(["decode", "--to", "raw"], 0, stdin=batch([[float("nan")]]))
    check(out == struct.pack("<f", float("nan")), "decode --to raw keeps NaN bits")
    # mixed dims: fine for jsonl, not for raw/npy
    mixed = batch([[1, 2], [1, 2, 3]])
    out, _ = expect(["decode"], 0, stdin=mixed)
    check(out == b"[1,2]\n[1,2,3]\n", "decode: mixed dims to jsonl")
    expect(["decode", "--to", "raw"], 1, stdin=mixed, err_has=["frame 1 at byte", "has 3 dims"])
    expect(["decode", "--dims", "2"], 1, stdin=mixed, err_has=["frame 1 at byte"])
    # bad input
    good = batch(vecs)
    corrupt = bytearray(good)
    corrupt[4 + 2 * 44 + 13] ^= 1  # frame 2's header CRC
    write("bad.embd", bytes(corrupt))
    expect(["decode", path("bad.embd")], 1,
           err_has=["embd decode: " + path("bad.embd") + ": frame 2 at byte 92", "CRC"])
    expect(["decode"], 1, stdin=good[:-3], err_has=["truncated"])
    # the same from regular files (read to their end, then the decoder's finish)
    write("cut.embd", good[:-3])
    expect(["decode", path("cut.embd")], 1, err_has=["cut.embd: frame 19 at byte", "truncated"])
    expect(["verify", path("cut.embd")], 1, err_has=["truncated"])
    write("short.embd", batch(vecs[:3])[:4] + good[4:4 + 2 * 44])  # count 3, two frames
    expect(["decode", "--to", "raw", path("short.embd")], 1, err_has=["short.embd:"])
    write("tail.embd", good + b"\0\0")
    expect(["decode", path("tail.embd")], 1, err_has=["tail.embd:", "after"])
    expect(["decode"], 1, stdin=b"", err_has=["embd decode: <stdin>:"])
    expect(["decode"], 1, stdin=b"hello world, not a frame", err_has=["frame 0 at byte 4"])
    expect(["decode"], 1, stdin=good + b"x", err_has=["after"])
    expect(["decode", "--max-dims", "4"], 1, stdin=good, err_has=["frame 0", "--max-dims"])
    pay = bytearray(batch(vecs, 2))
    pay[4 + 20] ^= 0x40
    expect(["decode"], 1, stdin=bytes(pay), err_has=["frame 0 at byte", "payload CRC"])
    expect(["decode", path("nope.embd")], 3, err_has=["cannot open"])


def t_inspect():
    vecs = rand_vecs(3, 4)
    b = write("i.embd", batch(vecs, 2) )
    out, _ = expect(["inspect", b], 0, out_has=[
        "batch count 3", "frame 0 at byte 4: magic ok, version 1, flags 0x02 (payload-crc), dims 4",
        "header crc 0x", ") ok", "payload crc 0x", "size 36", "frame 2 at byte 76",
        "summary: 3 frames, 112 bytes", "dims: 4 x3", "flags: payload-crc x3"])
    out, _ = expect(["inspect", "-"], 0, stdin=batch(vecs, 1) + b"", out_has=["compressed ", "zlib"])
    out, _ = expect(["inspect", "--summary", "--stream"], 0,
                    stdin=frame([1, 2]) + frame([1, 2, 3], 3) + frame([5, 6]),
                    out_has=["summary: 3 frames", "dims: 2 x2, 3 x1", "none x2", "zlib,payload-crc x1"])
    check(b"frame 0" not in out, "inspect --summary prints only the summary")
    bad = bytearray(batch(vecs))
    bad[4 + 32 + 12] ^= 0xff  # frame 1's stored header CRC
    out, err = expect(["inspect"], 1, stdin=bytes(bad), out_has=["MISMATCH", "INVALID", "summary: 1 frames"],
                      err_has=["frame 1 at byte 36: header CRC"])
    for c in ("verify", "decode"):  # the same place from the streaming decoder
        expect([c], 1, stdin=bytes(bad), err_has=["embd %s: <stdin>: frame 1 at byte 36: header CRC mismatch" % c])
    bad = bytearray(batch(vecs))
    bad[4 + 32] = ord("X")
    expect(["inspect"], 1, stdin=bytes(bad), out_has=["magic BAD"], err_has=["frame 1 at byte 36", "magic"])
    expect(["inspect"], 1, stdin=batch(vecs)[:-1], err_has=["frame 2 at byte", "truncated"])
    expect(["inspect"], 1, stdin=b"", err_has=["empty"])
    expect(["inspect"], 1, stdin=b"\x05\x00\x00\x00", err_has=["frame 0 at byte 4", "truncated"])
    expect(["inspect"], 1, stdin=batch(vecs) + b"zz", err_has=["after the last of the 3 frames, from byte 100"])
    expect(["inspect", "-m", "2"], 1, stdin=batch(vecs), err_has=["frame 0"])


def t_verify():
    vecs = rand_vecs(5, 3)
    good = write("v.embd", batch(vecs, 3))
    expect(["verify", good], 0, out_has=["ok: 5 frames, 15 values"])
    out, _ = expect(["verify", "-q", good], 0)
    check(out == b"", "verify -q is quiet")
    expect(["verify", "--stream"], 0, stdin=b"".join(frame(v) for v in vecs))
    expect(["verify", "--stream"], 0, stdin=b"")
    expect(["verify", "--dims", "4", good], 1, err_has=["frame 0 at byte 4"])
    # corrupted zlib stream inside a frame: found by inflating (no payload CRC here)
    z = bytearray(batch(vecs, 1))
    z[4 + 20 + 2] ^= 0xff
    expect(["verify"], 1, stdin=bytes(z), err_has=["frame 0 at byte"])
    for cut in (1, 3, 10, 30):
        expect(["verify"], 1, stdin=batch(vecs)[:-cut], err_has=["truncated"], name="verify cut %d" % cut)
    bad = bytearray(batch(vecs))
    bad[4 + 3 * 28 + 4] = 2  # frame 3's version
    write("bad.embd", bytes(bad))
    expect(["verify", good, path("bad.embd")], 1,
           err_has=["embd verify: " + path("bad.embd") + ": frame 3 at byte 88"])
    expect(["verify"], 1, stdin=b"not a frame at all, really", err_has=["frame 0 at byte 4"])
    expect(["verify"], 1, stdin=b"", err_has=["<stdin>"])
    expect(["verify", path("absent")], 3, err_has=["cannot open"])


def openai_body(vecs, b64=False, order=None):
    order = order or list(range(len(vecs)))
    items = []
    for i in order:
        emb = base64.b64encode(struct.pack("<%df" % len(vecs[i]), *vecs[i])).decode() if b64 else vecs[i]
        items.append({"object": "embedding", "index": i, "embedding": emb})
    return json.dumps({"object": "list", "data": items, "model": "text-embedding-3-small",
                       "usage": {"prompt_tokens": 5, "total_tokens": 5}})


def t_openai():
    vecs = rand_vecs(4, 6, seed=3)
    if not OPENAI:
        print("SKIP: the openai checks (built with EMBD_WITH_OPENAI=OFF); checking exit 4 only")
        expect(["openai"], 4, stdin=openai_body(vecs).encode())
        return
    for b64 in (False, True):
        body = openai_body(vecs, b64, order=[2, 0, 3, 1]).encode()
        out, _ = expect(["openai"], 0, stdin=body)
        check(parse_jsonl(out) == vecs, "openai b64=%s: jsonl in input order" % b64)
        out, _ = expect(["openai", "--to", "embd"], 0, stdin=body)
        check(out == batch(vecs), "openai --to embd b64=%s" % b64)
        out, _ = expect(["openai", "--to", "raw"], 0, stdin=body)
        check(out == b"".join(struct.pack("<6f", *v) for v in vecs), "openai --to raw")
        out, _ = expect(["encode"], 0, stdin=body)
        check(out == batch(vecs), "encode auto-detects an openai response b64=%s" % b64)
    p1 = write("p1.json", openai_body(vecs[:2]))
    p2 = write("p2.json", openai_body(vecs[2:], True))
    out, err = expect(["openai", "-v", p1, p2], 0, err_has=["text-embedding-3-small", "4 vectors of 6 dims"])
    check(parse_jsonl(out) == vecs, "openai: two responses stitched in order")
    out, _ = expect(["openai", "--to", "embd", "-c"], 0, stdin=openai_body(vecs).encode())
    check(out == batch(vecs, 2), "openai --to embd --payload-crc")
    expect(["openai", "-c"], 2, stdin=b"{}", err_has=["need --to embd"])
    expect(["openai"], 1, stdin=b'{"data": [{"index": 0, "embedding": [1, "x"]}]}',
           err_has=["data[0].embedding[1]", "body byte"])
    expect(["openai"], 1, stdin=b'{"data": [{"index": 0, "embedding": "AAA*"}]}', err_has=["base64"])
    expect(["openai"], 1, stdin=b'{"data": [', err_has=["<stdin>:"])
    expect(["openai"], 1, stdin=b"", err_has=["<stdin>:"])
    expect(["openai", "--dims", "5"], 1, stdin=openai_body(vecs).encode(), err_has=["--dims is 5"])
    expect(["openai", path("gone.json")], 3, err_has=["cannot open"])


def t_openai_dtype():
    """embd openai --dtype / --byte-order / --metadata / --metadata-json / --bytes-only:
    each server shape decoded to the float32 values Python's struct gives (half floats
    with 'e', bfloat16 as the upper half of a float32), packed bits msb first."""
    if not OPENAI:
        print("SKIP: the openai dtype checks (built with EMBD_WITH_OPENAI=OFF)")
        expect(["openai", "--dtype", "f16"], 4, stdin=b'{"data": []}')
        return
    rng = random.Random(13)
    halves = [[rng.choice([0.5, -1.25, 3.0, 65504.0, 2.0 ** -24, -0.0, 1000.0]) for _ in range(6)] for _ in range(3)]
    raw_f32 = b"".join(struct.pack("<6f", *v) for v in halves)
    for order, fmt in (("little", "<6e"), ("big", ">6e")):
        body = b"".join(struct.pack(fmt, *v) for v in halves)
        endian = order
        items = [{"index": i, "embed_dtype": "float16", "endianness": endian, "start": 12 * i,
                  "end": 12 * (i + 1), "shape": [6]} for i in (2, 0, 1)]
        meta = json.dumps({"id": "embd-1", "created": 1, "model": "e5", "data": items,
                           "usage": {"prompt_tokens": 3, "total_tokens": 3}})
        bp = write("v-%s.bin" % order, body)
        mp = write("v-%s.json" % order, meta)
        out, _ = expect(["openai", "--dtype", "float16", "--byte-order", order, "--metadata", mp, "--to", "raw", bp], 0)
        check(out == raw_f32, "openai --metadata f16 %s: the values" % order)
        out, _ = expect(["openai", "--dtype", "f16", "--byte-order", order, "--metadata-json", meta, "--to", "raw",
                         bp], 0)
        check(out == raw_f32, "openai --metadata-json f16 %s" % order)
        out, _ = expect(["openai", "--dtype", "f16", "--byte-order", order, "--bytes-only", "--dims", "6",
                         "--to", "raw"], 0, stdin=body)
        check(out == raw_f32, "openai --bytes-only f16 %s" % order)
        b64 = {"object": "list", "model": "e5", "data": [
            {"index": i, "object": "embedding", "embedding": base64.b64encode(body[12 * i:12 * i + 12]).decode()}
            for i in range(3)]}
        out, _ = expect(["openai", "--dtype", "f16", "--byte-order", order, "--to", "raw"], 0,
                        stdin=json.dumps(b64).encode())
        check(out == raw_f32, "openai base64 f16 %s" % order)
        # --keep-dtype: the halves themselves, little-endian whatever the wire order
        out, _ = expect(["openai", "--dtype", "f16", "--byte-order", order, "--keep-dtype", "--to", "raw"], 0,
                        stdin=json.dumps(b64).encode())
        check(out == b"".join(struct.pack("<6e", *v) for v in halves),
              "openai --keep-dtype f16 %s: the wire halves, little-endian" % order)
    # the asked order differs from the metadata's
    expect(["openai", "--dtype", "f16", "--byte-order", "big", "--metadata", path("v-little.json"),
            path("v-little.bin")], 1, err_has=["v-little.json: data[0].endianness: little, but big was asked",
                                               "metadata byte"])
    expect(["openai", "--dtype", "bf16", "--metadata", path("v-little.json"), path("v-little.bin")], 1,
           err_has=["embed_dtype: f16, but bf16 was asked"])
    expect(["openai", "--dtype", "f16", "--bytes-only", "--dims", "5"], 1, stdin=b"\0" * 12,
           err_has=["not a whole number of 5-dim f16 vectors"])
    # bfloat16 big-endian bytes_only: the upper halves of float32s
    f = [1.5, -2.0, 3.140625, 1e-3]
    bf = b"".join(struct.pack(">f", x)[:2] for x in f)
    out, _ = expect(["openai", "--dtype", "bf16", "--byte-order", "big", "--bytes-only", "--dims", "2", "--to", "raw"],
                    0, stdin=bf)
    check(out == b"".join(struct.pack("<f", struct.unpack(">f", struct.pack(">f", x)[:2] + b"\0\0")[0]) for x in f),
          "openai --bytes-only bf16 big: the upper halves")
    # Cohere embeddings by type: int8, uint8, binary, ubinary lists
    cohere = {"id": "c", "embeddings": {"float": [[0.5, 1.5]], "int8": [[-128, 127]], "uint8": [[0, 255]],
                                        "binary": [[-127]], "ubinary": [[129]]},  # -127 = packed 0x01 - 128
              "texts": ["a"], "meta": {"api_version": {"version": "2"}}, "response_type": "embeddings_by_type"}
    cb = json.dumps(cohere).encode()
    for dt, want in (("f32", [0.5, 1.5]), ("int8", [-128, 127]), ("uint8", [0, 255]),
                     ("binary", [-1, -1, -1, -1, -1, -1, -1, 1]), ("ubinary", [1, 0, 0, 0, 0, 0, 0, 1])):
        out, _ = expect(["openai", "--dtype", dt], 0, stdin=cb)
        check(parse_jsonl(out) == [want], "openai cohere --dtype %s: %r" % (dt, out[:80]))
    # kept in the wire dtype: int8 bytes, and packed bits as their bytes (binary's XOR 0x80)
    out, _ = expect(["openai", "--dtype", "int8", "--keep-dtype", "--to", "raw"], 0, stdin=cb)
    check(out == bytes([0x80, 0x7f]), "openai cohere int8 --keep-dtype: %r" % out)
    out, _ = expect(["openai", "--dtype", "binary", "--keep-dtype", "--to", "raw"], 0, stdin=cb)
    check(out == bytes([0x81]), "openai cohere binary --keep-dtype: the offset-binary byte: %r" % out)
    expect(["openai", "--dtype", "f16"], 1, stdin=cb, err_has=["no \"f16\" list", "the keys are: float, int8"])
    # Voyage/Mistral integer lists, llama.cpp's per-item encoding_format
    expect(["openai", "--dtype", "int8"], 1, stdin=b'{"data":[{"index":0,"embedding":[1,0.5]}]}',
           err_has=["data[0].embedding[1]: 0.5 is not an integer (the response is not int8)"])
    expect(["openai", "--dtype", "uint8"], 1, stdin=b'{"data":[{"index":0,"embedding":[256]}]}',
           err_has=["256 is out of the uint8 range 0..255"])
    llama = {"model": "m", "object": "list", "data": [
        {"embedding": base64.b64encode(struct.pack("<2f", 1.0, -2.5)).decode(), "index": 0, "object": "embedding",
         "encoding_format": "base64"}]}
    out, _ = expect(["openai"], 0, stdin=json.dumps(llama).encode())
    check(parse_jsonl(out) == [[1.0, -2.5]], "openai llama.cpp base64 with encoding_format in the item")
    # usage errors
    expect(["openai", "--dtype", "f17"], 2, err_has=["--dtype: 'f17' is not a dtype (f32, f16"])
    expect(["openai", "--byte-order", "native"], 2, err_has=["--byte-order: 'native' is not little or big"])
    expect(["openai", "--bytes-only"], 2, err_has=["--bytes-only needs --dims"])
    expect(["openai", "--metadata", "a", "--metadata-json", "{}"], 2, err_has=["one or the other"])
    expect(["openai", "--metadata-json", "{}", "a", "b"], 2, err_has=["take one body"])
    expect(["openai", "--metadata", path("gone.json"), "-"], 3, err_has=["cannot open"])
    out, _ = expect(["openai", "--help"], 0, out_has=["--dtype", "--byte-order", "--metadata", "--bytes-only"])


def t_npy():
    if np is None:
        print("SKIP: the numpy checks (python3 cannot import numpy: install python3-numpy)")
        return
    vecs = rand_vecs(50, 12, seed=5)
    a = np.array(vecs, dtype="<f4")
    b = write("n.embd", batch(vecs))
    expect(["decode", "--to", "npy", "-o", path("n.npy"), b], 0)
    raw = read("n.npy")
    check(raw[:6] == b"\x93NUMPY" and raw[6] == 1 and raw[7] == 0, "npy: version 1.0")
    hl = struct.unpack("<H", raw[8:10])[0]
    check((10 + hl) % 64 == 0, "npy: header padded to a multiple of 64")
    got = np.load(path("n.npy"))
    check(got.dtype == np.dtype("<f4") and got.shape == (50, 12), "npy: dtype/shape %s %s" % (got.dtype, got.shape))
    check(np.array_equal(got.view("<u4"), a.view("<u4")), "npy written by embd: same values")
    # stream with unknown count: header fixed at the end
    write("n.stream", b"".join(frame(v) for v in vecs))
    expect(["decode", "--stream", "--to", "npy", "-o", path("ns.npy"), path("n.stream")], 0)
    check(np.array_equal(np.load(path("ns.npy")), a), "npy from --stream")
    expect(["decode", "--stream", "--to", "npy", "-o", "-"], 2, stdin=read("n.stream"),
           err_has=["seekable"])
    # empty batch -> shape (0, 0)
    expect(["decode", "--to", "npy", "-o", path("e.npy")], 0, stdin=struct.pack("<I", 0))
    check(np.load(path("e.npy")).shape == (0, 0), "npy: empty batch")
    # numpy-written files convert correctly: <f4, >f4, <f8, >f8, 1-D, fortran 1-row
    for dt in ("<f4", ">f4", "<f8", ">f8"):
        np.save(path("in.npy"), a.astype(dt))
        out, _ = expect(["encode", path("in.npy")], 0, name="encode npy " + dt)
        check(out == batch(vecs), "encode npy %s: same batch" % dt)
    d = np.array([0.1, 0.2, 1e-30, -5.5], dtype="<f8")
    np.save(path("d8.npy"), d)
    out, _ = expect(["encode", path("d8.npy")], 0)
    check(out == batch([[f32(x) for x in d.tolist()]]), "encode <f8 1-D: rounded to nearest float32")
    np.save(path("big8.npy"), np.array([[1e300]], dtype="<f8"))
    expect(["encode", path("big8.npy")], 1, err_has=["beyond the float32 range"])
    np.save(path("i4.npy"), np.zeros((2, 2), dtype="<i4"))
    expect(["encode", path("i4.npy")], 1, err_has=["dtype '<i4' not supported"])
    np.save(path("f.npy"), np.asfortranarray(a))
    expect(["encode", path("f.npy")], 1, err_has=["fortran_order"])
    np.save(path("3d.npy"), np.zeros((2, 2, 2), dtype="<f4"))
    expect(["encode", path("3d.npy")], 1, err_has=["more than 2 dimensions"])
    np.save(path("t.npy"), a)
    full = read("t.npy")
    write("t_cut.npy", full[:-5])
    expect(["encode", path("t_cut.npy")], 1, err_has=["truncated", "vector 49"])
    write("t_hdr.npy", full[:40])
    expect(["encode", "--from", "npy", path("t_hdr.npy")], 1, err_has=["truncated header"])
    write("t_tail.npy", full + b"\0")
    expect(["encode", path("t_tail.npy")], 1, err_has=["unexpected bytes after the 50 vectors"])
    out, _ = expect(["encode", "--from", "npy"], 0, stdin=full)
    check(out == batch(vecs), "encode npy from stdin")
    expect(["encode", "--from", "npy"], 1, stdin=b"PK\x03\x04 not npy", err_has=["not a .npy file"])
    # openai -> npy
    if OPENAI:
        expect(["openai", "--to", "npy", "-o", path("o.npy")], 0, stdin=openai_body(vecs, True).encode())
        check(np.array_equal(np.load(path("o.npy")), a), "openai --to npy")


def t_roundtrip():
    vecs = rand_vecs(30, 9, seed=7) + [[0.0] * 9, [-0.0] * 9, [f32(1e-45)] * 9,
                                          [3.4028234663852886e38] * 9]
    src = write("r.jsonl", jsonl(vecs))
    for opts in ([], ["--payload-crc"], ["--compress", "--level", "9"], ["-z", "-c"]):
        tag = "".join(opts) or "plain"
        e1 = path("r1%s.embd" % tag)
        expect(["encode"] + opts + [src, "-o", e1], 0)
        expect(["verify", "-q", e1], 0)
        expect(["decode", e1, "-o", path("r.out.jsonl")], 0)
        e2 = path("r2%s.embd" % tag)
        expect(["encode"] + opts + [path("r.out.jsonl"), "-o", e2], 0)
        check(read(os.path.basename(e1)) == read(os.path.basename(e2)),
              "round trip encode -> decode -> encode byte-identical (%s)" % tag)
        check(parse_jsonl(read("r.out.jsonl")) == vecs, "round trip values (%s)" % tag)
        # raw and npy round trips
        expect(["decode", "--to", "raw", "-o", path("r.f32"), e1], 0)
        e3 = path("r3%s.embd" % tag)
        expect(["encode"] + opts + ["--dims", "9", path("r.f32"), "-o", e3], 0)
        check(read(os.path.basename(e1)) == read(os.path.basename(e3)), "raw round trip (%s)" % tag)
        expect(["decode", "--to", "npy", "-o", path("r.npy"), e1], 0)
        e4 = path("r4%s.embd" % tag)
        expect(["encode"] + opts + [path("r.npy"), "-o", e4], 0)
        check(read(os.path.basename(e1)) == read(os.path.basename(e4)), "npy round trip (%s)" % tag)


def t_big():
    n, d = 100000, 16
    r = random.Random(11)
    raw = bytearray(struct.pack("<%df" % (n * d), *[r.uniform(-1, 1) for _ in range(n * d)]))
    write("big.f32", bytes(raw))
    expect(["encode", "--dims", str(d), "--payload-crc", path("big.f32"), "-o", path("big.embd")], 0)
    size = os.path.getsize(path("big.embd"))
    check(size == 4 + n * (16 + d * 4 + 4), "big: batch size %d" % size)
    expect(["verify", path("big.embd")], 0, out_has=["ok: 100000 frames, 1600000 values"])
    expect(["inspect", "-S", path("big.embd")], 0, out_has=["summary: 100000 frames", "dims: 16 x100000"])
    expect(["decode", "--to", "raw", "-o", path("big.out"), path("big.embd")], 0)
    check(read("big.out") == bytes(raw), "big: decode --to raw gives the input back")
    expect(["decode", path("big.embd"), "-o", path("big.jsonl")], 0)
    expect(["encode", "--payload-crc", path("big.jsonl"), "-o", path("big2.embd")], 0)
    check(read("big.embd") == read("big2.embd"), "big: jsonl round trip byte-identical")
    # the stream decoder over the 1 MiB chunk boundaries, from a pipe
    out, _ = expect(["decode", "--to", "raw", "-"], 0, stdin=read("big.embd"))
    check(out == bytes(raw), "big: decode from stdin")
    b = bytearray(read("big.embd"))
    k = 77777
    off = 4 + k * (16 + d * 4 + 4)
    b[off + 40] ^= 1
    expect(["verify", "-"], 1, stdin=bytes(b), err_has=["frame %d at byte %d" % (k, off), "payload CRC"])


# ---- tokens --------------------------------------------------------------------------------
MAP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "tokmap-small.json")


def sframe(t, payload=b""):
    return bytes([t]) + struct.pack(">I", len(payload)) + payload


def tokens_frame(ids):
    return sframe(2, b"".join(struct.pack(">I", i) for i in ids))


def mp_uint(v):
    if v < 128:
        return bytes([v])
    if v < 256:
        return b"\xcc" + bytes([v])
    if v < 65536:
        return b"\xcd" + struct.pack(">H", v)
    return b"\xce" + struct.pack(">I", v)


def mp_frame(ids, done=False, finish_reason=None):
    arr = (bytes([0x90 | len(ids)]) if len(ids) < 16 else b"\xdc" + struct.pack(">H", len(ids)))
    fr = b"" if finish_reason is None else b"\xadfinish_reason" + bytes([0xA0 | len(finish_reason)]) + \
        finish_reason.encode()
    return (b"\x82" if finish_reason is None else b"\x83") + b"\xa3ids" + arr + \
        b"".join(mp_uint(i) for i in ids) + b"\xa4done" + (b"\xc3" if done else b"\xc2") + fr


def varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def pb_frame(ids, done=False, finish_reason=None):
    packed = b"".join(varint(i) for i in ids)
    msg = b"\x0a" + varint(len(packed)) + packed + (b"\x10\x01" if done else b"")
    if finish_reason is not None:
        msg += b"\x1a" + varint(len(finish_reason)) + finish_reason.encode()
    return struct.pack(">I", len(msg)) + msg


def t_tokens():
    # The spec's worked example: ids 50001..50003.
    ex = bytes.fromhex("020000000C0000C3510000C3520000C353")
    expect(["tokens", "-"], 0, stdin=ex, out_has=["50001 50002 50003\n"])
    # Builds without the stream modes / tokenizer maps (EMBD_WITH_CODEC_MODES=OFF,
    # EMBD_WITH_TOKMAP=OFF) say so with exit 4; the rest is checked where they exist.
    modes = run(["tokens", "--mode", "protobuf", "-"], b"")[0] == 0
    tokmap = run(["tokens", "--map", MAP, "-"], b"")[0] == 0
    if not modes:
        print("tokens: built without the msgpack/protobuf modes: those checks are skipped")
        expect(["tokens", "--mode", "protobuf", "-"], 4, err_has=["built without"])
    if not tokmap:
        print("tokens: built without tokenizer maps: the --map checks are skipped")
        expect(["tokens", "--map", MAP, "-"], 4, err_has=["built without"])
    hello = sframe(0, b'{"codec_version":"0.5","accept_tokenizers":["t1"]}')
    ready = sframe(1, b'{"codec_version":"0.5","tokenizer_id":"t1","map_url":"u","map_hash":"sha256:' +
                   b"0" * 64 + b'"}')
    stream = hello + ready + tokens_frame([1, 2, 4294967295]) + tokens_frame([]) + \
        tokens_frame([7]) + sframe(3)
    out, _ = expect(["tokens", write("s.codec", stream)], 0)
    check(out == b"1 2 4294967295\n\n7\n", "tokens: session ids per frame: %r" % out)
    # The same ids in the engines' two stream modes (msgpack detected, protobuf named).
    expect(["tokens", "-"], 1, stdin=ex[:-1], err_has=["truncated"])
    t_tokens_session_errors()
    if modes:
        t_tokens_modes()
    if tokmap:
        t_tokens_map(ex)


def t_tokens_modes():
    mp = mp_frame([1, 2, 4294967295]) + mp_frame([]) + mp_frame([7], True)
    out, _ = expect(["tokens", write("s.mp", mp)], 0)
    check(out == b"1 2 4294967295\n\n7\n", "tokens: msgpack ids: %r" % out)
    pb = pb_frame([1, 2, 4294967295]) + pb_frame([7], True)
    out, _ = expect(["tokens", "--mode", "protobuf", write("s.pb", pb)], 0)
    check(out == b"1 2 4294967295\n7\n", "tokens: protobuf ids: %r" % out)
    expect(["tokens", "--mode", "protobuf", "-"], 1, stdin=pb[:-2])
    expect(["tokens", "-"], 1, stdin=mp[:5])
    # The stream modes' report of a failed generation, finish_reason "error", ends the
    # stream as an ERROR frame does: that frame's ids and those before it are printed, then
    # the report, exit 5; the frames after it are not read. Another reason is a good end.
    for mode, fr in (("msgpack", mp_frame), ("protobuf", pb_frame)):
        first = fr([1, 2])
        failed = first + fr([3], True, "error") + fr([9], True)
        out, _ = expect(["tokens", "--mode", mode, "-"], 5, stdin=failed,
                        err_has=['frame 1 at byte %d: finish_reason "error" from the peer' % len(first)])
        check(out == b"1 2\n3\n", "tokens %s: output up to finish_reason error: %r" % (mode, out))
        expect(["tokens", "--mode", mode, "-o", path("fr_err.txt"), "-"], 5, stdin=failed)
        check(read("fr_err.txt") == b"1 2\n3\n", "tokens %s -o: the text before the error kept" % mode)
        out, _ = expect(["tokens", "--mode", mode, "-"], 0, stdin=first + fr([3], True, "stop"))
        check(out == b"1 2\n3\n", "tokens %s: finish_reason stop: %r" % (mode, out))
    t_tokens_delta()


def zigzag(d):
    return 2 * d if d >= 0 else -2 * d - 1


def deltas(ids, base):
    out, prev = [], base
    for i in ids:
        out.append(zigzag(i - prev))
        prev = i
    return out


def mp_delta_frame(ids, base, done=False):
    # The Codec Python reference's shape: base_id, ids_delta, done, finish_reason (nil).
    d = deltas(ids, base)
    return (b"\x84\xa7base_id" + mp_uint(base) + b"\xa9ids_delta" + bytes([0x90 | len(d)]) +
            b"".join(mp_uint(v) for v in d) + b"\xa4done" + (b"\xc3" if done else b"\xc2") +
            b"\xadfinish_reason\xc0")


def pb_delta_frame(ids, base, field=5, done=False):
    packed = b"".join(varint(v) for v in deltas(ids, base))
    msg = (b"\x0a" + varint(len(packed)) + packed if ids else b"") + (b"\x10\x01" if done else b"\x10\x00")
    msg += bytes([field << 3]) + varint(base)
    return struct.pack(">I", len(msg)) + msg


def t_tokens_delta():
    ids = [[50001, 50002, 49990], [], [7, 2000000000]]
    base, mp, pb5, pb4 = 0, b"", b"", b""
    for k, f in enumerate(ids):
        mp += mp_delta_frame(f, base, k == 2)
        pb5 += pb_delta_frame(f, base, 5, k == 2)
        pb4 += pb_delta_frame(f, base, 4, k == 2)
        base = f[-1] if f else base
    want = b"50001 50002 49990\n\n7 2000000000\n"
    out, _ = expect(["tokens", "--mode", "msgpack-delta", write("d.mp", mp)], 0)
    check(out == want, "tokens msgpack-delta: %r" % out)
    out, _ = expect(["tokens", "--mode", "protobuf-delta", write("d.pb", pb5)], 0)
    check(out == want, "tokens protobuf-delta: %r" % out)
    out, _ = expect(["tokens", "--mode", "protobuf-delta", "--base-id-field", "4", write("d4.pb", pb4)], 0)
    check(out == want, "tokens protobuf-delta --base-id-field 4: %r" % out)
    # the other field number: field 4 as a varint is not tool_calls, field 5 is not base_id
    expect(["tokens", "--mode", "protobuf-delta", "-"], 1, stdin=pb4,
           err_has=["tool_calls (field 4) has wire type 0"])
    expect(["tokens", "--mode", "protobuf-delta", "--base-id-field", "4", "-"], 1, stdin=pb5,
           err_has=["no base_id (field 4)"])
    # auto-detection sees a msgpack map and reads it as plain msgpack: no "ids" key
    expect(["tokens", "-"], 1, stdin=mp, err_has=['no "ids" key'])
    # a step below 0, named with its byte
    bad = b"\x82\xa7base_id\x03\xa9ids_delta\x92\x01\x09"
    expect(["tokens", "--mode", "msgpack-delta", "-"], 1, stdin=bad,
           err_has=["frame 0 at byte 0: ids_delta[1] = 9 (a step of -5 from 2)"])
    expect(["tokens", "--mode", "msgpack-delta", "-"], 1, stdin=mp_frame([1]), err_has=['an "ids" key'])
    expect(["tokens", "--base-id-field", "4", "-"], 2, stdin=b"", err_has=["--base-id-field is for"])
    expect(["tokens", "--mode", "protobuf-delta", "--base-id-field", "6", "-"], 2, stdin=b"",
           err_has=["not 4 or 5"])
    expect(["tokens", "--strict-types", "--mode", "msgpack-delta", "-"], 2, stdin=b"")


def t_tokens_session_errors():
    ex = bytes.fromhex("020000000C0000C3510000C3520000C353")
    # Bad streams: what and where, exit 1.
    # Frame types from 0x07 up (a newer protocol's): skipped by default, whatever their
    # payload; an error with --strict-types, at the type byte.
    newer = ex + b"\x09\x00\x00\x00\x03abc" + sframe(0xFF, b"\x00\x01\x02") + tokens_frame([5]) + sframe(3)
    out, _ = expect(["tokens", "-"], 0, stdin=newer)
    check(out == b"50001 50002 50003\n5\n", "tokens: newer frame types skipped: %r" % out)
    out, _ = expect(["tokens", "--strict-types", "-"], 1, stdin=newer,
                    err_has=["frame 1 at byte 17", "unknown frame type 0x09 (known: 0x00-0x06)"])
    check(out == b"50001 50002 50003\n", "tokens --strict-types: the frame before: %r" % out)
    for m in ("msgpack", "protobuf"):
        expect(["tokens", "--strict-types", "--mode", m, "-"], 2, stdin=b"",
               err_has=["--strict-types is for session frames"])
    expect(["tokens", "--max-frame", "2", "-"], 1, stdin=newer[17:],
           err_has=["frame 0 at byte 0: type 0x09 payload of 3 bytes is above the maximum of 2"])
    # An ERROR frame: what came before it is printed, then its text (escaped), exit 5; the
    # frames after it are not read.
    err_stream = ex + sframe(4, "model overloaded \u2013 retry\n".encode()) + tokens_frame([9]) + sframe(3)
    out, err = expect(["tokens", "-"], 5, stdin=err_stream,
                      err_has=["frame 1 at byte 17: ERROR frame from the peer: model overloaded \u2013 retry\\n"])
    check(out == b"50001 50002 50003\n", "tokens: output before the ERROR frame: %r" % out)
    o = path("err_out.txt")
    expect(["tokens", "-o", o, "-"], 5, stdin=err_stream)
    check(read("err_out.txt") == b"50001 50002 50003\n", "tokens -o: the text before the ERROR kept: %r" % read("err_out.txt"))
    out, _ = expect(["tokens", "-"], 5, stdin=sframe(4), err_has=["frame 0 at byte 0: ERROR frame from the peer: "])
    check(out == b"", "tokens: an ERROR frame first: no output: %r" % out)
    long_err = sframe(4, b"x" * 10000)
    _, err = expect(["tokens", "-"], 5, stdin=long_err)
    check("x" * 4096 in err and "x" * 4097 not in err, "tokens: a long ERROR text is cut at 4096 bytes")
    # A broken stream stays exit 1, an ERROR frame with invalid UTF-8 included.
    expect(["tokens", "-"], 1, stdin=sframe(4, b"\xc0\xaf"), err_has=["invalid UTF-8"])
    expect(["tokens", "-"], 1, stdin=sframe(2, b"\x00\x00\x01"), err_has=["not a multiple of 4"])
    expect(["tokens", "-"], 1, stdin=sframe(3, b"x"), err_has=["EOS"])
    expect(["tokens", "--max-frame", "8", "-"], 1, stdin=tokens_frame([1, 2, 3]), err_has=["maximum"])
    out, _ = expect(["tokens", "-"], 0, stdin=b"")
    check(out == b"", "tokens: empty input, no output")
    expect(["tokens", "--mode", "xml"], 2, err_has=["unknown mode"])
    for opt in ("--skip-special", "--replace-unknown", "--reference"):
        expect(["tokens", opt, "-"], 2, stdin=ex, err_has=["need --map"])
    expect(["tokens", path("nope.codec")], 3)


def t_tokens_map(ex):
    # Text through the tokenizer map: plain pieces, a 4-byte emoji split over byte-fallback
    # tokens in two frames, a special token rendered and skipped.
    emoji = "\U0001F600".encode()
    byte_ids = [3 + b for b in emoji]  # <0x00> is id 3
    s2 = tokens_frame([259, 260]) + tokens_frame(byte_ids[:2]) + tokens_frame(byte_ids[2:] + [261]) + \
        tokens_frame([2]) + sframe(3)
    out, _ = expect(["tokens", "--map", MAP, write("t.codec", s2)], 0)
    check(out.decode() == "Hello world\U0001F600!</s>\n", "tokens --map: %r" % out)
    out, _ = expect(["tokens", "--map", MAP, "--skip-special", "-"], 0, stdin=s2)
    check(out.decode() == "Hello world\U0001F600!\n", "tokens --skip-special: %r" % out)
    import hashlib
    h = "sha256:" + hashlib.sha256(open(MAP, "rb").read()).hexdigest()
    expect(["tokens", "--map", MAP, "--map-hash", h, "-"], 0, stdin=s2)
    # the peers' spellings of the pin: SHA256: and upper-case hex
    expect(["tokens", "--map", MAP, "--map-hash", "SHA256:" + h[7:].upper(), "-"], 0, stdin=s2)
    expect(["tokens", "--map", MAP, "--map-hash", "Sha256:" + h[7:], "-"], 2, stdin=s2,
           err_has=['expected_hash is not "sha256:" or "SHA256:" and 64 hex digits'])
    expect(["tokens", "--map", MAP, "--map-hash", "sha256:" + "0" * 64, "-"], 1, stdin=s2,
           err_has=["sha256"])
    expect(["tokens", "--map", MAP, "-"], 1, stdin=tokens_frame([259, 1000]), err_has=["1000"])
    # The reference client's defaults: an unknown id is U+FFFD (ending a pending byte
    # sequence: one U+FFFD for that, one for the id), specials skipped.
    fffd = "\ufffd"
    unk = tokens_frame([259, 1000]) + tokens_frame([3 + 0xE2, 3 + 0x82]) + tokens_frame([4294967295, 2, 261])
    out, _ = expect(["tokens", "--map", MAP, "--replace-unknown", "-"], 0, stdin=unk)
    check(out.decode() == "Hello" + fffd + fffd + fffd + "</s>!\n", "tokens --replace-unknown: %r" % out)
    out, _ = expect(["tokens", "--map", MAP, "--reference", "-"], 0, stdin=unk)
    check(out.decode() == "Hello" + fffd * 3 + "!\n", "tokens --reference: %r" % out)
    out, _ = expect(["tokens", "--map", MAP, "--reference", "-"], 0, stdin=s2)
    check(out.decode() == "Hello world\U0001F600!\n", "tokens --reference, no unknown id: %r" % out)
    # Ill-formed bytes: U+FFFD per maximal subpart (Unicode's example 61 F1 80 80 E1 80 C2 62)
    mal = tokens_frame([3 + b for b in bytes.fromhex("61F18080E180C262")])
    out, _ = expect(["tokens", "--map", MAP, "-"], 0, stdin=mal)
    check(out.decode() == "a" + fffd * 3 + "b\n", "tokens: maximal subparts: %r" % out)
    expect(["tokens", "--map", write("bad.json", '{"id": 3}'), "-"], 1, stdin=ex)
    expect(["tokens", "--map", path("missing.json"), "-"], 3, stdin=ex)
    # Schema v2, byte_level (docs/TOKMAP.md § Schema v2): the vocab strings are code points of
    # GPT-2's byte alphabet (printable bytes themselves, the other 68 from U+0100 on); an emoji
    # whose bytes are split over two tokens in two TOKENS frames comes out whole.
    g2, nxt = {}, 256
    for b in range(256):
        if 33 <= b <= 126 or 161 <= b <= 172 or b >= 174:
            g2[b] = chr(b)
        else:
            g2[b], nxt = chr(nxt), nxt + 1
    bl = lambda bs: "".join(g2[b] for b in bs)
    v2 = {"id": "cli/v2", "version": "2", "vocab_size": 8, "encoder": "byte_level",
          "vocab": {bl(b" Hello"): 0, bl(emoji[:3]): 1, bl(emoji[3:]): 2, "<|eot|>": 3, bl(b"\n"): 4},
          "special_tokens": {"<|eot|>": 3}}
    mv2 = write("v2.json", json.dumps(v2, ensure_ascii=False))
    s3 = tokens_frame([0, 1]) + tokens_frame([2, 4, 3]) + sframe(3)
    out, _ = expect(["tokens", "--map", mv2, "-"], 0, stdin=s3)
    check(out.decode() == " Hello\U0001F600\n<|eot|>\n", "tokens --map (v2 byte_level): %r" % out)
    out, _ = expect(["tokens", "--map", mv2, "--reference", "-"], 0, stdin=s3)
    check(out.decode() == " Hello\U0001F600\n\n", "tokens --map (v2) --reference: %r" % out)
    v2["vocab"]["x"] = 9
    expect(["tokens", "--map", write("v2bad.json", json.dumps(v2)), "-"], 1, stdin=s3,
           err_has=['vocab["x"]: id 9 >= vocab_size 8'])


def t_bench():
    out, _ = expect(["bench", "--quick", "--json"], 0)
    try:
        d = json.loads(out)
    except ValueError as e:
        check(False, "bench --json: not JSON (%s): %r" % (e, out[:300]))
        return
    fmts = [f["format"] for f in d["embeddings"]["formats"]]
    check(any("EMBD" in f for f in fmts) and (not OPENAI or any("base64" in f for f in fmts)),
          "bench --json: embedding formats: %s" % fmts)
    toks = [f["format"] for f in d["tokens"]["formats"]]
    check(any("TOKENS" in f for f in toks), "bench --json: token formats: %s" % toks)
    kernels = {(k["kernel"], k["implementation"]) for k in d["kernels"]}
    for k in ("crc32", "bswap32", "base64-decode", "base64-encode"):
        check((k, "scalar") in kernels, "bench --json: %s scalar measured" % k)
    check(all(k["gb_per_s"] > 0 for k in d["kernels"]), "bench --json: positive rates")
    svg = path("k.svg")
    expect(["bench", "--quick", "--svg", svg], 0, out_has=["embeddings on the wire", "kernel (64 KiB)"])
    check(os.path.exists(svg) and open(svg).read().startswith("<svg"), "bench --svg writes an SVG")
    out, _ = expect(["bench", "--quick", "--json"], 0, env={"EMBD_ISA": "scalar"})
    d = json.loads(out)
    check({k["tier"] for k in d["kernels"]} <= {"scalar", "-"},
          "bench under EMBD_ISA=scalar measures scalar only")
    # The emulations are measured only with --emulated, each marked (issue 31).
    out, _ = expect(["bench", "--quick", "--json"], 0)
    d = json.loads(out)
    check(all(k.get("emulated") is False for k in d["kernels"]),
          "bench --json: every kernel row says \"emulated\": false by default")
    check(not any(k["implementation"].endswith("-simde") for k in d["kernels"]),
          "bench --json: no emulated rows by default: %s"
          % [k["implementation"] for k in d["kernels"]])
    out, _ = expect(["bench", "--quick", "--json", "--emulated"], 0)
    e = json.loads(out) if out else {"kernels": []}  # a failed run is reported by expect
    check(all(k.get("emulated") == k["implementation"].endswith("-simde") for k in e["kernels"]),
          "bench --json --emulated: the simde rows, and only they, marked emulated")
    cpu_emu, _ = expect(["cpu", "--emulated"], 0)
    if "runnable      emulated" in cpu_emu.decode():
        check(any(k.get("emulated") for k in e["kernels"]),
              "bench --json --emulated: the runnable emulations measured")
    check({(k["kernel"], k["implementation"]) for k in e["kernels"] if not k.get("emulated")} ==
          {(k["kernel"], k["implementation"]) for k in d["kernels"]},
          "bench --json --emulated: the other rows as without it")
    out, _ = expect(["bench", "--quick"], 0)
    check("-simde" not in out.decode() and "emulated" not in out.decode(),
          "bench: no emulated rows in the table by default")
    out, _ = expect(["bench", "--quick", "--emulated"], 0)
    rows = [l for l in out.decode().splitlines() if "-simde" in l]
    check(all(l.endswith("  emulated") for l in rows) and
          (len(rows) > 0) == any(k.get("emulated") for k in e["kernels"]),
          "bench --emulated: the simde rows in the table, marked:\n" + "\n".join(rows))
    expect(["bench", "extra"], 2)


# ---- stream: encode of big inputs with bounded memory ------------------------------------
RSS_WRAPPER = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, st, ru = os.wait4(pid, 0)
sys.stderr.write("EMBD_TEST_MAXRSS=%d" % ru.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(st))
"""


def run_measured(args, src=None, pipe_in=False, out_path=None, append=False, prefix=b""):
    """Runs embd with stdin from the file src (through a pipe when pipe_in) and stdout to
    out_path (a regular file; append: opened O_APPEND) or a pipe. Returns the exit code, the
    SHA-256 and size of what reached stdout's pipe, stderr and embd's peak RSS in KiB.
    prefix: written to out_path before embd writes there."""
    import hashlib
    e = dict(os.environ)
    e.pop("EMBD_ISA", None)
    e["EMBD_NO_PROGRESS"] = "1"
    feeder = None
    if src is None:
        stdin = subprocess.DEVNULL
    elif pipe_in:
        feeder = subprocess.Popen(["cat", src], stdout=subprocess.PIPE)
        stdin = feeder.stdout
    else:
        stdin = open(src, "rb")
    stdout = open(out_path, "ab" if append else "wb") if out_path else subprocess.PIPE
    if out_path and prefix:  # embd's stdout then starts at len(prefix)
        stdout.write(prefix)
        stdout.flush()
    # the peak RSS from wait4 in a small wrapper: a child's maxrss starts from its forking
    # parent's (Linux keeps the high-water mark across exec), and this one holds much
    p = subprocess.Popen([sys.executable, "-S", "-c", RSS_WRAPPER, cli_harness.EMBD] + args, stdin=stdin,
                         stdout=stdout, stderr=subprocess.PIPE, env=e)
    if feeder:
        feeder.stdout.close()
    elif src is not None:
        stdin.close()
    if out_path:
        stdout.close()
    h, n = hashlib.sha256(), 0
    if not out_path:
        while True:
            b = p.stdout.read(1 << 20)
            if not b:
                break
            h.update(b)
            n += len(b)
        p.stdout.close()
    err = p.stderr.read().decode("utf-8", "replace")
    p.stderr.close()
    rc = p.wait()
    if feeder:
        feeder.wait()
    err, _, rss = err.rpartition("EMBD_TEST_MAXRSS=")
    rss = int(rss) if rss.strip().isdigit() else 1 << 40
    check("Sanitizer" not in err and "runtime error:" not in err,
          "embd %s: sanitizer report:\n%s" % (" ".join(args), err[:2000]))
    return rc, h.hexdigest(), n, err, rss


def file_sha(p):
    import hashlib
    h = hashlib.sha256()
    with open(p, "rb") as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def t_stream():
    import hashlib
    asan = False
    with open(cli_harness.EMBD, "rb") as f:
        asan = b"__asan_init" in f.read()
    # ---- 200k lines x 8 dims: every input/output combination, byte-identical to the oracle
    block = rand_vecs(2000, 8, seed=21)
    reps = 100
    text = jsonl(block).encode()
    src = write("s.jsonl", text * reps)
    frames = b"".join(frame(v) for v in block)
    want = hashlib.sha256(struct.pack("<I", len(block) * reps) + frames * reps).hexdigest()
    out = path("s.embd")
    for how, pipe_in in [("file", None), ("stdin file", False), ("stdin pipe", True)]:
        args = ["encode", "--from", "jsonl"] + ([src] if pipe_in is None else [])
        feed = None if pipe_in is None else src
        rc, h, n, err, _ = run_measured(args + ["-o", out], feed, bool(pipe_in))
        check(rc == 0 and file_sha(out) == want, "stream: %s -> -o FILE: exit %d, %s" % (how, rc, err))
        rc, h, n, err, _ = run_measured(args, feed, bool(pipe_in), out_path=out)
        check(rc == 0 and file_sha(out) == want, "stream: %s -> stdout file: exit %d, %s" % (how, rc, err))
        rc, h, n, err, _ = run_measured(args, feed, bool(pipe_in))
        check(rc == 0 and h == want, "stream: %s -> pipe: exit %d, %s" % (how, rc, err))
    # stdout in append mode (not patchable in place): after what it held, the whole batch
    with open(out, "wb") as f:
        f.write(b"head")
    rc, _, _, err, _ = run_measured(["encode", "--from", "jsonl"], src, True, out_path=out, append=True)
    with open(out, "rb") as f:
        check(rc == 0 and f.read(4) == b"head" and hashlib.sha256(f.read()).hexdigest() == want,
              "stream: stdin pipe -> stdout appending: exit %d, %s" % (rc, err))
    # the small input, in memory before: the same bytes every way
    small = rand_vecs(5, 3, seed=22)
    sp = write("small.jsonl", jsonl(small))
    for pipe_in in [False, True]:
        rc, h, _, err, _ = run_measured(["encode"], sp, pipe_in)
        check(rc == 0 and h == hashlib.sha256(batch(small)).hexdigest(), "stream: small input %s" % pipe_in)
        rc, _, _, err, _ = run_measured(["encode", "-o", out], sp, pipe_in)
        check(rc == 0 and read("s.embd") == batch(small), "stream: small input %s -o" % pipe_in)
    rc, _, _, err, _ = run_measured(["encode", "--from", "jsonl", "-o", out], write("e", b""), True)
    check(rc == 0 and read("s.embd") == struct.pack("<I", 0), "stream: empty stdin -> -o FILE")
    # raw float32 from a pipe: to a file (count patched) and to a pipe (spilled)
    raw = b"".join(struct.pack("<8f", *v) for v in block) * 20
    rp = write("s.f32", raw)
    wraw = hashlib.sha256(struct.pack("<I", len(block) * 20) + frames * 20).hexdigest()
    rc, h, _, err, _ = run_measured(["encode", "--from", "raw", "--dims", "8"], rp, True)
    check(rc == 0 and h == wraw, "stream: raw pipe -> pipe: exit %d %s" % (rc, err))
    rc, _, _, err, _ = run_measured(["encode", "--from", "raw", "--dims", "8", "-o", out], rp, True)
    check(rc == 0 and file_sha(out) == wraw, "stream: raw pipe -> -o FILE: exit %d %s" % (rc, err))
    rp2 = write("s2.f32", raw + b"\0")
    for o in [["-o", out], []]:
        if os.path.exists(out):
            os.remove(out)
        rc, _, n, err, _ = run_measured(["encode", "--from", "raw", "--dims", "8"] + o, rp2, True)
        check(rc == 1 and "1 bytes left over" in err and n == 0 and not os.path.exists(out),
              "stream: raw pipe, a partial vector at the end %s: exit %d, %s" % (o, rc, err))
    # ---- an error on line N in the middle: exit 1, line:column, no output
    lines = (text * reps).split(b"\n")
    bad_n = 123457
    for bad, col, msg in [(b"[1,2,x,4,5,6,7,8]", 6, "expected a number"),
                          (b"[1,2,3]", 1, "3 values, line 1 had 8")]:
        lines2 = list(lines)
        lines2[bad_n - 1] = bad
        bp = write("bad.jsonl", b"\n".join(lines2))
        where = "%d:%d:" % (bad_n, col)
        for pipe_in in [None, False, True]:
            args = ["encode", "--from", "jsonl"] + ([bp] if pipe_in is None else [])
            feed = None if pipe_in is None else bp
            if os.path.exists(out):
                os.remove(out)
            rc, _, _, err, _ = run_measured(args + ["-o", out], feed, bool(pipe_in))
            check(rc == 1 and where in err and msg in err and not os.path.exists(out),
                  "stream: error on line %d (%s) -o: exit %d, %s" % (bad_n, pipe_in, rc, err))
            # stdout a regular file at offset 4: cut back to its 4 bytes on the failure
            rc, _, _, err, _ = run_measured(args, feed, bool(pipe_in), out_path=out, prefix=b"keep")
            check(rc == 1 and where in err and read("s.embd") == b"keep",
                  "stream: error on line %d (%s) > file: exit %d, %d bytes left, %s"
                  % (bad_n, pipe_in, rc, os.path.getsize(out), err))
            rc, _, n, err, _ = run_measured(args, feed, bool(pipe_in))
            check(rc == 1 and where in err and n == 0,
                  "stream: error on line %d (%s) | pipe: exit %d, %d bytes, %s" % (bad_n, pipe_in, rc, n, err))
    # ---- memory: a big JSON lines file (300 MB; 50 MB under the sanitizers) in < 100 MB
    big_reps = 32 if asan else 190
    text = jsonl(rand_vecs(10000, 8, seed=23)).encode()
    bp = path("big.jsonl")
    with open(bp, "wb") as f:
        for _ in range(big_reps):
            f.write(text)
    size = os.path.getsize(bp)
    limit = 100 << 10
    for how, pipe_in, o in [("file -> -o FILE", None, True), ("stdin pipe -> -o FILE", True, True),
                            ("stdin pipe -> pipe", True, False)]:
        args = ["encode"] + ([bp] if pipe_in is None else []) + (["-o", out] if o else [])
        rc, _, n, err, rss = run_measured(args, None if pipe_in is None else bp, bool(pipe_in))
        print("stream: %s: %.0f MB of JSON lines, peak RSS %.1f MB" % (how, size / 1e6, rss / 1024.0),
              flush=True)
        check(rc == 0 and (n if not o else os.path.getsize(out)) == 4 + 10000 * big_reps * (16 + 32),
              "stream: big %s: exit %d, %s" % (how, rc, err))
        check(rss < limit, "stream: big %s: peak RSS %d KiB for %d bytes of input" % (how, rss, size))
    os.remove(bp)
    os.remove(out)


# ---- faults: the CLI loses nothing it did not make (issue 11, item 4) --------------------
def run_io(args, stdin=None, stdout=None, preexec=None, timeout=600):
    """embd with stdin/stdout given as open files (or None: empty stdin, stdout captured);
    returns (rc, stdout bytes or None, stderr text). Sanitizer reports fail the check."""
    e = dict(os.environ)
    e.pop("EMBD_ISA", None)
    e["EMBD_NO_PROGRESS"] = "1"
    p = subprocess.run([cli_harness.EMBD] + args, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                       stdout=stdout if stdout is not None else subprocess.PIPE,
                       stderr=subprocess.PIPE, env=e, preexec_fn=preexec, timeout=timeout)
    err = p.stderr.decode("utf-8", "replace")
    check("Sanitizer" not in err and "runtime error:" not in err,
          "embd %s: sanitizer report:\n%s" % (" ".join(args), err[:2000]))
    return p.returncode, p.stdout, err


def leftovers(d=None):
    """Temporary output files (.NAME.XXXXXX) left in the scratch directory."""
    import re
    d = d or cli_harness.TMP
    return [f for f in os.listdir(d) if re.match(r"^\..+\.[A-Za-z0-9]{6}$", f)]


def fsize_limit(n):
    """preexec_fn: writes past n bytes fail with EFBIG (SIGXFSZ ignored), like a full disk."""
    import resource
    import signal

    def f():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
    return f


def t_faults():
    import signal
    import stat
    import time
    vecs = rand_vecs(4, 3, seed=5)
    good = write("good.embd", batch(vecs))
    bad = write("bad.embd", batch(vecs)[:-5])  # the last frame cut short
    src = write("v.jsonl", jsonl(vecs))
    old = b"the old content\n"

    # -- devices and FIFOs are written in place and never removed
    for dev in ["/dev/null", "/dev/full"]:
        if not os.path.exists(dev):
            print("faults: SKIP %s checks: no such device" % dev, flush=True)
            continue
        st = os.stat(dev)
        rc, _, err = run_io(["decode", bad, "-o", dev])
        check(rc == 1 and os.path.exists(dev) and stat.S_ISCHR(os.stat(dev).st_mode)
              and os.stat(dev).st_rdev == st.st_rdev,
              "faults: decode bad -o %s: exit %d, device kept? %s" % (dev, rc, err))
    rc, _, err = run_io(["decode", good, "-o", "/dev/full"])
    check(rc == 3 and "No space left on device" in err and os.path.exists("/dev/full"),
          "faults: decode -o /dev/full: exit %d, %s" % (rc, err))
    fifo = path("fifo")
    os.mkfifo(fifo)
    rd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so that embd's open returns
    rc, _, err = run_io(["decode", bad, "-o", fifo])
    got = b""
    try:
        got = os.read(rd, 1 << 20)
    except BlockingIOError:
        pass
    os.close(rd)
    check(rc == 1 and stat.S_ISFIFO(os.stat(fifo).st_mode),
          "faults: decode bad -o FIFO: exit %d, FIFO kept? %s" % (rc, err))
    check(got.count(b"\n") == 3, "faults: the FIFO got the 3 good vectors: %r" % got[:200])
    os.remove(fifo)
    node = path("nullnode")
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        rc, _, err = run_io(["decode", bad, "-o", node])
        check(rc == 1 and os.path.exists(node) and stat.S_ISCHR(os.stat(node).st_mode),
              "faults: decode bad -o device node: exit %d, node kept? %s" % (rc, err))
        os.remove(node)
    except (PermissionError, OSError) as ex:
        print("faults: SKIP the device node check: mknod: %s (needs root)" % ex, flush=True)

    # -- a regular -o file: replaced on success only; on failure as it was
    out = write("out.jsonl", old)
    os.chmod(out, 0o640)
    rc, _, err = run_io(["decode", bad, "-o", out])
    check(rc == 1 and read("out.jsonl") == old and not leftovers(),
          "faults: decode bad -o existing: exit %d, kept %r, leftovers %s, %s"
          % (rc, read("out.jsonl")[:40], leftovers(), err))
    rc, _, err = run_io(["decode", good, "-o", out])
    check(rc == 0 and parse_jsonl(read("out.jsonl")) == vecs and not leftovers(),
          "faults: decode good -o existing: exit %d, %s" % (rc, err))
    check(stat.S_IMODE(os.stat(out).st_mode) == 0o640, "faults: a replaced file keeps its mode: %o"
          % stat.S_IMODE(os.stat(out).st_mode))
    rc, _, err = run_io(["decode", bad, "-o", path("new.jsonl")])
    check(rc == 1 and not os.path.exists(path("new.jsonl")) and not leftovers(),
          "faults: decode bad -o new: exit %d, exists %s, %s" % (rc, os.path.exists(path("new.jsonl")), err))

    def umask027():
        os.umask(0o027)
    rc, _, err = run_io(["decode", good, "-o", path("new.jsonl")], preexec=umask027)
    check(rc == 0 and stat.S_IMODE(os.stat(path("new.jsonl")).st_mode) == 0o640,
          "faults: a new file is 0666 less the umask: exit %d, mode %o, %s"
          % (rc, stat.S_IMODE(os.stat(path("new.jsonl")).st_mode) if rc == 0 else 0, err))
    # hard links: the other name keeps the old content, on failure and on success
    a = write("hl_a.embd", old)
    b = path("hl_b.embd")
    os.link(a, b)
    rc, _, err = run_io(["encode", src, "-o", a + ".missing/x"])
    check(rc == 3 and "cannot open for writing" in err, "faults: -o in a missing directory: exit %d, %s" % (rc, err))
    rc, _, err = run_io(["decode", bad, "--to", "raw", "-o", a])
    check(rc == 1 and read("hl_a.embd") == old and os.stat(a).st_nlink == 2,
          "faults: decode bad -o hard link: exit %d, links %d, %s" % (rc, os.stat(a).st_nlink, err))
    rc, _, err = run_io(["encode", src, "-o", a])
    check(rc == 0 and read("hl_a.embd") == batch(vecs) and read("hl_b.embd") == old,
          "faults: encode -o hard link: exit %d, the other link keeps the old content, %s" % (rc, err))
    # symlinks: the target is replaced on success only, the link stays a link
    tgt = write("target.embd", old)
    lnk = path("link.embd")
    os.symlink("target.embd", lnk)
    rc, _, err = run_io(["encode", "--from", "npy", write("cut.npy", b"\x93NUMPY\x01\x00"), "-o", lnk])
    check(rc == 1 and read("target.embd") == old and os.path.islink(lnk),
          "faults: encode bad -o symlink: exit %d, target kept? %s" % (rc, err))
    rc, _, err = run_io(["encode", src, "-o", lnk])
    check(rc == 0 and read("target.embd") == batch(vecs) and os.path.islink(lnk) and not leftovers(),
          "faults: encode -o symlink: exit %d, target replaced, link kept: %s" % (rc, err))
    dang = path("dangling.embd")
    os.symlink("nowhere.embd", dang)
    rc, _, err = run_io(["encode", src, "-o", dang])
    check(rc == 3 and not os.path.exists(path("nowhere.embd")) and "does not exist" in err,
          "faults: -o dangling symlink: refused, exit %d, %s" % (rc, err))
    rc, _, err = run_io(["encode", src, "-o", cli_harness.TMP])
    check(rc == 3 and "Is a directory" in err, "faults: -o a directory: exit %d, %s" % (rc, err))
    check(not leftovers(), "faults: no temporary files left: %s" % leftovers())

    # -- the same file as input and output: refused before anything is opened for writing
    x = write("x.jsonl", jsonl(vecs))
    xe = write("x.embd", batch(vecs))
    for args, f, want in [(["encode", x, "-o", x], "x.jsonl", jsonl(vecs).encode()),
                          (["decode", xe, "-o", xe], "x.embd", batch(vecs)),
                          (["decode", "--to", "raw", xe, "-o", path("./x.embd")], "x.embd", batch(vecs)),
                          (["encode", x, "-o", lnk.replace("link.embd", "xlink.jsonl")], "x.jsonl",
                           jsonl(vecs).encode())]:
        if "xlink.jsonl" in args[-1] and not os.path.lexists(args[-1]):
            os.symlink("x.jsonl", args[-1])
        rc, _, err = run_io(args)
        check(rc == 2 and "is the input file" in err and read(f) == want,
              "faults: %s: exit %d (want 2), input kept? %s" % (" ".join(args[:1] + args[-2:]), rc, err))
    os.link(x, path("x_hard.jsonl"))
    rc, _, err = run_io(["encode", path("x_hard.jsonl"), "-o", x])
    check(rc == 2 and read("x.jsonl") == jsonl(vecs).encode(), "faults: encode via a hard link to -o: exit %d, %s" % (rc, err))
    with open(x, "rb") as fi, open(x, "ab") as fo:  # stdout >> the input
        rc, _, err = run_io(["encode", "--from", "jsonl"], stdin=fi, stdout=fo)
    check(rc == 2 and "standard output is the input file" in err and read("x.jsonl") == jsonl(vecs).encode(),
          "faults: encode < x >> x: exit %d, %s" % (rc, err))
    with open(xe, "ab") as fo:
        rc, _, err = run_io(["decode", "--to", "raw", xe], stdout=fo)
    check(rc == 2 and read("x.embd") == batch(vecs), "faults: decode x >> x: exit %d, %s" % (rc, err))
    if OPENAI:
        r = write("r.json", openai_body(vecs))
        rc, _, err = run_io(["openai", r, "-o", r])
        check(rc == 2 and read("r.json") == openai_body(vecs).encode(),
              "faults: openai r -o r: exit %d, %s" % (rc, err))
    with open("/dev/null", "rb") as fi, open("/dev/null", "wb") as fo:  # not a regular file: fine
        rc, _, err = run_io(["decode", "--to", "raw"], stdin=fi, stdout=fo)
    check(rc == 1 and "is the input" not in err, "faults: /dev/null in and out is no clash: exit %d, %s" % (rc, err))

    # -- the --help promise on every path: known-count inputs, ENOSPC, >> appends
    npy_cut = write("cut2.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", 118) +
                    (b"{'descr': '<f4', 'fortran_order': False, 'shape': (4, 3), }".ljust(117) + b"\n") +
                    struct.pack("<7f", *range(7)))  # 7 of the 12 values
    raw = write("big.f32", struct.pack("<%df" % (64 * 4096), *([0.5] * (64 * 4096))))  # 1 MiB
    for what, args in [("npy ending early", ["encode", npy_cut]),
                       ("raw, write error", ["encode", "--dims", "64", raw]),
                       ("decode raw, write error", ["decode", "--to", "raw", "-"])]:
        limit = fsize_limit(64 << 10) if "write error" in what else None
        stdin_file = None
        if what.startswith("decode"):
            enc = path("big.embd")
            check(run_io(["encode", "--dims", "64", raw, "-o", enc])[0] == 0, "faults: big.embd")
        for mode in ["-o new", "-o existing", "> file", ">> file"]:
            for f in ["o.embd"] + leftovers():
                if os.path.exists(path(f)):
                    os.remove(path(f))
            o = path("o.embd")
            if mode != "-o new":
                write("o.embd", old)
            stdin_file = open(path("big.embd"), "rb") if what.startswith("decode") else None
            if mode.startswith("-o"):
                rc, _, err = run_io(args + ["-o", o], stdin=stdin_file, preexec=limit)
            else:
                with open(o, "ab" if mode == ">> file" else "wb") as fo:
                    rc, _, err = run_io(args, stdin=stdin_file, stdout=fo, preexec=limit)
            if stdin_file:
                stdin_file.close()
            want_rc = 1 if "early" in what else 3
            if mode == "-o new":
                ok = not os.path.exists(o)
            elif mode == "> file":
                ok = os.path.getsize(o) == 0
            else:
                ok = read("o.embd") == old
            check(rc == want_rc and ok and not leftovers(),
                  "faults: %s, %s: exit %d (want %d), left %s, leftovers %s, %s"
                  % (what, mode, rc, want_rc, os.path.getsize(o) if os.path.exists(o) else None,
                     leftovers(), err.strip()))
    # a JSON lines pipe with stdout >> a file: placeholder count, then an error: cut back
    with open(path("o.embd"), "wb") as fo:
        fo.write(old)
    with open(path("o.embd"), "ab") as fo:
        p = subprocess.Popen([cli_harness.EMBD, "encode", "--from", "jsonl"], stdin=subprocess.PIPE,
                             stdout=fo, stderr=subprocess.PIPE)
        _, err = p.communicate(jsonl(vecs).encode() + b"[1,2,x]\n")
    check(p.returncode == 1 and read("o.embd") == old,
          "faults: jsonl pipe >> file, an error: cut back: exit %d, %d bytes, %s"
          % (p.returncode, os.path.getsize(path("o.embd")), err))

    # -- SIGINT/SIGTERM: a partial -o never appears; an existing -o stays as it was
    for sig, cmd, pre in [(signal.SIGINT, "encode", False), (signal.SIGTERM, "encode", True),
                          (signal.SIGTERM, "decode", False), (signal.SIGINT, "decode", True)]:
        for f in ["sig.out"] + leftovers():
            if os.path.exists(path(f)):
                os.remove(path(f))
        o = path("sig.out")
        if pre:
            write("sig.out", old)
        args = ([cli_harness.EMBD, "encode", "--from", "jsonl", "-o", o] if cmd == "encode"
                else [cli_harness.EMBD, "decode", "--stream", "-o", o])
        p = subprocess.Popen(args, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdin.write(jsonl(vecs).encode() if cmd == "encode" else b"".join(frame(v) for v in vecs))
        p.stdin.flush()
        t0 = time.time()
        while not leftovers() and time.time() - t0 < 30:
            time.sleep(0.01)
        had_temp = bool(leftovers())
        time.sleep(0.2)
        p.send_signal(sig)
        try:
            p.stdin.close()
        except BrokenPipeError:
            pass
        p.wait(timeout=60)
        err = p.stderr.read().decode("utf-8", "replace")
        p.stderr.close()
        check(had_temp and p.returncode == -sig and not leftovers() and
              (read("sig.out") == old if pre else not os.path.exists(o)),
              "faults: %s killed by %s: temp seen %s, exit %d, leftovers %s, -o %s, %s"
              % (cmd, sig.name, had_temp, p.returncode, leftovers(),
                 os.path.exists(o) and read("sig.out")[:20], err))

    # -- one huge "line" or body is judged early and bounded by --max-record
    asan = False
    with open(cli_harness.EMBD, "rb") as f:
        asan = b"__asan_init" in f.read()
    zeros = path("zeros.bin")
    with open(zeros, "wb") as f:
        f.truncate(5 << 30)  # sparse: no disk used
    rc, _, n, err, rss = run_measured(["encode", "--from", "jsonl", zeros])
    check(rc == 1 and "1:1: expected '['" in err and rss < (200 << 10),
          "faults: 5 GB of zeros as JSON lines: exit %d, RSS %d KiB, %s" % (rc, rss, err))
    rc, _, n, err, rss = run_measured(["encode", "--from", "jsonl"], zeros, pipe_in=True)
    check(rc == 1 and "1:1: expected '['" in err and rss < (200 << 10),
          "faults: 5 GB of zeros through a pipe: exit %d, RSS %d KiB, %s" % (rc, rss, err))
    os.remove(zeros)
    if OPENAI:
        rc, _, n, err, rss = run_measured(["openai", "/dev/zero"])
        check(rc == 1 and "expected '{'" in err and rss < (200 << 10),
              "faults: openai /dev/zero: exit %d, RSS %d KiB, %s" % (rc, rss, err))
        big = write("big.json", openai_body(rand_vecs(64, 64, seed=9)))
        rc, _, err = run_io(["openai", "--max-record", "4K", big])
        check(rc == 1 and "--max-record" in err, "faults: openai over --max-record: exit %d, %s" % (rc, err))
        rc, _, err = run_io(["openai", "--max-record", "1M", big, "-o", path("big.jsonl")])
        check(rc == 0, "faults: openai within --max-record: exit %d, %s" % (rc, err))
        rc, _, err = run_io(["encode", "--from", "openai", "--max-record", "1K", big])
        check(rc == 1 and "--max-record" in err, "faults: encode --from openai over --max-record: exit %d, %s" % (rc, err))
    spaces = write("spaces.jsonl", b" " * (3 << 20) + b"[1]\n")
    long_line = write("long.jsonl", b"[" + b",".join([b"1.5"] * (600 << 10)) + b"]\n")
    for f, pipe in [(spaces, False), (long_line, False), (long_line, True)]:
        rc, _, n, err, rss = run_measured(["encode", "--from", "jsonl", "--max-record", "1M"]
                                          + ([] if pipe else [f]), f if pipe else None, pipe_in=pipe)
        check(rc == 1 and "1:1:" in err and "--max-record" in err and "1048576" in err,
              "faults: a line over --max-record 1M (%s%s): exit %d, %s"
              % (os.path.basename(f), " pipe" if pipe else "", rc, err))
    rc, _, err = run_io(["encode", "--from", "jsonl", "--max-record", "4M", long_line, "-o", path("l.embd")])
    check(rc == 0, "faults: the long line within --max-record 4M: exit %d, %s" % (rc, err))
    for v in ["0", "1X", "-1", "K"]:
        expect(["encode", "--max-record", v, src], 2, err_has=["--max-record: '%s'" % v])

    # -- a JSON lines file that grows between the counting and the encoding pass
    grow = path("grow.jsonl")
    line = jsonl(rand_vecs(1, 64, seed=3)).encode()
    with open(grow, "wb") as f:
        f.write(line * (40000 if asan else 200000))
    p = subprocess.Popen([cli_harness.EMBD, "encode", grow, "-o", path("grow.embd")], stderr=subprocess.PIPE,
                         env=dict(os.environ, EMBD_NO_PROGRESS="1"))
    fdinfo, peak, appended = None, 0, False
    t0 = time.time()
    while p.poll() is None and time.time() - t0 < 120 and not appended:
        try:
            if fdinfo is None:
                for fd in os.listdir("/proc/%d/fd" % p.pid):
                    if os.readlink("/proc/%d/fd/%s" % (p.pid, fd)) == grow:
                        fdinfo = "/proc/%d/fdinfo/%s" % (p.pid, fd)
            if fdinfo:
                with open(fdinfo) as f:
                    pos = int(f.read().split()[1])
                if pos < peak:  # the second pass began: grow the file now
                    with open(grow, "ab") as f:
                        f.write(line * 1000)
                    appended = True
                peak = max(peak, pos)
        except (OSError, ValueError, IndexError):
            pass
    err = p.stderr.read().decode("utf-8", "replace")
    p.wait()
    if appended:
        check(p.returncode == 1 and "changed while being read" in err and not os.path.exists(path("grow.embd")),
              "faults: a file grown between the passes: exit %d (want 1), %s" % (p.returncode, err))
    else:
        print("faults: SKIP the growing-file check: missed the second pass (exit %d)" % p.returncode, flush=True)
    os.remove(grow)

    # -- names are escaped in messages
    evil = "a\nembd: forged\x1b[31m.embd"
    ep = write(evil, b"junk")
    rc, _, err = run_io(["decode", ep])
    check(rc == 1 and "a\\nembd: forged\\x1b[31m.embd" in err and "\x1b" not in err
          and err.count("\n") == 1, "faults: a name with a newline and ESC is escaped: %r" % err)
    rc, _, err = run_io(["verify", path("no\nsuch\x07file")])
    check(rc == 3 and "no\\nsuch\\x07file" in err and "\x07" not in err, "faults: cannot open, escaped: %r" % err)
    rc, _, err = run_io(["encode", src, "-o", path("missing\x1bdir/o.embd")])
    check(rc == 3 and "missing\\x1bdir" in err and "\x1b" not in err, "faults: -o name escaped: %r" % err)
    rc, _, err = run_io(["decode", "--to", "x\x1by"])
    check(rc == 2 and "x\\x1by" in err and "\x1b" not in err, "faults: option values escaped: %r" % err)
    rc, _, err = run_io(["encode", write("u\u00e9\u4e2d.jsonl", "[1,\n")])
    check("u\u00e9\u4e2d.jsonl" in err, "faults: UTF-8 names pass: %r" % err)
    os.remove(ep)

    # -- the .npy header parser: no read past its buffer (issue 11's 18 bytes), numpy's keys
    h18 = bytes([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 0x01, 0x00, 0x08, 0x00,
                 0x27, 0x64, 0x65, 0x73, 0x63, 0x72, 0x27, 0x3a])
    expect(["encode", "-o", path("h.embd")], 1, stdin=h18, name="encode: the 18-byte .npy header")
    check(not os.path.exists(path("h.embd")), "faults: nothing written for the 18-byte header")

    def npyh(d):
        d = d.encode()
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", 118) + d.ljust(117) + b"\n"
    for d, msg in [("{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }", "'descr' twice"),
                   ("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), 'extra': 0}", "unknown key 'extra'"),
                   ("{'descr': '<f4', 'fortran_order': False, 'shape': (3), }", "(N) is not a tuple"),
                   ("{'descr': '<i4\x1b', 'fortran_order': False, 'shape': (1, 1), }", "'<i4\\x1b' not supported")]:
        out, err = expect(["encode", "--from", "npy"], 1, stdin=npyh(d) + b"\0" * 8, err_has=[msg],
                          name="encode npy header %r" % d[:40])
        check("\x1b" not in err, "faults: npy messages escaped")
    if np is not None:
        import io
        for d in ["{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                  "{'shape': (2, 3), 'descr': '>f8', 'fortran_order': False}"]:
            a = np.arange(6, dtype=np.dtype(eval(d)["descr"])).reshape(2, 3)
            blob = npyh(d) + a.tobytes()
            b2 = np.load(io.BytesIO(blob))
            out, _ = expect(["encode", "--from", "npy"], 0, stdin=blob, name="encode npy %r" % d[:30])
            o2, _ = expect(["decode", "-"], 0, stdin=out)
            check(parse_jsonl(o2) == b2.astype(np.float32).tolist(), "faults: npy header as numpy reads it")
    else:
        print("faults: SKIP the numpy cross-checks: numpy cannot be imported (Debian: python3-numpy)", flush=True)

    # -- stdout write errors say why (exit 3), for every command that prints
    with open("/dev/full", "wb") as full:
        for args in [["cpu"], ["--help"], ["--version"], ["help", "encode"], ["encode", "--help"],
                     ["inspect", good], ["verify", good], ["decode", good], ["encode", src],
                     ["bench", "--quick", "--json"]]:
            rc, _, err = run_io(args, stdout=full)
            check(rc == 3 and "No space left on device" in err,
                  "faults: embd %s > /dev/full: exit %d, %r" % (" ".join(args), rc, err))


# ---- dtype frames (version 2, docs/FORMAT.md): an independent encoder and the checks -------
DT_CODES = {"f32": 0, "f16": 1, "bf16": 2, "fp8-e4m3": 3, "fp8-e5m2": 4, "int8": 5,
            "uint8": 6, "binary": 7, "ubinary": 8}


def fp8_bits(x, ebits, mbits, bias):
    """The FP8 byte of x, which must be 0 or a normal number exact in the format (the test
    values are chosen so): sign, biased exponent, mantissa, by arithmetic."""
    if x == 0:
        return 0x80 if str(x).startswith("-") else 0
    sign = 0x80 if x < 0 else 0
    m, e = abs(x), 0
    while m >= 2:
        m, e = m / 2, e + 1
    while m < 1:
        m, e = m * 2, e - 1
    frac = (m - 1) * (1 << mbits)
    assert frac == int(frac) and 0 < e + bias < (1 << ebits), x
    return sign | (e + bias) << mbits | int(frac)


def dt_payload(name, vec):
    """The little-endian element bytes of vec in dtype `name` (exact values only)."""
    if name == "f32":
        return struct.pack("<%df" % len(vec), *vec)
    if name == "f16":
        return struct.pack("<%de" % len(vec), *vec)
    if name == "bf16":  # exact values: the upper half of the float32
        return b"".join(struct.pack("<H", struct.unpack("<I", struct.pack("<f", x))[0] >> 16) for x in vec)
    if name == "fp8-e4m3":
        return bytes(fp8_bits(x, 4, 3, 7) for x in vec)
    if name == "fp8-e5m2":
        return bytes(fp8_bits(x, 5, 2, 15) for x in vec)
    if name == "int8":
        return struct.pack("<%db" % len(vec), *[int(x) for x in vec])
    if name == "uint8":
        return bytes(int(x) for x in vec)
    bits = [1 if x > 0 else 0 for x in vec]
    packed = bytes(sum(b << (7 - j) for j, b in enumerate(bits[i:i + 8])) for i in range(0, len(bits), 8))
    return bytes(b ^ 0x80 for b in packed) if name == "binary" else packed


def frame_v2(name, vec, flags=0):
    payload = dt_payload(name, vec)
    if flags & 1:
        z = zlib.compress(payload)
        payload = struct.pack("<I", len(z)) + z
    ver = 1 if name == "f32" else 2
    h = b"EMBD" + bytes([ver, flags, 0 if ver == 1 else DT_CODES[name], 0]) + struct.pack("<I", len(vec))
    h += struct.pack("<I", zlib.crc32(h))
    return h + payload + (struct.pack("<I", zlib.crc32(payload)) if flags & 2 else b"")


def dt_value(name, x):
    """What a value reads back as in `name` (binary types: their +1/-1 or 1/0)."""
    if name == "binary":
        return 1.0 if x > 0 else -1.0
    if name == "ubinary":
        return 1.0 if x > 0 else 0.0
    return x


def t_dtype_frames():
    # values exact in every dtype: small integers and halves (fp8-e5m2 has 2 mantissa bits)
    floaty = [[1.0, -2.0, 0.5, 3.0, 0.0, -1.5, 4.0, 8.0], [2.0, 1.0, -0.5, 6.0, 1.5, -4.0, 0.25, 12.0]]
    ints = [[1, 2, 3, 0, 7, 100, 127, 9], [5, 0, 0, 1, 2, 3, 4, 5]]
    sints = [[-1, 2, -128, 0, 7, -100, 127, 9], [5, 0, 0, 1, -2, 3, 4, 5]]
    cases = {"f32": floaty, "f16": floaty, "bf16": floaty, "fp8-e4m3": floaty, "fp8-e5m2": floaty,
             "int8": sints, "uint8": ints, "binary": floaty, "ubinary": floaty}
    for name, vecs in cases.items():
        src = write("dt_%s.jsonl" % name, jsonl(vecs))
        for flags, opts in ((0, []), (3, ["-z", "-c"])):
            out = path("dt_%s_%d.embd" % (name, flags))
            expect(["encode", "--dtype", name] + opts + [src, "-o", out], 0)
            got = read(os.path.basename(out))
            want = struct.pack("<I", 2) + b"".join(frame_v2(name, v, flags) for v in vecs)
            if flags == 0:
                check(got == want, "encode --dtype %s: the frames are docs/FORMAT.md's bytes" % name)
            else:  # zlib output may differ from Python's deflate: compare the decoded elements
                check(len(got) > 8, "encode --dtype %s -z -c: output" % name)
            # back as JSON numbers: the values (binary types: +-1 / 1 0), integers as integers
            o, _ = expect(["decode", out], 0)
            check(parse_jsonl(o) == [[dt_value(name, x) for x in v] for v in vecs],
                  "decode of --dtype %s %s: %r" % (name, opts, o[:200]))
            if name in ("int8", "uint8") and flags == 0:
                check(o.decode().splitlines()[0] == "[" + ",".join(str(x) for x in vecs[0]) + "]",
                      "decode --dtype %s: integers print as integers: %r" % (name, o[:80]))
            # raw: the wire elements as they are
            r, _ = expect(["decode", "--to", "raw", out], 0)
            check(r == b"".join(dt_payload(name, v) for v in vecs), "decode --to raw of %s keeps the wire bytes" % name)
            # inspect names version and dtype
            expect(["inspect", out], 0, out_has=["version %d" % (1 if name == "f32" else 2),
                                                  "dtype %s," % name, "dtypes: %s x2" % name])
        # an independent v2 frame (Python's zlib) decodes to the values
        pb = struct.pack("<I", 2) + b"".join(frame_v2(name, v, 3) for v in vecs)
        o, _ = expect(["decode", "-"], 0, stdin=pb)
        check(parse_jsonl(o) == [[dt_value(name, x) for x in v] for v in vecs],
              "decode of Python's zlib+crc %s frames" % name)
        o, _ = expect(["decode", "--stream", "-"], 0, stdin=pb[4:])
        check(len(parse_jsonl(o)) == 2, "decode --stream of %s frames" % name)

    # int8/uint8 values must be integers in range: exit 1, the line and element named, no output
    bad = write("dt_bad.jsonl", "[1,2,3]\n\n[4,300,6]\n")
    out = path("dt_bad.embd")
    expect(["encode", "--dtype", "int8", bad, "-o", out], 1,
           err_has=["dt_bad.jsonl:3: vector 1: value 1 (300) is not an integer in int8's range -128..127"])
    check(not os.path.exists(out), "encode --dtype int8 with a bad value leaves no output")
    expect(["encode", "--dtype", "uint8", "-"], 1, stdin=b"[1,2]\n[0.5,1]\n",
           err_has=["<stdin>:2: vector 1: value 0 (0.5) is not an integer in uint8's range 0..255"])
    expect(["encode", "--dtype", "uint8", "-", "-o", path("dt_pipe.embd")], 1, stdin=b"[1,-1]\n",
           err_has=["<stdin>:1: vector 0: value 1 (-1) is not an integer in uint8's range"])
    expect(["encode", "--dtype", "int8", "--from", "raw", "--dims", "2", "-"], 1,
           stdin=struct.pack("<4f", 1, 2, 3, 3.5), err_has=["vector 1: value 1 (3.5) is not an integer"])
    # packed bits need dims % 8 == 0
    expect(["encode", "--dtype", "ubinary", "-"], 1, stdin=b"[1,2,3]\n",
           err_has=["vector 0: 3 dims: ubinary packs 8 values a byte"])
    # usage errors
    expect(["encode", "--dtype", "float64", "-"], 2, stdin=b"[1]\n", err_has=["--dtype: 'float64' is not a dtype"])
    expect(["encode", "--ragged", "--dims", "3", "-"], 2, stdin=b"[1]\n", err_has=["--ragged and --dims"])
    expect(["encode", "--ragged", "--from", "npy", "-"], 2, stdin=b"", err_has=["--ragged is for JSON lines"])
    expect(["decode", "--as", "f16", "-"], 2, stdin=b"", err_has=["--as: only f32"])
    # the servers' spellings parse too
    expect(["encode", "--dtype", "float16", "-"], 0, stdin=b"[1,2]\n")

    # --ragged: each frame its own dims; the default refuses, naming both lines
    rag = write("dt_rag.jsonl", "[1,2,3]\n[4,5,6,7]\n[8]\n")
    expect(["encode", rag, "-o", path("dt_rag0.embd")], 1,
           err_has=["dt_rag.jsonl:2:1: 4 values, line 1 had 3", "--ragged"])
    for dt in ("f32", "int8"):
        for mode, args, stdin in (("file", [rag], b""), ("pipe", ["-"], read("dt_rag.jsonl"))):
            for dest in ("file", "pipe"):
                o_args = ["-o", path("dt_rag.embd")] if dest == "file" else []
                o, _ = expect(["encode", "--ragged", "--dtype", dt] + args + o_args, 0, stdin=stdin)
                b = read("dt_rag.embd") if dest == "file" else o
                want = struct.pack("<I", 3) + b"".join(frame_v2(dt, v) for v in [[1, 2, 3], [4, 5, 6, 7], [8]])
                check(b == want, "encode --ragged --dtype %s (%s to %s): the frames" % (dt, mode, dest))
    expect(["inspect", path("dt_rag.embd")], 0, out_has=["dims: 3 x1, 4 x1, 1 x1"])
    o, _ = expect(["decode", path("dt_rag.embd")], 0)
    check(parse_jsonl(o) == [[1, 2, 3], [4, 5, 6, 7], [8]], "decode of a ragged batch")
    expect(["decode", "--to", "npy", path("dt_rag.embd"), "-o", path("dt_rag.npy")], 1,
           err_has=["frame 1 at byte", "npy output needs one dims for all"])

    # mixed dtypes: npy/raw need one dtype (or --as f32), jsonl takes any
    mixed = struct.pack("<I", 3) + frame_v2("f16", [1.0, 2.0]) + frame_v2("int8", [3, 4]) + frame_v2("f32", [5.0, 6.5])
    expect(["decode", "--to", "npy", "-", "-o", path("dt_mixed.npy")], 1, stdin=mixed,
           err_has=["frame 1 at byte 24 is int8, the first vector was f16", "--as f32"])
    o, _ = expect(["decode", "-"], 0, stdin=mixed)
    check(parse_jsonl(o) == [[1, 2], [3, 4], [5, 6.5]], "decode jsonl of mixed dtypes")
    r, _ = expect(["decode", "--to", "raw", "--as", "f32", "-"], 0, stdin=mixed)
    check(r == struct.pack("<6f", 1, 2, 3, 4, 5, 6.5), "decode --to raw --as f32 of mixed dtypes")
    expect(["inspect", "-S", "-"], 0, stdin=mixed, out_has=["dtypes: f16 x1, int8 x1, f32 x1"])

    # a bad dtype code, a non-zero byte 7, packed dims % 8: errors with frame and offset
    h = b"EMBD" + bytes([2, 0, 9, 0]) + struct.pack("<I", 2)
    h += struct.pack("<I", zlib.crc32(h))
    badf = struct.pack("<I", 1) + h + b"\0\0"
    for cmd in (["decode"], ["verify"], ["inspect"]):
        expect(cmd + ["-"], 1, stdin=badf,
               err_has=["frame 0 at byte 4: unknown dtype code 9 (byte 6; known: 0-8)"])
    expect(["inspect", "-"], 1, stdin=badf, out_has=["dtype unknown code 9"])
    h = b"EMBD" + bytes([2, 0, 5, 1]) + struct.pack("<I", 2)
    h += struct.pack("<I", zlib.crc32(h))
    expect(["verify", "-"], 1, stdin=struct.pack("<I", 1) + h + b"\0\0",
           err_has=["frame 0 at byte 4: non-zero padding: byte 7 is 0x01 (version 2)"])
    h = b"EMBD" + bytes([2, 0, 8, 0]) + struct.pack("<I", 12)
    h += struct.pack("<I", zlib.crc32(h))
    expect(["verify", "-"], 1, stdin=struct.pack("<I", 1) + h + b"\0\0",
           err_has=["frame 0 at byte 4: dims 12 of dtype ubinary: packed bits need a multiple of 8"])

    # decode --to npy: the frames' own dtype, checked with numpy as the oracle
    if np is None:
        print("dtype_frames: SKIP the numpy checks of decode --to npy (python3 cannot import "
              "numpy: install python3-numpy)", flush=True)
        return
    descr = {"f32": "<f4", "f16": "<f2", "bf16": "<u2", "fp8-e4m3": "|u1", "fp8-e5m2": "|u1",
             "int8": "|i1", "uint8": "|u1", "binary": "|u1", "ubinary": "|u1"}
    for name, vecs in cases.items():
        src = path("dt_%s_0.embd" % name)
        npy = path("dt_%s.npy" % name)
        expect(["decode", "--to", "npy", src, "-o", npy], 0)
        a = np.load(npy)
        check(a.dtype.str == descr[name], "decode --to npy of %s: descr %s, want %s" % (name, a.dtype.str, descr[name]))
        cols = len(vecs[0]) // 8 if name in ("binary", "ubinary") else len(vecs[0])
        check(a.shape == (2, cols), "decode --to npy of %s: shape %r" % (name, a.shape))
        v = np.array(vecs, dtype=np.float64)
        if name == "f16":
            check(np.array_equal(a, v.astype(np.float16)), "npy f16 values")
        elif name == "f32":
            check(np.array_equal(a, v.astype(np.float32)), "npy f32 values")
        elif name in ("int8", "uint8"):
            check(np.array_equal(a, v.astype(a.dtype)), "npy %s values" % name)
        elif name == "bf16":  # the upper halves of the float32 bits
            check(np.array_equal(a, (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)), "npy bf16 bits")
        elif name in ("binary", "ubinary"):
            packed = np.packbits(v > 0, axis=1)
            check(np.array_equal(a, packed ^ (0x80 if name == "binary" else 0)), "npy %s: packbits" % name)
        else:  # fp8: the wire bytes
            check(a.tobytes() == b"".join(dt_payload(name, x) for x in vecs), "npy %s: the wire bytes" % name)
        npy32 = path("dt_%s_f32.npy" % name)
        expect(["decode", "--to", "npy", "--as", "f32", src, "-o", npy32], 0)
        b = np.load(npy32)
        check(b.dtype.str == "<f4" and b.shape == (2, len(vecs[0])) and
              b.tolist() == [[dt_value(name, x) for x in vv] for vv in vecs],
              "decode --to npy --as f32 of %s" % name)


# ---- --to pgcopy, es-bulk, fvecs, bvecs (cli/formats.c over embd/pgcopy.h, embd/vecfile.h) --
PG_HEADER = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8  # signature, int32 flags 0, int32 ext 0
PG_TYPES = ["vector", "halfvec", "sparsevec", "bit", "float4[]", "bytea"]


def pg_rows(data):
    """A COPY BINARY stream parsed from its documented layout (19-byte header, rows of an
    int16 field count and int32-length fields, the int16 -1 trailer): the rows' fields as
    bytes (None: NULL). Raises on anything else."""
    if data[:19] != PG_HEADER:
        raise ValueError("header %r" % data[:19])
    p, rows = 19, []
    while True:
        (nf,) = struct.unpack_from(">h", data, p)
        p += 2
        if nf == -1:
            if p != len(data):
                raise ValueError("%d bytes after the trailer" % (len(data) - p))
            return rows
        fields = []
        for _ in range(nf):
            (ln,) = struct.unpack_from(">i", data, p)
            p += 4
            if ln != -1 and p + ln > len(data):
                raise ValueError("field cut short")
            fields.append(None if ln == -1 else data[p:p + ln])
            p += max(ln, 0)
        rows.append(fields)


def pg_field(typ, v):
    """The column's binary send form of float32 row v, made here with numpy from the types'
    documented layouts (pgvector's vector/halfvec/sparsevec_send, varbit_send, array_send)."""
    d = len(v)
    if typ == "vector":
        return struct.pack(">hh", d, 0) + v.astype(">f4").tobytes()
    if typ == "halfvec":  # numpy's float32 -> float16 is IEEE round to nearest even
        return struct.pack(">hh", d, 0) + v.astype(">f2").tobytes()
    if typ == "sparsevec":
        idx = np.nonzero(v)[0]
        return (struct.pack(">iii", d, len(idx), 0) + idx.astype(">i4").tobytes() +
                v[idx].astype(">f4").tobytes())
    if typ == "bit":
        return struct.pack(">i", d) + np.packbits(v > 0).tobytes()
    if typ == "float4[]":
        el = np.empty((d, 2), ">u4")  # per element: int32 length 4, the float4
        el[:, 0], el[:, 1] = 4, v.view(np.uint32)
        return struct.pack(">iiIii", 1, 0, 700, d, 1) + el.tobytes()
    return v.astype("<f4").tobytes()  # bytea


def body_np(v):
    """An OpenAI base64 response of the float32 rows of v (exact bits, NaN included)."""
    items = [{"object": "embedding", "index": i,
              "embedding": base64.b64encode(np.ascontiguousarray(r, "<f4").tobytes()).decode()}
             for i, r in enumerate(v)]
    return json.dumps({"object": "list", "data": items, "model": "m"}).encode()


def batch_np(v):
    return struct.pack("<I", len(v)) + b"".join(frame(r.tolist()) for r in v)


def t_formats():
    expect(["openai", "--help"], 0, out_has=["pgcopy", "--pg-type", "--pg-id", "es-bulk", "--es-index",
                                             "--es-byte-order", "fvecs", "bvecs", "FORMAT binary"])
    expect(["decode", "--help"], 0, out_has=["pgcopy", "--pg-type", "--es-index", "fvecs"])
    # usage errors (exit 2)
    for args, msg in [(["--to", "pgcopy", "--pg-type", "vec"], "--pg-type: 'vec'"),
                      (["--to", "pgcopy", "--pg-id", "x1"], "--pg-id"),
                      (["--to", "pgcopy", "--pg-id", "99999999999999999999"], "--pg-id"),
                      (["--pg-id", "1"], "need --to pgcopy"),
                      (["--to", "npy", "--pg-type", "bytea"], "need --to pgcopy"),
                      (["--to", "pgcopy", "--pg-finite"], "--pg-finite is for"),
                      (["--to", "es-bulk"], "needs --es-index"),
                      (["--to", "jsonl", "--es-index", "a"], "need --to es-bulk"),
                      (["--to", "es-bulk", "--es-index", "a", "--es-element", "half"], "--es-element"),
                      (["--to", "es-bulk", "--es-index", "a", "--es-byte-order", "middle"], "--es-byte-order"),
                      (["--to", "es-bulk", "--es-index", "a", "--es-element", "byte", "--es-byte-order",
                        "big"], "--es-byte-order is for"),
                      (["--to", "pgcopy2"], "not one of jsonl, npy, raw, embd, pgcopy, es-bulk, fvecs, bvecs")]:
        expect(["openai"] + args, 2, stdin=b"{}", err_has=[msg])
    expect(["decode", "--to", "embd"], 2, err_has=["not one of jsonl, npy, raw, pgcopy"])
    if np is None:
        print("SKIP: the format checks need numpy (Debian: python3-numpy)")
        return
    if not OPENAI:
        print("SKIP: the openai format checks (built with EMBD_WITH_OPENAI=OFF)")
        return
    rng = np.random.default_rng(33)
    v = rng.normal(0, 1, (7, 37)).astype(np.float32)
    v[1, ::3] = 0.0  # sparsevec drops zeros (and -0)
    v[2, 5] = -0.0
    v[3, :] = 0.0    # a sparse row with no elements, a bit row of zeros
    v[4, 0], v[4, 1], v[4, 2] = 65504.0, -65519.0, 1e-8  # halfvec: largest, rounds to -65504, subnormal
    body = write("fmt.json", body_np(v))
    src = write("fmt.embd", batch_np(v))
    for typ in PG_TYPES:
        for start in (None, 0, -3, 2**62):
            extra = ["--pg-type", typ] + ([] if start is None else ["--pg-id", str(start)])
            out, _ = expect(["openai", body, "--to", "pgcopy"] + extra, 0)
            try:
                rows = pg_rows(out)
            except Exception as e:  # noqa: BLE001
                check(False, "pgcopy %s: the stream does not parse: %s" % (typ, e))
                continue
            check(len(rows) == len(v), "pgcopy %s: %d rows" % (typ, len(rows)))
            for i, r in enumerate(rows):
                want = [pg_field(typ, v[i])]
                if start is not None:
                    want.insert(0, struct.pack(">q", start + i))
                check(r == want, "pgcopy --pg-type %s --pg-id %s: row %d differs from numpy's" % (typ, start, i))
            # the same rows from an EMBD batch
            dout, _ = expect(["decode", src, "--to", "pgcopy"] + extra, 0)
            check(dout == out, "decode --to pgcopy %s %s: as openai's" % (typ, start))
        if typ == "vector":
            check(out == expect(["openai", body, "--to", "pgcopy"] + ([] if start is None else ["--pg-id", str(start)]),
                                0)[0], "--pg-type vector is the default")
    out, _ = expect(["openai", body, "--to", "pgcopy", "--pg-type", "real[]"], 0)
    check(out[19:19 + 6] == struct.pack(">hi", 1, 20 + 8 * 37), "real[] is float4[]")
    # a half batch: decode takes f16 frames as their exact float32 values
    h = v.astype(np.float16)
    hsrc = write("fmt16.embd", struct.pack("<I", len(h)) + b"".join(frame_v2("f16", r.astype(np.float32).tolist())
                                                                  for r in h))
    out, _ = expect(["decode", hsrc, "--to", "pgcopy", "--pg-type", "halfvec"], 0)
    check([r[0] for r in pg_rows(out)] == [pg_field("halfvec", r.astype(np.float32)) for r in h],
          "decode of f16 frames --to pgcopy --pg-type halfvec: the same halves")
    # the ES golden: [1.0, 2.0]
    g = write("g.json", body_np(np.array([[1.0, 2.0]], np.float32)))
    out, _ = expect(["openai", g, "--to", "es-bulk", "--es-index", "docs"], 0)
    check(out == b'{"index":{"_index":"docs"}}\n{"embedding":"P4AAAEAAAAA="}\n', "es-bulk big-endian golden: %r" % out)
    out, _ = expect(["openai", g, "--to", "es-bulk", "--es-index", "docs", "--es-byte-order", "little",
                     "--es-field", "emb", "--es-id", "7"], 0)
    check(out == b'{"index":{"_index":"docs","_id":"7"}}\n{"emb":"AACAPwAAAEA="}\n',
          "es-bulk little-endian golden: %r" % out)
    for order, dt in (("big", ">f4"), ("little", "<f4")):
        for cmd in (["openai", body], ["decode", src]):
            out, _ = expect(cmd + ["--to", "es-bulk", "--es-index", 'we"ird\\ix', "--es-field", "vec",
                                   "--es-byte-order", order, "--es-id", "-2"], 0)
            lines = out.decode().split("\n")
            check(lines[-1] == "" and len(lines) == 2 * len(v) + 1, "es-bulk: two lines per vector, \\n-ended")
            ok = True
            for i in range(len(v)):
                a, d = json.loads(lines[2 * i]), json.loads(lines[2 * i + 1])
                ok &= a == {"index": {"_index": 'we"ird\\ix', "_id": str(i - 2)}}
                got = np.frombuffer(base64.b64decode(d["vec"]), dt)
                ok &= list(d) == ["vec"] and got.tobytes() == v[i].astype(dt).tobytes()
            check(ok, "%s es-bulk %s: actions and base64 values as numpy's" % (cmd[0], order))
    iv = np.array([[-128, 0, 5, 127], [1, 2, 3, -4]], np.float32)
    out, _ = expect(["openai", write("i8.json", body_np(iv)), "--to", "es-bulk", "--es-index", "x",
                     "--es-element", "byte"], 0)
    vals = [json.loads(l)["embedding"] for l in out.decode().splitlines()[1::2]]
    check(vals == [r.astype(np.int8).tobytes().hex() for r in iv], "es-bulk --es-element byte: hex of int8")
    out, _ = expect(["openai", body, "--to", "es-bulk", "--es-index", "x", "--es-element", "bit"], 1,
                    err_has=["37 dims"])
    bv = v[:, :32]
    out, _ = expect(["openai", write("b32.json", body_np(bv)), "--to", "es-bulk", "--es-index", "x",
                     "--es-element", "bit"], 0)
    vals = [json.loads(l)["embedding"] for l in out.decode().splitlines()[1::2]]
    check(vals == [np.packbits(r > 0).tobytes().hex() for r in bv], "es-bulk --es-element bit: hex of packed bits")
    # fvecs, bvecs: numpy.fromfile's record layout
    for cmd in (["openai", body], ["decode", src]):
        f = path("o.fvecs")
        expect(cmd + ["--to", "fvecs", "-o", f], 0)
        rec = np.fromfile(f, dtype="<i4").reshape(-1, 37 + 1)
        check((rec[:, 0] == 37).all() and np.array_equal(rec[:, 1:].view("<f4").view(np.uint32), v.view(np.uint32)),
              "%s --to fvecs: records of int32 37 and the float32 values" % cmd[0])
    u = rng.integers(0, 256, (5, 12)).astype(np.float32)
    ub = write("u8.json", body_np(u))
    out, _ = expect(["openai", ub, "--to", "bvecs"], 0)
    rec = np.frombuffer(out, np.uint8).reshape(-1, 12 + 4)
    check((rec[:, :4].copy().view("<i4")[:, 0] == 12).all() and np.array_equal(rec[:, 4:], u.astype(np.uint8)),
          "--to bvecs: int32 12 then the bytes")
    out, _ = expect(["openai", "--dtype", "uint8", "--keep-dtype", write("u8l.json", json.dumps(
        {"data": [{"index": i, "embedding": r.astype(int).tolist()} for i, r in enumerate(u)]})),
        "--to", "bvecs"], 0)
    check(np.array_equal(np.frombuffer(out, np.uint8).reshape(-1, 16)[:, 4:], u.astype(np.uint8)),
          "--keep-dtype uint8 rows --to bvecs")
    # refused rows: exit 1, the vector and element named, nothing written
    bad = v.copy()
    bad[3, 2] = np.nan
    nb = write("nan.json", body_np(bad))
    nsrc = write("nan.embd", batch_np(bad))
    hb = v.copy()
    hb[5, 9] = 65520.0
    hbody = write("h.json", body_np(hb))
    wide = write("wide.json", body_np(np.ones((1, 16001), np.float32)))
    frac = write("frac.json", body_np(np.array([[1, 2.5]], np.float32)))
    cases = [([nb, "--to", "pgcopy"], ["vector 3: element 2: NaN"]),
             ([nb, "--to", "pgcopy", "--pg-type", "halfvec"], ["vector 3: element 2: NaN"]),
             ([nb, "--to", "pgcopy", "--pg-type", "sparsevec", "--pg-id", "1"], ["vector 3: element 2: NaN"]),
             ([nb, "--to", "pgcopy", "--pg-type", "float4[]", "--pg-finite"], ["vector 3: element 2: NaN"]),
             ([nb, "--to", "pgcopy", "--pg-type", "bytea", "--pg-finite"], ["vector 3: element 2: NaN"]),
             ([hbody, "--to", "pgcopy", "--pg-type", "halfvec"], ["vector 5: element 9", "65520"]),
             ([wide, "--to", "pgcopy"], ["vector 0: 16001 dims"]),
             ([nb, "--to", "es-bulk", "--es-index", "x"], ["vector 3: element 2: NaN"]),
             ([frac, "--to", "bvecs"], ["vector 0", "2.5"]),
             ([frac, "--to", "es-bulk", "--es-index", "x", "--es-element", "byte"], ["vector 0", "2.5"])]
    for args, msgs in cases:
        out, _ = expect(["openai"] + args, 1, err_has=msgs)
        check(out == b"", "openai %s: nothing on stdout (a pipe): %d bytes" % (" ".join(args[1:]), len(out)))
        o = path("refused.out")
        write("refused.out", b"before")
        expect(["openai"] + args + ["-o", o], 1)
        check(read("refused.out") == b"before" and not [n for n in os.listdir(cli_harness.TMP) if n.startswith(".refused")],
              "openai %s -o FILE: FILE as it was, no temporary file left" % " ".join(args[1:]))
        with open(o, "wb") as f:  # a redirected stdout file is cut back
            f.write(b"kept")
            f.flush()
            p = subprocess.run([cli_harness.EMBD, "openai"] + args, stdout=f, stderr=subprocess.PIPE)
        check(p.returncode == 1 and read("refused.out") == b"kept", "openai %s > FILE: cut back" % " ".join(args[1:]))
    # the NaN loads where the type takes it
    out, _ = expect(["openai", nb, "--to", "pgcopy", "--pg-type", "float4[]"], 0)
    check(pg_rows(out)[3][0] == pg_field("float4[]", bad[3]), "float4[] without --pg-finite keeps NaN")
    # decode writes as the frames come: into a pipe, a refused row ends the stream with a row
    # cut short after its field count (PostgreSQL refuses the whole COPY, tests/cli/test_cli_pg.py)
    out, _ = expect(["decode", nsrc, "--to", "pgcopy", "--pg-id", "0"], 1, err_has=["frame 3 at byte", "element 2: NaN"])
    want = PG_HEADER + b"".join(struct.pack(">hiqi", 2, 8, i, 4 + 4 * 37) + pg_field("vector", v[i]) for i in range(3))
    check(out == want + struct.pack(">h", 2), "decode --to pgcopy into a pipe: 3 rows, then a field count alone")
    try:
        pg_rows(out)
        check(False, "the cut pgcopy stream parses")
    except Exception:  # noqa: BLE001
        pass
    out, _ = expect(["decode", nsrc, "--to", "es-bulk", "--es-index", "x"], 1, err_has=["frame 3"])
    check(out.count(b"\n") == 6 and not out.endswith(b"\n"), "decode --to es-bulk into a pipe: last line unterminated")
    frac_src = write("frac.embd", batch_np(np.array([[1, 2], [3, 4.5]], np.float32)))
    out, _ = expect(["decode", frac_src, "--to", "bvecs"], 1, err_has=["frame 1"])
    check(out == struct.pack("<i", 2) + bytes([1, 2]) + struct.pack("<i", 2), "decode --to bvecs into a pipe: a record cut short")
    expect(["decode", nsrc, "--to", "pgcopy", "-o", path("cut.pg")], 1)
    check(not os.path.exists(path("cut.pg")), "decode --to pgcopy -o FILE: no file after a refused row")
    # a broken frame after good ones: cut the same way
    broken = bytearray(batch_np(v))
    broken[4 + 2 * (16 + 4 * 37) + 3] ^= 1  # frame 2's magic
    out, _ = expect(["decode", "--to", "pgcopy", "--pg-type", "float4[]"], 1, stdin=bytes(broken))
    check(out.endswith(struct.pack(">h", 1)) and len(out) == 19 + 2 * (2 + 4 + 20 + 8 * 37) + 2,
          "decode of a broken batch into a pipe: 2 rows, a field count alone")


GROUPS = {"help": t_help, "cpu": t_cpu, "encode": t_encode, "decode": t_decode,
          "inspect": t_inspect, "verify": t_verify, "openai": t_openai, "openai_dtype": t_openai_dtype, "npy": t_npy,
          "roundtrip": t_roundtrip, "big": t_big, "tokens": t_tokens, "bench": t_bench,
          "stream": t_stream, "faults": t_faults, "dtype_frames": t_dtype_frames, "formats": t_formats}


def openai_built():
    global OPENAI
    OPENAI = run(["openai"], b'{"data": []}')[0] != 4


def main():
    return cli_harness.main(__doc__, GROUPS, "embd-cli-", openai_built)


if __name__ == "__main__":
    sys.exit(main())
