"""Shared pieces of embd serve's tests and benchmark: start the fake upstream and the front
on the loopback (ports picked by the kernel, everything stopped at exit and bounded in
time), read EMBD frames with an independent parser (struct and zlib's CRC-32, not embd),
and build the frames the seed codec would write for given float32 bits."""
import atexit
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fake_upstream  # noqa: E402  (vector_for: what the upstream answers for a text)

_procs = []


def _cleanup():
    for p in _procs:
        if p.poll() is None:
            p.kill()
            p.wait()


atexit.register(_cleanup)


class Upstream:
    def __init__(self, port=0, lifetime=240):
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_upstream.py"), "--port", str(port),
                                      "--lifetime", str(lifetime)], stdout=subprocess.PIPE, text=True)
        _procs.append(self.proc)
        line = self.proc.stdout.readline()
        m = re.match(r"PORT (\d+)", line)
        if not m:
            raise RuntimeError("fake upstream did not start: %r" % line)
        self.port = int(m.group(1))
        self.url = "http://127.0.0.1:%d/v1" % self.port

    def kill(self):
        self.proc.kill()
        self.proc.wait()


class Front:
    """embd-serve on 127.0.0.1, port 0; stderr to a file (self.log())."""

    def __init__(self, exe, upstream_url, *args, env=None, listen="127.0.0.1:0"):
        self.errf = tempfile.NamedTemporaryFile(prefix="embd-serve-", suffix=".log", delete=False)
        atexit.register(lambda name=self.errf.name: os.path.exists(name) and os.unlink(name))
        e = dict(os.environ)
        e.update(env or {})
        cmd = list(exe) if isinstance(exe, (list, tuple)) else [exe]
        self.proc = subprocess.Popen(cmd + ["--upstream", upstream_url, "--listen", listen] + list(args),
                                     stdout=subprocess.DEVNULL, stderr=self.errf, env=e)
        _procs.append(self.proc)
        t0 = time.time()
        while True:
            m = re.search(r"listening on http://([0-9.]+|\[[0-9a-f:]+\]):(\d+)", self.log())
            if m:
                self.host, self.port = m.group(1).strip("[]"), int(m.group(2))
                break
            if self.proc.poll() is not None or time.time() - t0 > 20:
                raise RuntimeError("embd-serve did not start (exit %s): %s" % (self.proc.poll(), self.log()))
            time.sleep(0.02)

    def log(self):
        with open(self.errf.name, encoding="utf-8", errors="replace") as f:
            return f.read()

    def rss_kib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def cpu_seconds(self):
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)


# ---- EMBD frames, read and written without embd --------------------------------------------
DTYPE_CODES = {"f32": 0, "f16": 1, "bf16": 2, "fp8-e4m3": 3, "fp8-e5m2": 4, "int8": 5, "uint8": 6,
               "binary": 7, "ubinary": 8}


def seed_frame(f32bytes):
    """The seed codec's frame (version 1, flags 0) for little-endian float32 bytes."""
    dims = len(f32bytes) // 4
    head = struct.pack(">I", 0x454D4244) + bytes([1, 0, 0, 0]) + struct.pack("<I", dims)
    return head + struct.pack("<I", zlib.crc32(head)) + f32bytes


def seed_batch(list_of_f32bytes):
    return struct.pack("<I", len(list_of_f32bytes)) + b"".join(seed_frame(b) for b in list_of_f32bytes)


def read_frame(buf, at=0):
    """(version, dtype_code, dims, payload bytes, next offset); raises ValueError."""
    if len(buf) - at < 16:
        raise ValueError("frame at %d: %d bytes, need 16" % (at, len(buf) - at))
    magic, = struct.unpack_from(">I", buf, at)
    ver, flags, b6, b7 = buf[at + 4], buf[at + 5], buf[at + 6], buf[at + 7]
    dims, crc = struct.unpack_from("<II", buf, at + 8)
    if magic != 0x454D4244 or ver not in (1, 2) or flags != 0 or b7 != 0 or (ver == 1 and b6 != 0):
        raise ValueError("frame at %d: bad header %r" % (at, bytes(buf[at:at + 16])))
    if zlib.crc32(bytes(buf[at:at + 12])) != crc:
        raise ValueError("frame at %d: header CRC" % at)
    code = b6 if ver == 2 else 0
    bits = {0: 32, 1: 16, 2: 16, 3: 8, 4: 8, 5: 8, 6: 8, 7: 1, 8: 1}[code]
    n = dims * bits // 8
    if len(buf) - at - 16 < n:
        raise ValueError("frame at %d: payload cut" % at)
    return ver, code, dims, bytes(buf[at + 16:at + 16 + n]), at + 16 + n


def read_batch(buf):
    count, = struct.unpack_from("<I", buf, 0)
    at, frames = 4, []
    for _ in range(count):
        ver, code, dims, payload, at = read_frame(buf, at)
        frames.append((ver, code, dims, payload))
    if at != len(buf):
        raise ValueError("batch: %d bytes after the last frame" % (len(buf) - at))
    return frames


def expected_f32(text, dims=16, specials=False):
    return fake_upstream.f32_bytes(fake_upstream.vector_for(text, dims, specials))
