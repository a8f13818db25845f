"""embd: the numbers of AI services (embedding vectors, token ids) from their wire formats
into numpy arrays, fast and strictly, through libembd's C code.

    >>> import embd
    >>> body = b'{"data":[{"index":0,"embedding":"AACAPwAAAEA="}],"model":"m"}'
    >>> embd.decode_openai(body)
    array([[1., 2.]], dtype=float32)

Every decoder validates all it reads. A refused input raises embd.Error (a ValueError)
whose .code names the C result (e.g. "EMBD_ERR_BASE64_CHAR") and whose .offset is the
byte it is at; no partial result is ever returned. Wrong argument types raise TypeError.

Threads: every function releases the GIL around C work on more than a few hundred bytes
and keeps no state between calls, so threads decode in parallel. Objects with state
(StreamDecoder, the iterator of iter_batch, embd.codec's readers) are for one thread at
a time: a second thread entering one gets RuntimeError, never a race.

Results are numpy arrays over memory the extension allocated (their .base keeps it
alive), never copies of it.
"""
import sys as _sys

import numpy as _np

from . import _embd
from ._embd import Error
from . import codec  # noqa: E402  (embd.codec: Codec token frames, tokenizer maps)
from ._writers import PgCopyWriter, to_bvecs, to_es_bulk, to_fvecs, to_pgcopy  # noqa: E402
from ._batch import BatchResult, decode_openai_batch, iter_openai_batch  # noqa: E402
from ._arrow import decode_openai_arrow, decode_openai_batch_lines_arrow  # noqa: E402  (pyarrow imported only when called)

__all__ = [
    "BatchResult", "Error", "OpenAIResponse", "PgCopyWriter", "decode_openai_batch",
    "iter_openai_batch", "codec", "to_bvecs", "to_es_bulk", "to_fvecs",
    "to_pgcopy", "StreamDecoder", "__version__", "b64decode", "b64encode",
    "bswap32", "cpu", "crc32", "decode_batch", "decode_frame", "decode_openai",
    "decode_openai_response", "decode_response", "decode_vllm_bytes", "decode_vllm_bytes_only",
    "encode_batch", "encode_frame", "frame_view", "from_f32", "iter_batch", "to_f32",
    "decode_openai_arrow", "decode_openai_batch_lines_arrow",
]

__version__ = _embd.version()

# ---- dtypes and byte orders -------------------------------------------------------------

_F32, _F16, _BF16, _E4M3, _E5M2, _INT8, _UINT8, _BINARY, _UBINARY = range(9)
_PACKED = (_BINARY, _UBINARY)
# numpy types that are a wire dtype as they are (everything else is converted as floats).
_NUMPY_WIRE = {_np.dtype(_np.float32): _F32, _np.dtype(_np.float16): _F16,
               _np.dtype(_np.int8): _INT8}
_ALIASES = {
    # embd's own names are what embd_dtype_name prints; these are the other spellings users
    # bring: numpy's, torch's and vLLM's.
    "f32": _F32, "float32": _F32, "float": _F32, "fp32": _F32, "torch.float32": _F32,
    "f16": _F16, "float16": _F16, "half": _F16, "fp16": _F16, "torch.float16": _F16,
    "bf16": _BF16, "bfloat16": _BF16, "torch.bfloat16": _BF16,
    "fp8-e4m3": _E4M3, "fp8_e4m3": _E4M3, "float8_e4m3fn": _E4M3, "e4m3": _E4M3,
    "torch.float8_e4m3fn": _E4M3,
    "fp8-e5m2": _E5M2, "fp8_e5m2": _E5M2, "float8_e5m2": _E5M2, "e5m2": _E5M2,
    "torch.float8_e5m2": _E5M2,
    "int8": _INT8, "uint8": _UINT8, "binary": _BINARY, "ubinary": _UBINARY,
}


def _dtype(dtype):
    """The embd_dtype code of a name (embd's, numpy's, torch's, vLLM's) or numpy dtype."""
    if isinstance(dtype, str):
        code = _ALIASES.get(dtype)
        if code is None:
            code = _embd.dtype_parse(dtype)
        if code is None:
            raise ValueError("unknown dtype %r (embd's names: %s)" % (
                dtype, ", ".join(_embd.dtype_name(i) for i in range(9))))
        return code
    try:
        np_dt = _np.dtype(dtype)
    except TypeError:
        raise TypeError("dtype: expected a str or numpy dtype, not %s" % type(dtype).__name__) from None
    if np_dt in _NUMPY_WIRE:
        return _NUMPY_WIRE[np_dt]
    if np_dt == _np.dtype(_np.uint8):
        return _UINT8
    raise ValueError("numpy dtype %s is not a wire dtype" % np_dt)


def _order(byte_order):
    if byte_order == "native":
        byte_order = _sys.byteorder
    if byte_order == "little":
        return 0
    if byte_order == "big":
        return 1
    if not isinstance(byte_order, str):
        raise TypeError("byte_order: expected 'little', 'big' or 'native'")
    raise ValueError("byte_order %r: expected 'little', 'big' or 'native'" % byte_order)


_WIRE_NUMPY = ("f4", "f2", "u2", "u1", "u1", "i1", "u1", "u1", "u1")
_WIRE_LE = tuple(_np.dtype("<" + t) for t in _WIRE_NUMPY)
_WIRE_BE = tuple(_np.dtype(">" + t) for t in _WIRE_NUMPY)
_F4 = _np.dtype(_np.float32)
_frombuffer = _np.frombuffer  # positional arguments: the per-frame calls' fixed cost counts


def _numpy_wire(code, order=0):
    """The numpy dtype that holds elements of a wire dtype as they are: bfloat16 as its
    16-bit pattern (uint16), fp8 as bytes (uint8), packed bits as bytes (8 dims each)."""
    return (_WIRE_BE if order == 1 else _WIRE_LE)[code]


def _row_elems(code, dims):
    return dims // 8 if code in _PACKED else dims


def _error(code, message, offset=None):
    e = Error(message)
    e.code = code
    e.offset = offset
    return e


def _ints(**kw):
    """Optional positive int arguments, None as 0 (the C API's "any")."""
    out = {}
    for k, v in kw.items():
        if v is None:
            out[k] = 0
            continue
        if isinstance(v, bool) or not isinstance(v, int):
            try:
                v = v.__index__()
            except AttributeError:
                raise TypeError("%s: expected an int, not %s" % (k, type(v).__name__)) from None
        if v <= 0:
            raise ValueError("%s must be positive, not %d" % (k, v))
        out[k] = v
    return out


# ---- OpenAI-compatible responses --------------------------------------------------------

class OpenAIResponse:
    """A decoded /v1/embeddings response: .vectors (count x dims ndarray, rows by
    data[].index), .model (str; "" when absent), .model_truncated (the model name was cut
    to 127 bytes), .prompt_tokens and .total_tokens (int, or None without a well-formed
    usage). Immutable once made; share it freely."""

    __slots__ = ("vectors", "model", "model_truncated", "prompt_tokens", "total_tokens")

    def __init__(self, vectors, model, model_truncated, prompt_tokens, total_tokens):
        self.vectors = vectors
        self.model = model
        self.model_truncated = model_truncated
        self.prompt_tokens = prompt_tokens
        self.total_tokens = total_tokens

    def __repr__(self):
        return "OpenAIResponse(vectors=<%s %s>, model=%r, prompt_tokens=%r, total_tokens=%r)" % (
            "x".join(map(str, self.vectors.shape)), self.vectors.dtype, self.model,
            self.prompt_tokens, self.total_tokens)


def _openai_result(res, dtype_code, order):
    buf, count, dims, row_bytes, out_dtype, model, truncated, pt, tt = res
    if row_bytes == 0:
        arr = _np.frombuffer(buf, dtype=_np.float32).reshape(count, dims)
    else:
        nd = _numpy_wire(out_dtype, order)
        arr = _np.frombuffer(buf, dtype=nd).reshape(count, row_bytes // nd.itemsize)
    return OpenAIResponse(arr, model, truncated, pt, tt)


def _openai_args(dtype, byte_order, dims, count):
    code, order = _dtype(dtype), _order(byte_order)
    n = _ints(dims=dims, count=count)
    return code, order, n["dims"], n["count"]


def decode_openai_response(body, *, dtype="f32", byte_order="little", dims=None, count=None,
                           keep_dtype=False):
    """Decodes an OpenAI-compatible /v1/embeddings response body (bytes, bytearray,
    memoryview, str or any C-contiguous buffer) into an OpenAIResponse.

    Every shape libembd reads: data[].embedding as a float array or as base64 (in the
    dtype and byte order the request asked for: vLLM embed_dtype/endianness, Voyage and
    Mistral output_dtype, Jina embedding_type), Cohere's embeddings / embeddings_by_type,
    llama.cpp and Infinity. `dtype` names the element type the request asked for (the
    body cannot tell float16 from bfloat16): embd's names ("f16", "bf16", "fp8-e4m3",
    "int8", "ubinary", ...) or numpy's, torch's and vLLM's ("float16", "bfloat16",
    "fp8_e4m3", "torch.float16"). `dims` / `count`: the exact dims and vector count
    expected (embd.Error EMBD_ERR_OPENAI_DIMS / _COUNT otherwise).

    The vectors are float32 (each element converted exactly), or with keep_dtype=True the
    wire's elements as they came: float16 (in `byte_order`), bfloat16 as uint16 bit
    patterns, fp8 as uint8 codes, int8, uint8, packed bits as uint8 (dims/8 per row).
    """
    code, order, d, c = _openai_args(dtype, byte_order, dims, count)
    return _openai_result(_embd.openai_decode(body, code, order, d, c, bool(keep_dtype)), code, order)


def decode_openai(body, *, dtype="f32", byte_order="little", dims=None, count=None,
                  keep_dtype=False):
    """decode_openai_response(...).vectors: a (count, dims) ndarray, rows placed by
    data[].index. See decode_openai_response for the arguments.

        >>> import embd
        >>> embd.decode_openai('{"data":[{"index":1,"embedding":[0.5]},'
        ...                    '{"index":0,"embedding":[-2]}]}')
        array([[-2. ],
               [ 0.5]], dtype=float32)
    """
    return decode_openai_response(body, dtype=dtype, byte_order=byte_order, dims=dims,
                                  count=count, keep_dtype=keep_dtype).vectors


def decode_vllm_bytes(body, metadata, *, dtype="f32", byte_order="little", dims=None,
                      count=None, keep_dtype=False, response=False):
    """A vLLM encoding_format "bytes" response: `body` the octet-stream body, `metadata`
    the JSON of its HTTP header "metadata" (str or bytes). Every item's range, shape,
    embed_dtype and endianness is checked against the body and the asked dtype. Returns
    the (count, dims) ndarray, or the OpenAIResponse with response=True."""
    code, order, d, c = _openai_args(dtype, byte_order, dims, count)
    r = _openai_result(_embd.openai_decode_bytes(body, metadata, code, order, d, c,
                                                 bool(keep_dtype)), code, order)
    return r if response else r.vectors


def decode_vllm_bytes_only(body, dims, *, dtype="f32", byte_order="little", count=None,
                           keep_dtype=False):
    """A vLLM encoding_format "bytes_only" body: the vectors back to back, `dims` each;
    the length must be a whole number of vectors (EMBD_ERR_DTYPE_LENGTH)."""
    code, order = _dtype(dtype), _order(byte_order)
    n = _ints(dims=dims, count=count)
    if n["dims"] == 0:
        raise TypeError("decode_vllm_bytes_only: dims is required")
    return _openai_result(_embd.openai_decode_bytes_only(body, n["dims"], code, order, n["count"],
                                                         bool(keep_dtype)), code, order).vectors


def decode_response(body, content_type, **options):
    """Decodes an embedding service's response by its Content-Type, as the seed's client
    negotiates: application/octet-stream is an EMBD batch (or one EMBD frame, which gives
    one row), application/json an OpenAI-compatible body (options as decode_openai).
    Anything else raises embd.Error naming the type. Returns a (count, dims) ndarray."""
    if not isinstance(content_type, str):
        raise TypeError("content_type: expected a str")
    media = content_type.split(";", 1)[0].strip().lower()
    if media == "application/json" or (media.startswith("application/") and media.endswith("+json")):
        return decode_openai(body, **options)
    if media == "application/octet-stream":
        unknown = set(options) - {"dims", "keep_dtype"}
        if unknown:
            raise TypeError("decode_response: %s do not apply to EMBD frames" % ", ".join(sorted(unknown)))
        mv = memoryview(body.encode() if isinstance(body, str) else body).cast("B")
        if bytes(mv[:4]) == b"EMBD":
            return decode_frame(body, **options).reshape(1, -1)
        return decode_batch(body, **options)
    raise _error("EMBD_ERR_INVALID_ARGUMENT",
                 "decode_response: content type %r is neither application/octet-stream (EMBD "
                 "frames) nor application/json (OpenAI-compatible)" % content_type)


# ---- EMBD frames and batches ------------------------------------------------------------

def _flags(compress, payload_crc):
    return (1 if compress else 0) | (2 if payload_crc else 0)


# The numpy element types that hold a wire dtype's elements as they are (the types
# keep_dtype returns): such an array is written without conversion.
_RAW_NUMPY = {_F16: "f2", _BF16: "u2", _E4M3: "u1", _E5M2: "u1", _INT8: "i1", _UINT8: "u1",
              _BINARY: "u1", _UBINARY: "u1"}


def _vector(v, code, what="vector"):
    """(contiguous little-endian array, dims, raw) for one vector: raw when its numpy type
    holds the wire dtype's elements (float16 for f16, uint16 bit patterns for bf16, uint8
    codes for fp8, int8, uint8, packed bits as uint8 bytes: 8 dims each), float32 values
    otherwise (converted by the C encoder to the wire dtype)."""
    a = _np.asarray(v)
    if a.ndim != 1:
        raise ValueError("%s: expected a 1-D array, got %d-D" % (what, a.ndim))
    k = _RAW_NUMPY.get(code)
    if k is not None and a.dtype.kind + str(a.dtype.itemsize) == k:
        a = _np.ascontiguousarray(a, dtype="<" + k)
        return a, a.shape[0] * 8 if code in _PACKED else a.shape[0], True
    if a.dtype.kind not in "fiub":
        raise TypeError("%s: expected numbers, got dtype %s" % (what, a.dtype))
    a = _np.ascontiguousarray(a, dtype=_np.float32)
    return a, a.shape[0], False


def encode_frame(vector, *, dtype="f32", compress=False, level=6, payload_crc=False):
    """One EMBD frame of a 1-D vector: a 16-byte header, then the values in `dtype`
    (float32 frames are the seed codec's version 1, byte for byte). Floats are converted
    to the dtype exactly as embd_from_f32 does (int8/uint8 must be integers in range:
    embd.Error EMBD_ERR_DTYPE_RANGE); an array already of the wire type (float16 for f16,
    int8, uint8, packed bits as uint8 bytes) is written as it is. compress: a zlib payload
    at `level`; payload_crc: a CRC-32 trailer."""
    code = _dtype(dtype)
    a, dims, raw = _vector(vector, code)
    return _embd.encode_frames([(a, dims)], True, raw, code, _flags(compress, payload_crc),
                               int(level))


def encode_batch(vectors, *, dtype="f32", compress=False, level=6, payload_crc=False):
    """A batch envelope (uint32 count, then one frame per vector): `vectors` is a 2-D array
    or a sequence of 1-D arrays of any dims each. Options as encode_frame."""
    code = _dtype(dtype)
    if isinstance(vectors, _np.ndarray):
        if vectors.ndim != 2:
            raise ValueError("vectors: expected a 2-D array or a sequence of 1-D arrays, got %d-D"
                             % vectors.ndim)
    parts = [_vector(v, code, "vectors[%d]" % i) for i, v in enumerate(vectors)]
    if len({p[2] for p in parts}) > 1:
        raise TypeError("vectors: arrays of the wire type (written as they are) mixed with "
                        "float arrays (converted): give one kind")
    raw = bool(parts) and parts[0][2]
    return _embd.encode_frames([(p[0], p[1]) for p in parts], False, raw, code,
                               _flags(compress, payload_crc), int(level))


def _as_array(buf, code, dims, keep):
    return _np.frombuffer(buf, dtype=_WIRE_LE[code] if keep else _F4)


def decode_frame(data, *, dims=None, max_dims=None, keep_dtype=False):
    """Decodes one EMBD frame (every check: magic, version, header CRC, flags, dims,
    lengths, payload CRC, zlib) into a new 1-D float32 array (or the frame's dtype with
    keep_dtype, as decode_openai_response says). dims: the exact dims expected."""
    if dims is None and max_dims is None and not keep_dtype:  # the common call: no checks
        return _frombuffer(_embd.frame_decode(data)[0], _F4)
    else:
        n = _ints(dims=dims, max_dims=max_dims)
        buf, d, code = _embd.frame_decode(data, n["max_dims"], n["dims"], bool(keep_dtype))
    return _np.frombuffer(buf, dtype=_WIRE_LE[code] if keep_dtype else _F4)


def frame_view(data, *, dims=None, max_dims=None):
    """The frame's values without a copy: a read-only ndarray over `data`'s own bytes,
    keeping `data` alive, after the whole frame validated. Possible for uncompressed
    frames whose elements need no conversion (float32 and float16 little-endian with the
    payload aligned, every single-byte dtype: fp8 and packed bits as uint8); for the
    others (compressed frames, a misaligned payload) it returns a decoded copy in the
    frame's dtype, as decode_frame(keep_dtype=True) does."""
    if dims is None and max_dims is None:
        v = _embd.frame_view(data)
    else:
        n = _ints(dims=dims, max_dims=max_dims)
        v = _embd.frame_view(data, n["max_dims"], n["dims"])
    if v is None:
        return decode_frame(data, dims=dims, max_dims=max_dims, keep_dtype=True)
    offset, d, code, nbytes = v
    nd = _WIRE_LE[code]
    arr = _frombuffer(data, nd, nbytes // nd.itemsize, offset)
    if arr.flags.writeable:  # bytes give a read-only array already
        arr.flags.writeable = False
    return arr


def decode_batch(data, *, dims=None, max_dims=None, keep_dtype=False):
    """Decodes a batch envelope whose frames all have one dims (and, with keep_dtype, one
    dtype) into a (count, dims) array. A batch of mixed frames raises embd.Error
    EMBD_ERR_FRAME_DIMS_MISMATCH naming the first frame that differs (iter_batch yields
    frames of any dims)."""
    n = _ints(dims=dims, max_dims=max_dims)
    buf, count, d, code = _embd.batch_decode(data, n["max_dims"], n["dims"], bool(keep_dtype))
    arr = _as_array(buf, code, d, keep_dtype)
    return arr.reshape(count, _row_elems(code, d) if keep_dtype else d)


def iter_batch(data, *, dims=None, max_dims=None, keep_dtype=False):
    """Yields each frame of a batch as a 1-D array (frames may differ in dims and dtype).
    Every frame is validated before it is yielded; an error raises embd.Error at its frame
    (the frames before it were whole). Keeps `data` until exhausted."""
    n = _ints(dims=dims, max_dims=max_dims)
    for buf, d, code in _embd.BatchIter(data, n["max_dims"], n["dims"], bool(keep_dtype)):
        yield _as_array(buf, code, d, keep_dtype)


class StreamDecoder:
    """EMBD frames (or a batch, batch=True) arriving in chunks of any size.

        dec = embd.StreamDecoder(max_dims=4096, batch=True)
        for chunk in response.iter_bytes():
            for vec in dec.feed(chunk):
                index.add(vec)
        dec.finish()          # embd.Error if the stream ended inside a frame

    max_dims bounds the one buffer (one frame). With out= (a writable C-contiguous 2-D
    array, rows x dims, float32; with keep_dtype the wire dtype's elements) each frame's
    values are written into its row while its bytes arrive (no assembly, one copy), and
    feed returns the row indices completed; a frame that does not fit its row raises.

    One thread at a time (RuntimeError for a second); distinct decoders are independent.
    """

    def __init__(self, *, max_dims, expected_dims=None, batch=False, keep_dtype=False, out=None):
        n = _ints(max_dims=max_dims, expected_dims=expected_dims)
        if n["max_dims"] == 0:
            raise ValueError("max_dims is required")
        self._keep = bool(keep_dtype)
        self._out = out
        if out is not None:
            if not isinstance(out, _np.ndarray):
                out = _np.asarray(out)
            if out.ndim != 2:
                raise ValueError("out: expected a 2-D array (rows x dims), got %d-D" % out.ndim)
            if not self._keep and out.dtype != _np.float32:
                raise TypeError("out: expected float32, got %s" % out.dtype)
            if not out.flags.c_contiguous or not out.flags.writeable:
                raise ValueError("out: must be writable and C-contiguous")
        self._s = _embd.Stream(n["max_dims"], n["expected_dims"], bool(batch), self._keep, out)

    def feed(self, chunk):
        """Feeds bytes; returns the frames completed by them (arrays, or row indices with
        out=)."""
        res = self._s.feed(chunk)
        if self._out is not None:
            return res
        return [_as_array(buf, code, d, self._keep) for buf, d, code in res]

    def finish(self):
        """End of input: embd.Error if a frame (or the batch count) is incomplete."""
        self._s.finish()

    @property
    def frames(self):
        """Frames delivered so far."""
        return self._s.frames

    @property
    def offset(self):
        """Bytes consumed so far."""
        return self._s.offset


# ---- kernels ------------------------------------------------------------------------------

def crc32(data, crc=0):
    """CRC-32 (zlib's polynomial; the same values as zlib.crc32), continuing from `crc`."""
    return _embd.crc32(data, crc)


def _b64flags(url, pad):
    return (1 if url else 0) | (0 if pad else 2)


def b64decode(s, *, url=False, pad=True, out=None):
    """Strict base64 (RFC 4648): no whitespace, exact padding (pad=False: none), zero
    trailing bits; url=True for the URL-safe alphabet. Returns bytes, or with out= (a
    writable buffer) the number of bytes written there."""
    return _embd.b64decode(s, _b64flags(url, pad), out)


def b64encode(data, *, url=False, pad=True, out=None):
    """base64 of `data` as bytes (or, with out=, the length written)."""
    return _embd.b64encode(data, _b64flags(url, pad), out)


def to_f32(data, dtype, byte_order="little", out=None):
    """Elements of `dtype` (bytes in `byte_order`) -> a float32 array, each converted
    exactly (bfloat16 as the upper half of float32, fp8 by its definition, packed bits as
    0/1 or -1/+1). With out= (a writable float32 buffer) returns the count written."""
    code, order = _dtype(dtype), _order(byte_order)
    if isinstance(data, _np.ndarray):
        data = _np.ascontiguousarray(data)
    res = _embd.to_f32(data, code, order, out)
    if out is not None:
        return res
    return _np.frombuffer(res, dtype=_np.float32)


def from_f32(array, dtype, byte_order="little", out=None):
    """float32 values -> bytes of `dtype` in `byte_order` (float16/bfloat16 rounded to
    nearest even, int8/uint8 exact integers in range or embd.Error, packed bits by sign).
    With out= returns the count of bytes written."""
    code, order = _dtype(dtype), _order(byte_order)
    a = _np.ascontiguousarray(array, dtype=_np.float32)
    return _embd.from_f32(a, code, order, out)


def bswap32(data, out=None):
    """Reverses the bytes of each 32-bit word (length a multiple of 4). out= may be the
    input itself (in place)."""
    return _embd.bswap32(data, out)


def cpu():
    """{"features": CPU features found, "enabled": those in use (EMBD_ISA can mask some),
    "kernels": {kernel family: the implementation it runs}, "version": libembd's}."""
    d = _embd.cpu()
    d["version"] = __version__
    return d
