#!/usr/bin/python3
"""The documented way in, for real: `embd openai r.json --to pgcopy | psql -c "COPY ...
FROM STDIN (FORMAT binary)"` into a private PostgreSQL 15 (label pg).

    test_cli_pg.py EMBD_EXECUTABLE

The cluster is tests/pg/pgharness.py's (initdb in a temporary directory, as `postgres` when
run as root, unix socket only), stopped at the end even on failure. Stock PostgreSQL has
float4[] (real[]), bytea and bit(n), so those go through the pipe: embd openai of base64
bodies whose float32 rows hold NaN payloads, infinities, -0 and subnormals, and embd decode
of an EMBD batch; with and without --pg-id. Each table is read back with
`COPY (SELECT ...) TO STDOUT (FORMAT binary)`, parsed here with struct, and compared with
numpy bit for bit (bit(n): numpy.packbits(v > 0)). A refused row never reaches the server:
embd openai (NaN with --pg-finite) writes nothing, so COPY fails on an empty input; embd
decode writes as the frames come and ends the stream with a row cut short after its field
count, so PostgreSQL stops with "unexpected EOF in COPY data" and the COPY loads nothing
(either way the table keeps the rows it had). pgvector's types are not in a stock server:
their bytes are checked against numpy in tests/cli/test_cli.py (group formats).

Exit 77 (skipped, loudly) without PostgreSQL 15 (Debian: postgresql-15).
"""
import base64
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pg"))
from pgharness import Cluster, array_recv, parse_copy_binary, require_pg  # noqa: E402

EMBD = None
CHECKS = 0


def check(cond, what):
    global CHECKS
    CHECKS += 1
    if not cond:
        raise SystemExit("FAIL: " + what)


def body(v):
    items = [{"object": "embedding", "index": i,
              "embedding": base64.b64encode(np.ascontiguousarray(r, "<f4").tobytes()).decode()}
             for i, r in enumerate(v)]
    return json.dumps({"object": "list", "data": items, "model": "m"}).encode()


def embd_batch(v):
    """An EMBD batch of float32 frames (docs/FORMAT.md), made here."""
    import zlib
    out = [struct.pack("<I", len(v))]
    for r in v:
        h = b"EMBD" + bytes([1, 0, 0, 0]) + struct.pack("<I", len(r))
        out.append(h + struct.pack("<I", zlib.crc32(h)) + np.ascontiguousarray(r, "<f4").tobytes())
    return b"".join(out)


def pipe(c, embd_args, sql):
    """embd ARGS | psql -c SQL: (embd's exit, embd's stderr, psql's exit, psql's stderr)."""
    e = dict(os.environ, EMBD_NO_PROGRESS="1")
    p1 = subprocess.Popen([EMBD] + embd_args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
    p2 = subprocess.Popen(c.psql_args(sql), stdin=p1.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p1.stdout.close()
    out2, err2 = p2.communicate(timeout=300)
    err1 = p1.stderr.read()
    p1.wait(timeout=300)
    return p1.returncode, err1.decode(), p2.returncode, err2.decode()


def special(rng, count, dims):
    bits = rng.integers(0, 2**32, size=(count, dims), dtype=np.uint64).astype(np.uint32)
    specials = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001,
                         0x7F800001, 0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0x3F800000], np.uint32)
    mask = rng.random((count, dims)) < 0.2
    bits[mask] = rng.choice(specials, size=int(mask.sum()))
    return bits.view(np.float32)


def read_back(c, table, typ):
    """(ids, vectors as uint32 bits or packed bit bytes) in load order."""
    raw = c.psql("COPY (SELECT id, embedding FROM %s ORDER BY n) TO STDOUT (FORMAT binary)" % table).stdout

    def field(k, b):
        if k == 0:
            return struct.unpack(">q", b)[0]
        if typ == "float4[]":
            return array_recv(b)
        if typ == "bytea":
            return np.frombuffer(b, "<u4").copy()
        (bits,) = struct.unpack_from(">i", b)
        return (bits, b[4:])
    rows = parse_copy_binary(raw, field)
    return [r[0] for r in rows], [r[1] for r in rows]


def same(typ, got, v):
    if typ == "bit":
        return got == (v.shape[0], np.packbits(v > 0).tobytes())
    return np.array_equal(got, v.view(np.uint32))


def main():
    global EMBD
    if len(sys.argv) != 2:
        raise SystemExit("usage: test_cli_pg.py EMBD")
    EMBD = os.path.abspath(sys.argv[1])
    require_pg("this test")
    if subprocess.run([EMBD, "openai"], input=b'{"data": []}', capture_output=True).returncode == 4:
        print("SKIP: embd built with EMBD_WITH_OPENAI=OFF")
        sys.exit(77)
    t0 = time.monotonic()
    c = Cluster()
    work = tempfile.mkdtemp(prefix="embd-cli-pg-")
    try:
        c.start()
        rng = np.random.default_rng(34)
        dims = 1536
        v = special(rng, 40, dims)
        r_json = os.path.join(work, "r.json")
        with open(r_json, "wb") as f:
            f.write(body(v))
        src = os.path.join(work, "v.embd")
        with open(src, "wb") as f:
            f.write(embd_batch(v))
        cols = {"float4[]": "real[]", "bytea": "bytea", "bit": "bit(%d)" % dims}
        for typ, col in cols.items():
            t = "items_" + typ.strip("[]").replace("4", "")
            c.psql("CREATE TABLE %s (n bigserial, id bigint, embedding %s)" % (t, col))
            for cmd in (["openai", r_json], ["decode", src]):
                for start in (None, 1000):
                    c.psql("TRUNCATE %s" % t)
                    args = cmd + ["--to", "pgcopy", "--pg-type", typ]
                    sql = "COPY %s (embedding) FROM STDIN (FORMAT binary)" % t
                    if start is not None:
                        args += ["--pg-id", str(start)]
                        sql = "COPY %s (id, embedding) FROM STDIN (FORMAT binary)" % t
                    e1, err1, e2, err2 = pipe(c, args, sql)
                    what = "embd %s | psql (%s, --pg-id %s)" % (" ".join(args[:1] + args[2:]), t, start)
                    check(e1 == 0 and e2 == 0, "%s: exits %d %d: %s %s" % (what, e1, e2, err1, err2))
                    ids, got = read_back(c, t, typ)
                    check(len(got) == len(v), "%s: %d rows stored" % (what, len(got)))
                    want_ids = [None] * len(v) if start is None else list(range(start, start + len(v)))
                    check(ids == want_ids, "%s: ids %s" % (what, ids[:3]))
                    for i in range(len(v)):
                        check(same(typ, got[i], v[i]), "%s: row %d differs from numpy's bits" % (what, i))
        # refused rows never reach the server; the table keeps what it had
        t = "items_float"
        c.psql("TRUNCATE %s" % t)
        c.psql("INSERT INTO %s (id, embedding) VALUES (-1, '{1,2}')" % t)
        bad = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
        bad[3, 2] = np.nan
        bj = os.path.join(work, "bad.json")
        with open(bj, "wb") as f:
            f.write(body(bad))
        bsrc = os.path.join(work, "bad.embd")
        with open(bsrc, "wb") as f:
            f.write(embd_batch(bad))
        sql = "COPY %s (id, embedding) FROM STDIN (FORMAT binary)" % t
        for cmd, server_says in ((["openai", bj], "COPY file signature not recognized"),
                                 (["decode", bsrc], "unexpected EOF in COPY data")):
            e1, err1, e2, err2 = pipe(c, cmd + ["--to", "pgcopy", "--pg-type", "float4[]", "--pg-finite",
                                                "--pg-id", "0"], sql)
            check(e1 == 1 and ("vector 3: element 2: NaN" in err1 or
                               ("frame 3" in err1 and "element 2: NaN" in err1)),
                  "%s refuses row 3: exit %d: %s" % (cmd[0], e1, err1))
            check(e2 != 0 and server_says in err2, "%s: psql's COPY fails (%s): %d %s" % (cmd[0], server_says, e2, err2))
            ids, _ = read_back(c, t, "float4[]")
            check(ids == [-1], "%s: the table keeps its one row, nothing of the refused stream: %s" % (cmd[0], ids))
        # the same rows without the NaN go in whole
        bad[3, 2] = 1.5
        with open(bj, "wb") as f:
            f.write(body(bad))
        e1, err1, e2, err2 = pipe(c, ["openai", bj, "--to", "pgcopy", "--pg-type", "float4[]", "--pg-finite",
                                      "--pg-id", "0"], sql)
        check(e1 == 0 and e2 == 0, "the repaired rows load: %s %s" % (err1, err2))
        ids, got = read_back(c, t, "float4[]")
        check(ids == [-1] + list(range(6)) and all(same("float4[]", got[i + 1], bad[i]) for i in range(6)),
              "the repaired rows: %s" % ids)
        # the batch workflow (README): vectors with --pg-id 1, ids.tsv into a table whose
        # identity column numbers the lines 1..N in COPY order; joined, each row's custom_id
        # and index come back as the test wrote them, the vectors bit for bit
        cids = ["doc-1", "tab\there", "back\\slash", "new\nline", "cr\rret", "naïve-文书-🙂"]
        vb = special(rng, 2 * len(cids), 16)
        bf = os.path.join(work, "batch.jsonl")
        with open(bf, "w") as f:
            for k, cid in enumerate(cids):
                items = [{"object": "embedding", "index": i,
                          "embedding": base64.b64encode(np.ascontiguousarray(vb[2 * k + i], "<f4").tobytes()).decode()}
                         for i in (1, 0)]
                f.write(json.dumps({"id": "batch_req_%d" % k, "custom_id": cid,
                                    "response": {"status_code": 200, "request_id": "r%d" % k,
                                                 "body": {"object": "list", "data": items, "model": "m"}},
                                    "error": None}) + "\n")
        ids_tsv = os.path.join(work, "ids.tsv")
        c.psql("CREATE TABLE batch_items (n bigserial, id bigint, embedding real[])")
        c.psql("CREATE TABLE doc_ids (id bigint GENERATED ALWAYS AS IDENTITY, custom_id text, idx int)")
        e1, err1, e2, err2 = pipe(c, ["openai", bf, "--to", "pgcopy", "--pg-type", "float4[]", "--pg-id", "1",
                                      "--ids", ids_tsv], "COPY batch_items (id, embedding) FROM STDIN (FORMAT binary)")
        check(e1 == 0 and e2 == 0, "batch file | psql: %s %s" % (err1, err2))
        with open(ids_tsv, "rb") as f:
            r = c.psql("COPY doc_ids (custom_id, idx) FROM STDIN", stdin=f.read())
        raw = c.psql("COPY (SELECT d.custom_id, d.idx, b.embedding FROM batch_items b JOIN doc_ids d "
                     "USING (id) ORDER BY id) TO STDOUT (FORMAT binary)").stdout
        rows = parse_copy_binary(raw, lambda k, b: b.decode() if k == 0 else
                                 struct.unpack(">i", b)[0] if k == 1 else array_recv(b))
        check([(r[0], r[1]) for r in rows] == [(cid, i) for cid in cids for i in (0, 1)],
              "batch ids through COPY: %r" % [(r[0], r[1]) for r in rows])
        check(len(rows) == len(vb) and all(np.array_equal(rows[i][2], vb[i].view(np.uint32)) for i in range(len(vb))),
              "batch vectors through COPY differ from numpy's bits")
        # --pg-id custom: custom_id (text) and index (int4) as the leading columns
        c.psql("CREATE TABLE keyed (custom_id text, idx int, embedding real[])")
        e1, err1, e2, err2 = pipe(c, ["openai", bf, "--to", "pgcopy", "--pg-type", "float4[]", "--pg-id", "custom"],
                                  "COPY keyed FROM STDIN (FORMAT binary)")
        check(e1 == 0 and e2 == 0, "--pg-id custom | psql: %s %s" % (err1, err2))
        raw = c.psql("COPY (SELECT custom_id, idx, embedding FROM keyed) TO STDOUT (FORMAT binary)").stdout
        rows = parse_copy_binary(raw, lambda k, b: b.decode() if k == 0 else
                                 struct.unpack(">i", b)[0] if k == 1 else array_recv(b))
        check([(r[0], r[1]) for r in rows] == [(cid, i) for cid in cids for i in (0, 1)],
              "--pg-id custom keys: %r" % [(r[0], r[1]) for r in rows])
        check(len(rows) == len(vb) and all(np.array_equal(rows[i][2], vb[i].view(np.uint32)) for i in range(len(vb))),
              "--pg-id custom vectors differ from numpy's bits")
        print("test_cli_pg: %d checks passed: embd openai/decode --to pgcopy | psql COPY for float4[], bytea "
              "and bit(%d), 40 rows of special float32 each, with and without --pg-id, bit for bit against "
              "numpy; refused rows load nothing; a batch file's vectors and --ids joined back, and --pg-id custom (%.1f s)" % (CHECKS, dims, time.monotonic() - t0))
    finally:
        c.stop()
        import shutil
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
