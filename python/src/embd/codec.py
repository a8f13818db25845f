"""Codec token frames: token ids on the wire, read and written by libembd.

The Codec transport ships token ids instead of text. Five stream shapes are read by one
class, :class:`TokenReader`:

``"session"``
    Codec session frames, ``[type u8][payload_len u32 big-endian][payload]``: HELLO and
    READY (JSON), TOKENS (big-endian uint32 ids), EOS, ERROR (a UTF-8 message),
    LATENT_HEADER and LATENTS (opaque), and, from 0x07 up, newer types handed over opaque.
``"msgpack"`` / ``"protobuf"``
    The engines' ``stream_format`` modes: msgpack maps ``{"ids", "done", "finish_reason",
    "tool_calls"}`` back to back, or 4-byte big-endian length + ``CodecFrame``
    (proto/codec.proto).
``"msgpack-delta"`` / ``"protobuf-delta"``
    Their delta variants (Codec v0.5-1): each frame carries ``base_id`` and zigzag deltas;
    the reader hands over the rebuilt absolute ids.

Every frame's ids are a numpy ``uint32`` array over memory the extension owns (no Python
int lists). Every refusal of the C library is an :class:`embd.Error` with ``.code`` (e.g.
``"EMBD_ERR_MSGPACK"``) and ``.offset`` (the absolute byte offset in the stream).

>>> from embd import codec
>>> wire = codec.encode_tokens([50001, 50002, 50003]) + codec.encode_eos()
>>> wire[:9].hex()
'020000000c0000c351'
>>> r = codec.TokenReader("session")
>>> [(f.type, f.ids.tolist()) for f in r.feed(wire)]
[('tokens', [50001, 50002, 50003]), ('eos', [])]
>>> r.finish()

Tokenizer maps (:class:`TokenizerMap`) turn ids into text when a human reads them:
``TokenizerMap(path_or_bytes, sha256=pin).detokenize(ids)``.
"""
import os

import numpy as np

from . import _embd

Error = _embd.Error

__all__ = [
    "Error", "Frame", "TokenReader", "decode", "FRAME_TYPES", "MODES",
    "encode_tokens", "encode_eos", "encode_error", "encode_hello", "encode_ready",
    "encode_frame", "parse_hello", "parse_ready", "pick_tokenizer", "forward",
    "encode_msgpack_frame", "encode_protobuf_frame", "encode_msgpack_delta_frame",
    "encode_protobuf_delta_frame", "DeltaEncoder",
    "TokenizerMap", "Detokenizer", "sha256",
]

#: Session frame type codes by name (embd/codec.h); frames of a newer type (0x07 up) have
#: ``type == "unknown"`` and their byte in ``type_code``.
FRAME_TYPES = {"hello": 0x00, "ready": 0x01, "tokens": 0x02, "eos": 0x03, "error": 0x04,
               "latent_header": 0x05, "latents": 0x06}
_TYPE_NAMES = {v: k for k, v in FRAME_TYPES.items()}

#: The stream shapes TokenReader reads.
MODES = ("session", "msgpack", "protobuf", "msgpack-delta", "protobuf-delta")

_EMPTY_IDS = np.empty(0, dtype=np.uint32)
_EMPTY_IDS.flags.writeable = False
_U32_MAX = 0xFFFFFFFF


def _ids(ids):
    """ids as a C-contiguous uint32 array (no copy when it already is one)."""
    if isinstance(ids, (str, bytes, bytearray, memoryview)):
        raise TypeError("ids: expected a sequence or array of integers, not %s"
                        % type(ids).__name__)
    a = np.asarray(ids)
    if a.ndim != 1:
        if a.ndim == 0:
            raise TypeError("ids: expected a sequence or array of integers, not %s"
                            % type(ids).__name__)
        raise ValueError("ids: expected one dimension, not %d" % a.ndim)
    if a.dtype == np.uint32:
        return np.ascontiguousarray(a)
    if a.size == 0:
        return _EMPTY_IDS
    if a.dtype.kind not in "iu":
        if a.dtype == object and all(isinstance(v, int) and not isinstance(v, bool) for v in a):
            raise ValueError("ids: values must be in 0..2**32-1")
        raise TypeError("ids: expected integers, not %s" % a.dtype)
    lo, hi = a.min(), a.max()
    if lo < 0 or hi > _U32_MAX:
        bad = int(np.flatnonzero((a < 0) | (a > _U32_MAX))[0])
        raise ValueError("ids[%d] = %d is not a uint32 token id" % (bad, int(a[bad])))
    return a.astype(np.uint32)


def _limit(name, value):
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("%s: expected an int, not %s" % (name, type(value).__name__))
    if value <= 0:
        raise ValueError("%s must be >= 1" % name)
    return value


# ---- frames ---------------------------------------------------------------------------------

class Frame:
    """One decoded frame.

    ``type``
        ``"tokens"``, ``"eos"``, ``"error"``, ``"hello"``, ``"ready"``,
        ``"latent_header"``, ``"latents"``, or ``"unknown"`` (a session frame type from
        0x07 up, handed over opaque; its byte is ``type_code``). Frames of the msgpack and
        protobuf modes are all ``"tokens"``; their end is ``done``.
    ``ids``
        numpy ``uint32`` array (empty for frames without ids). Its memory belongs to the
        array: it stays valid after the reader is gone, and is writable.
    ``done``
        msgpack/protobuf: the frame's ``done``. Session: True for EOS and ERROR (the
        generation ended), else False.
    ``finish_reason``
        msgpack/protobuf: the frame's ``finish_reason`` (str; bytes that are not UTF-8
        arrive as surrogate escapes) or None. Session: None.
    ``error``
        an ERROR frame's message (str), else None.
    ``payload``
        session frames other than TOKENS: the payload bytes (HELLO/READY JSON, the ERROR
        message's UTF-8, opaque bytes); else None.
    ``tool_calls``
        msgpack/protobuf: the raw bytes of the frame's tool calls (msgpack: the one value of
        the ``"tool_calls"`` key; protobuf: the field-4 records, themselves a valid
        ``CodecFrame`` encoding), or None.
    ``index``, ``offset``, ``size``
        the frame's number in the stream, the absolute offset of its first byte, its bytes
        on the wire (protobuf: the length prefix included).
    """

    __slots__ = ("type", "type_code", "index", "offset", "size", "ids", "done",
                 "finish_reason", "error", "payload", "tool_calls")

    def __init__(self, type, ids=None, done=False, finish_reason=None, error=None,
                 payload=None, tool_calls=None, index=0, offset=0, size=0, type_code=None):
        self.type = type
        self.type_code = FRAME_TYPES.get(type) if type_code is None else type_code
        self.ids = _EMPTY_IDS if ids is None else ids
        self.done = done
        self.finish_reason = finish_reason
        self.error = error
        self.payload = payload
        self.tool_calls = tool_calls
        self.index = index
        self.offset = offset
        self.size = size

    def handshake(self):
        """A HELLO or READY frame's fields as a dict (every field; absent: None or [])."""
        if self.type == "hello":
            return parse_hello(self.payload)
        if self.type == "ready":
            return parse_ready(self.payload)
        raise ValueError("a %s frame is not a handshake" % self.type)

    def __repr__(self):
        parts = ["type=%r" % self.type]
        if self.type == "unknown":
            parts.append("type_code=0x%02x" % self.type_code)
        if self.type == "tokens":
            parts.append("ids=%r" % (self.ids.tolist() if self.ids.size <= 16
                                     else "<%d ids>" % self.ids.size))
        for k in ("done", "finish_reason", "error", "tool_calls"):
            v = getattr(self, k)
            if v:
                parts.append("%s=%r" % (k, v))
        if self.payload is not None and self.type not in ("error",):
            parts.append("payload=<%d bytes>" % len(self.payload))
        parts.append("index=%d offset=%d" % (self.index, self.offset))
        return "Frame(%s)" % ", ".join(parts)


def _frame(t):
    type_code, index, offset, size, ids, payload, done, fr, tc = t
    name = _TYPE_NAMES.get(type_code, "unknown")
    return Frame(name, ids=None if ids is None else np.frombuffer(ids, dtype=np.uint32),
                 done=done, finish_reason=fr,
                 error=payload.decode("utf-8") if type_code == 0x04 else None,
                 payload=payload, tool_calls=tc, index=index, offset=offset, size=size,
                 type_code=type_code)


# ---- the reader -----------------------------------------------------------------------------

_DEFAULT_MAX_FRAME_BYTES = 16 << 20


class TokenReader:
    """Reads a Codec token stream from chunks of any size (1 byte included).

    ``mode``: ``"session"``, ``"msgpack"``, ``"protobuf"``, ``"msgpack-delta"`` or
    ``"protobuf-delta"``. Limits (keyword-only; one that the mode has not is a TypeError):

    session
        ``max_payload`` (bytes of one frame's payload; default 16 MiB): bounds the one
        buffer; ``strict_types=True`` makes a type byte from 0x07 up an error
        (``EMBD_ERR_CODEC_UNKNOWN_TYPE``) instead of an opaque ``"unknown"`` frame.
    msgpack, protobuf and their delta variants
        ``max_frame_bytes`` (one frame's bytes, protobuf: without its 4-byte prefix;
        default 16 MiB), ``max_ids`` (ids per frame; default: ``max_frame_bytes``).
    protobuf-delta
        ``base_id_field``: 5 (the Internet-Draft's ``uint32 base_id = 5``, default) or 4
        (spec v0.5's ``int32 base_id = 4``).

    ``feed(chunk)`` returns the frames completed by the chunk (a list of :class:`Frame`,
    often empty); ``finish()`` at the end of the input raises if it ends inside a frame.
    Errors are sticky: after one, every feed and finish raises the same error. An error
    raised by ``feed`` carries the frames that the same chunk completed before the bad one
    as ``err.frames`` (a list of Frame): nothing decoded is lost, and nothing partial is
    returned as if it were whole.

    Thread safety: one thread at a time per reader (a second thread entering ``feed`` while
    one is inside gets RuntimeError); make one reader per stream. The GIL is released while
    chunks of 512 bytes and more are decoded.

    >>> from embd import codec
    >>> data = codec.encode_msgpack_frame([1, 2]) + codec.encode_msgpack_frame(
    ...     [3], done=True, finish_reason="stop")
    >>> r = codec.TokenReader("msgpack", max_frame_bytes=1 << 16)
    >>> frames = [f for i in range(len(data)) for f in r.feed(data[i:i + 1])]
    >>> [(f.ids.tolist(), f.done, f.finish_reason) for f in frames]
    [([1, 2], False, None), ([3], True, 'stop')]
    >>> r.finish()
    """

    __slots__ = ("_r", "mode")

    def __init__(self, mode="session", *, max_payload=None, strict_types=None,
                 max_frame_bytes=None, max_ids=None, base_id_field=None):
        if not isinstance(mode, str):
            raise TypeError("mode: expected a str, not %s" % type(mode).__name__)
        if mode not in MODES:
            raise ValueError("mode %r: one of %s" % (mode, ", ".join(MODES)))

        def refuse(name, value):
            if value is not None:
                raise TypeError("TokenReader(%r) has no limit %s" % (mode, name))

        if mode == "session":
            refuse("max_frame_bytes", max_frame_bytes)
            refuse("max_ids", max_ids)
            refuse("base_id_field", base_id_field)
            flags = _embd.CODEC_STRICT_TYPES if strict_types else 0
            self._r = _embd.CodecReader(0, _limit("max_payload", max_payload), 0, flags)
        else:
            refuse("max_payload", max_payload)
            refuse("strict_types", strict_types)
            fmt = 1 if mode.startswith("msgpack") else 2
            flags = _embd.CODEC_STREAM_DELTA if mode.endswith("-delta") else 0
            if base_id_field is not None:
                if mode != "protobuf-delta":
                    refuse("base_id_field", base_id_field)
                if base_id_field not in (4, 5) or isinstance(base_id_field, bool):
                    raise ValueError("base_id_field: 5 (the draft) or 4 (spec v0.5)")
                if base_id_field == 4:
                    flags |= _embd.CODEC_STREAM_BASE_ID_4
            mfb = _limit("max_frame_bytes", max_frame_bytes) or _DEFAULT_MAX_FRAME_BYTES
            self._r = _embd.CodecReader(fmt, mfb, _limit("max_ids", max_ids), flags)
        self.mode = mode

    def feed(self, chunk):
        """The frames the chunk (bytes-like) completes, in stream order."""
        try:
            got = self._r.feed(chunk)
        except Error as e:
            done = getattr(e, "frames", None)
            if done is not None:
                e.frames = [_frame(t) for t in done]
            raise
        return [_frame(t) for t in got]

    def finish(self):
        """End of input: raises embd.Error if the stream ends inside a frame."""
        self._r.finish()

    def read(self, chunks):
        """Yields the frames of an iterable of chunks, then finishes the stream."""
        for chunk in chunks:
            yield from self.feed(chunk)
        self.finish()

    @property
    def frames(self):
        """Frames delivered so far."""
        return self._r.frames

    @property
    def offset(self):
        """Bytes consumed so far."""
        return self._r.offset

    def __repr__(self):
        return "TokenReader(%r, frames=%d, offset=%d)" % (self.mode, self.frames, self.offset)


def decode(data, mode="session", **limits):
    """Every frame of a whole stream (bytes-like): a TokenReader's feed and finish.

    >>> from embd import codec
    >>> [f.ids.tolist() for f in codec.decode(codec.encode_protobuf_frame([7]), "protobuf")]
    [[7]]
    """
    r = TokenReader(mode, **limits)
    frames = r.feed(data)
    r.finish()
    return frames


# ---- session frame encoders -----------------------------------------------------------------

def encode_tokens(ids, *, per_frame=None):
    """TOKENS frames for ids (ints in 0..2**32-1, any integer array or sequence).

    One frame (also for no ids), or with ``per_frame`` frames of at most that many ids
    (none for no ids).

    >>> from embd import codec
    >>> codec.encode_tokens([1, 2, 3], per_frame=2).hex()
    '02000000080000000100000002020000000400000003'
    """
    if per_frame is not None:
        per_frame = _limit("per_frame", per_frame)
    return _embd.codec_encode_tokens(_ids(ids), per_frame or 0)


def encode_eos():
    """The EOS frame, ``03 00 00 00 00``."""
    return _embd.codec_encode_frame(FRAME_TYPES["eos"], b"")


def encode_error(text):
    """An ERROR frame around a message (str, or bytes that must be valid UTF-8).

    >>> from embd import codec
    >>> codec.decode(codec.encode_error("overloaded"))[0].error
    'overloaded'
    """
    return _embd.codec_encode_frame(FRAME_TYPES["error"], _text_arg(text, "text"))


def _text_arg(text, what):
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    if isinstance(text, (bytes, bytearray, memoryview)):
        return text
    raise TypeError("%s: expected a str or bytes, not %s" % (what, type(text).__name__))


def encode_frame(type, payload=b""):
    """One session frame of a known type (name or code 0x00..0x06) around payload bytes,
    checked against the type's rules (TOKENS a multiple of 4 bytes, EOS empty,
    HELLO/READY/ERROR valid UTF-8). Newer types cannot be written (forward them)."""
    code = FRAME_TYPES.get(type) if isinstance(type, str) else type
    if code is None:
        raise ValueError("frame type %r: one of %s" % (type, ", ".join(FRAME_TYPES)))
    if isinstance(code, bool) or not isinstance(code, int):
        raise TypeError("type: expected a name or an int, not %s" % code.__class__.__name__)
    if not 0 <= code <= 0xFF:
        raise ValueError("frame type %d is not a byte" % code)
    return _embd.codec_encode_frame(code, payload)


_HELLO_LISTS = ("accept_tokenizers", "modalities", "accept_latent_spaces", "accept_decoders",
                "accept_pipelines", "accept_safety_policies", "accept_transports",
                "accept_encoding")


def encode_hello(codec_version, *, accept_tokenizers=(), modalities=(),
                 accept_latent_spaces=(), accept_decoders=(), accept_pipelines=(),
                 accept_safety_policies=(), accept_transports=(), accept_encoding=()):
    """A HELLO frame (client to server): ``codec_version`` and lists of str (empty lists
    are left out of the JSON).

    >>> from embd import codec
    >>> f = codec.decode(codec.encode_hello("0.5", accept_tokenizers=["qwen/qwen2"]))[0]
    >>> f.payload
    b'{"codec_version":"0.5","accept_tokenizers":["qwen/qwen2"]}'
    >>> f.handshake()["accept_tokenizers"]
    ['qwen/qwen2']
    """
    fields = dict(codec_version=codec_version, accept_tokenizers=accept_tokenizers,
                  modalities=modalities, accept_latent_spaces=accept_latent_spaces,
                  accept_decoders=accept_decoders, accept_pipelines=accept_pipelines,
                  accept_safety_policies=accept_safety_policies,
                  accept_transports=accept_transports, accept_encoding=accept_encoding)
    return _embd.codec_encode_frame(FRAME_TYPES["hello"], _embd.codec_hello_build(fields))


def encode_ready(codec_version, *, tokenizer_id=None, map_url=None, map_hash=None,
                 modality=None, min_codec_version=None, required_features=(),
                 safety_policy_id=None, safety_policy_hash=None, transport=None,
                 encoding=None, latent_space_id=None, latent_map_url=None,
                 latent_map_hash=None, decoder_runtime=None, pipeline=None):
    """A READY frame (server to client). ``tokenizer_id``, ``map_url`` and ``map_hash``
    ("sha256:" + 64 lowercase hex digits, e.g. :func:`sha256` of the map) are required
    unless ``modality`` is given and not ``"text-tokens"``; a missing one is embd.Error
    ``EMBD_ERR_CODEC_HANDSHAKE``.

    >>> from embd import codec
    >>> pin = codec.sha256(b"{}")
    >>> wire = codec.encode_ready("0.5", tokenizer_id="t", map_url="https://x/m.json",
    ...                           map_hash=pin)
    >>> codec.decode(wire)[0].handshake()["map_hash"] == pin
    True
    """
    fields = dict(codec_version=codec_version, tokenizer_id=tokenizer_id, map_url=map_url,
                  map_hash=map_hash, modality=modality, min_codec_version=min_codec_version,
                  required_features=required_features, safety_policy_id=safety_policy_id,
                  safety_policy_hash=safety_policy_hash, transport=transport,
                  encoding=encoding, latent_space_id=latent_space_id,
                  latent_map_url=latent_map_url, latent_map_hash=latent_map_hash,
                  decoder_runtime=decoder_runtime, pipeline=pipeline)
    return _embd.codec_encode_frame(FRAME_TYPES["ready"], _embd.codec_ready_build(fields))


def parse_hello(payload):
    """A HELLO payload (JSON bytes) as a dict of every HELLO field (absent: None or [])."""
    return _embd.codec_hello_parse(payload)


def parse_ready(payload):
    """A READY payload as a dict of every READY field; pins normalised to "sha256:" +
    lower case (comparable with :attr:`TokenizerMap.sha256`)."""
    return _embd.codec_ready_parse(payload)


def pick_tokenizer(hello, supported):
    """Server side: the index, in the client's ``accept_tokenizers``, of the first one in
    ``supported``; embd.Error ``EMBD_ERR_CODEC_NO_TOKENIZER`` when none is. ``hello``: the
    HELLO Frame or its payload."""
    if isinstance(hello, Frame):
        hello = hello.payload
    return _embd.codec_pick_tokenizer(hello, supported)


def forward(data, types=("tokens", "eos"), *, max_payload=None, strict_types=False):
    """The agent-to-agent path: validates every session frame of data and returns the
    frames of the named types (codes 0x00..0x1F) byte for byte, ids untouched."""
    mask = 0
    for t in types:
        code = FRAME_TYPES.get(t) if isinstance(t, str) else t
        if code is None or isinstance(code, bool) or not isinstance(code, int) or not 0 <= code < 32:
            raise ValueError("frame type %r: a name or a code 0..31" % (t,))
        mask |= 1 << code
    if not mask:
        return b""
    flags = _embd.CODEC_STRICT_TYPES if strict_types else 0
    out, _ = _embd.codec_forward(data, mask, _limit("max_payload", max_payload), flags)
    return out


# ---- msgpack / protobuf encoders ------------------------------------------------------------

def _stream(fmt, ids, done, finish_reason, tool_calls, delta, base_id, flags):
    if finish_reason is not None:
        finish_reason = _text_arg(finish_reason, "finish_reason")
    if isinstance(base_id, bool) or not isinstance(base_id, (int, np.integer)):
        raise TypeError("base_id: expected an int")
    if not 0 <= base_id <= _U32_MAX:
        raise ValueError("base_id %d is not a uint32" % base_id)
    return _embd.codec_stream_encode(fmt, _ids(ids), bool(done), finish_reason, tool_calls,
                                     delta, int(base_id), flags)


def encode_msgpack_frame(ids, done=False, finish_reason=None, tool_calls=None):
    """One msgpack-mode frame: the map ``{"ids", "done"[, "finish_reason"][, "tool_calls"]}``
    in vLLM's key order, each value in its shortest encoding. ``tool_calls``: the bytes of
    one msgpack value, written as is.

    >>> from embd import codec
    >>> codec.encode_msgpack_frame([1, 2]).hex()
    '82a3696473920102a4646f6e65c2'
    """
    return _stream(1, ids, done, finish_reason, tool_calls, False, 0, 0)


def encode_protobuf_frame(ids, done=False, finish_reason=None, tool_calls=None):
    """One protobuf-mode frame: 4-byte big-endian length + CodecFrame (ids packed, done
    always, finish_reason when given, then the ``tool_calls`` bytes: field-4 records).

    >>> from embd import codec
    >>> codec.encode_protobuf_frame([7]).hex()
    '000000050a01071000'
    """
    return _stream(2, ids, done, finish_reason, tool_calls, False, 0, 0)


def encode_msgpack_delta_frame(ids, base_id=0, done=False, finish_reason=None, tool_calls=None):
    """One msgpack-delta frame against ``base_id`` (the last id of the previous frame sent,
    0 first; unchanged after a frame without ids: :class:`DeltaEncoder` keeps it)."""
    return _stream(1, ids, done, finish_reason, tool_calls, True, base_id, 0)


def encode_protobuf_delta_frame(ids, base_id=0, done=False, finish_reason=None,
                                tool_calls=None, *, base_id_field=5):
    """One protobuf-delta frame against ``base_id``; ``base_id_field`` 5 (the draft) or 4
    (spec v0.5, then base_id at most 2**31-1). Neighbouring ids 2**31 or more apart cannot
    be written (the zigzag delta would not fit field 1's uint32): embd.Error."""
    if base_id_field not in (4, 5) or isinstance(base_id_field, bool):
        raise ValueError("base_id_field: 5 (the draft) or 4 (spec v0.5)")
    flags = _embd.CODEC_STREAM_BASE_ID_4 if base_id_field == 4 else 0
    return _stream(2, ids, done, finish_reason, tool_calls, True, base_id, flags)


class DeltaEncoder:
    """Writes a msgpack-delta or protobuf-delta stream frame by frame, carrying base_id.

    Thread safety: one stream's state; one thread at a time.

    >>> from embd import codec
    >>> enc = codec.DeltaEncoder("msgpack-delta")
    >>> wire = enc.encode([10, 12]) + enc.encode([11], done=True, finish_reason="stop")
    >>> [f.ids.tolist() for f in codec.decode(wire, "msgpack-delta")]
    [[10, 12], [11]]
    """

    __slots__ = ("mode", "base_id", "_field")

    def __init__(self, mode="msgpack-delta", *, base_id_field=5):
        if mode not in ("msgpack-delta", "protobuf-delta"):
            raise ValueError("mode: 'msgpack-delta' or 'protobuf-delta'")
        self.mode = mode
        self.base_id = 0
        self._field = base_id_field

    def encode(self, ids, done=False, finish_reason=None, tool_calls=None):
        a = _ids(ids)
        if self.mode == "msgpack-delta":
            out = encode_msgpack_delta_frame(a, self.base_id, done, finish_reason, tool_calls)
        else:
            out = encode_protobuf_delta_frame(a, self.base_id, done, finish_reason, tool_calls,
                                              base_id_field=self._field)
        if a.size:
            self.base_id = int(a[-1])
        return out


# ---- tokenizer maps -------------------------------------------------------------------------

def sha256(data):
    """The pin of bytes: ``"sha256:" + 64 lowercase hex digits``."""
    return _embd.tokmap_sha256(data)


_KINDS = {1: "text", 2: "byte", 3: "special", 4: "bytes"}
_ENCODERS = {0: "none", 1: "byte_level", 2: "metaspace"}


def _detok_flags(skip_special, replace_unknown, reference):
    flags = 0
    if skip_special or reference:
        flags |= _embd.DETOK_SKIP_SPECIAL
    if replace_unknown or reference:
        flags |= _embd.DETOK_REPLACE_UNKNOWN
    return flags


class TokenizerMap:
    """A Codec tokenizer map (schema v0.1, v2, v2.1), loaded and validated by libembd.

    ``data_or_path``: the map's JSON bytes (bytes-like), or a path (str or os.PathLike) to
    read them from. ``sha256``: the pin the server announced (READY ``map_hash``,
    ``"sha256:<hex>"``); the bytes are checked against it before anything is trusted
    (mismatch: embd.Error ``EMBD_ERR_MAP_HASH``). A map that breaks the schema is
    ``EMBD_ERR_MAP_SCHEMA`` with the field named and its byte offset.

    ``detokenize(ids)`` renders a whole text; ``detokenizer()`` gives a streaming
    :class:`Detokenizer` for ids arriving frame by frame. Defaults are embd's strict ones:
    special tokens rendered, an id the map lacks raises ``EMBD_ERR_UNKNOWN_TOKEN`` (offset:
    its index in ids); ``skip_special`` / ``replace_unknown`` (U+FFFD), or ``reference=True``
    for both (the reference client's rendering).

    Thread safety: a loaded map is immutable; share it freely between threads and
    detokenizers (``detokenize`` may run in several threads at once). The GIL is released
    while large maps load and long id runs are rendered.

    >>> import json
    >>> from embd import codec
    >>> doc = json.dumps({"id": "t", "version": "1", "vocab_size": 3,
    ...                   "tokens": {"0": "Hello", "1": " world", "2": "!"}}).encode()
    >>> m = codec.TokenizerMap(doc, sha256=codec.sha256(doc))
    >>> m.detokenize([0, 1, 2])
    'Hello world!'
    >>> d = m.detokenizer()
    >>> d.feed([0]) + d.feed([1, 2]) + d.finish()
    'Hello world!'
    """

    __slots__ = ("_m", "_info", "_specials")

    def __init__(self, data_or_path, *, sha256=None):
        if isinstance(data_or_path, (str, os.PathLike)):
            with open(data_or_path, "rb") as f:
                data_or_path = f.read()
        if sha256 is not None and not isinstance(sha256, str):
            raise TypeError("sha256: expected a str 'sha256:<hex>', not %s" % type(sha256).__name__)
        m = _embd.TokMap(data_or_path, sha256)
        object.__setattr__(self, "_m", m)
        object.__setattr__(self, "_info", m.info())
        object.__setattr__(self, "_specials", dict(m.specials()))

    def __setattr__(self, name, value):
        raise AttributeError("a TokenizerMap is immutable")

    id = property(lambda self: self._info["id"], doc="the map's id")
    version = property(lambda self: self._info["version"], doc="the map's version")
    published_at = property(lambda self: self._info["published_at"], doc='"" if absent')
    sha256 = property(lambda self: self._info["sha256"],
                      doc='"sha256:<hex>" of the bytes loaded (the pin to compare with READY)')
    vocab_size = property(lambda self: self._info["vocab_size"])
    token_count = property(lambda self: self._info["token_count"],
                           doc='entries of "tokens" / "vocab"')
    schema = property(lambda self: self._info["schema"], doc='"0.1", "2" or "2.1"')
    encoder = property(lambda self: _ENCODERS.get(self._info["encoder"], "unknown"),
                       doc='"none", "byte_level" or "metaspace"')
    byte_fallback = property(lambda self: self._info["byte_fallback"],
                             doc="(start, end) inclusive id range of raw bytes, or None")

    @property
    def special_tokens(self):
        """The special tokens, name -> id (a new dict)."""
        return dict(self._specials)

    def lookup(self, id):
        """What id stands for: (bytes, kind), kind "text", "byte", "special" or "bytes" (a
        byte_level token's raw bytes). embd.Error EMBD_ERR_UNKNOWN_TOKEN if the map lacks it."""
        b, kind = self._m.lookup(id)
        return b, _KINDS.get(kind, "unknown")

    def detokenize(self, ids, *, skip_special=False, replace_unknown=False, reference=False):
        """The UTF-8 text of ids as one whole text (a trailing incomplete byte sequence is
        one U+FFFD)."""
        return self._m.detokenize(_ids(ids), _detok_flags(skip_special, replace_unknown, reference))

    def detokenizer(self, *, skip_special=False, replace_unknown=False, reference=False):
        """A streaming :class:`Detokenizer` over this map."""
        return Detokenizer(self, skip_special=skip_special, replace_unknown=replace_unknown,
                           reference=reference)

    def __repr__(self):
        return "TokenizerMap(id=%r, version=%r, schema=%r, vocab_size=%d)" % (
            self.id, self.version, self.schema, self.vocab_size)


class Detokenizer:
    """Renders one token stream frame by frame (lazy detokenization).

    ``feed(ids) -> str`` returns the text the ids complete: a UTF-8 sequence of byte tokens
    split across feeds is held back (``pending`` bytes, 0..3) until its last byte arrives,
    so no feed ever returns half a character. ``finish() -> str`` ends the stream (a held
    sequence becomes U+FFFD) and makes the detokenizer ready for a new one; ``reset()``
    drops held bytes. A feed that raises (an unknown id: ``EMBD_ERR_UNKNOWN_TOKEN``, offset
    its index) consumed nothing: drop or replace the id and feed again.

    Thread safety: one stream's state; one thread at a time (another thread entering gets
    RuntimeError). The map it reads stays alive as long as the detokenizer.

    >>> import json
    >>> from embd import codec
    >>> doc = json.dumps({"id": "t", "version": "1", "vocab_size": 256,
    ...                   "byte_fallback_start": 0, "byte_fallback_end": 255,
    ...                   "tokens": {}}).encode()
    >>> d = codec.TokenizerMap(doc).detokenizer()
    >>> d.feed([0xE2, 0x82]), d.pending, d.feed([0xAC]), d.finish()
    ('', 2, '€', '')
    """

    __slots__ = ("_d", "map")

    def __init__(self, map, *, skip_special=False, replace_unknown=False, reference=False):
        if not isinstance(map, TokenizerMap):
            raise TypeError("map: expected a TokenizerMap, not %s" % type(map).__name__)
        self.map = map
        self._d = _embd.Detok(map._m, _detok_flags(skip_special, replace_unknown, reference)
                              | _embd.DETOK_PARTIAL)

    def feed(self, ids):
        return self._d.feed(_ids(ids))

    def finish(self):
        return self._d.finish()

    def reset(self):
        self._d.reset()

    @property
    def pending(self):
        return self._d.pending
