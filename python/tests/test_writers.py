"""Vectors into databases through the binding: PostgreSQL binary COPY, _bulk lines, FAISS
files. Oracles: the COPY BINARY / pgvector send / array_send layouts parsed here with
struct, numpy, base64, numpy.fromfile; a real PostgreSQL 15 (psycopg 3's COPY) and a real
pgvector (PGlite, tests/pglite) reading the bytes back, and refusing the rows embd refuses."""
import base64
import importlib.util
import io
import json
import os
import shutil
import struct
import subprocess

import numpy as np
import pytest

import embd

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SIG = b"PGCOPY\n\xff\r\n\x00"


def parse_copy(data):
    """The rows of a COPY BINARY stream: a list of field lists (bytes, or None for NULL)."""
    assert data[:11] == SIG and data[11:19] == b"\0" * 8
    at, rows = 19, []
    while True:
        (n,) = struct.unpack_from(">h", data, at)
        at += 2
        if n == -1:
            assert at == len(data), "bytes after the trailer"
            return rows
        fields = []
        for _ in range(n):
            (ln,) = struct.unpack_from(">i", data, at)
            at += 4
            fields.append(None if ln == -1 else data[at:at + ln])
            at += max(ln, 0)
        rows.append(fields)


def vector_recv(b):
    dim, unused = struct.unpack_from(">hh", b)
    assert unused == 0 and len(b) == 4 + 4 * dim
    return np.frombuffer(b, ">f4", dim, 4).astype(np.float32)


def halfvec_recv(b):
    dim, unused = struct.unpack_from(">hh", b)
    assert unused == 0 and len(b) == 4 + 2 * dim
    return np.frombuffer(b, ">f2", dim, 4)


def sparsevec_recv(b):
    dim, nnz, unused = struct.unpack_from(">iii", b)
    assert unused == 0 and len(b) == 12 + 8 * nnz
    idx = np.frombuffer(b, ">i4", nnz, 12)
    val = np.frombuffer(b, ">f4", nnz, 12 + 4 * nnz)
    dense = np.zeros(dim, np.float32)
    dense[idx] = val
    assert np.all(np.diff(idx) > 0) and np.all(val != 0)
    return dense


def bit_recv(b):
    (n,) = struct.unpack_from(">i", b)
    assert len(b) == 4 + (n + 7) // 8
    return np.unpackbits(np.frombuffer(b, np.uint8, offset=4))[:n]


def array_recv(b):
    ndim, flags, elem = struct.unpack_from(">iiI", b)
    assert (ndim, flags, elem) == (1, 0, 700)
    size, lower = struct.unpack_from(">ii", b, 12)
    assert lower == 1
    out, at = [], 20
    for _ in range(size):
        (ln,) = struct.unpack_from(">i", b, at)
        assert ln == 4
        out.append(b[at + 4:at + 8])
        at += 8
    assert at == len(b)
    return np.frombuffer(b"".join(out), ">f4").astype(np.float32)


def rows_of(rng, count=6, dims=12):
    v = rng.standard_normal((count, dims)).astype(np.float32)
    v[v < -1] = 0  # zeros for sparsevec
    return v


def test_pgcopy_layouts_against_numpy():
    rng = np.random.default_rng(1)
    v = rows_of(rng)
    for typ, recv, want in (("vector", vector_recv, v), ("float4[]", array_recv, v),
                            ("sparsevec", sparsevec_recv, v),
                            ("halfvec", halfvec_recv, v.astype(np.float16)),
                            ("bit", bit_recv, (v > 0).astype(np.uint8))):
        rows = parse_copy(embd.to_pgcopy(v, typ))
        assert len(rows) == len(v) and all(len(r) == 1 for r in rows)
        got = np.array([recv(r[0]) for r in rows])
        assert np.array_equal(got.view(np.uint8), np.asarray(want).view(np.uint8)), typ
    rows = parse_copy(embd.to_pgcopy(v, "bytea", ids=[10, 20, 30, 40, 50, 60]))
    assert [struct.unpack(">q", r[0])[0] for r in rows] == [10, 20, 30, 40, 50, 60]
    assert b"".join(r[1] for r in rows) == v.astype("<f4").tobytes()
    rows = parse_copy(embd.to_pgcopy(v, first_id=100))
    assert [struct.unpack(">q", r[0])[0] for r in rows] == list(range(100, 106))
    packed = np.packbits(v > 0, axis=1)
    assert embd.to_pgcopy(packed, "bit") != b""  # 16 bits a row from 2 packed bytes
    assert [bit_recv(r[0]).tolist() for r in parse_copy(embd.to_pgcopy(packed, "bit"))] == \
        [list(np.unpackbits(p)) for p in packed]
    assert parse_copy(embd.to_pgcopy(np.zeros((0, 4), np.float32))) == []


def test_pgcopy_refusals():
    cases = [
        ("vector", [[1, np.nan]], "EMBD_ERR_VECTOR_VALUE", 1),
        ("vector", [[1, 2], [3, np.inf]], "EMBD_ERR_VECTOR_VALUE", 1),
        ("halfvec", [[70000.0]], "EMBD_ERR_VECTOR_VALUE", 0),
        ("vector", np.zeros((1, 16001)), "EMBD_ERR_VECTOR_DIMS", None),
        ("sparsevec", [[0, np.nan]], "EMBD_ERR_VECTOR_VALUE", None),
    ]
    for typ, rows, code, offset in cases:
        with pytest.raises(embd.Error) as e:
            embd.to_pgcopy(np.array(rows, np.float32), typ)
        assert e.value.code == code, (typ, str(e.value))
        if offset is not None:
            assert e.value.offset == offset
        assert "row" in str(e.value)
    with pytest.raises(embd.Error) as e:
        embd.to_pgcopy([[1.0, 2.0]], typmod=3)
    assert e.value.code == "EMBD_ERR_VECTOR_DIMS"
    assert embd.to_pgcopy([[np.nan]], "float4[]")  # PostgreSQL's real[] takes NaN
    with pytest.raises(embd.Error):
        embd.to_pgcopy([[np.nan]], "float4[]", finite=True)
    with pytest.raises(ValueError):
        embd.to_pgcopy([[1.0]], "vectors")
    w = embd.PgCopyWriter(io.BytesIO(), "sparsevec")
    with pytest.raises(embd.Error) as e:
        w.write_sparse(10, [3, 2], [1, 1])
    assert e.value.code == "EMBD_ERR_SPARSE_INDEX"
    with pytest.raises(embd.Error) as e:
        w.write_sparse(10, [1, 2], [1, 0])
    assert e.value.code == "EMBD_ERR_VECTOR_VALUE"


def test_writer_streams_the_same_bytes():
    rng = np.random.default_rng(2)
    v = rows_of(rng, 9, 5)
    f = io.BytesIO()
    with embd.PgCopyWriter(f, "vector", dims=5, ids=True, first_id=7) as w:
        w.write(v[:4])
        w.write(v[4])
        w.write(v[5:])
    assert w.rows == 9
    assert f.getvalue() == embd.to_pgcopy(v, "vector", first_id=7, typmod=5)
    f = io.BytesIO()
    with embd.PgCopyWriter(f, "vector") as w:
        w.write(v[:2])
        with pytest.raises(embd.Error):
            w.write(np.array([[1, 2, 3, 4, np.nan]], np.float32))
        w.write(v[2:3])
    assert f.getvalue() == embd.to_pgcopy(v[:3])  # the refused call wrote nothing
    f = io.BytesIO()
    with embd.PgCopyWriter(f, "sparsevec", ids=True) as w:
        w.write_sparse(10, [1, 4], [0.5, -2])
        w.write_null()
    rows = parse_copy(f.getvalue())
    assert struct.unpack(">q", rows[1][0])[0] == 1 and rows[1][1] is None
    assert sparsevec_recv(rows[0][1]).tolist() == [0, 0.5, 0, 0, -2, 0, 0, 0, 0, 0]
    f = io.BytesIO()
    embd.PgCopyWriter(f).close()
    assert parse_copy(f.getvalue()) == []


def test_es_bulk_and_fvecs():
    lines = embd.to_es_bulk([[1.0, 2.0]], "docs", "emb", ids=[7], byte_order="little").splitlines()
    assert json.loads(lines[0]) == {"index": {"_index": "docs", "_id": "7"}}
    assert json.loads(lines[1]) == {"emb": "AACAPwAAAEA="}  # OpenSearch's documented example
    big = embd.to_es_bulk([[1.0, 2.0]], "docs", "emb").splitlines()
    assert json.loads(big[1]) == {"emb": "P4AAAEAAAAA="}
    rng = np.random.default_rng(3)
    v = rng.standard_normal((5, 7)).astype(np.float32)
    for order, np_t in (("big", ">f4"), ("little", "<f4")):
        docs = [json.loads(l) for l in embd.to_es_bulk(v, 'a"b', "f\n", byte_order=order).splitlines()[1::2]]
        got = np.array([np.frombuffer(base64.b64decode(d["f\n"]), np_t) for d in docs])
        assert np.array_equal(got, v)
    with pytest.raises(embd.Error) as e:
        embd.to_es_bulk([[1.0], [np.nan]], "i", "f")
    assert e.value.code == "EMBD_ERR_VECTOR_VALUE" and "row 1" in str(e.value)
    data = embd.to_fvecs(v)
    raw = np.frombuffer(data, "<i4").reshape(5, 8)
    assert (raw[:, 0] == 7).all() and np.array_equal(raw[:, 1:].view("<f4"), v)
    b = rng.integers(0, 256, (3, 4), dtype=np.uint8)
    rb = np.frombuffer(embd.to_bvecs(b), np.uint8).reshape(3, 8)
    assert (rb[:, :4].view("<i4")[:, 0] == 4).all() and np.array_equal(rb[:, 4:], b)


# ---- real servers -------------------------------------------------------------------------

def _cluster():
    spec = importlib.util.spec_from_file_location("pgharness", os.path.join(ROOT, "tests", "pg", "pgharness.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not os.path.exists(mod.PGBIN + "/initdb"):
        pytest.skip("SKIPPED LOUDLY: PostgreSQL 15 not installed (Debian: postgresql-15)")
    return mod.Cluster()


def test_psycopg_copy_into_postgresql():
    psycopg = pytest.importorskip("psycopg", reason="SKIPPED LOUDLY: python3-psycopg not installed")
    c = _cluster()
    try:
        c.start()
        rng = np.random.default_rng(4)
        v = rng.standard_normal((50, 64)).astype(np.float32)
        v[3, 5] = np.float32(-0.0)
        v[7, 1] = np.float32(1e-45)
        with psycopg.connect(host=c.dir, user="postgres", dbname="postgres", autocommit=True) as conn:
            cur = conn.cursor()
            cur.execute("CREATE TABLE a (id bigint, v real[]); CREATE TABLE b (id bigint, v bytea)")
            for table, typ in (("a", "float4[]"), ("b", "bytea")):
                with cur.copy("COPY %s (id, v) FROM STDIN (FORMAT binary)" % table) as copy:
                    with embd.PgCopyWriter(copy, typ, ids=True, first_id=1) as w:
                        for k in range(0, 50, 16):
                            w.write(v[k:k + 16])
            cur.execute("SET extra_float_digits = 3")
            cur.execute("SELECT id, v::text FROM a ORDER BY id")
            got_a = [(i, np.array(t.strip("{}").split(","), dtype=np.float32)) for i, t in cur.fetchall()]
            cur.execute("SELECT id, v FROM b ORDER BY id")
            got_b = cur.fetchall()
            # a row embd refuses never reaches the server
            cur.execute("CREATE TABLE c (v real[])")
            # psycopg ends the COPY with CopyFail and raises QueryCanceled carrying embd's text
            with pytest.raises((embd.Error, psycopg.errors.QueryCanceled), match="NaN"):
                with cur.copy("COPY c (v) FROM STDIN (FORMAT binary)") as copy:
                    with embd.PgCopyWriter(copy, "float4[]", finite=True) as w:
                        w.write(np.array([[1, np.nan]], np.float32))
            cur.execute("SELECT count(*) FROM c")
            assert cur.fetchone()[0] == 0
        assert [i for i, _ in got_a] == list(range(1, 51))
        assert np.array_equal(np.array([x for _, x in got_a]).view(np.uint32), v.view(np.uint32))
        assert b"".join(bytes(x) for _, x in got_b) == v.tobytes()
    finally:
        c.stop()


NODE = shutil.which("node")
PGLITE = os.path.join(ROOT, "tests", "pglite")


@pytest.mark.skipif(NODE is None or not os.path.isdir(os.path.join(PGLITE, "node_modules", "@electric-sql")),
                    reason="SKIPPED LOUDLY: PGlite not installed (npm ci in tests/pglite: "
                           "scripts/test-python.sh does it from the lock file)")
def test_pgvector_in_pglite(tmp_path):
    rng = np.random.default_rng(5)
    d = 16
    v = rng.standard_normal((20, d)).astype(np.float32)
    v[np.abs(v) < 0.5] = 0  # sparse rows
    steps, expect = [], []

    def copy(table, data, ok):
        p = tmp_path / ("%s-%d.bin" % (table, len(steps)))
        p.write_bytes(data)
        steps.append({"copy": table, "file": str(p)})
        expect.append(ok)

    for typ in ("vector", "halfvec", "sparsevec"):
        steps.append({"sql": "CREATE TABLE t_%s (id bigint, v %s(%d))" % (typ, typ, d)})
        expect.append(True)
        copy("t_%s (id, v)" % typ, embd.to_pgcopy(v, typ, first_id=0, typmod=d), True)
        steps.append({"query": "SELECT id, v::text FROM t_%s ORDER BY id" % typ})
        expect.append(typ)
    steps.append({"sql": "CREATE TABLE t_bit (v bit(%d))" % d})
    expect.append(True)
    copy("t_bit (v)", embd.to_pgcopy(v, "bit", typmod=d), True)
    steps.append({"query": "SELECT v::text FROM t_bit"})
    expect.append("bit")

    # Every refusal embd makes, sent raw to the server: refused there too.
    def raw_row(field):
        return SIG + b"\0" * 8 + struct.pack(">hi", 1, len(field)) + field + b"\xff\xff"

    bad = {
        "vector NaN": ("t_vector (v)", struct.pack(">hh", d, 0) + struct.pack(">%df" % d, *([np.nan] + [1.0] * (d - 1))),
                       lambda: embd.to_pgcopy(np.array([[np.nan] + [1.0] * (d - 1)], np.float32), "vector")),
        "vector inf": ("t_vector (v)", struct.pack(">hh", d, 0) + struct.pack(">%df" % d, *([np.inf] + [1.0] * (d - 1))),
                       lambda: embd.to_pgcopy(np.array([[np.inf] + [1.0] * (d - 1)], np.float32), "vector")),
        "vector dims": ("t_vector (v)", struct.pack(">hh", d - 1, 0) + struct.pack(">%df" % (d - 1), *([1.0] * (d - 1))),
                        lambda: embd.to_pgcopy(np.ones((1, d - 1), np.float32), "vector", typmod=d)),
        "halfvec inf": ("t_halfvec (v)", struct.pack(">hh", d, 0) + np.array([np.inf] + [1.0] * (d - 1), ">f2").tobytes(),
                        lambda: embd.to_pgcopy(np.array([[70000.0] + [1.0] * (d - 1)], np.float32), "halfvec")),
        "sparse unsorted": ("t_sparsevec (v)", struct.pack(">iiiiiff", d, 2, 0, 5, 3, 1.0, 1.0),
                            lambda: embd.PgCopyWriter(io.BytesIO(), "sparsevec").write_sparse(d, [5, 3], [1, 1])),
        "sparse duplicate": ("t_sparsevec (v)", struct.pack(">iiiiiff", d, 2, 0, 3, 3, 1.0, 1.0),
                             lambda: embd.PgCopyWriter(io.BytesIO(), "sparsevec").write_sparse(d, [3, 3], [1, 1])),
        "sparse out of range": ("t_sparsevec (v)", struct.pack(">iiiif", d, 1, 0, d, 1.0),
                                lambda: embd.PgCopyWriter(io.BytesIO(), "sparsevec").write_sparse(d, [d], [1])),
        "sparse zero": ("t_sparsevec (v)", struct.pack(">iiiif", d, 1, 0, 2, 0.0),
                        lambda: embd.PgCopyWriter(io.BytesIO(), "sparsevec").write_sparse(d, [2], [0])),
        "vector trailing": ("t_vector (v)", struct.pack(">hh", d, 0) + struct.pack(">%df" % d, *([1.0] * d)) + b"\0",
                            None),
    }
    for name, (table, field, client) in bad.items():
        if client is not None:
            with pytest.raises(embd.Error):
                client()
        # a row of only this field: tables with an id get a NULL id
        ncols = 1
        steps.append({"copy": table, "file": str(tmp_path / ("bad-%d.bin" % len(steps)))})
        (tmp_path / ("bad-%d.bin" % (len(steps) - 1))).write_bytes(raw_row(field))
        expect.append(("bad", name))
    (tmp_path / "steps.json").write_text(json.dumps(steps))
    subprocess.run([NODE, os.path.join(PGLITE, "pglite_copy.mjs"), str(tmp_path / "steps.json"),
                    str(tmp_path / "out.json")], check=True, timeout=300)
    results = json.loads((tmp_path / "out.json").read_text())
    assert len(results) == len(expect)
    for res, exp in zip(results, expect):
        if exp is True:
            assert res["ok"], res
        elif isinstance(exp, tuple):
            assert not res["ok"], "the server took the bad row %r" % exp[1]
        elif exp == "bit":
            got = np.array([[int(ch) for ch in r[0]] for r in res["rows"]], np.uint8)
            assert np.array_equal(got, (v > 0).astype(np.uint8))
        else:
            texts = [r[1] for r in res["rows"]]
            assert [int(r[0]) for r in res["rows"]] == list(range(len(v)))
            if exp == "sparsevec":
                got = []
                for t in texts:  # {i:v,...}/dim, 1-based indices
                    body, dim = t.split("/")
                    row = np.zeros(int(dim), np.float32)
                    for kv in filter(None, body.strip("{}").split(",")):
                        i, x = kv.split(":")
                        row[int(i) - 1] = np.float32(x)
                    got.append(row)
                assert np.array_equal(np.array(got), v)
            else:
                got = np.array([np.array(t.strip("[]").split(","), np.float32) for t in texts])
                want = v if exp == "vector" else v.astype(np.float16).astype(np.float32)
                assert np.array_equal(got, want), exp
