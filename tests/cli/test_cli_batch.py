#!/usr/bin/python3
"""`embd openai` over batch output files (OpenAI's Batch API, Azure OpenAI, Together, vLLM's
run_batch): JSON Lines, one request a line, streamed (issue 38). Run by ctest (label cli):

    test_cli_batch.py EMBD_EXECUTABLE GROUP     GROUP: values failures errors memory | all

The lines are built here from the documented shapes (OpenAI's output and error lines:
{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}; vLLM's
BatchRequestOutput), with base64 and float bodies, vLLM's embed_dtype / endianness, data[]
shuffled and keys in other orders. The oracles are numpy (every value bit for bit against
the array the test encoded), the custom_ids and failures the test wrote, and, for the
memory bound, the kernel's peak RSS of the child (getrusage). Needs numpy (Debian's
python3-numpy): without it, exit 77 (skipped, loudly)."""
import base64
import json
import os
import random
import resource
import subprocess
import sys

try:
    import numpy as np
except ImportError:
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import numpy as np
    except ImportError:
        print("SKIP: numpy cannot be imported (Debian: python3-numpy): the batch-file tests need it")
        sys.exit(77)

import cli_harness  # noqa: E402
from cli_harness import check, path, read, run, write  # noqa: E402

# ---- the lines, built from the documented shapes ------------------------------------------
def emb_text(row, fmt, dtype="f32", order="little"):
    if fmt == "float":
        return [float(x) for x in row]  # each float32 exactly (a double holds it)
    nd = {"f32": "f4", "f16": "f2"}[dtype] if dtype != "bf16" else None
    if dtype == "bf16":  # the top half of float32 (rows made bf16-exact)
        bits = (np.asarray(row, "<f4").view("<u4") >> 16).astype("<u2")
        raw = bits.astype(">u2" if order == "big" else "<u2").tobytes()
    else:
        raw = np.asarray(row).astype(("<" if order == "little" else ">") + nd).tobytes()
    return base64.b64encode(raw).decode()


def response_body(rows, fmt="b64", dtype="f32", order="little", shuffle=None, keys_reversed=False):
    items = [{"object": "embedding", "index": i, "embedding": emb_text(r, fmt, dtype, order)}
             for i, r in enumerate(rows)]
    if shuffle is not None:
        shuffle.shuffle(items)
    if keys_reversed:
        items = [dict(reversed(list(it.items()))) for it in items]
    b = {"object": "list", "data": items, "model": "text-embedding-3-small",
         "usage": {"prompt_tokens": 3, "total_tokens": 3}}
    return dict(reversed(list(b.items()))) if keys_reversed else b


def ok_line(cid, rows, n=0, keys_reversed=False, **kw):
    line = {"id": "batch_req_%d" % n, "custom_id": cid,
            "response": {"status_code": 200, "request_id": "req_%d" % n,
                         "body": response_body(rows, keys_reversed=keys_reversed, **kw)},
            "error": None}
    if keys_reversed:
        line = dict(reversed(list(line.items())))
        line["response"] = dict(reversed(list(line["response"].items())))
    return json.dumps(line, ensure_ascii=n % 2 == 0) + "\n"


def failed_http_line(cid, status=500, code="server_error", message="The server had an error", n=0):
    return json.dumps({"id": "batch_req_%d" % n, "custom_id": cid,
                       "response": {"status_code": status, "request_id": "req_%d" % n,
                                    "body": {"error": {"message": message, "type": "server_error",
                                                       "param": None, "code": code}}},
                       "error": None}) + "\n"


def expired_line(cid, n=0):
    return json.dumps({"id": "batch_req_%d" % n, "custom_id": cid, "response": None,
                       "error": {"code": "batch_expired",
                                 "message": "This request could not be executed before the completion window expired."}}) + "\n"


def vllm_line(cid, rows, n=0, **kw):
    """vLLM's BatchRequestOutput: id, custom_id, response {status_code, request_id, body},
    error."""
    return json.dumps({"id": "vllm-%d" % n, "custom_id": cid,
                       "response": {"status_code": 200, "request_id": "vllm-batch-%d" % n,
                                    "body": response_body(rows, **kw)},
                       "error": None}) + "\n"


def rand_rows(rng, n, d):
    return rng.standard_normal((n, d)).astype(np.float32)


def load_npy(name):
    return np.load(path(name))


def parse_ids(data):
    """custom_id<TAB>index lines, the COPY text escapes undone (\\\\ \\t \\n \\r)."""
    out = []
    for line in data.decode("utf-8").split("\n")[:-1]:
        f, i = line.rsplit("\t", 1)
        s, k = [], 0
        while k < len(f):
            if f[k] == "\\":
                s.append({"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}[f[k + 1]])
                k += 2
            else:
                s.append(f[k])
                k += 1
        out.append(("".join(s), int(i)))
    return out


# ---- groups ----------------------------------------------------------------------------------
def t_values():
    rng = np.random.default_rng(38)
    pyr = random.Random(38)
    ids = ["doc-0", "tab\there", "back\\slash", "new\nline", "cr\rret", "naïve-文书-🙂", "x" * 300]
    expect_rows, expect_ids = [], []
    lines = []
    for n, cid in enumerate(ids):
        k = 1 + n % 4
        rows = rand_rows(rng, k, 24)
        fmt = "float" if n % 3 == 1 else "b64"
        lines.append(ok_line(cid, rows, n, keys_reversed=n % 2 == 1, fmt=fmt, shuffle=pyr))
        expect_rows.append(rows)
        expect_ids += [(cid, i) for i in range(k)]
    # blank lines between requests, CRLF endings and a last line without its newline
    text = lines[0] + "\n" + lines[1].replace("\n", "\r\n") + "".join(lines[2:])
    text = text[:-1]
    src = write("values.jsonl", text)
    want = np.concatenate(expect_rows)
    rc, _, err = run(["openai", src, "--to", "npy", "-o", path("v.npy"), "--ids", path("ids.tsv")])
    check(rc == 0, "batch to npy: exit %d: %s" % (rc, err))
    if rc == 0:
        got = load_npy("v.npy")
        check(got.dtype == np.float32 and got.shape == want.shape and
              got.view("<u4").tobytes() == want.view("<u4").tobytes(), "batch npy values differ from numpy")
        check(parse_ids(read("ids.tsv")) == expect_ids, "ids.tsv: %r" % read("ids.tsv")[:300])
        check(b"tab\\there\t0\n" in read("ids.tsv") and b"back\\\\slash\t0\n" in read("ids.tsv") and
              b"new\\nline\t1\n" in read("ids.tsv"), "ids.tsv escapes: %r" % read("ids.tsv")[:300])
    # stdin (a pipe), raw: the same bytes; --batch insisting changes nothing
    rc, out, err = run(["openai", "--batch", "--to", "raw"], stdin=text.encode())
    check(rc == 0 and out == want.astype("<f4").tobytes(), "batch from stdin to raw: exit %d %s" % (rc, err))
    # jsonl output: the numbers read back as the same float32s
    rc, out, err = run(["openai", src])
    got = np.array([json.loads(x) for x in out.decode().splitlines()], dtype=np.float64).astype(np.float32)
    check(rc == 0 and got.tobytes() == want.tobytes(), "batch to jsonl: exit %d %s" % (rc, err))
    # vLLM: embed_dtype f16 / bf16, endianness big and little
    for dtype in ("f16", "bf16"):
        for order in ("little", "big"):
            rows = [rand_rows(rng, 3, 16) for _ in range(3)]
            if dtype == "bf16":
                rows = [(r.view("<u4") & 0xFFFF0000).view(np.float32) for r in rows]
            else:
                rows = [r.astype(np.float16).astype(np.float32) for r in rows]
            text = "".join(vllm_line("v%d" % n, r, n, dtype=dtype, order=order) for n, r in enumerate(rows))
            rc, out, err = run(["openai", "--dtype", dtype, "--byte-order", order, "--to", "raw"],
                               stdin=text.encode())
            want = np.concatenate(rows).astype("<f4").tobytes()
            check(rc == 0 and out == want, "vLLM %s %s: exit %d %s" % (dtype, order, rc, err))
            # --keep-dtype: the wire elements, little-endian
            rc, out, err = run(["openai", "--dtype", dtype, "--byte-order", order, "--to", "raw",
                                "--keep-dtype"], stdin=text.encode())
            if dtype == "f16":
                wk = np.concatenate(rows).astype("<f2").tobytes()
            else:
                wk = (np.concatenate(rows).view("<u4") >> 16).astype("<u2").tobytes()
            check(rc == 0 and out == wk, "vLLM %s %s --keep-dtype: exit %d %s" % (dtype, order, rc, err))
    # other formats stream too: pgcopy, fvecs (count-free)
    rows = rand_rows(rng, 5, 8)
    text = ok_line("a", rows[:2]) + ok_line("b", rows[2:], 1)
    rc, out, err = run(["openai", "--to", "fvecs"], stdin=text.encode())
    want = b"".join(np.int32(8).tobytes() + r.astype("<f4").tobytes() for r in rows)
    check(rc == 0 and out == want, "batch to fvecs: exit %d %s" % (rc, err))
    # npy into a pipe: the count comes last, so it says so (and writes nothing)
    rc, out, err = run(["openai", "--to", "npy"], stdin=text.encode())
    check(rc != 0 and out == b"" and "seekable output" in err, "npy to a pipe: exit %d %r %s" % (rc, out[:40], err))
    # --pg-id custom: each row's custom_id (text) and index (int4) before the vector, the
    # bytes spelled out from PostgreSQL's binary COPY format
    rc, out, err = run(["openai", "--to", "pgcopy", "--pg-type", "bytea", "--pg-id", "custom"], stdin=text.encode())
    want = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8
    for k, (cid, r) in enumerate([("a", 0), ("a", 1), ("b", 0), ("b", 1), ("b", 2)]):
        want += (b"\x00\x03" + len(cid).to_bytes(4, "big") + cid.encode() + b"\x00\x00\x00\x04" +
                 r.to_bytes(4, "big") + (32).to_bytes(4, "big") + rows[k].astype("<f4").tobytes())
    want += b"\xff\xff"
    check(rc == 0 and out == want, "--pg-id custom: exit %d %s %r" % (rc, err, out[:80]))
    rc, _, err = run(["openai", "--to", "pgcopy", "--pg-id", "custom"], stdin=json.dumps(response_body(rows)).encode())
    check(rc == 2 and "batch output files" in err, "--pg-id custom on a body: exit %d %s" % (rc, err))
    # --dims
    rc, _, err = run(["openai", "--dims", "9", "--to", "raw"], stdin=text.encode())
    check(rc == 1 and "--dims is 9" in err and '"a"' in err, "--dims mismatch: exit %d %s" % (rc, err))


def t_failures():
    rng = np.random.default_rng(5)
    r = {k: rand_rows(rng, 2, 12) for k in ("d0", "d1", "d2", "d3")}
    out_file = write("out.jsonl", ok_line("d0", r["d0"]) + failed_http_line("d1", 500, n=1) +
                     ok_line("d2", r["d2"], 2) + failed_http_line("d\t4", 400, "invalid_request_error",
                                                                  'bad "input"\nline two', n=3))
    err_file = write("err.jsonl", expired_line("d3", 4))
    retry = write("retry.jsonl", ok_line("d1", r["d1"], 5) + failed_http_line("d3", 429, "rate_limit_exceeded", n=6))
    rc, _, err = run(["openai", out_file, err_file, "--to", "npy", "-o", path("f.npy"),
                      "--ids", path("f.tsv"), "--failed", path("failed.jsonl")])
    check(rc == 5, "failures: exit %d, want 5: %s" % (rc, err))
    check("3 requests failed" in err and '"d1"' in err, "failures summary: %s" % err)
    got = load_npy("f.npy")
    check(got.tobytes() == np.concatenate([r["d0"], r["d2"]]).tobytes(), "failures: the other rows")
    fl = [json.loads(x) for x in read("failed.jsonl").decode().splitlines()]
    check(fl == [{"custom_id": "d1", "line": 2, "file": out_file, "status_code": 500, "code": "server_error",
                  "message": "The server had an error"},
                 {"custom_id": "d\t4", "line": 4, "file": out_file, "status_code": 400,
                  "code": "invalid_request_error", "message": 'bad "input"\nline two'},
                 {"custom_id": "d3", "line": 1, "file": err_file, "status_code": None, "code": "batch_expired",
                  "message": "This request could not be executed before the completion window expired."}],
          "failed.jsonl: %r" % fl)
    # the retry batch's output: d1 succeeds there (not failed), d3 fails again (its first failure kept)
    rc, _, err = run(["openai", out_file, err_file, retry, "--to", "npy", "-o", path("g.npy"),
                      "--ids", path("g.tsv"), "--failed", path("failed2.jsonl")])
    check(rc == 5 and "2 requests failed" in err and "retried with success" in err, "retry: exit %d %s" % (rc, err))
    check(load_npy("g.npy").tobytes() == np.concatenate([r["d0"], r["d2"], r["d1"]]).tobytes(), "retry rows")
    check(parse_ids(read("g.tsv")) == [("d0", 0), ("d0", 1), ("d2", 0), ("d2", 1), ("d1", 0), ("d1", 1)],
          "retry ids: %r" % read("g.tsv"))
    fl = [json.loads(x) for x in read("failed2.jsonl").decode().splitlines()]
    check([(f["custom_id"], f["file"], f["line"]) for f in fl] == [("d\t4", out_file, 4), ("d3", err_file, 1)],
          "failed2.jsonl: %r" % fl)
    # nothing failed: exit 0 and an empty --failed file
    rc, _, err = run(["openai", write("good.jsonl", ok_line("z", r["d0"])), "--to", "raw", "-o", path("z.raw"),
                      "--failed", path("none.jsonl")])
    check(rc == 0 and read("none.jsonl") == b"", "no failures: exit %d %s" % (rc, err))


def gone(name):
    return not os.path.exists(path(name))


def t_errors():
    rng = np.random.default_rng(9)
    rows = rand_rows(rng, 2, 8)
    good = ok_line("a", rows) + ok_line("b", rows, 1)
    # a custom_id with vectors twice (in two files): exit 1 naming both places, nothing left
    f1 = write("dup1.jsonl", good)
    f2 = write("dup2.jsonl", ok_line("c", rows) + ok_line("b", rows, 3))
    rc, _, err = run(["openai", f1, f2, "--to", "npy", "-o", path("dup.npy"), "--ids", path("dup.tsv")])
    check(rc == 1 and "dup2.jsonl:2" in err and '"b"' in err and "twice" in err and "dup1.jsonl line 2" in err,
          "duplicate: exit %d %s" % (rc, err))
    check(gone("dup.npy") and gone("dup.tsv"), "duplicate: output files left behind")
    # a cut line: its file, line and byte
    cut = good + ok_line("c", rows, 2)[:150]
    rc, _, err = run(["openai", write("cut.jsonl", cut), "--to", "npy", "-o", path("cut.npy")])
    check(rc == 1 and "cut.jsonl:3:" in err and "line byte" in err, "cut line: exit %d %s" % (rc, err))
    check(gone("cut.npy"), "cut line: output left behind")
    # a malformed line in the middle
    bad = good.replace('"status_code": 200', '"status_code": 2OO', 1)
    rc, _, err = run(["openai", "--batch", "--to", "raw"], stdin=bad.encode())
    check(rc == 1 and "<stdin>:1:" in err and "line byte" in err, "malformed: exit %d %s" % (rc, err))
    # --batch on a response body: the library's own words
    body = json.dumps(response_body(rows)) + "\n"
    rc, _, err = run(["openai", "--batch"], stdin=body.encode())
    check(rc == 1 and "custom_id" in err, "--batch on a body: exit %d %s" % (rc, err))
    # --ids on a response body: a usage error
    rc, _, err = run(["openai", "--ids", path("x.tsv")], stdin=body.encode())
    check(rc == 2 and "batch output files" in err and gone("x.tsv"), "--ids on a body: exit %d %s" % (rc, err))
    # a NUL inside a custom_id cannot go to --ids
    rc, _, err = run(["openai", "--ids", path("n.tsv"), "--to", "raw"],
                     stdin=ok_line("a\u0000b", rows).encode())
    check(rc == 1 and "NUL" in err and gone("n.tsv"), "NUL id: exit %d %s" % (rc, err))
    # a line over --max-record
    rc, _, err = run(["openai", "--max-record", "200", "--to", "raw"], stdin=good.encode())
    check(rc == 1 and "--max-record" in err and "<stdin>:1" in err, "--max-record: exit %d %s" % (rc, err))
    # the output is an input
    f = write("self.jsonl", good)
    rc, _, err = run(["openai", path("other.jsonl") if False else f, "-o", f])
    check(rc == 2 and read("self.jsonl") == good.encode(), "output is the input: exit %d %s" % (rc, err))


def t_memory():
    """A file many times the bound (64 MB), through a pipe: peak RSS stays under it."""
    rng = np.random.default_rng(1)
    rows = rand_rows(rng, 100, 1536)
    line = ok_line("ID", rows)
    head, tail = line.split('"ID"')
    n = 800  # ~820 KB a line: ~660 MB in all
    cmd = [cli_harness.EMBD, "openai", "--to", "raw", "-o", "/dev/null", "--ids", "/dev/null"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    total = 0
    for k in range(n):
        b = (head + json.dumps("doc-%06d" % k) + tail).encode()
        p.stdin.write(b)
        total += len(b)
    p.stdin.close()
    err = p.stderr.read().decode()
    rc = p.wait()
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    check(rc == 0, "memory: exit %d %s" % (rc, err))
    check(peak_kb > before or before < 64 * 1024, "memory: the child's peak could not be read")
    print("memory: %d MB through a pipe, peak RSS %.1f MB (bound 64 MB)" % (total >> 20, peak_kb / 1024))
    check(total > 8 * (64 << 20), "memory: the input is not many times the bound")
    check(peak_kb < 64 * 1024, "memory: peak RSS %d KB over 64 MB" % peak_kb)


GROUPS = {"values": t_values, "failures": t_failures, "errors": t_errors, "memory": t_memory}


def openai_built():
    if run(["openai"], b'{"data": []}')[0] == 4:
        print("SKIP: embd was built without EMBD_WITH_OPENAI: no batch-file reader")
        return 77
    return None


def main():
    return cli_harness.main(__doc__, GROUPS, "embd-batch-", openai_built)


if __name__ == "__main__":
    sys.exit(main())
