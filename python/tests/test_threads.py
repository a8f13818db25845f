"""The GIL is released around C work, and threads sharing nothing agree with one thread."""
import base64
import json
import threading
import time

import numpy as np

import embd


def big_body(count=400, dims=1536, seed=0):
    v = np.random.default_rng(seed).standard_normal((count, dims)).astype(np.float32)
    items = [{"index": i, "embedding": base64.b64encode(v[i].tobytes()).decode()} for i in range(count)]
    return json.dumps({"data": items}).encode(), v


def float_body(rows, dims=512):
    # One row's float text repeated: cheap to make, ~0.1 ms of C parsing a row.
    row = "[" + ",".join(repr(float(x)) for x in np.random.default_rng(1).standard_normal(dims)) + "]"
    return ('{"data":[%s]}' % ",".join('{"index":%d,"embedding":%s}' % (i, row) for i in range(rows))).encode()


def _run_threads(fn, n):
    out = [None] * n
    ts = [threading.Thread(target=lambda i=i: out.__setitem__(i, fn(i))) for i in range(n)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return time.perf_counter() - t0, out


def test_python_runs_while_c_decodes():
    # Not a timing ratio: while one thread is inside one long decode, another thread runs
    # Python code, stamping the time as it goes; stamps from the middle of the call can
    # only exist if the call let go of the GIL. Holds on one CPU too.
    # A float-text body: ~60 ms of C work (one row's text repeated), long beside any
    # scheduling delay of a loaded machine.
    body = float_body(2000)
    stamps = []
    go, done = threading.Event(), threading.Event()
    clock = time.perf_counter

    def spin():
        go.wait()
        while not done.is_set():
            stamps.append(clock())

    t = threading.Thread(target=spin)
    t.start()
    try:
        go.set()
        time.sleep(0.01)
        t0 = clock()
        embd._embd.openai_decode(body, 0, 0, 0, 0, False)
        t1 = clock()
    finally:
        done.set()
        t.join()
    lo, hi = t0 + (t1 - t0) * 0.25, t1 - (t1 - t0) * 0.25
    inside = sum(1 for x in stamps if lo < x < hi)
    assert t1 - t0 > 0.02, "the decode was too short to tell (%.1f ms)" % ((t1 - t0) * 1e3)
    assert inside > 10, "the other thread ran %d steps in the middle half of a %.1f ms decode" % (
        inside, (t1 - t0) * 1e3)


def test_eight_threads_agree_with_one():
    bodies = [big_body(50, 256, seed=s) for s in range(8)]
    frames = [embd.encode_batch(v, compress=bool(s & 1), payload_crc=True) for s, (_, v) in enumerate(bodies)]

    def work(i):
        body, _ = bodies[i]
        res = []
        for _ in range(10):
            res.append(embd.decode_openai(body))
            res.append(embd.decode_batch(frames[i]))
            dec = embd.StreamDecoder(max_dims=256, batch=True)
            got = []
            for k in range(0, len(frames[i]), 1000):
                got += dec.feed(frames[i][k:k + 1000])
            dec.finish()
            res.append(np.array(got))
            res.append(embd.crc32(body))
        return res

    _, outs = _run_threads(work, 8)
    for i, res in enumerate(outs):
        want = bodies[i][1]
        for k in range(0, len(res), 4):
            assert np.array_equal(res[k], want) and np.array_equal(res[k + 1], want)
            assert np.array_equal(res[k + 2], want)
            assert res[k + 3] == __import__("zlib").crc32(bodies[i][0])


def test_stateful_objects_refuse_a_second_thread():
    # A stream decoder fed from two threads at once: one of them gets RuntimeError (or both
    # run one after the other); never a crash or a mixed result.
    b = embd.encode_batch(np.ones((2000, 256), np.float32))
    dec = embd.StreamDecoder(max_dims=256, batch=True)
    errors = []
    barrier = threading.Barrier(2)

    def feed(_):
        barrier.wait()
        try:
            return dec.feed(b)
        except RuntimeError as e:
            errors.append(e)
            return None
        except embd.Error as e:  # the second full copy of the batch after the first
            return e

    _, res = _run_threads(feed, 2)
    assert any(isinstance(r, list) and len(r) == 2000 for r in res)
    for e in errors:
        assert "another thread" in str(e)
