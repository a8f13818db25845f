"""embd.asgi.EmbdMiddleware around a Starlette app that answers /v1/embeddings as vLLM does,
served by uvicorn on 127.0.0.1 (Debian's python3-starlette and python3-uvicorn; the tests
skip, saying so, without them). Oracles: the app's own float32 vectors and frames built
from the seed codec's documented layout (oracles.seed_frame), never embd."""
import base64
import http.client
import importlib
import inspect
import json
import socket
import struct
import threading
import time

import numpy as np
import pytest

from oracles import seed_frame

starlette = pytest.importorskip("starlette", reason="SKIPPED LOUDLY: starlette is not installed "
                                "(Debian: python3-starlette); embd.asgi is untested here")
uvicorn = pytest.importorskip("uvicorn", reason="SKIPPED LOUDLY: uvicorn is not installed "
                              "(Debian: python3-uvicorn); embd.asgi is untested here")
from starlette.applications import Starlette  # noqa: E402
from starlette.responses import JSONResponse, Response, StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

import embd  # noqa: E402
from embd.asgi import EmbdMiddleware  # noqa: E402

DIMS = 24


def vector(text):
    rng = np.random.default_rng(sum(text.encode()) * 7919 + len(text))
    v = rng.standard_normal(DIMS).astype(np.float32)
    if text == "specials":
        v[:4] = np.array([-0.0, np.float32(1e-45), np.finfo(np.float32).max, np.nan], dtype=np.float32)
    return v


async def embeddings(request):
    """What vLLM's /v1/embeddings answers (vllm/entrypoints/openai/protocol.py shapes)."""
    req = await request.json()
    inp = req.get("input")
    if inp == "fail" or not inp:
        return JSONResponse({"object": "error", "message": "input must not be empty or 'fail'",
                             "type": "BadRequestError", "param": None, "code": 400}, status_code=400)
    if req.get("model") == "garbage":
        return Response(b'{"data": [{"index": 0, "embedding": "AAA*"}]}', media_type="application/json")
    texts = [inp] if isinstance(inp, str) else [t if isinstance(t, str) else "tok%s" % t for t in inp]
    fmt = req.get("encoding_format", "float")
    data = []
    for i, t in enumerate(texts):
        v = vector(t)
        emb = base64.b64encode(v.astype("<f4").tobytes()).decode() if fmt == "base64" else v.tolist()
        data.append({"index": i, "object": "embedding", "embedding": emb})
    seen.append(req)
    return JSONResponse({"id": "embd-123", "object": "list", "created": 1, "model": req.get("model", "m"),
                         "data": data, "usage": {"prompt_tokens": len(texts), "total_tokens": len(texts),
                                                 "completion_tokens": 0, "prompt_tokens_details": None}})


async def stream(request):
    async def gen():
        for i in range(3):
            yield ("data: %d\n\n" % i).encode()
    return StreamingResponse(gen(), media_type="text/event-stream")


seen = []


def make_app(wrapped):
    app = Starlette(routes=[Route("/v1/embeddings", embeddings, methods=["POST"]),
                            Route("/v1/stream", stream, methods=["POST", "GET"])])
    if wrapped:
        # exactly what vLLM does with --middleware embd.asgi.EmbdMiddleware
        # (vllm/entrypoints/openai/api_server.py: build_app)
        module_path, object_name = "embd.asgi.EmbdMiddleware".rsplit(".", 1)
        imported = getattr(importlib.import_module(module_path), object_name)
        assert inspect.isclass(imported)
        app.add_middleware(imported)
    return app


class Server:
    def __init__(self, app):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self.server.install_signal_handlers = lambda: None
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        t0 = time.time()
        while not self.server.started:
            assert time.time() - t0 < 20, "uvicorn did not start"
            time.sleep(0.01)

    def stop(self):
        self.server.should_exit = True
        self.thread.join(20)

    def post(self, path, body, accept=None, raw=False):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20)
        h = {"Content-Type": "application/json"}
        if accept:
            h["Accept"] = accept
        c.request("POST", path, body=body if raw else json.dumps(body), headers=h)
        r = c.getresponse()
        out = (r.status, dict((k.lower(), v) for k, v in r.getheaders()), r.read())
        c.close()
        return out


@pytest.fixture(scope="module")
def servers():
    wrapped, plain = Server(make_app(True)), Server(make_app(False))
    yield wrapped, plain
    wrapped.stop()
    plain.stop()


OCTET = "application/octet-stream"


def batch_of(texts):
    return struct.pack("<I", len(texts)) + b"".join(seed_frame(vector(t)) for t in texts)


def test_binary_batch_bit_for_bit(servers):
    w, _ = servers
    for inp, names in ((["a", "bb", "specials"], ["a", "bb", "specials"]), ("solo", ["solo"]),
                       ([[1, 2], [3]], ["tok[1, 2]", "tok[3]"])):
        st, h, body = w.post("/v1/embeddings", {"input": inp, "model": "m"}, OCTET)
        assert st == 200 and h["content-type"] == OCTET
        assert body == batch_of(names)
    # the app was asked for base64 and never saw the front's dtype field
    st, h, body = w.post("/v1/embeddings", {"input": ["a"], "model": "m", "encoding_format": "float"},
                         "application/json;q=0.5, application/octet-stream")
    assert body == batch_of(["a"]) and seen[-1]["encoding_format"] == "base64"


def test_dtype_frames(servers):
    w, _ = servers
    st, h, body = w.post("/v1/embeddings", {"input": ["a", "b"], "dtype": "f16"}, OCTET)
    assert st == 200 and "dtype" not in seen[-1]
    at = 4
    assert struct.unpack_from("<I", body)[0] == 2
    for t in ("a", "b"):
        assert body[at + 4] == 2 and body[at + 6] == 1  # version 2, dtype f16
        assert struct.unpack_from("<I", body, at + 8)[0] == DIMS
        assert body[at + 16:at + 16 + 2 * DIMS] == vector(t).astype("<f2").tobytes()
        at += 16 + 2 * DIMS
    assert at == len(body)
    st, h, body = w.post("/v1/embeddings", {"input": "a", "dtype": "f12"}, OCTET)
    assert st == 400 and "dtype" in json.loads(body)["error"]["message"]
    st, h, body = w.post("/v1/embeddings", {"input": "a", "dtype": "int8"}, OCTET)
    assert st == 400 and json.loads(body)["error"]["code"] == "dtype"


def test_everything_else_passes_through(servers):
    w, p = servers
    for req in ({"input": ["a", "b"], "model": "m"}, {"input": "a", "encoding_format": "base64"},
                {"input": "fail"}):
        for accept in (None, "application/json"):
            assert w.post("/v1/embeddings", req, accept)[::2] == p.post("/v1/embeddings", req, accept)[::2]
    # the app's own error on the binary path: its status and body as they came
    st, h, body = w.post("/v1/embeddings", {"input": "fail"}, OCTET)
    assert st == 400 and json.loads(body)["type"] == "BadRequestError"
    # streaming: chunked as the app sends it, binary Accept or not (not the embeddings path)
    for accept in (None, OCTET):
        st, h, body = w.post("/v1/stream", {}, accept)
        assert st == 200 and body == b"data: 0\n\ndata: 1\n\ndata: 2\n\n"
        assert h.get("transfer-encoding") == "chunked" and "content-length" not in h


def test_errors(servers):
    w, _ = servers
    st, h, body = w.post("/v1/embeddings", '{"input": ["a",]}', OCTET, raw=True)
    e = json.loads(body)["error"]
    assert st == 400 and "body byte 15" in e["message"] and e["type"] == "invalid_request_error"
    st, h, body = w.post("/v1/embeddings", "[1]", OCTET, raw=True)
    assert st == 400 and "JSON object" in json.loads(body)["error"]["message"]
    st, h, body = w.post("/v1/embeddings", {"input": "a", "model": "garbage"}, OCTET)
    e = json.loads(body)["error"]
    assert st == 502 and e["code"] == "upstream_bad_body", e
    assert "does not decode" in e["message"] and "base64" in e["message"] and "byte" in e["message"], e


def test_decodes_with_embd(servers):
    # the same answer read back by embd's own reader, as a client would
    w, _ = servers
    st, h, body = w.post("/v1/embeddings", {"input": ["x", "y"]}, OCTET)
    got = embd.decode_batch(body)
    assert np.array_equal(got.view(np.uint32), np.stack([vector("x"), vector("y")]).view(np.uint32))
