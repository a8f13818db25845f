"""embd.codec against oracles that do not use embd: python3-msgpack for msgpack mode, a
protobuf encoder written here from proto/codec.proto (varints, tags), the session frame
layout of the Codec README ([type u8][payload_len u32 BE][payload], big-endian uint32 ids)
with struct, tokenizer maps read with json and hashed with hashlib, ill-formed bytes
against Python's own UTF-8 decoder (errors="replace": one U+FFFD per maximal subpart)."""
import gc
import hashlib
import json
import struct
import sys
import threading
from pathlib import Path

import msgpack
import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck, strategies as st

import embd
from embd import codec

ROOT = Path(__file__).resolve().parents[2]
MAP_PATH = ROOT / "tests" / "data" / "tokmap-small.json"
MAP_BYTES = MAP_PATH.read_bytes()
MAP_JSON = json.loads(MAP_BYTES)

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

u32 = st.integers(0, 2**32 - 1)
id_lists = st.lists(st.one_of(st.integers(0, 300), u32), max_size=40)


def split_feed(reader, data, cuts):
    """Feeds data cut at the given points; returns all frames."""
    out, pos = [], 0
    for c in sorted(set(min(c, len(data)) for c in cuts)) + [len(data)]:
        out += reader.feed(data[pos:c])
        pos = c
    reader.finish()
    return out


def raises_embd(code, fn, *args, **kw):
    with pytest.raises(embd.Error) as ei:
        fn(*args, **kw)
    assert isinstance(ei.value, ValueError)
    assert ei.value.code == code, (ei.value.code, str(ei.value))
    return ei.value


# ---- session frames: the byte layout ------------------------------------------------------

def sess(t, payload=b""):
    return struct.pack(">BI", t, len(payload)) + payload


def sess_tokens(ids):
    return sess(2, struct.pack(">%dI" % len(ids), *ids))


def test_session_worked_example():
    # The spec's example: ids 50001..50003 are 17 bytes.
    assert codec.encode_tokens([50001, 50002, 50003]).hex() == \
        "020000000c0000c3510000c3520000c353"
    assert codec.encode_eos() == b"\x03\x00\x00\x00\x00"


@FAST
@given(id_lists, st.integers(1, 7))
def test_session_encoders(ids, per):
    assert codec.encode_tokens(ids) == sess_tokens(ids)
    assert codec.encode_tokens(np.array(ids, dtype=np.uint32)) == sess_tokens(ids)
    assert codec.encode_tokens(np.array(ids, dtype=np.int64)) == sess_tokens(ids)
    want = b"".join(sess_tokens(ids[i:i + per]) for i in range(0, len(ids), per))
    assert codec.encode_tokens(ids, per_frame=per) == want


@FAST
@given(st.text(max_size=50))
def test_session_error_frame(text):
    wire = codec.encode_error(text)
    assert wire == sess(4, text.encode("utf-8", "surrogatepass"))


session_frames = st.one_of(
    id_lists.map(lambda ids: ("tokens", ids)),
    st.just(("eos", None)),
    st.text(max_size=20).map(lambda s: ("error", s)),
    st.binary(max_size=20).map(lambda b: ("latents", b)),
    st.tuples(st.integers(7, 255), st.binary(max_size=12)).map(lambda t: ("unknown", t)),
)


def session_wire(frames):
    out = b""
    for kind, v in frames:
        if kind == "tokens":
            out += sess_tokens(v)
        elif kind == "eos":
            out += sess(3)
        elif kind == "error":
            out += sess(4, v.encode("utf-8", "surrogatepass"))
        elif kind == "latents":
            out += sess(6, v)
        else:
            out += sess(v[0], v[1])
    return out


def check_session(frames, got, wire):
    assert len(got) == len(frames)
    off = 0
    for i, ((kind, v), f) in enumerate(zip(frames, got)):
        assert f.index == i and f.offset == off
        assert f.ids.dtype == np.uint32
        if kind == "tokens":
            assert f.type == "tokens" and f.ids.tolist() == v and not f.done
            assert f.payload is None
        elif kind == "eos":
            assert f.type == "eos" and f.done and f.ids.size == 0 and f.payload == b""
        elif kind == "error":
            assert f.type == "error" and f.error == v and f.done
        elif kind == "latents":
            assert f.type == "latents" and f.payload == v
        else:
            assert f.type == "unknown" and f.type_code == v[0] and f.payload == v[1]
        assert f.finish_reason is None and f.tool_calls is None
        assert wire[off] == f.type_code
        off += f.size
    assert off == len(wire)


@FAST
@given(st.lists(session_frames, max_size=8), st.lists(st.integers(0, 400), max_size=10))
def test_session_reader_random_splits(frames, cuts):
    wire = session_wire(frames)
    r = codec.TokenReader("session")
    got = split_feed(r, wire, cuts)
    check_session(frames, got, wire)
    assert r.frames == len(frames) and r.offset == len(wire)


def test_session_every_chunk_size():
    frames = [("tokens", [1, 2, 3]), ("tokens", []), ("error", "é😀"), ("latents", b"\x00\x01"),
              ("unknown", (0x42, b"xyz")), ("tokens", list(range(100, 400))), ("eos", None)]
    wire = session_wire(frames)
    whole = codec.decode(wire)
    check_session(frames, whole, wire)
    for size in range(1, len(wire) + 1):
        r = codec.TokenReader("session")
        got = [f for i in range(0, len(wire), size) for f in r.feed(wire[i:i + size])]
        r.finish()
        assert [(f.type, f.ids.tolist(), f.payload, f.offset) for f in got] == \
            [(f.type, f.ids.tolist(), f.payload, f.offset) for f in whole]


def test_session_read_iterates_chunks():
    wire = codec.encode_tokens([5, 6]) + codec.encode_eos()
    assert [f.type for f in codec.TokenReader().read([wire[:3], wire[3:11], wire[11:]])] == \
        ["tokens", "eos"]


def test_session_errors():
    good = sess_tokens([1])  # 9 bytes
    # TOKENS length not a multiple of 4: offset of the length field.
    e = raises_embd("EMBD_ERR_CODEC_TOKENS_LENGTH", codec.decode, good + sess(2, b"abcdefg"))
    assert e.offset == 9 + 1
    e = raises_embd("EMBD_ERR_CODEC_EOS_PAYLOAD", codec.decode, good + sess(3, b"x"))
    assert e.offset == 9 + 1
    # Invalid UTF-8 in an ERROR frame: the bad byte.
    e = raises_embd("EMBD_ERR_CODEC_UTF8", codec.decode, good + sess(4, b"ab\xc0\xafcd"))
    assert e.offset == 9 + 5 + 2
    e = raises_embd("EMBD_ERR_CODEC_FRAME_TOO_LARGE", codec.decode, sess_tokens(range(5)),
                    max_payload=16)
    assert e.offset == 1
    e = raises_embd("EMBD_ERR_CODEC_UNKNOWN_TYPE", codec.decode, good + sess(9, b""),
                    strict_types=True)
    assert e.offset == 9
    # Truncated: found by finish, at the end of the input.
    r = codec.TokenReader()
    assert len(r.feed(good + good[:6])) == 1
    e = raises_embd("EMBD_ERR_CODEC_TRUNCATED", r.finish)
    assert e.offset == 15


def test_session_error_keeps_earlier_frames_and_is_sticky():
    r = codec.TokenReader()
    bad = sess_tokens([7, 8]) + codec.encode_eos() + sess(2, b"xyz")
    with pytest.raises(embd.Error) as ei:
        r.feed(bad)
    e = ei.value
    assert e.code == "EMBD_ERR_CODEC_TOKENS_LENGTH"
    assert [f.type for f in e.frames] == ["tokens", "eos"]
    assert e.frames[0].ids.tolist() == [7, 8]
    e2 = raises_embd("EMBD_ERR_CODEC_TOKENS_LENGTH", r.feed, codec.encode_eos())
    assert e2.offset == e.offset and e2.frames == []
    raises_embd("EMBD_ERR_CODEC_TOKENS_LENGTH", r.finish)


def test_encode_frame_rules():
    assert codec.encode_frame("latent_header", b"\x01\x02") == sess(5, b"\x01\x02")
    assert codec.encode_frame(6, b"") == sess(6)
    raises_embd("EMBD_ERR_CODEC_TOKENS_LENGTH", codec.encode_frame, "tokens", b"abc")
    raises_embd("EMBD_ERR_CODEC_EOS_PAYLOAD", codec.encode_frame, "eos", b"x")
    e = raises_embd("EMBD_ERR_CODEC_UTF8", codec.encode_error, b"ok\xff")
    assert e.offset == 2
    raises_embd("EMBD_ERR_INVALID_ARGUMENT", codec.encode_frame, 7, b"")
    with pytest.raises(ValueError):
        codec.encode_frame("nope")
    with pytest.raises(TypeError):
        codec.encode_frame(2.0, b"")
    with pytest.raises(TypeError):
        codec.encode_error(42)


def test_handshake_round_trip():
    wire = codec.encode_hello("0.5", accept_tokenizers=["a/b", "embd-test-small-v1"],
                              modalities=["text-tokens"])
    assert wire[0] == 0 and struct.unpack(">I", wire[1:5])[0] == len(wire) - 5
    assert json.loads(wire[5:]) == {"codec_version": "0.5",
                                    "accept_tokenizers": ["a/b", "embd-test-small-v1"],
                                    "modalities": ["text-tokens"]}
    hello = codec.decode(wire)[0]
    assert hello.type == "hello"
    h = hello.handshake()
    assert h["codec_version"] == "0.5" and h["accept_decoders"] == []
    assert codec.pick_tokenizer(hello, ["embd-test-small-v1", "x"]) == 1
    raises_embd("EMBD_ERR_CODEC_NO_TOKENIZER", codec.pick_tokenizer, hello, ["zzz"])

    pin = "sha256:" + hashlib.sha256(MAP_BYTES).hexdigest()
    wire = codec.encode_ready("0.5", tokenizer_id="embd-test-small-v1",
                              map_url="https://example.invalid/m.json", map_hash=pin,
                              required_features=["f1"])
    doc = json.loads(wire[5:])
    assert doc["map_hash"] == pin and doc["required_features"] == ["f1"]
    ready = codec.decode(wire)[0].handshake()
    assert ready["map_hash"] == pin and ready["transport"] is None
    # Peers may write the pin in upper case: parse normalises it.
    up = json.dumps({"codec_version": "0.5", "tokenizer_id": "t", "map_url": "u",
                     "map_hash": "SHA256:" + pin[7:].upper()}).encode()
    assert codec.parse_ready(up)["map_hash"] == pin
    raises_embd("EMBD_ERR_CODEC_HANDSHAKE", codec.encode_ready, "0.5", tokenizer_id="t",
                map_url="u", map_hash="md5:00")
    raises_embd("EMBD_ERR_CODEC_HANDSHAKE", codec.encode_ready, "0.5")
    raises_embd("EMBD_ERR_CODEC_HANDSHAKE", codec.parse_hello, b'{"codec_version": 5}')
    with pytest.raises(TypeError):
        codec.encode_hello("0.5", accept_tokenizers="a/b")  # a str is not a list
    with pytest.raises(TypeError):
        codec.encode_hello(0.5)
    with pytest.raises(ValueError):
        codec.encode_hello("0.5\x00")


def test_forward():
    wire = (codec.encode_hello("0.5") + codec.encode_tokens([1, 2]) + sess(6, b"L")
            + codec.encode_eos())
    assert codec.forward(wire) == codec.encode_tokens([1, 2]) + codec.encode_eos()
    assert codec.forward(wire, ["latents"]) == sess(6, b"L")
    raises_embd("EMBD_ERR_CODEC_TRUNCATED", codec.forward, wire[:-1])


# ---- msgpack mode: python3-msgpack as the oracle -------------------------------------------

tool_values = st.one_of(st.none(), st.integers(-5, 5), st.text(max_size=8),
                        st.lists(st.dictionaries(st.text(max_size=4), st.integers(0, 9),
                                                 max_size=3), max_size=3))
stream_frames = st.tuples(
    id_lists, st.booleans(), st.one_of(st.none(), st.sampled_from(["stop", "length"]),
                                       st.text(max_size=40)),
    st.one_of(st.just(None), tool_values.map(lambda v: ("tc", v))))


def mp_frame(ids, done, fr, tc):
    d = {"ids": ids, "done": done}
    if fr is not None:
        d["finish_reason"] = fr
    if tc is not None:
        d["tool_calls"] = tc[1]
    return msgpack.packb(d)


def check_stream(frames, got, tc_decode):
    assert len(got) == len(frames)
    for i, ((ids, done, fr, tc), f) in enumerate(zip(frames, got)):
        assert f.type == "tokens" and f.index == i
        assert f.ids.dtype == np.uint32 and f.ids.tolist() == ids
        assert f.done is done and f.finish_reason == fr
        if tc is None:
            assert f.tool_calls is None
        else:
            assert tc_decode(f.tool_calls) == tc[1]


@FAST
@given(st.lists(stream_frames, max_size=6), st.lists(st.integers(0, 600), max_size=10))
def test_msgpack_reader(frames, cuts):
    wire = b"".join(mp_frame(*f) for f in frames)
    got = split_feed(codec.TokenReader("msgpack"), wire, cuts)
    check_stream(frames, got, msgpack.unpackb)
    off = 0
    for f in got:
        assert f.offset == off
        off += f.size
    assert off == len(wire)


@FAST
@given(stream_frames)
def test_msgpack_encoder(frame):
    ids, done, fr, tc = frame
    raw_tc = None if tc is None else msgpack.packb(tc[1])
    wire = codec.encode_msgpack_frame(ids, done, fr, raw_tc)
    want = {"ids": ids, "done": done}
    if fr is not None:
        want["finish_reason"] = fr
    if tc is not None:
        want["tool_calls"] = tc[1]
    assert msgpack.unpackb(wire) == want
    # Same key order and shortest encodings as msgpack's packer: the same bytes.
    assert wire == mp_frame(*frame)


def test_msgpack_every_chunk_size():
    frames = [([1, 2, 300, 2**32 - 1], False, None, None), ([], False, None, ("tc", [{"a": 1}])),
              ([70000], True, "stop", None)]
    wire = b"".join(mp_frame(*f) for f in frames)
    for size in range(1, len(wire) + 1):
        r = codec.TokenReader("msgpack")
        got = [f for i in range(0, len(wire), size) for f in r.feed(wire[i:i + size])]
        r.finish()
        check_stream(frames, got, msgpack.unpackb)


def test_msgpack_errors():
    good = msgpack.packb({"ids": [1], "done": False})
    bad = msgpack.packb({"ids": [1, "x"], "done": False})
    with pytest.raises(embd.Error) as ei:
        codec.decode(good + bad, "msgpack")
    e = ei.value
    assert e.code == "EMBD_ERR_MSGPACK" and len(good) < e.offset < len(good) + len(bad)
    assert [f.ids.tolist() for f in e.frames] == [[1]]
    raises_embd("EMBD_ERR_MSGPACK", codec.decode, msgpack.packb({"ids": [2**32]}), "msgpack")
    raises_embd("EMBD_ERR_MSGPACK", codec.decode, msgpack.packb({"ids": [-1]}), "msgpack")
    raises_embd("EMBD_ERR_MSGPACK", codec.decode, msgpack.packb({"ids": [], "done": 1}), "msgpack")
    raises_embd("EMBD_ERR_MSGPACK", codec.decode, msgpack.packb([1, 2]), "msgpack")
    raises_embd("EMBD_ERR_MSGPACK", codec.decode, msgpack.packb({"done": True}), "msgpack")
    big = msgpack.packb({"ids": list(range(100)), "done": False})
    raises_embd("EMBD_ERR_MSGPACK", codec.decode, big, "msgpack", max_frame_bytes=64)
    raises_embd("EMBD_ERR_MSGPACK", codec.decode, big, "msgpack", max_ids=99)
    assert len(codec.decode(big, "msgpack", max_ids=100)) == 1
    r = codec.TokenReader("msgpack")
    assert r.feed(good + good[:3]) and True
    e = raises_embd("EMBD_ERR_MSGPACK", r.finish)
    assert e.offset == len(good) + 3
    # tool_calls that are not one msgpack value cannot be written.
    raises_embd("EMBD_ERR_INVALID_ARGUMENT", codec.encode_msgpack_frame, [1], tool_calls=b"\x92\x01")


# ---- delta variants -------------------------------------------------------------------------

def zigzag(v):
    return 2 * v if v >= 0 else -2 * v - 1


def deltas(ids, base):
    out, prev = [], base
    for i in ids:
        out.append(zigzag(i - prev))
        prev = i
    return out


def mpd_frame(ids, base, done, fr):
    return msgpack.packb({"base_id": base, "ids_delta": deltas(ids, base), "done": done,
                          "finish_reason": fr})


@FAST
@given(st.lists(st.tuples(id_lists, st.booleans(), st.one_of(st.none(), st.text(max_size=10)))
                , max_size=6), st.lists(st.integers(0, 400), max_size=8))
def test_msgpack_delta(frames, cuts):
    wire, base, enc = b"", 0, codec.DeltaEncoder("msgpack-delta")
    encoded = b""
    for ids, done, fr in frames:
        one = mpd_frame(ids, base, done, fr)
        assert codec.encode_msgpack_delta_frame(ids, base, done, fr) == one
        wire += one
        encoded += enc.encode(ids, done, fr)
        if ids:
            base = ids[-1]
    assert encoded == wire
    got = split_feed(codec.TokenReader("msgpack-delta"), wire, cuts)
    check_stream([(ids, done, fr, None) for ids, done, fr in frames], got, None)


def test_msgpack_delta_errors():
    e = raises_embd("EMBD_ERR_MSGPACK", codec.decode,
                    msgpack.packb({"base_id": 3, "ids_delta": [0, 7]}), "msgpack-delta")
    assert "ids_delta[1]" in str(e)
    raises_embd("EMBD_ERR_MSGPACK", codec.decode, msgpack.packb({"ids": [1], "done": False}),
                "msgpack-delta")
    # The plain reader does not read deltas.
    raises_embd("EMBD_ERR_MSGPACK", codec.decode, mpd_frame([1], 0, False, None), "msgpack")


# ---- protobuf mode: an encoder written from proto/codec.proto -------------------------------

def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(field, wt):
    return varint(field << 3 | wt)


def ld(field, b):
    return tag(field, 2) + varint(len(b)) + b


def tool_call(name, args):
    return ld(1, name.encode()) + ld(2, args.encode())


def pb_message(ids, done, fr, tcs, packed=True, write_done=True, junk=b""):
    m = b""
    if ids:
        if packed:
            m += ld(1, b"".join(varint(i) for i in ids))
        else:
            m += b"".join(tag(1, 0) + varint(i) for i in ids)
    if write_done or done:
        m += tag(2, 0) + varint(int(done))
    m += junk
    if fr is not None:
        m += ld(3, fr.encode())
    for tc in tcs:
        m += ld(4, tc)
    return m


def pb_frame(msg):
    return struct.pack(">I", len(msg)) + msg


junk_fields = st.sampled_from([b"", tag(9, 0) + varint(300), tag(10, 1) + b"12345678",
                               tag(11, 5) + b"1234", ld(12, b"unknown")])
pb_frames = st.tuples(id_lists, st.booleans(),
                      st.one_of(st.none(), st.sampled_from(["stop", "length", "tool_calls"])),
                      st.lists(st.tuples(st.text("abc", max_size=5), st.text("{}:1", max_size=8))
                               .map(lambda t: tool_call(*t)), max_size=2),
                      st.booleans(), st.booleans(), junk_fields)


@FAST
@given(st.lists(pb_frames, max_size=6), st.lists(st.integers(0, 500), max_size=10))
def test_protobuf_reader(frames, cuts):
    wire = b"".join(pb_frame(pb_message(*f)) for f in frames)
    got = split_feed(codec.TokenReader("protobuf"), wire, cuts)
    assert len(got) == len(frames)
    for (ids, done, fr, tcs, *_), f in zip(frames, got):
        assert f.ids.tolist() == ids and f.done is done and f.finish_reason == fr
        assert f.tool_calls == (b"".join(ld(4, t) for t in tcs) if tcs else None)


@FAST
@given(pb_frames)
def test_protobuf_encoder(frame):
    ids, done, fr, tcs = frame[:4]
    raw_tc = b"".join(ld(4, t) for t in tcs) if tcs else None
    assert codec.encode_protobuf_frame(ids, done, fr, raw_tc) == \
        pb_frame(pb_message(ids, done, fr, tcs))


def test_protobuf_bytes_and_chunks():
    assert codec.encode_protobuf_frame([7]).hex() == "000000050a01071000"
    assert codec.encode_protobuf_frame([]).hex() == "000000021000"
    # A zero-length frame is a frame: no ids, not done.
    (f,) = codec.decode(b"\x00\x00\x00\x00", "protobuf")
    assert f.ids.size == 0 and not f.done and f.size == 4
    wire = b"".join(codec.encode_protobuf_frame(ids, d, fr) for ids, d, fr in
                    [([1, 2, 3], False, None), ([2**32 - 1], False, None), ([], True, "stop")])
    whole = [(f.ids.tolist(), f.done, f.finish_reason) for f in codec.decode(wire, "protobuf")]
    for size in range(1, len(wire) + 1):
        r = codec.TokenReader("protobuf")
        got = [f for i in range(0, len(wire), size) for f in r.feed(wire[i:i + size])]
        r.finish()
        assert [(f.ids.tolist(), f.done, f.finish_reason) for f in got] == whole


def test_protobuf_errors():
    good = pb_frame(pb_message([1], False, None, []))
    e = raises_embd("EMBD_ERR_PROTOBUF", codec.decode, good + pb_frame(tag(5, 3)), "protobuf")
    assert e.offset >= len(good)
    raises_embd("EMBD_ERR_PROTOBUF", codec.decode,
                pb_frame(pb_message([2**32], False, None, [])), "protobuf")
    raises_embd("EMBD_ERR_PROTOBUF", codec.decode, pb_frame(tag(0, 0) + b"\x00"), "protobuf")
    raises_embd("EMBD_ERR_PROTOBUF", codec.decode, pb_frame(ld(1, b"\x80")), "protobuf")
    raises_embd("EMBD_ERR_PROTOBUF", codec.decode, pb_frame(b"x" * 100), "protobuf",
                max_frame_bytes=50)
    e = raises_embd("EMBD_ERR_PROTOBUF", codec.decode, good + good[:5], "protobuf")
    assert e.offset == len(good) + 5
    raises_embd("EMBD_ERR_INVALID_ARGUMENT", codec.encode_protobuf_frame, [1], tool_calls=b"\x08\x01")


@FAST
@given(st.lists(st.tuples(st.lists(st.integers(0, 2**31 - 1), max_size=20), st.booleans()),
                max_size=5), st.sampled_from([5, 4]), st.lists(st.integers(0, 300), max_size=6))
def test_protobuf_delta(frames, field, cuts):
    wire, base = b"", 0
    enc = codec.DeltaEncoder("protobuf-delta", base_id_field=field)
    encoded = b""
    for ids, done in frames:
        m = b""
        if ids:
            m += ld(1, b"".join(varint(d) for d in deltas(ids, base)))
        m += tag(2, 0) + varint(int(done))
        if field == 4:
            m += tag(4, 0) + varint(base)
        else:
            m += tag(5, 0) + varint(base)
        one = pb_frame(m)
        assert codec.encode_protobuf_delta_frame(ids, base, done, base_id_field=field) == one
        wire += one
        encoded += enc.encode(ids, done)
        if ids:
            base = ids[-1]
    assert encoded == wire
    got = split_feed(codec.TokenReader("protobuf-delta", base_id_field=field), wire, cuts)
    assert [(f.ids.tolist(), f.done) for f in got] == [(ids, d) for ids, d in frames]


def test_protobuf_delta_errors():
    no_base = pb_frame(ld(1, varint(2)) + tag(2, 0) + b"\x00")
    raises_embd("EMBD_ERR_PROTOBUF", codec.decode, no_base, "protobuf-delta")
    # base_id 0, delta zigzag(-1) = 1: id -1 is out of range.
    neg = pb_frame(ld(1, varint(1)) + tag(5, 0) + varint(0))
    raises_embd("EMBD_ERR_PROTOBUF", codec.decode, neg, "protobuf-delta")
    # A jump of 2**31 does not fit field 1's uint32 zigzag value.
    raises_embd("EMBD_ERR_INVALID_ARGUMENT", codec.encode_protobuf_delta_frame, [2**31 + 5])
    raises_embd("EMBD_ERR_INVALID_ARGUMENT", codec.encode_protobuf_delta_frame, [1],
                base_id=2**31, base_id_field=4)


# ---- tokenizer maps: the map's own JSON as the oracle ---------------------------------------

TOKENS = {int(k): v for k, v in MAP_JSON["tokens"].items()}
SPECIAL_IDS = set(MAP_JSON["special_tokens"].values())
BF0, BF1 = MAP_JSON["byte_fallback_start"], MAP_JSON["byte_fallback_end"]
TEXT_IDS = sorted(i for i in TOKENS if i not in SPECIAL_IDS and not BF0 <= i <= BF1)
UNKNOWN_IDS = [i for i in range(MAP_JSON["vocab_size"]) if i not in TOKENS and i not in SPECIAL_IDS]


@pytest.fixture(scope="module")
def tmap():
    return codec.TokenizerMap(MAP_BYTES, sha256="sha256:" + hashlib.sha256(MAP_BYTES).hexdigest())


def test_map_load_and_info(tmap):
    pin = "sha256:" + hashlib.sha256(MAP_BYTES).hexdigest()
    assert codec.sha256(MAP_BYTES) == pin and tmap.sha256 == pin
    assert tmap.id == MAP_JSON["id"] and tmap.version == MAP_JSON["version"]
    assert tmap.vocab_size == MAP_JSON["vocab_size"] and tmap.schema == "0.1"
    assert tmap.token_count == len(MAP_JSON["tokens"])
    assert tmap.byte_fallback == (BF0, BF1)
    assert tmap.special_tokens == MAP_JSON["special_tokens"]
    assert tmap.published_at == MAP_JSON["published_at"] and tmap.encoder == "none"
    assert tmap.lookup(TEXT_IDS[0]) == (TOKENS[TEXT_IDS[0]].encode(), "text")
    assert tmap.lookup(BF0 + 0x41) == (b"A", "byte")
    raises_embd("EMBD_ERR_UNKNOWN_TOKEN", tmap.lookup, UNKNOWN_IDS[0])
    # From a path (str or PathLike); the pin in upper case is read as the peers write it.
    assert codec.TokenizerMap(str(MAP_PATH)).sha256 == pin
    assert codec.TokenizerMap(MAP_PATH, sha256="SHA256:" + pin[7:].upper()).sha256 == pin
    with pytest.raises(AttributeError):
        tmap.id = "x"
    with pytest.raises(AttributeError):
        tmap.other = 1


def test_map_errors():
    wrong = "sha256:" + hashlib.sha256(b"other").hexdigest()
    e = raises_embd("EMBD_ERR_MAP_HASH", codec.TokenizerMap, MAP_BYTES, sha256=wrong)
    assert wrong in str(e)
    raises_embd("EMBD_ERR_INVALID_ARGUMENT", codec.TokenizerMap, MAP_BYTES, sha256="sha256:12")
    bad = MAP_BYTES.replace(b'"vocab_size": 300', b'"vocab_size": 290')
    assert bad != MAP_BYTES
    e = raises_embd("EMBD_ERR_MAP_SCHEMA", codec.TokenizerMap, bad)
    assert isinstance(e.offset, int) and 0 < e.offset < len(bad)
    raises_embd("EMBD_ERR_MAP_SCHEMA", codec.TokenizerMap, b"{not json")
    with pytest.raises(TypeError):
        codec.TokenizerMap(12)
    with pytest.raises(TypeError):
        codec.TokenizerMap(MAP_BYTES, sha256=b"sha256:00")


@FAST
@given(st.lists(st.sampled_from(TEXT_IDS), max_size=30))
def test_detokenize_text_tokens(tmap, ids):
    assert tmap.detokenize(ids) == "".join(TOKENS[i] for i in ids)
    assert tmap.detokenize(np.array(ids, dtype=np.uint32)) == "".join(TOKENS[i] for i in ids)


@FAST
@given(st.binary(max_size=40))
def test_detokenize_bytes_as_python_decodes_them(tmap, data):
    ids = [BF0 + b for b in data]
    # One U+FFFD per maximal subpart: Python's decoder does the same.
    assert tmap.detokenize(ids) == data.decode("utf-8", "replace")


@FAST
@given(st.lists(st.one_of(st.sampled_from(TEXT_IDS), st.integers(BF0, BF1)), max_size=30),
       st.lists(st.integers(0, 30), max_size=6))
def test_detokenizer_streaming_equals_whole(tmap, ids, cuts):
    whole = tmap.detokenize(ids)
    d = tmap.detokenizer()
    out, pos = "", 0
    for c in sorted(set(min(c, len(ids)) for c in cuts)) + [len(ids)]:
        out += d.feed(ids[pos:c])
        pos = c
    out += d.finish()
    assert out == whole
    assert d.pending == 0


def test_detokenizer_holds_split_characters(tmap):
    euro = "€".encode()
    d = tmap.detokenizer()
    assert d.feed([TEXT_IDS[0]]) == TOKENS[TEXT_IDS[0]]
    assert d.feed([BF0 + euro[0]]) == "" and d.pending == 1
    assert d.feed([BF0 + euro[1]]) == "" and d.pending == 2
    assert d.feed([BF0 + euro[2]]) == "€" and d.pending == 0
    assert d.feed([BF0 + euro[0]]) == ""
    assert d.finish() == "\ufffd"
    d.feed([BF0 + euro[0]])
    d.reset()
    assert d.pending == 0 and d.finish() == ""


def test_detokenize_specials_and_unknown(tmap):
    names = {v: k for k, v in MAP_JSON["special_tokens"].items()}
    for sid in SPECIAL_IDS:
        want = TOKENS.get(sid, names[sid])  # its "tokens" text, else its name
        assert tmap.detokenize([sid]) == want
        assert tmap.detokenize([sid], skip_special=True) == ""
    unk = UNKNOWN_IDS[0]
    ids = [TEXT_IDS[0], TEXT_IDS[1], unk]
    e = raises_embd("EMBD_ERR_UNKNOWN_TOKEN", tmap.detokenize, ids)
    assert e.offset == 2 and str(unk) in str(e)
    raises_embd("EMBD_ERR_UNKNOWN_TOKEN", tmap.detokenize, [2**32 - 1])
    assert tmap.detokenize(ids, replace_unknown=True) == \
        TOKENS[TEXT_IDS[0]] + TOKENS[TEXT_IDS[1]] + "\ufffd"
    sid = min(SPECIAL_IDS)
    assert tmap.detokenize([sid, unk], reference=True) == "\ufffd"
    # A failed streaming feed consumed nothing: the same feed without the id goes on.
    d = tmap.detokenizer()
    euro = "€".encode()
    assert d.feed([BF0 + euro[0]]) == ""
    raises_embd("EMBD_ERR_UNKNOWN_TOKEN", d.feed, [BF0 + euro[1], unk])
    assert d.pending == 1
    assert d.feed([BF0 + euro[1], BF0 + euro[2]]) == "€"


def test_detokenizer_keeps_map_alive():
    m = codec.TokenizerMap(MAP_BYTES)
    d = m.detokenizer()
    del m
    gc.collect()
    assert d.feed([TEXT_IDS[0]]) == TOKENS[TEXT_IDS[0]]


# ---- argument types ---------------------------------------------------------------------------

def test_wrong_types(tmap):
    r = codec.TokenReader()
    for bad in (123, [1, 2], None, 1.5):
        with pytest.raises(TypeError):
            r.feed(bad)
    assert r.feed(b"") == [] and r.feed(bytearray(codec.encode_eos()))[0].type == "eos"
    assert r.feed(memoryview(codec.encode_eos()))[0].type == "eos"
    for bad in ("abc", b"abc", 5, [1.5], [[1, 2]], [True], None):
        for fn in (codec.encode_tokens, codec.encode_msgpack_frame, tmap.detokenize,
                   tmap.detokenizer().feed):
            with pytest.raises((TypeError, ValueError)):
                fn(bad)
    for bad in ([-1], [2**32], np.array([-1]), [2**70]):
        with pytest.raises(ValueError) as ei:
            codec.encode_tokens(bad)
        assert not isinstance(ei.value, embd.Error)
    with pytest.raises(TypeError):
        codec.TokenReader(1)
    with pytest.raises(ValueError):
        codec.TokenReader("json")
    with pytest.raises(TypeError):
        codec.TokenReader("session", max_frame_bytes=10)
    with pytest.raises(TypeError):
        codec.TokenReader("msgpack", max_payload=10)
    with pytest.raises(TypeError):
        codec.TokenReader("protobuf", base_id_field=4)
    with pytest.raises(TypeError):
        codec.TokenReader("msgpack", max_ids="10")
    with pytest.raises(ValueError):
        codec.TokenReader("protobuf-delta", base_id_field=3)
    with pytest.raises(ValueError):
        codec.TokenReader("session", max_payload=0)
    with pytest.raises(TypeError):
        codec.encode_msgpack_frame([1], finish_reason=5)
    with pytest.raises(TypeError):
        codec.encode_msgpack_frame([1], tool_calls="[]")
    with pytest.raises(ValueError):
        codec.encode_msgpack_delta_frame([1], base_id=-1)
    with pytest.raises(TypeError):
        codec.pick_tokenizer(codec.encode_hello("0.5")[5:], "abc")


# ---- lifetimes and threads ---------------------------------------------------------------

def test_ids_outlive_reader():
    for mode, wire in (("session", codec.encode_tokens(range(1000, 1100))),
                       ("msgpack", codec.encode_msgpack_frame(range(1000, 1100))),
                       ("protobuf-delta", codec.encode_protobuf_delta_frame(range(1000, 1100)))):
        r = codec.TokenReader(mode)
        (f,) = r.feed(wire)
        ids = f.ids
        del r, f
        gc.collect()
        assert ids.tolist() == list(range(1000, 1100))
        ids[0] = 7  # the array's own memory
        assert ids[0] == 7


def test_refcounts_unchanged(tmap):
    wire = codec.encode_tokens([1, 2, 3]) + codec.encode_eos()
    bad = wire + sess(2, b"abc")
    ids = np.arange(10, dtype=np.uint32)
    for mode, chunk in (("session", wire), ("session", bad),
                        ("msgpack", msgpack.packb({"ids": [1]})), ("msgpack", b"\xc1")):
        r = codec.TokenReader(mode)
        before = sys.getrefcount(chunk)
        try:
            r.feed(chunk)
        except embd.Error:
            pass
        assert sys.getrefcount(chunk) == before
    for fn in (codec.encode_tokens, codec.encode_msgpack_frame, codec.encode_protobuf_frame,
               tmap.detokenize):
        before = sys.getrefcount(ids)
        fn(ids)
        assert sys.getrefcount(ids) == before
    bad_ids = np.array([UNKNOWN_IDS[0]], dtype=np.uint32)
    before = sys.getrefcount(bad_ids)
    with pytest.raises(embd.Error):
        tmap.detokenize(bad_ids)
    assert sys.getrefcount(bad_ids) == before
    before = sys.getrefcount(MAP_BYTES)
    codec.TokenizerMap(MAP_BYTES)
    assert sys.getrefcount(MAP_BYTES) == before


def test_large_feed_and_threads():
    # Large chunks (GIL released) from several threads, one reader each: same ids.
    ids = np.arange(200000, dtype=np.uint32)
    wire = codec.encode_tokens(ids, per_frame=50000)
    results, errors = [], []

    def work():
        try:
            r = codec.TokenReader(max_payload=1 << 20)
            got = r.feed(wire)
            r.finish()
            results.append(np.concatenate([f.ids for f in got]))
        except Exception as e:  # pragma: no cover
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors and len(results) == 4
    for a in results:
        assert np.array_equal(a, ids)

    # One reader shared by threads: a second thread entering is refused, never raced.
    shared = codec.TokenReader(max_payload=1 << 20)
    refused = []

    def hammer():
        for _ in range(20):
            try:
                shared.feed(wire)
            except RuntimeError as e:
                assert "in use by another thread" in str(e)
                refused.append(e)

    ts = [threading.Thread(target=hammer) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    shared.finish()
    assert shared.offset == len(wire) * (60 - len(refused))


# ---- a v2 byte_level map, built here from GPT-2's byte alphabet ------------------------------

def gpt2_alphabet():
    """GPT-2's bytes_to_unicode as defined: printable bytes are themselves, the others take
    code points from 256 up in increasing order."""
    table, nxt = {}, 256
    for b in range(256):
        if 33 <= b <= 126 or 161 <= b <= 172 or b >= 174:
            table[b] = chr(b)
        else:
            table[b] = chr(nxt)
            nxt += 1
    return table


PIECES = [b" world", b"Hello", "é".encode(), b"\xf0\x9f\x98", b"\x80\x80", b"a\"b\\c", b"\n\t"]


@pytest.fixture(scope="module")
def bl_map():
    g2 = gpt2_alphabet()
    vocab = {g2[b]: b for b in range(256)}
    for i, p in enumerate(PIECES):
        vocab["".join(g2[b] for b in p)] = 256 + i
    vocab["<|eot|>"] = 300
    doc = json.dumps({"id": "bl", "version": "2", "vocab_size": 301, "encoder": "byte_level",
                      "vocab": vocab, "special_tokens": {"<|eot|>": 300}}).encode()
    return codec.TokenizerMap(doc)


@FAST
@given(st.lists(st.one_of(st.integers(0, 255), st.integers(256, 256 + len(PIECES) - 1)),
                max_size=25), st.lists(st.integers(0, 25), max_size=4))
def test_byte_level_map(bl_map, ids, cuts):
    data = b"".join(bytes([i]) if i < 256 else PIECES[i - 256] for i in ids)
    assert bl_map.detokenize(ids) == data.decode("utf-8", "replace")
    d, out, pos = bl_map.detokenizer(), "", 0
    for c in sorted(set(min(c, len(ids)) for c in cuts)) + [len(ids)]:
        out += d.feed(ids[pos:c])
        pos = c
    assert out + d.finish() == data.decode("utf-8", "replace")


def test_byte_level_info(bl_map):
    assert bl_map.encoder == "byte_level" and bl_map.schema == "2"
    assert bl_map.lookup(256) == (b" world", "bytes")
    assert bl_map.detokenize([257, 300, 256]) == "Hello<|eot|> world"
    assert bl_map.detokenize([257, 300, 256], skip_special=True) == "Hello world"


def test_docstring_examples():
    import doctest
    assert doctest.testmod(codec).failed == 0
