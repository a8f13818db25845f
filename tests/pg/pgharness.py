"""A private PostgreSQL 15 cluster for tests and benchmarks, and the COPY BINARY parsers
(used by tests/pg/pg_roundtrip.py, tests/cli/test_cli_pg.py and bench/pg_ingest.py).

    c = Cluster(); c.start(); try: c.psql("SELECT 1") finally: c.stop()

initdb in a temporary directory (as the unprivileged `postgres` user when run as root, as CI
is), unix socket in that directory, no TCP, fsync off; stopped (immediate) and removed by
stop(). require_pg() exits 77 with a loud message when PostgreSQL 15 is not installed.
"""
import os
import pwd
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

PGBIN = "/usr/lib/postgresql/15/bin"
HEADER = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8


def skip(msg):
    print("*" * 78)
    print("SKIP %s: %s" % (os.path.basename(sys.argv[0]), msg))
    print("*" * 78)
    sys.exit(77)


class Cluster:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="embd-pg-")
        self.data = os.path.join(self.dir, "data")
        self.user = None
        if os.geteuid() == 0:
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                skip("running as root and there is no `postgres` user to run initdb")
            self.user = "postgres"
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        self.started = False

    def run_as(self, args, **kw):
        if self.user:
            args = ["runuser", "-u", self.user, "--"] + args
        return subprocess.run(args, check=True, **kw)

    def start(self):
        self.run_as([PGBIN + "/initdb", "-D", self.data, "-A", "trust", "-U", "postgres",
                     "--no-sync", "-E", "UTF8", "--locale=C"], stdout=subprocess.DEVNULL)
        self.run_as([PGBIN + "/pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"),
                     "-o", "-c listen_addresses='' -k %s -c fsync=off" % self.dir, "-w", "start"],
                    stdout=subprocess.DEVNULL)
        self.started = True

    def stop(self):
        if self.started:
            self.run_as([PGBIN + "/pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"],
                        stdout=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)

    def psql_args(self, sql):
        """The psql command line that runs sql (stdin free for COPY ... FROM STDIN)."""
        return ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", self.dir, "-U", "postgres",
                "-d", "postgres", "-At", "-c", sql]

    def psql(self, sql, stdin=None, check=True):
        r = subprocess.run(self.psql_args(sql), input=stdin, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        if check and r.returncode:
            raise SystemExit("psql failed (%d): %s\n%s" % (r.returncode, sql, r.stderr.decode()))
        return r


def require_pg(who):
    """Exit 77 (skipped, loudly) without PostgreSQL 15's initdb and psql."""
    if not os.path.exists(PGBIN + "/initdb") or not shutil.which("psql"):
        skip("PostgreSQL 15 is not installed (%s/initdb, psql): install postgresql-15 "
             "(scripts/install-deps.sh) to run %s" % (PGBIN, who))


def parse_copy_binary(data, parse_field):
    """Rows of a COPY binary stream, each a list of fields (None for NULL), parsed here."""
    assert data[:19] == HEADER, data[:19]
    p, rows = 19, []
    while True:
        (nf,) = struct.unpack_from(">h", data, p)
        p += 2
        if nf == -1:
            assert p == len(data), "bytes after the trailer"
            return rows
        row = []
        for k in range(nf):
            (ln,) = struct.unpack_from(">i", data, p)
            p += 4
            if ln == -1:
                row.append(None)
                continue
            row.append(parse_field(k, data[p:p + ln]))
            p += ln
        rows.append(row)


def array_recv(b):
    """array_send of float4[] -> uint32 bit patterns."""
    ndim, flags, oid = struct.unpack_from(">iiI", b, 0)
    assert flags == 0 and oid == 700, (flags, oid)
    if ndim == 0:
        return np.zeros(0, np.uint32)
    assert ndim == 1
    n, lb = struct.unpack_from(">ii", b, 12)
    assert lb == 1
    out = np.empty(n, np.uint32)
    for j in range(n):
        ln, u = struct.unpack_from(">iI", b, 20 + 8 * j)
        assert ln == 4
        out[j] = u
    assert len(b) == 20 + 8 * n
    return out
