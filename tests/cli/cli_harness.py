"""What the tests of the embd tool share (tests/cli/test_cli.py, tests/cli/test_cli_batch.py):
the executable under test and a scratch folder (set by main), the tally of checks, running
embd with a sanitizer-report check, files in the scratch folder, and main's dispatch of
the command-line GROUP. Imported from the scripts' own folder (first on sys.path); read
EMBD and TMP as cli_harness.EMBD / .TMP (main sets them after the import)."""
import os
import subprocess
import sys
import tempfile

EMBD = None
TMP = None
FAILS = []
CHECKS = 0


def check(cond, what):
    global CHECKS
    CHECKS += 1
    if not cond:
        FAILS.append(what)
        print("FAIL:", what, flush=True)


def run(args, stdin=b"", env=None):
    """embd ARGS with EMBD_ISA unset and no progress line (env: more variables): (exit code,
    stdout bytes, stderr text)."""
    e = dict(os.environ)
    e.pop("EMBD_ISA", None)
    e["EMBD_NO_PROGRESS"] = "1"
    if env:
        e.update(env)
    p = subprocess.run([EMBD] + args, input=stdin, capture_output=True, env=e, timeout=600)
    err = p.stderr.decode("utf-8", "replace")
    # sanitizer builds: a report fails the check whatever the exit code
    check("Sanitizer" not in err and "runtime error:" not in err,
          "embd %s: sanitizer report:\n%s" % (" ".join(args), err[:2000]))
    return p.returncode, p.stdout, err


def expect(args, rc, stdin=b"", err_has=(), out_has=(), env=None, name=None):
    got_rc, out, err = run(args, stdin, env)
    label = name or "embd " + " ".join(args)
    check(got_rc == rc, "%s: exit %d, want %d; stderr: %s" % (label, got_rc, rc, err.strip()[:400]))
    for s in err_has:
        check(s in err, "%s: stderr lacks %r: %s" % (label, s, err.strip()[:400]))
    text = out.decode("utf-8", "replace")
    for s in out_has:
        check(s in text, "%s: stdout lacks %r: %s" % (label, s, text[:400]))
    return out, err


def path(name):
    return os.path.join(TMP, name)


def write(name, data):
    p = path(name)
    with open(p, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return p


def read(name):
    with open(path(name), "rb") as f:
        return f.read()


def main(doc, groups, prefix, setup=None):
    """argv: EMBD_EXECUTABLE GROUP (a key of `groups`, or all). setup() runs once EMBD is
    set; a number it returns is the exit code (77: skipped). Returns the exit code."""
    global EMBD, TMP
    if len(sys.argv) != 3 or (sys.argv[2] not in groups and sys.argv[2] != "all"):
        print(doc)
        return 2
    EMBD = os.path.abspath(sys.argv[1])
    if setup:
        rc = setup()
        if rc is not None:
            return rc
    todo = list(groups) if sys.argv[2] == "all" else [sys.argv[2]]
    with tempfile.TemporaryDirectory(prefix=prefix) as t:
        TMP = t
        for g in todo:
            groups[g]()
    print("%d checks, %d failed" % (CHECKS, len(FAILS)))
    return 1 if FAILS else 0
