"""ASGI middleware: any OpenAI-compatible embeddings app answers EMBD frames itself.

    from embd.asgi import EmbdMiddleware
    app = EmbdMiddleware(app)                 # or app.add_middleware(EmbdMiddleware)
    # vLLM:  vllm serve MODEL --middleware embd.asgi.EmbdMiddleware

A POST to the embeddings path (default /v1/embeddings) whose Accept header asks for
application/octet-stream is rewritten before the app sees it: "encoding_format" becomes
"base64" (the cheapest JSON the app can write), the Accept header application/json, and
the front's own field "dtype" (f16, bf16, int8, ... : embd's version-2 frames) is taken
out. The app's 200 answer is decoded with embd.decode_openai (strict: a body that does not
decode is a 502 naming the byte) and sent as one EMBD batch, the vectors in input order
(float32: version-1 frames, byte-identical to the seed TypeScript codec's). Anything else
(other paths and methods, JSON clients, the app's errors, streaming responses, websockets,
lifespan) passes through untouched. Errors the middleware itself raises are OpenAI-shaped:
{"error": {"message", "type", "code"}}.

Pure Python over the embd package; no ASGI framework is imported (Starlette, FastAPI,
vLLM, Infinity all call it the same way)."""
import json

from . import Error as _EmbdError
from . import _dtype
from . import decode_openai as _decode_openai
from . import encode_batch as _encode_batch

__all__ = ["EmbdMiddleware"]

_OCTET = b"application/octet-stream"


def _known_dtype(name):
    try:
        _dtype(name)
        return isinstance(name, str)
    except (ValueError, TypeError):
        return False


def _accepts_binary(headers):
    for k, v in headers:
        if k.lower() == b"accept":
            for part in v.split(b","):
                fields = [f.strip() for f in part.split(b";")]
                if fields[0].lower() != _OCTET:
                    continue
                q = [f[2:] for f in fields[1:] if f.lower().startswith(b"q=")]
                try:
                    if q and float(q[0]) == 0:
                        continue
                except ValueError:
                    continue
                return True
    return False


def _input_count(inp):
    """OpenAI's input: a string (1), a list of strings (n), of token ids (1), of lists of
    token ids (n); None when it is none of these (the app then says what is wrong)."""
    if isinstance(inp, str):
        return 1
    if isinstance(inp, list) and inp:
        if all(isinstance(x, int) and not isinstance(x, bool) for x in inp):
            return 1
        if all(isinstance(x, (str, list)) for x in inp):
            return len(inp)
    return None


async def _send_json(send, status, message, etype="invalid_request_error", code=None):
    body = json.dumps({"error": {"message": message, "type": etype, "code": code}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body})


class EmbdMiddleware:
    """Wraps an ASGI app serving OpenAI-compatible embeddings (see the module's text).

    paths: the request paths treated as embeddings endpoints (exact match)."""

    def __init__(self, app, paths=("/v1/embeddings",)):
        self.app = app
        self.paths = frozenset(paths)

    async def __call__(self, scope, receive, send):
        if (scope.get("type") != "http" or scope.get("method") != "POST" or scope.get("path") not in self.paths
                or not _accepts_binary(scope.get("headers") or [])):
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            msg = await receive()
            if msg["type"] == "http.disconnect":
                return
            chunks.append(msg.get("body", b""))
            if not msg.get("more_body", False):
                break
        raw = b"".join(chunks)
        try:
            req = json.loads(raw)
        except ValueError as e:
            pos = getattr(e, "pos", None)
            await _send_json(send, 400, "the request body is not JSON: %s (body byte %s)"
                             % (getattr(e, "msg", str(e)), pos), code="invalid_request")
            return
        if not isinstance(req, dict):
            await _send_json(send, 400, "the request body must be a JSON object (body byte 0)",
                             code="invalid_request")
            return
        dtype = req.pop("dtype", "f32")
        if not _known_dtype(dtype):
            await _send_json(send, 400, "\"dtype\" must name an embd dtype (f32, f16, bf16, fp8-e4m3, "
                             "fp8-e5m2, int8, uint8, binary, ubinary), not %r" % (dtype,), code="invalid_request")
            return
        count = _input_count(req.get("input"))
        req["encoding_format"] = "base64"
        body = json.dumps(req).encode()
        headers = [(k, v) for k, v in scope.get("headers") or []
                   if k.lower() not in (b"content-length", b"accept", b"transfer-encoding")]
        headers += [(b"content-length", b"%d" % len(body)), (b"accept", b"application/json")]
        inner = dict(scope)
        inner["headers"] = headers
        given = False

        async def inner_receive():
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # the client's disconnect, if it comes

        start, parts = {}, []

        async def inner_send(msg):
            if msg["type"] == "http.response.start":
                start.update(msg)
            elif msg["type"] == "http.response.body":
                parts.append(msg.get("body", b""))

        await self.app(inner, inner_receive, inner_send)
        if not start:
            await _send_json(send, 502, "the app sent no response", "upstream_error", "upstream_bad_body")
            return
        answer = b"".join(parts)
        if start.get("status") != 200:
            # the app's own error, status, headers and body as they came
            await send(start)
            await send({"type": "http.response.body", "body": answer})
            return
        try:
            vecs = _decode_openai(answer, count=count)
            out = _encode_batch(vecs, dtype=dtype)
        except _EmbdError as e:
            status = 400 if e.code in ("EMBD_ERR_DTYPE_RANGE", "EMBD_ERR_DTYPE_LENGTH") and "body byte" not in str(e) \
                else 502
            await _send_json(send, status, ("the app's answer does not decode: %s" % e) if status == 502
                             else "the vectors as %s frames: %s" % (dtype, e),
                             "upstream_error" if status == 502 else "invalid_request_error",
                             "upstream_bad_body" if status == 502 else "dtype")
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", _OCTET), (b"content-length", b"%d" % len(out))]})
        await send({"type": "http.response.body", "body": bytes(out)})
