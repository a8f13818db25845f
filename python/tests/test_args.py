"""Bad arguments through every function: a clear exception (TypeError, ValueError,
embd.Error) or a correct result, never a crash. hypothesis drives the shapes."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import embd

FRAME = embd.encode_frame(np.ones(8, np.float32))
BATCH = embd.encode_batch(np.ones((2, 8), np.float32))
BODY = b'{"data":[{"index":0,"embedding":[1,2]}]}'

OK_EXC = (TypeError, ValueError, embd.Error, OverflowError, BufferError, MemoryError)

CALLS = {
    "decode_openai": lambda x: embd.decode_openai(x),
    "decode_frame": lambda x: embd.decode_frame(x),
    "frame_view": lambda x: embd.frame_view(x),
    "decode_batch": lambda x: embd.decode_batch(x),
    "iter_batch": lambda x: list(embd.iter_batch(x)),
    "crc32": lambda x: embd.crc32(x),
    "b64decode": lambda x: embd.b64decode(x),
    "b64encode": lambda x: embd.b64encode(x),
    "to_f32": lambda x: embd.to_f32(x, "f16"),
    "from_f32": lambda x: embd.from_f32(x, "f16"),
    "bswap32": lambda x: embd.bswap32(x),
    "encode_frame": lambda x: embd.encode_frame(x),
    "encode_batch": lambda x: embd.encode_batch(x),
    "stream_feed": lambda x: embd.StreamDecoder(max_dims=16).feed(x),
    "decode_vllm_bytes_only": lambda x: embd.decode_vllm_bytes_only(x, 4),
}

arrays = hnp.arrays(
    dtype=st.sampled_from([np.float32, np.float64, np.float16, np.int8, np.uint8, np.int64,
                           np.complex64, np.bool_, np.dtype("U3")]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))

junk = st.one_of(st.none(), st.integers(), st.floats(), st.text(max_size=20), st.binary(max_size=40),
                 st.lists(st.floats(allow_nan=True), max_size=10), st.just(object()),
                 st.just(memoryview(b"abcdefgh")[::2]), arrays,
                 arrays.map(lambda a: a[::2] if a.ndim else a),
                 arrays.map(lambda a: a.T))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(CALLS)), junk)
def test_any_argument_is_an_exception_or_a_result(name, x):
    try:
        CALLS[name](x)
    except OK_EXC:
        pass


def test_specific_shapes():
    with pytest.raises(ValueError):
        embd.encode_frame(np.float32(3))  # 0-d
    with pytest.raises(ValueError):
        embd.encode_frame(np.ones((2, 2, 2), np.float32))  # 3-d
    with pytest.raises(ValueError):
        embd.encode_batch(np.ones((2, 2, 2), np.float32))
    assert embd.encode_frame(np.ones(10, np.float32)[::2]) == embd.encode_frame(np.ones(5, np.float32))
    assert np.array_equal(embd.decode_batch(embd.encode_batch(np.ones((3, 4), np.float64).T)), np.ones((4, 3)))
    assert embd.encode_frame([]) == embd.encode_frame(np.zeros(0, np.float32))
    with pytest.raises(TypeError):
        embd.encode_frame(np.array(["a", "b"]))
    with pytest.raises(TypeError):  # a non-contiguous body is not silently copied
        embd.decode_openai(np.frombuffer(BODY * 2, np.uint8)[::2])
    with pytest.raises(TypeError):
        embd.b64encode(b"abc", out=b"123456")  # read-only out
    with pytest.raises(TypeError):
        embd.to_f32(b"\0\0", "f16", out=np.zeros(4, np.float32)[::2])


def test_huge_dims_are_refused_not_allocated():
    with pytest.raises(ValueError):
        embd.decode_frame(FRAME, dims=2**40)
    with pytest.raises(ValueError):
        embd.StreamDecoder(max_dims=2**33)
    # a header claiming 2**32-1 dims: refused by its length, nothing allocated
    import struct, zlib
    head = b"EMBD\x01\x00\x00\x00" + struct.pack("<I", 2**32 - 1)
    frame = head + struct.pack("<I", zlib.crc32(head))
    with pytest.raises(embd.Error) as e:
        embd.decode_frame(frame)
    assert e.value.code == "EMBD_ERR_FRAME_TRUNCATED"
    with pytest.raises(embd.Error) as e:
        embd.decode_batch(b"\xff\xff\xff\xff" + FRAME)
    assert e.value.code == "EMBD_ERR_BATCH_COUNT"
    with pytest.raises(embd.Error):
        embd.decode_vllm_bytes_only(b"\0" * 8, 2**40)
