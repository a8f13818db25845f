#!/usr/bin/python3
"""COPY ... (FORMAT binary) streams from embd's writer (embd/pgcopy.h) into a real PostgreSQL 15.

    pg_roundtrip.py PGCOPY_GEN

Starts a private cluster (tests/pg/pgharness.py) in a temporary directory (initdb as the unprivileged `postgres`
user when run as root, as CI is; unix socket in that directory, no TCP), and stops it at the
end even on failure. For float4[] and bytea tables with a bigint id, it loads rows made by
pgcopy_gen (tests/pg/pgcopy_gen.c, linked to the library) with
`psql -c "COPY t FROM STDIN (FORMAT binary)" < stream`, reads them back two ways and compares
every value with numpy's float32, bit for bit:
  - `COPY (SELECT ...) TO STDOUT (FORMAT binary)`, parsed here with struct (array_send's and
    bytea's layout): the server's stored bits, NaN payloads included;
  - `SELECT` with extra_float_digits=3 (float4 text that round-trips), parsed by numpy.float32.
Also: NULL vectors, an empty batch (COPY 0), a 1536-dim batch, and a row the client refuses
(NaN with --finite): made as one batch, pgcopy_gen exits 1 with no output and the table
stays empty; streamed row by row, it exits 1 with the rows before it whole and not a byte
of the refused one, and the server (which ends COPY at end of input on a row boundary,
trailer or not) stores exactly those rows. For the good batches the streamed (per-row
calls) and batch (multi-row calls) outputs are byte-identical.

Exit 77 (skipped, with a loud message) when PostgreSQL 15 is not installed
(Debian: postgresql-15).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgharness import Cluster, array_recv, parse_copy_binary, require_pg  # noqa: E402

def special_vectors(rng, count, dims):
    """float32 rows with the classes that break text paths: NaN payloads, infinities, -0,
    subnormals, extremes, and random bits."""
    bits = rng.integers(0, 2**32, size=(count, dims), dtype=np.uint64).astype(np.uint32)
    specials = np.array([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001,
                         0x7F800001, 0x7FBFFFFF, 0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0x3F800000],
                        dtype=np.uint32)
    mask = rng.random((count, dims)) < 0.2
    bits[mask] = rng.choice(specials, size=int(mask.sum()))
    return bits.view(np.float32)


def gen(gen_exe, typ, v, workdir, *opts):
    path = os.path.join(workdir, "in.f32")
    np.ascontiguousarray(v, dtype="<f4").tofile(path)
    return subprocess.run([gen_exe, typ, str(v.shape[1]), path] + list(opts),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def field(k, b, vector_parser):
    return struct.unpack(">q", b)[0] if k == 0 else vector_parser(b)


def check_table(c, table, typ, v, nulls):
    count = v.shape[0]
    r = c.psql("SELECT count(*) FROM %s" % table)
    assert int(r.stdout) == count, (r.stdout, count)
    # 1. the stored bits, through COPY TO STDOUT (FORMAT binary)
    raw = c.psql("COPY (SELECT id, v FROM %s ORDER BY id) TO STDOUT (FORMAT binary)" % table).stdout
    parser = array_recv if typ == "float4[]" else (lambda b: np.frombuffer(b, "<u4").copy())
    rows = parse_copy_binary(raw, lambda k, b: field(k, b, parser))
    assert len(rows) == count
    want = v.view(np.uint32)
    for i, (rid, got) in enumerate(rows):
        assert rid == i, (rid, i)
        if i in nulls:
            assert got is None, (i, got)
            continue
        if not np.array_equal(got, want[i]):
            bad = np.nonzero(got != want[i])[0][0]
            raise SystemExit("%s row %d element %d: stored %#010x, sent %#010x"
                             % (table, i, bad, got[bad], want[i][bad]))
    # 2. text: float4 with extra_float_digits=3 (float4[]), hex (bytea), parsed by numpy
    if typ == "float4[]":
        out = c.psql("SET extra_float_digits = 3; SELECT id, v FROM %s ORDER BY id" % table).stdout.decode()
    else:
        out = c.psql("SELECT id, encode(v, 'hex') FROM %s ORDER BY id" % table).stdout.decode()
    lines = out.splitlines()
    assert len(lines) == count
    for i, line in enumerate(lines):
        rid, text = line.split("|", 1)
        assert int(rid) == i
        if i in nulls:
            assert text == "", (i, text)
            continue
        if typ == "float4[]":
            vals = np.array([np.float32(t) for t in text.strip("{}").split(",")], np.float32) \
                if text != "{}" else np.zeros(0, np.float32)
            nan = np.isnan(v[i])
            assert np.array_equal(np.isnan(vals), nan), (i, text)
            if not np.array_equal(vals[~nan].view(np.uint32), v[i][~nan].view(np.uint32)):
                raise SystemExit("%s row %d: text %s differs from the vector" % (table, i, text[:200]))
        else:
            assert bytes.fromhex(text) == v[i].astype("<f4").tobytes(), i


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: pg_roundtrip.py PGCOPY_GEN")
    gen_exe = os.path.abspath(sys.argv[1])
    require_pg("this test")
    t0 = time.monotonic()
    c = Cluster()
    work = tempfile.mkdtemp(prefix="embd-pg-work-")
    try:
        c.start()
        t_start = time.monotonic() - t0
        rng = np.random.default_rng(33)
        checks = 0
        for typ in ("float4[]", "bytea"):
            table = "t_" + ("f4" if typ == "float4[]" else "bytea")
            c.psql("CREATE TABLE %s (id bigint, v %s)" % (table, "real[]" if typ == "float4[]" else "bytea"))
            for count, dims, nulls in ((50, 37, {3, 49}), (20, 1536, {0}), (0, 8, set())):
                c.psql("TRUNCATE %s" % table)
                v = special_vectors(rng, count, dims)
                opts = ["--id"]
                for n in sorted(nulls):
                    opts += ["--null", str(n)]
                g = gen(gen_exe, typ, v, work, *opts)
                if g.returncode:
                    raise SystemExit("pgcopy_gen failed: " + g.stderr.decode())
                gs = gen(gen_exe, typ, v, work, "--stream", *opts)  # per-row calls
                assert gs.returncode == 0 and gs.stdout == g.stdout, "stream and batch outputs differ"
                r = c.psql("COPY %s (id, v) FROM STDIN (FORMAT binary)" % table, stdin=g.stdout)
                check_table(c, table, typ, v, nulls)
                checks += count
            # A row the client refuses never reaches the server. Whole batch (one multi-row
            # call): nothing is output, COPY of nothing fails, the table stays empty.
            c.psql("TRUNCATE %s" % table)
            v = np.arange(5 * 4, dtype=np.float32).reshape(5, 4)
            v[3, 2] = np.nan
            g = gen(gen_exe, typ, v, work, "--id", "--finite")
            assert g.returncode == 1, g.returncode
            assert b"row 3 element 2: NaN" in g.stderr, g.stderr
            assert g.stdout == b"", len(g.stdout)
            r = c.psql("COPY %s (id, v) FROM STDIN (FORMAT binary)" % table, stdin=g.stdout, check=False)
            assert r.returncode != 0, "COPY of an empty input succeeded"
            assert int(c.psql("SELECT count(*) FROM %s" % table).stdout) == 0
            # Streamed row by row: rows 0-2 whole, not a byte of row 3, no trailer. The server
            # ends COPY at end of input on a row boundary (the trailer is optional to it), so it
            # stores rows 0-2 bit for bit and never row 3.
            g = gen(gen_exe, typ, v, work, "--id", "--finite", "--stream")
            assert g.returncode == 1, g.returncode
            assert b"row 3 element 2: NaN" in g.stderr, g.stderr
            row = 2 + 12 + 4 + (20 + 8 * 4 if typ == "float4[]" else 16)
            assert len(g.stdout) == 19 + 3 * row, (len(g.stdout), 19 + 3 * row)
            c.psql("COPY %s (id, v) FROM STDIN (FORMAT binary)" % table, stdin=g.stdout)
            check_table(c, table, typ, v[:3], set())
            c.psql("TRUNCATE %s" % table)
            # The same rows without the NaN load whole.
            v[3, 2] = 1.5
            g = gen(gen_exe, typ, v, work, "--id", "--finite")
            assert g.returncode == 0, g.stderr
            c.psql("COPY %s (id, v) FROM STDIN (FORMAT binary)" % table, stdin=g.stdout)
            check_table(c, table, typ, v, set())
        total = time.monotonic() - t0
        print("pg_roundtrip: %d rows of float4[] and bytea checked bit for bit against numpy "
              "(binary and text read-back), NULLs, empty batch, refused NaN row; "
              "cluster start %.2f s, total %.2f s" % (checks, t_start, total))
    finally:
        c.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
