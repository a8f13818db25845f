#!/usr/bin/env python3
"""embd serve's tests (ctest label serve): the front (embd-serve) over the fake upstream
(fake_upstream.py), everything on 127.0.0.1, offline, bounded in time.

  test_serve.py EMBD_SERVE EMBD GROUP [--sanitized]

Groups: vectors (bit for bit through every route, binary and JSON, http.client, curl and
the seed's MLEmbedClient under node), errors (every status, secrets kept out of logs and
bodies), load (upstream killed under load and restarted, a stalled client, 10,000
requests with RSS flat), signals (SIGTERM/SIGINT with a request in flight), cli (`embd
serve` runs the front). The oracle is the fake upstream's own vectors (its float32 bytes)
and frames built here with struct and zlib's CRC-32, never embd. Exit 77 (ctest: skipped)
when a tool a group needs is missing, saying which."""
import base64
import http.client
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

from serve_harness import (DTYPE_CODES, Front, Upstream, expected_f32, read_batch, read_frame, seed_batch,
                           seed_frame)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SKIP = 77
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, flush=True)


def post(conn, path, body, accept=None, headers=None):
    h = {"Content-Type": "application/json"}
    if accept:
        h["Accept"] = accept
    h.update(headers or {})
    conn.request("POST", path, body=json.dumps(body) if not isinstance(body, (bytes, str)) else body, headers=h)
    r = conn.getresponse()
    return r.status, r.getheader("Content-Type"), r.read(), r


def f32_of_json(values):
    return struct.pack("<%df" % len(values), *values)


def is_openai_error(body):
    try:
        e = json.loads(body)["error"]
        return isinstance(e["message"], str) and isinstance(e["type"], str) and "code" in e
    except (ValueError, KeyError, TypeError):
        return False


# ---- vectors ---------------------------------------------------------------------------------
def group_vectors(exe, embd):
    up = Upstream()
    fr = Front(exe, up.url, "--model", "fake-model")
    c = http.client.HTTPConnection("127.0.0.1", fr.port, timeout=20)  # keep-alive throughout
    texts = ["hello", "wörld ✓", "", "dims:1536 long one"]
    bin_ = "application/octet-stream"
    # /v1/embed: one frame, byte for byte the seed codec's frame of the upstream's floats
    for t in texts:
        dims = 1536 if t.startswith("dims:") else 16
        st, ct, body, _ = post(c, "/v1/embed", {"text": t, "model": "default"}, bin_)
        check(st == 200 and ct == bin_, "/v1/embed binary %r: %s %s" % (t, st, ct))
        check(body == seed_frame(expected_f32(t, dims)), "/v1/embed binary %r: frame bytes differ" % t)
        st, ct, body, _ = post(c, "/v1/embed", {"text": t}, "application/json")
        check(st == 200 and ct == "application/json", "/v1/embed json %r: %s" % (t, st))
        check(f32_of_json(json.loads(body)["embedding"]) == expected_f32(t, dims), "/v1/embed json %r: values" % t)
    # the --model default replaced the seed's placeholder; other fields passed through
    st, _, _, _ = post(c, "/v1/embed", {"text": "x", "model": "default", "user": "u1", "dimensions": 8}, bin_)
    last = json.loads(urlget(up.port, "/_last"))["body"]
    check(last == {"input": "x", "model": "fake-model", "encoding_format": "base64", "user": "u1", "dimensions": 8},
          "upstream request for /v1/embed: %r" % last)
    # /v1/embed/batch
    st, ct, body, _ = post(c, "/v1/embed/batch", {"texts": texts[:3], "model": "m2"}, bin_)
    check(st == 200 and body == seed_batch([expected_f32(t) for t in texts[:3]]), "/v1/embed/batch binary bytes")
    last = json.loads(urlget(up.port, "/_last"))["body"]
    check(last.get("model") == "m2" and last.get("input") == texts[:3], "batch upstream request %r" % last)
    st, ct, body, _ = post(c, "/v1/embed/batch", {"texts": texts[:3]}, "application/json")
    got = [f32_of_json(v) for v in json.loads(body)["embeddings"]]
    check(st == 200 and got == [expected_f32(t) for t in texts[:3]], "/v1/embed/batch json values")
    # /v1/embeddings: binary batch in input order; strings, token ids, lists of token ids
    for inp, names in ((["a", "b", "c"], ["a", "b", "c"]), ("solo", ["solo"]), ([1, 2, 3], ["tokens:1,2,3"]),
                       ([[5, 6], [7]], ["tokens:5,6", "tokens:7"])):
        st, ct, body, _ = post(c, "/v1/embeddings", {"input": inp, "model": "m"}, bin_)
        check(st == 200 and ct == bin_ and body == seed_batch([expected_f32(n) for n in names]),
              "/v1/embeddings binary %r: %s" % (inp, st))
    # JSON: the upstream's JSON in the encoding the client asked
    for fmt in ("float", "base64", None):
        req = {"input": ["a", "b"], "model": "m"}
        if fmt:
            req["encoding_format"] = fmt
        st, ct, body, _ = post(c, "/v1/embeddings", req)
        d = json.loads(body)["data"]
        if fmt == "base64":
            vecs = [base64.b64decode(x["embedding"]) for x in d]
        else:
            vecs = [f32_of_json(x["embedding"]) for x in d]
        check(st == 200 and vecs == [expected_f32("a"), expected_f32("b")], "/v1/embeddings json %s" % fmt)
        last = json.loads(urlget(up.port, "/_last"))["body"]
        check(last.get("encoding_format") == ("base64" if fmt == "base64" else None),
              "json %s: upstream encoding_format %r" % (fmt, last.get("encoding_format")))
    # special values bit for bit (-0.0, a subnormal, FLT_MAX, NaN): binary only, JSON has no NaN
    st, ct, body, _ = post(c, "/v1/embeddings", {"input": ["s1", "s2"], "model": "specials"}, bin_)
    check(body == seed_batch([expected_f32("s1", specials=True), expected_f32("s2", specials=True)]),
          "specials: bits differ")
    # dtype: version-2 frames; f16 checked against struct's IEEE half rounding
    st, ct, body, _ = post(c, "/v1/embed/batch", {"texts": ["a", "b"], "dtype": "f16"}, bin_)
    frames = read_batch(body)
    for (ver, code, dims, payload), t in zip(frames, ["a", "b"]):
        vals = struct.unpack("<16f", expected_f32(t))
        check(ver == 2 and code == DTYPE_CODES["f16"] and dims == 16 and
              payload == struct.pack("<16e", *vals), "dtype f16 frame for %r" % t)
    st, _, body, _ = post(c, "/v1/embed", {"text": "a", "dtype": "bf16"}, bin_)
    ver, code, dims, payload, _ = read_frame(body)
    want = b"".join(bf16(x) for x in struct.unpack("<16I", expected_f32("a")))
    check(ver == 2 and code == DTYPE_CODES["bf16"] and payload == want, "dtype bf16 frame")
    st, _, body, _ = post(c, "/v1/embed", {"text": "a", "dtype": "int8"}, bin_)
    check(st == 400 and b"int8" in body and is_openai_error(body), "int8 of non-integers: %s %r" % (st, body[:200]))
    # curl, binary into a file
    if shutil.which("curl"):
        out = subprocess.run(["curl", "-sS", "-H", "Accept: " + bin_, "-H", "Content-Type: application/json",
                              "--data-binary", json.dumps({"texts": ["a", "b"]}),
                              "http://127.0.0.1:%d/v1/embed/batch" % fr.port], capture_output=True, timeout=30)
        check(out.returncode == 0 and out.stdout == seed_batch([expected_f32("a"), expected_f32("b")]),
              "curl /v1/embed/batch: %s %r" % (out.returncode, out.stderr))
    else:
        print("SKIP (loud): curl not found: the curl checks of group vectors did not run")
    # the seed's MLEmbedClient (tests/interop/seed_client.mjs) under node
    node = shutil.which("node")
    if node:
        ts = ["dims:1536 hello", "dims:1536 x", "dims:1536 z"]
        out = subprocess.run([node, os.path.join(ROOT, "tests", "interop", "seed_client.mjs"),
                              "http://127.0.0.1:%d" % fr.port, "sk-seed", "-"] + ts,
                             capture_output=True, text=True, timeout=60)
        check(out.returncode == 0, "seed client: %s" % out.stderr)
        if out.returncode == 0:
            r = json.loads(out.stdout)
            want = [expected_f32(t, 1536 if t.startswith("dims:") else 16).hex() for t in ts]
            check(r["one_binary"] == want[0] and r["one_json"] == want[0], "seed client embedOne")
            check(r["batch_binary"] == want and r["batch_json"] == want, "seed client embedBatch")
            last = json.loads(urlget(up.port, "/_last"))
            check(last["authorization"] == "Bearer sk-seed", "client Authorization forwarded: %r" % last)
    else:
        print("SKIP (loud): node not found: the seed client (tests/interop/seed_client.mjs) did not run")
    # /healthz, /metrics
    check(json.loads(urlget(fr.port, "/healthz")) == {"status": "ok"}, "/healthz")
    m = urlget(fr.port, "/metrics").decode()
    check('embd_serve_requests_total{status="200"}' in m and "embd_serve_upstream_seconds_count" in m and
          "embd_serve_response_bytes_total" in m, "/metrics: %s" % m[:300])
    c.close()
    check(fr.stop() == 0, "SIGTERM: exit 0")
    up.kill()


def bf16(bits):
    """float32 bits -> bfloat16 bytes, round to nearest even (NaN kept quiet)."""
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
        return struct.pack("<H", (bits >> 16) | 0x40)
    r = bits + 0x7FFF + ((bits >> 16) & 1)
    return struct.pack("<H", (r >> 16) & 0xFFFF)


def urlget(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    c.request("GET", path)
    r = c.getresponse()
    b = r.read()
    c.close()
    return b


# ---- errors ------------------------------------------------------------------------------------
def group_errors(exe, embd):
    key, client_secret = "sk-front-SECRET-1234", "sk-client-SECRET-5678"
    up = Upstream()
    fr = Front(exe, up.url, "--max-body", "4096", "--api-key-env", "EMBD_TEST_KEY",
               env={"EMBD_TEST_KEY": key, "EMBD_SERVE_TIMEOUT_MS": "1000"})
    c = http.client.HTTPConnection("127.0.0.1", fr.port, timeout=20)
    auth = {"Authorization": "Bearer " + client_secret}
    bodies = []

    def expect(status, path, body, what, method="POST", must_contain=None, accept="application/octet-stream"):
        nonlocal c
        if method == "POST":
            st, ct, b, r = post(c, path, body, accept, auth)
        else:
            c.request(method, path, headers=auth)
            r = c.getresponse()
            st, ct, b = r.status, r.getheader("Content-Type"), r.read()
        bodies.append(b)
        check(st == status, "%s: status %s, want %s (%r)" % (what, st, status, b[:200]))
        check(is_openai_error(b), "%s: not an OpenAI error body: %r" % (what, b[:200]))
        if must_contain:
            check(must_contain.encode() in b, "%s: %r not in %r" % (what, must_contain, b[:300]))
        if r.getheader("Connection", "").lower() == "close":
            c.close()
            c = http.client.HTTPConnection("127.0.0.1", fr.port, timeout=20)
        return r

    expect(400, "/v1/embeddings", '{"input": ["a", "b",], "model": "m"}', "trailing comma",
           must_contain="body byte 20")
    expect(400, "/v1/embed", '{"text": 5}', "text not a string", must_contain="body byte 9")
    expect(400, "/v1/embed/batch", '{"texts": ["a", 3]}', "texts[1] a number", must_contain="body byte 16")
    expect(400, "/v1/embed", '{"text": "\xff"}'.encode("latin-1"), "invalid UTF-8", must_contain="body byte 10")
    expect(400, "/v1/embeddings", '{"model": "m"}', "no input", must_contain="no \\\"input\\\"")
    expect(400, "/v1/embeddings", '[1]', "not an object", must_contain="body byte 0")
    expect(400, "/v1/embed", '{"text": "a", "dtype": "f12"}', "unknown dtype", must_contain="body byte 23")
    expect(404, "/v1/nothing", {"text": "a"}, "404")
    r = expect(405, "/v1/embed", None, "GET /v1/embed", method="GET")
    check(r.getheader("Allow") == "POST", "405 Allow: %r" % r.getheader("Allow"))
    r = expect(405, "/healthz", {"x": 1}, "POST /healthz")
    check(r.getheader("Allow") == "GET, HEAD", "405 Allow on /healthz")
    # 413: curl sends a big body with Expect: 100-continue and reads the early answer
    if shutil.which("curl"):
        big = json.dumps({"text": "x" * (2 << 20)})
        for extra, what in (([], "413 with Content-Length (Expect: 100-continue)"),
                            (["-H", "Transfer-Encoding: chunked"], "413 chunked")):
            out = subprocess.run(["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", "-H", "Content-Type: application/json",
                                  "-H", "Authorization: Bearer " + client_secret, "--data-binary", "@-"] + extra +
                                 ["http://127.0.0.1:%d/v1/embed" % fr.port], input=big.encode(),
                                 capture_output=True, timeout=60)
            b, _, code = out.stdout.rpartition(b"\n")
            bodies.append(b)
            check(code == b"413" and is_openai_error(b), "%s: %r %r" % (what, code, b[:200]))
    else:
        print("SKIP (loud): curl not found: 413 not checked")
    # the upstream's own errors, status and body as they came
    for status in (400, 401, 503):
        st, ct, b, _ = post(c, "/v1/embeddings", {"input": "a", "model": "err-%d" % status}, "application/octet-stream",
                            auth)
        want = {"error": {"message": "the fake upstream was asked for a %d" % status,
                          "type": "server_error" if status >= 500 else "invalid_request_error", "param": None,
                          "code": status}}
        check(st == status and json.loads(b) == want, "upstream %d passed through: %s %r" % (status, st, b[:200]))
    expect(502, "/v1/embed", {"text": "a", "model": "bad-body"}, "undecodable upstream body",
           must_contain="body byte 10")
    expect(502, "/v1/embed/batch", {"texts": ["a", "b"], "model": "short"}, "upstream answered too few")
    expect(504, "/v1/embed", {"text": "a", "model": "slow"}, "upstream timeout", must_contain="1000 ms")
    # the key went upstream, the client's Authorization did not
    last = json.loads(urlget(up.port, "/_last"))
    check(last["authorization"] == "Bearer " + key, "--api-key-env header upstream: %r" % last["authorization"])
    up.kill()
    expect(502, "/v1/embed", {"text": "a"}, "upstream refused", must_contain="reach")
    c.close()
    check(fr.stop() == 0, "exit 0")
    log = fr.log()
    for secret in (key, client_secret, "SECRET"):
        check(secret not in log, "a secret in the log")
        check(all(secret.encode() not in b for b in bodies), "a secret in an error body")
    check("400" in log and "502" in log, "errors logged: %s" % log[-500:])


# ---- load ----------------------------------------------------------------------------------------
def group_load(exe, embd, sanitized):
    up = Upstream()
    port = up.port
    fr = Front(exe, up.url, "--concurrency", "64", env={"EMBD_SERVE_TIMEOUT_MS": "5000"})
    body = json.dumps({"texts": ["a", "b", "c"]})
    want = seed_batch([expected_f32(t) for t in "abc"])
    # 1. the upstream killed under load, then restarted on its port
    statuses, lock, stop = {}, threading.Lock(), threading.Event()
    bad = []

    def client():
        conn = None
        while not stop.is_set():
            try:
                conn = conn or http.client.HTTPConnection("127.0.0.1", fr.port, timeout=20)
                st, _, b, r = post(conn, "/v1/embed/batch", body, "application/octet-stream")
                if st == 200 and b != want:
                    bad.append("wrong bytes")
                if st != 200 and not is_openai_error(b):
                    bad.append("status %d body %r" % (st, b[:100]))
                with lock:
                    statuses[st] = statuses.get(st, 0) + 1
            except (OSError, http.client.HTTPException) as e:
                bad.append("client error %r" % e)
                conn = None

    threads = [threading.Thread(target=client) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    before = dict(statuses)
    up.kill()
    time.sleep(1.0)
    during = dict(statuses)
    up = Upstream(port=port)
    time.sleep(1.5)
    stop.set()
    for t in threads:
        t.join(30)
    after = dict(statuses)
    print("load: upstream killed and restarted: before %s, while gone %s, after %s" % (before, during, after))
    check(not bad, "load: %s" % bad[:5])
    check(before.get(200, 0) > 0 and during.get(502, 0) > 0 and after.get(200, 0) > during.get(200, 0),
          "load: 200 before, 502 while gone, 200 after")
    check(set(after) <= {200, 502}, "load: statuses %s" % after)
    check(fr.proc.poll() is None, "load: the front is alive")
    # 2. a stalled client (headers, then 10 of 100 body bytes) and a vanished one block nobody
    stalled = socket.create_connection(("127.0.0.1", fr.port))
    stalled.sendall(b"POST /v1/embed HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"text\": ")
    gone = socket.create_connection(("127.0.0.1", fr.port))
    gone.sendall(b"POST /v1/embed HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    gone.close()
    c = http.client.HTTPConnection("127.0.0.1", fr.port, timeout=5)
    t0 = time.time()
    st, _, b, _ = post(c, "/v1/embed/batch", body, "application/octet-stream")
    check(st == 200 and b == want, "a request beside a stalled client: %s" % st)
    print("load: answered in %.3f s beside a stalled client" % (time.time() - t0))
    stalled.close()
    # 3. N requests, RSS flat (sanitized builds: fewer, no RSS bound: ASan's quarantine grows)
    n = 2000 if sanitized else 10000
    def burst(k):
        cc = http.client.HTTPConnection("127.0.0.1", fr.port, timeout=20)
        okk = 0
        for i in range(k):
            st, _, b, _ = post(cc, "/v1/embed/batch" if i % 2 else "/v1/embeddings",
                               body if i % 2 else json.dumps({"input": ["a", "b", "c"]}), "application/octet-stream")
            okk += st == 200 and b == want
        cc.close()
        return okk

    burst(500)  # warm: the pools, the allocator
    rss0 = fr.rss_kib()
    res = []
    ts = [threading.Thread(target=lambda: res.append(burst(n // 4))) for _ in range(4)]
    t0 = time.time()
    for t in ts:
        t.start()
    for t in ts:
        t.join(300)
    secs = time.time() - t0
    rss1 = fr.rss_kib()
    print("load: %d requests in %.1f s (%d ok), RSS %d KiB -> %d KiB" % (n, secs, sum(res), rss0, rss1))
    check(sum(res) == n, "load: %d of %d requests answered right" % (sum(res), n))
    if not sanitized:
        check(rss1 - rss0 < 4096, "load: RSS grew by %d KiB over %d requests" % (rss1 - rss0, n))
    check(fr.stop() == 0, "exit 0")
    up.kill()


# ---- signals -----------------------------------------------------------------------------------
def group_signals(exe, embd):
    up = Upstream()
    for sig in (signal.SIGTERM, signal.SIGINT):
        fr = Front(exe, up.url, env={"EMBD_SERVE_TIMEOUT_MS": "10000"})
        result = {}

        def slow():
            c = http.client.HTTPConnection("127.0.0.1", fr.port, timeout=30)
            result["r"] = post(c, "/v1/embed", {"text": "a", "model": "slow"}, "application/octet-stream")

        t = threading.Thread(target=slow)
        t.start()
        time.sleep(0.8)  # the request is with the upstream (it sleeps 3 s)
        fr.proc.send_signal(sig)
        time.sleep(0.5)
        refused = False
        try:
            socket.create_connection(("127.0.0.1", fr.port), timeout=2).close()
        except OSError:
            refused = True
        check(refused, "%s: still accepting connections while draining" % sig.name)
        t.join(30)
        st, ct, b, _ = result.get("r", (None, None, b"", None))
        check(st == 200 and b == seed_frame(expected_f32("a")), "%s: the request in flight finished: %s" % (sig.name, st))
        rc = fr.proc.wait(20)
        log = fr.log()
        check(rc == 0, "%s: exit %s" % (sig.name, rc))
        check("draining 1 request" in log and "stopped" in log, "%s: log %s" % (sig.name, log))
    up.kill()


# ---- the embd command --------------------------------------------------------------------------
def group_cli(exe, embd):
    out = subprocess.run([embd, "serve", "--help"], capture_output=True, text=True, timeout=30)
    check(out.returncode == 0 and "--upstream URL" in out.stdout, "embd serve --help: %s" % out.stderr)
    out = subprocess.run([embd, "serve"], capture_output=True, text=True, timeout=30)
    check(out.returncode == 2 and "--upstream" in out.stderr, "embd serve without --upstream: %s" % out.stderr)
    out = subprocess.run([embd, "serve", "--upstream", "http://127.0.0.1:9/v1", "--listen", "nowhere"],
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 2 and "--listen" in out.stderr, "bad --listen: %s" % out.stderr)
    out = subprocess.run([embd, "--help"], capture_output=True, text=True, timeout=30)
    check("serve" in out.stdout, "embd --help lists serve")
    # the front through `embd serve`, on IPv6 when the loopback has it
    up = Upstream()
    listen = "[::1]:0" if socket.has_ipv6 and _have_ipv6_loopback() else "127.0.0.1:0"
    fr = Front([embd, "serve"], up.url, listen=listen)
    c = http.client.HTTPConnection(fr.host, fr.port, timeout=20)
    st, _, b, _ = post(c, "/v1/embed", {"text": "q"}, "application/octet-stream")
    check(st == 200 and b == seed_frame(expected_f32("q")), "embd serve on %s: %s" % (listen, st))
    c.close()
    check(fr.stop() == 0, "embd serve: exit 0")
    up.kill()


def _have_ipv6_loopback():
    try:
        s = socket.socket(socket.AF_INET6)
        s.bind(("::1", 0))
        s.close()
        return True
    except OSError:
        return False


def main():
    exe, embd, group = sys.argv[1:4]
    sanitized = "--sanitized" in sys.argv[4:]
    t0 = time.time()
    if group == "vectors":
        group_vectors(exe, embd)
    elif group == "errors":
        group_errors(exe, embd)
    elif group == "load":
        group_load(exe, embd, sanitized)
    elif group == "signals":
        group_signals(exe, embd)
    elif group == "cli":
        group_cli(exe, embd)
    else:
        print("unknown group %s" % group)
        sys.exit(2)
    print("serve.%s: %s in %.1f s" % (group, "FAILED (%d)" % len(failures) if failures else "ok", time.time() - t0))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
