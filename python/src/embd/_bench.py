"""python -m embd bench: embd beside what Python users run today, same bodies, one
process, medians; ratios are what to read (pin the process: taskset -c 1 python -m embd
bench). Prints the machine it ran on."""
import base64
import json
import platform
import statistics
import sys
import time

import numpy as np

import embd

from ._cpu import cpu_model


def median_us(fn, min_time=0.2, rounds=7):
    """Median over `rounds` of the mean time of a batch of calls sized to ~min_time/rounds."""
    fn()  # warm: first-touch of memory, caches
    n, t0 = 1, time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    n = max(1, int(min_time / rounds / one))
    res = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        res.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(res)


def bodies(count=100, dims=1536, seed=7):
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((count, dims)).astype(np.float32) / np.float32(40)
    items_b64 = [{"object": "embedding", "index": i,
                  "embedding": base64.b64encode(vecs[i].tobytes()).decode()} for i in range(count)]
    usage = {"prompt_tokens": 8 * count, "total_tokens": 8 * count}
    b64 = json.dumps({"object": "list", "data": items_b64, "model": "text-embedding-3-small",
                      "usage": usage}).encode()
    # Shortest round-trip text of each float32 (what a server writing float32 prints).
    rows = ["[" + ",".join(np.format_float_positional(x, unique=True, trim="-") for x in v) + "]"
            for v in vecs]
    items_f = ",".join('{"object":"embedding","index":%d,"embedding":%s}' % (i, r)
                       for i, r in enumerate(rows))
    flt = ('{"object":"list","data":[%s],"model":"text-embedding-3-small","usage":%s}'
           % (items_f, json.dumps(usage))).encode()
    items_h = [{"object": "embedding", "index": i,
                "embedding": base64.b64encode(vecs[i].astype("<f2").tobytes()).decode()}
               for i in range(count)]
    f16 = json.dumps({"object": "list", "data": items_h, "model": "m", "usage": usage}).encode()
    return vecs, b64, flt, f16


def main(argv=None):
    count, dims = 100, 1536
    vecs, b64, flt, f16 = bodies(count, dims)
    print("embd %s Python bench: %s; Python %s, numpy %s; kernels %s" % (
        embd.__version__, cpu_model(), platform.python_version(), np.__version__,
        ", ".join("%s=%s" % kv for kv in embd.cpu()["kernels"].items())))
    print("bodies: %d x %d; base64 %d bytes, float text %d bytes, float16 base64 %d bytes"
          % (count, dims, len(b64), len(flt), len(f16)))

    def openai_python():  # openai-python's rule: per item b64decode + frombuffer + tolist
        return [np.frombuffer(base64.b64decode(d["embedding"]), dtype="float32").tolist()
                for d in json.loads(b64)["data"]]

    def openai_python_arrays():
        return [np.frombuffer(base64.b64decode(d["embedding"]), dtype="float32")
                for d in json.loads(b64)["data"]]

    def json_floats():
        return np.array([d["embedding"] for d in json.loads(flt)["data"]], dtype=np.float32)

    rows = [("base64 body", "embd.decode_openai", lambda: embd.decode_openai(b64),
             [("openai-python (json.loads, b64decode, frombuffer, tolist)", openai_python, 50),
              ("the same without .tolist()", openai_python_arrays, 10)]),
            ("float-array body", "embd.decode_openai", lambda: embd.decode_openai(flt),
             [("json.loads + np.array(float32)", json_floats, 20)]),
            ("float16 base64 body", "embd.decode_openai(dtype='f16')",
             lambda: embd.decode_openai(f16, dtype="f16"),
             [("json.loads, b64decode, frombuffer('<f2').astype(float32)",
               lambda: [np.frombuffer(base64.b64decode(d["embedding"]), "<f2").astype(np.float32)
                        for d in json.loads(f16)["data"]], 5)])]
    try:
        import ujson
        rows[1][3].append(("ujson.loads + np.array(float32)",
                           lambda: np.array([d["embedding"] for d in ujson.loads(flt)["data"]],
                                            dtype=np.float32), 5))
    except ImportError:
        print("(ujson not installed: its row is left out)")
    check = embd.decode_openai(b64)
    assert np.array_equal(check, vecs) and np.array_equal(embd.decode_openai(flt), vecs)
    print()
    print("%-20s %-58s %12s %9s %s" % ("body", "contender", "us/call", "embd x", "target"))
    for body, name, fn, others in rows:
        t_embd = median_us(fn)
        print("%-20s %-58s %12.1f %9s" % (body, name, t_embd, ""))
        for oname, ofn, target in others:
            t = median_us(ofn)
            ratio = t / t_embd
            print("%-20s %-58s %12.1f %8.1fx >= %dx %s" % (body, oname, t, ratio, target,
                                                          "holds" if ratio >= target else "NOT MET"))
    frame = embd.encode_frame(vecs[0])
    t_np = median_us(lambda: np.frombuffer(frame, dtype="<f4", count=dims, offset=16), rounds=15)
    t_dec = median_us(lambda: embd.decode_frame(frame), rounds=15)
    t_view = median_us(lambda: embd.frame_view(frame), rounds=15)
    print("%-20s %-58s %12.2f" % ("one 1536-dim frame", "np.frombuffer(frame, '<f4', offset=16)", t_np))
    print("%-20s %-58s %12.2f %8.2fx <= 2x %s" % ("", "embd.decode_frame (validates, copies)", t_dec,
                                                  t_dec / t_np, "holds" if t_dec <= 2 * t_np else "NOT MET"))
    print("%-20s %-58s %12.2f %8.2fx ~ 1x" % ("", "embd.frame_view (validates, no copy)", t_view,
                                             t_view / t_np))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
