"""Lifetimes: results keep their memory, views keep their source, nothing leaks, inputs'
reference counts are unchanged."""
import base64
import gc
import json
import sys
import tracemalloc

import numpy as np

import embd


def body(n=20, d=64):
    v = np.arange(n * d, dtype=np.float32).reshape(n, d)
    return json.dumps({"data": [{"index": i, "embedding": base64.b64encode(v[i].tobytes()).decode()}
                                for i in range(n)]}).encode(), v


def test_view_keeps_its_buffer_alive():
    v = np.arange(300, dtype=np.float32)
    data = bytearray(embd.encode_frame(v))
    view = embd.frame_view(data)
    assert not view.flags.writeable
    del data
    gc.collect()
    junk = [bytearray(1300) for _ in range(100)]  # reuse freed memory if it was freed
    assert np.array_equal(view, v)
    del junk


def test_results_own_their_memory():
    b, v = body()
    a = embd.decode_openai(b)
    base = a.base
    while getattr(base, "base", None) is not None:
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    assert type(base).__name__ == "Buffer"  # the extension's memory, no copy
    del b
    gc.collect()
    assert np.array_equal(a, v)
    a[0, 0] = 42  # the caller's to change
    assert a[0, 0] == 42


def _rss_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_many_decodes_leave_memory_flat():
    b, _ = body(10, 64)
    frame = embd.encode_frame(np.ones(64, np.float32))
    batch = embd.encode_batch(np.ones((4, 64), np.float32), compress=True)
    bad = b[:-2]

    def once():
        embd.decode_openai(b)
        embd.decode_frame(frame)
        embd.frame_view(frame)
        embd.decode_batch(batch)
        list(embd.iter_batch(batch))
        embd.b64decode(embd.b64encode(frame))
        dec = embd.StreamDecoder(max_dims=64, batch=True)
        dec.feed(batch)
        try:
            embd.decode_openai(bad)
        except embd.Error:
            pass

    for _ in range(2000):
        once()
    gc.collect()
    rss0 = _rss_kb()
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    for _ in range(100000 // 10):
        once()
    gc.collect()
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
    assert grown < 64 * 1024, "Python allocations grew by %d bytes" % grown
    # C allocations are outside tracemalloc: RSS shows them (10,000 rounds of 8 calls).
    assert _rss_kb() - rss0 < 8 * 1024, "RSS grew by %d KiB" % (_rss_kb() - rss0)


def test_input_refcounts_unchanged():
    b, _ = body()
    frame = embd.encode_frame(np.ones(8, np.float32))
    batch = embd.encode_batch(np.ones((2, 8), np.float32))
    arr = np.ones(8, np.float32)
    objs = [b, frame, batch, arr]
    before = [sys.getrefcount(o) for o in objs]
    for _ in range(100):
        r = embd.decode_openai(b)
        embd.decode_frame(frame)
        embd.decode_batch(batch)
        embd.encode_frame(arr)
        embd.crc32(b)
        try:
            embd.decode_openai(b[:-1])
        except embd.Error:
            pass
        del r
    assert [sys.getrefcount(o) for o in objs] == before
    n = sys.getrefcount(frame)
    v = embd.frame_view(frame)  # a view holds one reference to its source, and drops it
    assert sys.getrefcount(frame) == n + 1
    del v
    assert sys.getrefcount(frame) == n
