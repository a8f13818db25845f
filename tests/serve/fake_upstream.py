#!/usr/bin/env python3
"""A fake OpenAI-compatible embedding server for embd serve's tests and benchmark.

Answers POST /v1/embeddings as OpenAI and vLLM do ({"object": "list", "data": [{"object":
"embedding", "index", "embedding"}], "model", "usage"}), float arrays or base64 of
little-endian float32 by encoding_format, and checks the request it gets (JSON object,
Content-Type, "input" a string or a list, encoding_format a known value, no "dtype": that
is the front's field); a request it refuses is a 400 with OpenAI's error body. The vectors
are a function of the input text alone (vector_for), so a test computes what to expect
without asking embd. Standard library only; bound to 127.0.0.1; stops by itself after
--lifetime seconds (default 300).

The model name steers faults, for the error tests:
  "err-400" / "err-401" / "err-503"  that status with an OpenAI error body
  "bad-body"       200 with a body that is not JSON at byte 10
  "short"          one data item fewer than the inputs
  "slow"           sleeps 3 s before answering (the front's timeout is shorter in the tests)
  "specials"       vectors holding -0.0, the smallest subnormal, FLT_MAX, 1/3, NaN (base64 only)
Text "dims:N ..." asks for N dims (default 16, or the request's "dimensions").

GET /_last answers the last request seen: {"body": <its JSON>, "authorization": <header>,
"content_type": ...}. GET /_count: requests served.

  python3 fake_upstream.py [--port 0] [--lifetime 300]   prints "PORT <n>" on stdout
"""
import argparse
import base64
import hashlib
import http.server
import json
import math
import os
import random
import struct
import sys
import threading
import time

F32_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
SUBNORMAL = struct.unpack("<f", b"\x01\x00\x00\x00")[0]


def vector_for(text, dims, specials=False):
    """dims float32 values (as Python floats holding float32 values) from text."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    rng = random.Random(seed)
    v = [struct.unpack("<f", struct.pack("<f", rng.gauss(0, 0.05)))[0] for _ in range(dims)]
    if specials and dims >= 5:
        v[0], v[1], v[2], v[3] = -0.0, SUBNORMAL, F32_MAX, struct.unpack("<f", struct.pack("<f", 1 / 3))[0]
        v[4] = math.nan
    return v


def f32_bytes(v):
    return struct.pack("<%df" % len(v), *v)


class State:
    last = None
    count = 0
    lock = threading.Lock()
    cache = {}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers
    server_version = "fake-upstream"
    disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stalls

    def log_message(self, fmt, *args):  # quiet: the tests read the front's log, not this
        pass

    def reply(self, status, body, ctype="application/json"):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, message, etype="invalid_request_error", code=None):
        self.reply(status, json.dumps({"error": {"message": message, "type": etype, "param": None, "code": code}}))

    def do_GET(self):
        if self.path == "/_last":
            last = dict(State.last or {})
            try:
                last["body"] = json.loads(last.get("raw", "null"))
            except ValueError:
                last["body"] = None
            self.reply(200, json.dumps(last))
        elif self.path == "/_count":
            self.reply(200, json.dumps({"count": State.count}))
        else:
            self.error(404, "not found")

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        with State.lock:
            State.count += 1
        if self.path != "/v1/embeddings":
            return self.error(404, "no such route %s" % self.path)
        State.last = {"raw": raw.decode("utf-8", "replace"), "authorization": self.headers.get("Authorization"),
                      "content_type": self.headers.get("Content-Type")}
        cached = State.cache.get(raw)
        if cached is not None:  # the load tests send the same body again and again
            return self.reply(200, cached)
        try:
            req = json.loads(raw)
        except ValueError as e:
            return self.error(400, "body is not JSON: %s" % e)
        if self.headers.get("Content-Type") != "application/json":
            return self.error(400, "Content-Type must be application/json")
        if not isinstance(req, dict) or "input" not in req:
            return self.error(400, "'input' is required")
        if "dtype" in req:
            return self.error(400, "unexpected field 'dtype'")
        fmt = req.get("encoding_format", "float")
        if fmt not in ("float", "base64"):
            return self.error(400, "encoding_format must be float or base64")
        model = req.get("model", "text-embedding-fake")
        if model.startswith("err-"):
            status = int(model[4:])
            return self.error(status, "the fake upstream was asked for a %d" % status,
                              "server_error" if status >= 500 else "invalid_request_error", status)
        if model == "bad-body":
            return self.reply(200, '{"data": [}')
        if model == "slow":
            time.sleep(3)
        inp = req["input"]
        if isinstance(inp, str):
            texts = [inp]
        elif isinstance(inp, list) and inp and all(isinstance(t, int) for t in inp):
            texts = ["tokens:" + ",".join(map(str, inp))]
        elif isinstance(inp, list) and inp:
            texts = [t if isinstance(t, str) else "tokens:" + ",".join(map(str, t)) for t in inp]
        else:
            return self.error(400, "'input' must be a string or a non-empty list")
        dims = int(req.get("dimensions", 16))
        data = []
        for i, t in enumerate(texts):
            d = dims
            if t.startswith("dims:"):
                d = int(t[5:].split()[0])
            v = vector_for(t, d, specials=model == "specials")
            emb = base64.b64encode(f32_bytes(v)).decode() if fmt == "base64" else v
            data.append({"object": "embedding", "index": i, "embedding": emb})
        if model == "short":
            data.pop()
        body = json.dumps({"id": "embd-fake", "object": "list", "created": 0, "model": model, "data": data,
                           "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts)}}).encode()
        if len(State.cache) < 64 and model not in ("slow",):
            State.cache[raw] = body
        self.reply(200, body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--lifetime", type=float, default=300)
    a = ap.parse_args()
    http.server.ThreadingHTTPServer.allow_reuse_address = True
    # socketserver's default backlog is 5: the front opening 32 connections at once would
    # see SYNs dropped and retried a second later (wrk's p99 was 1.3 s for that alone)
    http.server.ThreadingHTTPServer.request_queue_size = 256
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    print("PORT %d" % srv.server_address[1], flush=True)
    threading.Timer(a.lifetime, lambda: os._exit(0)).start()
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
