#!/usr/bin/env python3
"""Writes the seed corpora fuzz/corpus/codec_msgpack/ and fuzz/corpus/codec_proto/ for
fuzz_codec_msgpack.c and fuzz_codec_proto.c: byte 0 = max_frame_bytes selector
(1 << (b % 16)) and max_ids (b >> 4, 0 = default), bytes 1-2 = chunking seed (byte 2's
bit 6: the delta variant, bit 7 with it: protobuf-delta's base_id in field 4), then the
stream. Valid streams as the engines write them (vLLM's encoders, the forks' protobuf
with done=false written out), canonical ones, and broken ones. Deterministic; msgpack is
written by hand here (no Python package needed):
    python3 fuzz/gen_codec_modes_corpus.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def mp_uint(v):
    if v < 0x80:
        return bytes([v])
    if v <= 0xFF:
        return b"\xcc" + bytes([v])
    if v <= 0xFFFF:
        return b"\xcd" + struct.pack(">H", v)
    if v <= 0xFFFFFFFF:
        return b"\xce" + struct.pack(">I", v)
    return b"\xcf" + struct.pack(">Q", v)


def mp_str(s):
    b = s.encode() if isinstance(s, str) else s
    if len(b) < 32:
        return bytes([0xA0 | len(b)]) + b
    return b"\xd9" + bytes([len(b)]) + b


def mp_frame(ids, done, fr=None, tc=None, extra=b"", n_extra=0):
    n = 2 + (fr is not None) + (tc is not None) + n_extra
    out = bytes([0x80 | n]) + extra + mp_str("ids")
    out += (bytes([0x90 | len(ids)]) if len(ids) < 16 else b"\xdc" + struct.pack(">H", len(ids)))
    out += b"".join(mp_uint(i) for i in ids)
    out += mp_str("done") + (b"\xc3" if done else b"\xc2")
    if fr is not None:
        out += mp_str("finish_reason") + mp_str(fr)
    if tc is not None:
        out += mp_str("tool_calls") + tc
    return out


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def pb_frame(ids, done, fr=None, tc=b"", forks=False):
    body = b""
    if ids:
        packed = b"".join(varint(i) for i in ids)
        body += b"\x0a" + varint(len(packed)) + packed
    if done or forks:
        body += b"\x10" + (b"\x01" if done else b"\x00")
    if fr is not None:
        body += b"\x1a" + varint(len(fr)) + fr.encode()
    body += tc
    return struct.pack(">I", len(body)) + body


def zigzag(d):
    return 2 * d if d >= 0 else -2 * d - 1


def deltas(ids, base):
    out, prev = [], base
    for i in ids:
        out.append(zigzag(i - prev))
        prev = i
    return out


def mp_delta_frame(ids, base, done, fr=None, tc=None):
    # the Codec Python reference's key order: base_id, ids_delta, done, finish_reason
    d = deltas(ids, base)
    out = bytes([0x84 + (tc is not None)]) + mp_str("base_id") + mp_uint(base) + mp_str("ids_delta")
    out += (bytes([0x90 | len(d)]) if len(d) < 16 else b"\xdc" + struct.pack(">H", len(d)))
    out += b"".join(mp_uint(v) for v in d)
    out += mp_str("done") + (b"\xc3" if done else b"\xc2")
    out += mp_str("finish_reason") + (mp_str(fr) if fr is not None else b"\xc0")
    if tc is not None:
        out += mp_str("tool_calls") + tc
    return out


def pb_delta_frame(ids, base, done, field=5, fr=None, tc=b""):
    body = b""
    if ids:
        packed = b"".join(varint(v) for v in deltas(ids, base))
        body += b"\x0a" + varint(len(packed)) + packed
    body += b"\x10" + (b"\x01" if done else b"\x00")
    if fr is not None:
        body += b"\x1a" + varint(len(fr)) + fr.encode()
    if field == 4:
        body += b"\x20" + varint(base) + tc
    else:
        body += tc + b"\x28" + varint(base)
    return struct.pack(">I", len(body)) + body


def delta_stream(frames, enc):
    out, base = b"", 0
    for f, done, fr in frames:
        out += enc(f, base, done, fr)
        base = f[-1] if f else base
    return out


def write(name, cases):
    out = os.path.join(HERE, "corpus", name)
    os.makedirs(out, exist_ok=True)
    for k, v in cases.items():
        with open(os.path.join(out, k), "wb") as f:
            f.write(v)


def main():
    big = 0x0F  # max_frame_bytes 32 KiB, default max_ids
    tool = b"\x91\x82" + mp_str("name") + mp_str("get_weather") + mp_str("arguments_json") + mp_str('{"city":"Oslo"}')
    ids = [9707, 11, 1879, 0, 127, 128, 65535, 65536, 151643]
    mp = {
        "vllm_stream": bytes([big, 1, 0]) + mp_frame([9707], False) + mp_frame([11, 1879], False)
        + mp_frame([], True, "eos_token"),
        "one_token_frames": bytes([big, 7, 1]) + b"".join(mp_frame([i], False) for i in ids) + mp_frame([2], True, "length"),
        "tool_calls": bytes([big, 3, 0]) + mp_frame([1, 2], False, None, tool) + mp_frame([], True, "stop"),
        "unknown_keys": bytes([big, 9, 0]) + mp_frame([5], False, extra=mp_str("model") + b"\x92\xcb" + bytes(8) + b"\xc0", n_extra=1),
        "max_u32": bytes([big, 2, 0]) + mp_frame([0xFFFFFFFF, 0], True, "error"),
        "wide_array": bytes([big, 5, 2]) + mp_frame(list(range(300)), False),
        "above_u32": bytes([big, 0, 0]) + b"\x81\xa3ids\x91" + mp_uint(1 << 32),
        "string_id": bytes([big, 0, 0]) + b"\x81\xa3ids\x92\x01\xa1x",
        "no_ids": bytes([big, 0, 0]) + b"\x81\xa4done\xc3",
        "huge_count": bytes([big, 0, 0]) + b"\x81\xa3ids\xdd\xff\xff\xff\xff",
        "deep": bytes([big, 0, 0]) + b"\x82\xa3ids\x90\xa1x" + b"\x91" * 40 + b"\x01",
        "not_a_map": bytes([big, 0, 0]) + b"\x93\x01\x02\x03",
        "truncated": bytes([big, 4, 0]) + mp_frame([1, 2, 3], False)[:-3],
        "small_max": bytes([0x13, 1, 0]) + mp_frame([1, 2, 3, 4], False),
        "never_used_c1": bytes([big, 0, 0]) + b"\x81\xa3ids\x91\xc1",
        "ext_and_bin": bytes([big, 6, 0]) + b"\x83\xa3ids\x90\xa1e\xd6\x01\x00\x00\x00\x00\xa1b\xc4\x02ab",
    }
    pb = {
        "vllm_forks": bytes([big, 1, 0]) + pb_frame([9707], False, forks=True) + pb_frame([11, 1879], False, forks=True)
        + pb_frame([], True, "eos_token", forks=True),
        "canonical_one_token": bytes([big, 7, 1]) + b"".join(pb_frame([i], False) for i in ids) + pb_frame([2], True, "length"),
        "tool_calls": bytes([big, 3, 0]) + pb_frame([1], False, tc=b"\x22\x0d\x0a\x0bget_weather")
        + pb_frame([], True, "stop", tc=b"\x22\x00"),
        "unknown_fields": bytes([big, 9, 0]) + pb_frame([5], False, tc=b"\x28\x96\x01\x31" + bytes(8) + b"\x3a\x01a\x45" + bytes(4)),
        "unpacked_ids": bytes([big, 2, 0]) + struct.pack(">I", 6) + b"\x08\x01\x08\x96\x01\x10",
        "max_u32": bytes([big, 2, 0]) + pb_frame([0xFFFFFFFF, 0], True, "error"),
        "wide": bytes([big, 5, 2]) + pb_frame(list(range(0, 300000, 1000)), False),
        "zero_length": bytes([big, 0, 0]) + b"\0\0\0\0",
        # empty frames (ids [], done false) between others: zero-length (a proto3 encoder)
        # and 10 00 (vLLM, libcodec, embd), split at every chunking the seed picks
        "zero_length_between": bytes([big, 3, 1]) + pb_frame([1], False) + b"\0\0\0\0" + b"\0\0\0\0" +
        pb_frame([], False, forks=True) + pb_frame([2], True, "stop"),
        "group": bytes([big, 0, 0]) + b"\0\0\0\x02\x0b\x00",
        "unterminated": bytes([big, 0, 0]) + b"\0\0\0\x03\x0a\x01\x80",
        "long_varint": bytes([big, 0, 0]) + b"\0\0\0\x0c\x0a\x0a" + b"\x80" * 10,
        "above_u32": bytes([big, 0, 0]) + b"\0\0\0\x07\x0a\x05\x80\x80\x80\x80\x10",
        "length_beyond_max": bytes([0x04, 0, 0]) + b"\0\0\1\0" + bytes(256),
        "prefix_huge": bytes([big, 0, 0]) + b"\xff\xff\xff\xff",
        "truncated": bytes([big, 4, 0]) + pb_frame([1, 2, 3], True)[:-2],
        "small_max_ids": bytes([0x2F, 1, 0]) + pb_frame([1, 2, 3], False),
    }
    D, D4 = 0x40, 0xC0  # byte 2: the delta variant; protobuf's base_id in field 4
    frames = [([9707, 9708, 11], False, None), ([], False, None), ([1879, 151643, 0], False, None),
              ([2], True, "eos_token")]
    mp.update({
        "delta_stream": bytes([big, 1, D]) + delta_stream(frames, lambda f, b, d, r: mp_delta_frame(f, b, d, r)),
        "delta_tool_calls": bytes([big, 3, D]) + mp_delta_frame([1, 2], 0, False, tc=tool),
        "delta_max_u32": bytes([big, 2, D]) + mp_delta_frame([0xFFFFFFFF, 0], 0, True, "error"),
        "delta_unknown_key": bytes([big, 4, D]) + b"\x83" + mp_str("delta") + b"\xc3" + mp_str("base_id") + b"\x0a" +
        mp_str("ids_delta") + b"\x92\x03\x04",
        "delta_below_0": bytes([big, 0, D]) + b"\x82" + mp_str("base_id") + b"\x03" + mp_str("ids_delta") + b"\x92\x01\x09",
        "delta_plain_ids": bytes([big, 0, D]) + mp_frame([1], False),
        "delta_no_base": bytes([big, 0, D]) + b"\x81" + mp_str("ids_delta") + b"\x90",
    })
    pb.update({
        "delta_field5": bytes([big, 1, D]) + delta_stream(frames, lambda f, b, d, r: pb_delta_frame(f, b, d, 5, r)),
        "delta_field4": bytes([big, 1, D4]) + delta_stream(frames, lambda f, b, d, r: pb_delta_frame(f, b, d, 4, r)),
        "delta_field4_tool_calls": bytes([big, 3, D4]) + pb_delta_frame([1], 7, False, 4, tc=b"\x22\x0d\x0a\x0bget_weather"),
        "delta_field5_tool_calls": bytes([big, 3, D]) + pb_delta_frame([1], 7, False, 5, tc=b"\x22\x0d\x0a\x0bget_weather"),
        "delta_no_base": bytes([big, 0, D]) + pb_frame([1], False, forks=True),
        "delta_base_late": bytes([big, 2, D]) + b"\0\0\0\x08\x0a\x02\x02\x04\x28\x07\x28\x0a",
        "delta_below_0": bytes([big, 0, D]) + b"\0\0\0\5\x0a\x01\x03\x28\x01",
        "delta_base_int32": bytes([big, 0, D4]) + b"\0\0\0\6\x20\x80\x80\x80\x80\x08",
    })
    write("codec_msgpack", mp)
    write("codec_proto", pb)


if __name__ == "__main__":
    main()
