"""Independent oracles for the embd tests: each computes the expected value from a
definition, the stdlib or numpy, never from embd."""
import base64
import json
import struct
from fractions import Fraction

import numpy as np


def f16_to_f32(raw, order="<"):
    return np.frombuffer(raw, dtype=order + "f2").astype(np.float32)


def bf16_to_f32(raw, order="<"):
    # bfloat16 is the upper half of a binary32.
    u = np.frombuffer(raw, dtype=order + "u2").astype(np.uint32) << 16
    return u.view(np.float32)


def _fp8(code, ebits, mbits, bias, fn):
    s = -1.0 if code & 0x80 else 1.0
    e = (code >> mbits) & ((1 << ebits) - 1)
    m = code & ((1 << mbits) - 1)
    if fn:  # e4m3fn: no infinities, S.1111.111 the only NaNs
        if e == (1 << ebits) - 1 and m == (1 << mbits) - 1:
            return float("nan")
    elif e == (1 << ebits) - 1:
        return s * float("inf") if m == 0 else float("nan")
    if e == 0:
        return s * m * 2.0 ** (1 - bias - mbits)
    return s * (1 + m / (1 << mbits)) * 2.0 ** (e - bias)


def fp8_e4m3_to_f32(raw):
    return np.array([_fp8(b, 4, 3, 7, True) for b in raw], dtype=np.float32)


def fp8_e5m2_to_f32(raw):
    return np.array([_fp8(b, 5, 2, 15, False) for b in raw], dtype=np.float32)


def bits_to_f32(raw, signed):
    """Packed bits, most significant bit first (numpy packbits' order); binary is Cohere's
    offset form (each byte the packed byte - 128): bit 1 -> +1, bit 0 -> -1."""
    b = np.frombuffer(raw, dtype=np.uint8)
    if signed:
        b = b ^ 0x80
    bits = np.unpackbits(b).astype(np.float32)
    return bits * 2 - 1 if signed else bits


def to_f32(raw, dtype, order="<"):
    """The expected float32 values of wire bytes in an embd dtype (name as embd spells it)."""
    if dtype == "f32":
        return np.frombuffer(raw, dtype=order + "f4").astype(np.float32)
    if dtype == "f16":
        return f16_to_f32(raw, order)
    if dtype == "bf16":
        return bf16_to_f32(raw, order)
    if dtype == "fp8-e4m3":
        return fp8_e4m3_to_f32(raw)
    if dtype == "fp8-e5m2":
        return fp8_e5m2_to_f32(raw)
    if dtype == "int8":
        return np.frombuffer(raw, dtype=np.int8).astype(np.float32)
    if dtype == "uint8":
        return np.frombuffer(raw, dtype=np.uint8).astype(np.float32)
    if dtype in ("binary", "ubinary"):
        return bits_to_f32(raw, dtype == "binary")
    raise ValueError(dtype)


def nearest_f32(text):
    """The float32 nearest the decimal `text` (ties to even), by exact rationals."""
    q = Fraction(text)
    if q == 0:  # the rationals have no -0: the sign is the text's
        return np.float32(-0.0 if text.lstrip().startswith("-") else 0.0)
    if abs(q) >= Fraction(2**128 - 2**103):  # at or past the midpoint of FLT_MAX and 2^128
        return np.float32(np.inf if q > 0 else -np.inf)
    with np.errstate(over="ignore", under="ignore"):
        f = np.float32(float(q))  # within one float32 step of the answer
    best = None
    for c in (np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))):
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - q)
        key = (d, int(np.array(c, dtype=np.float32).view(np.uint32)) & 1)
        if best is None or key < best[0]:
            best = (key, c)
    return np.float32(best[1])


def openai_python_decode(body):
    """openai-python's rule for encoding_format base64 (its documented behaviour):
    json.loads, then per item np.frombuffer(base64.b64decode(s), dtype="float32"), rows in
    the order of data[].index."""
    data = json.loads(body)["data"]
    rows = sorted(data, key=lambda d: d["index"])
    return np.array([np.frombuffer(base64.b64decode(d["embedding"]), dtype="float32") for d in rows],
                    dtype=np.float32)


def vllm_bytes_decode(body, metadata):
    """vLLM's encoding_format "bytes" rule, from its documented behaviour: each metadata
    item's body[start:end] holds embed_dtype elements in its endianness, of `shape`; row i
    is the item whose index is i."""
    meta = json.loads(metadata)
    names = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "fp8_e4m3": "fp8-e4m3",
             "fp8_e5m2": "fp8-e5m2"}
    rows = {}
    for it in meta["data"]:
        order = ">" if it["endianness"] == "big" else "<"
        vals = to_f32(body[it["start"]:it["end"]], names.get(it["embed_dtype"], it["embed_dtype"]), order)
        rows[it["index"]] = vals.reshape(int(np.prod(it["shape"])))
    return np.array([rows[i] for i in range(len(rows))], dtype=np.float32)


def seed_frame(vector):
    """The seed TypeScript codec's frame (000 seed, encodeEmbedding), from its documented
    layout: magic EMBD (BE), version 1, flags 0, padding, dims (LE), CRC-32 of bytes 0-11
    (LE), float32 LE values."""
    import zlib
    v = np.asarray(vector, dtype="<f4")
    head = struct.pack(">I", 0x454D4244) + bytes([1, 0, 0, 0]) + struct.pack("<I", v.shape[0])
    return head + struct.pack("<I", zlib.crc32(head)) + v.tobytes()
