"""Batch output files (OpenAI's Batch API, Azure OpenAI, Together, vLLM's run_batch): JSON
Lines, one request a line, in no particular order:

    {"id": "...", "custom_id": "doc-17", "response": {"status_code": 200, "body": {...}}, "error": null}

Each line is read with libembd's strict decoder (embd_openai_batch_line) into storage reused
line after line; the rows are copied once into the result. Files are read in pieces, so
memory follows the largest line and the result, never the file."""
import os

import numpy as _np

from . import _embd

_CHUNK = 8 << 20  # one reused read buffer's worth at a time


class BatchResult:
    """The rows of a batch output file: .vectors (N x D float32, or the wire dtype with
    keep_dtype), .custom_ids (one str per row) and .index (the row's data[].index within
    its request), .failed (one dict per request that failed in every file given: custom_id,
    line (1-based), file, status_code (or None), code, message)."""

    __slots__ = ("vectors", "custom_ids", "index", "failed")

    def __init__(self, vectors, custom_ids, index, failed):
        self.vectors = vectors
        self.custom_ids = custom_ids
        self.index = index
        self.failed = failed

    def __repr__(self):
        return "BatchResult(vectors=<%s %s>, %d failed)" % (
            "x".join(map(str, self.vectors.shape)), self.vectors.dtype, len(self.failed))


def _lines(f, chunk):
    """(line, 1-based number) of a binary file object: each line a memoryview into one
    reused buffer (valid until the next line is asked for), read `chunk` bytes at a time
    with readinto, so a file of any size touches the same memory; a line longer than the
    buffer grows it."""
    buf = bytearray(chunk)
    mv = memoryview(buf)
    have = 0  # bytes in buf: a partial line at the front, then what was read
    no = 0
    readinto = getattr(f, "readinto", None)
    while True:
        if have == len(buf):  # one line fills the buffer: grow it
            mv.release()
            buf.extend(bytes(len(buf)))
            mv = memoryview(buf)
        if readinto is not None:
            n = readinto(mv[have:])
        else:
            data = f.read(len(buf) - have)
            n = len(data)
            mv[have:have + n] = data
        if not n:
            break
        end = have + n
        start = 0
        while True:
            nl = buf.find(b"\n", start, end)
            if nl < 0:
                break
            no += 1
            yield mv[start:nl + 1], no
            start = nl + 1
        have = end - start
        if start:
            buf[:have] = mv[start:end]  # the partial line to the front
    if bytes(mv[:have]).strip():
        no += 1
        yield mv[:have], no
    mv.release()


def iter_openai_batch(files, *, dtype="f32", byte_order="little", keep_dtype=False, chunk=_CHUNK,
                      copy=True, _sizes=None):
    """Yields (custom_id, rows, failure) for each line of each file in turn: rows an ndarray
    (count x dims) for a request that succeeded, else None and failure a dict. The chunked
    form for files larger than memory; decode_openai_batch collects it. copy=False yields
    rows over storage reused by the next line (read them before asking for it)."""
    from . import _dtype, _numpy_wire, _order
    code, order = _dtype(dtype), _order(byte_order)
    reader = _embd.BatchLines(code, order, bool(keep_dtype))
    if isinstance(files, (str, bytes, os.PathLike)) or hasattr(files, "read"):
        files = [files]
    for src in files:
        own = not hasattr(src, "read")
        f = open(src, "rb") if own else src
        name = os.fspath(src) if own else getattr(src, "name", "<file>")
        try:
            for line, no in _lines(f, chunk):
                if len(line) <= 64 and not bytes(line).strip():  # an empty line between requests
                    continue
                try:
                    cid, status, failed, ecode, emsg, etype, rows, count, dims, row_bytes = reader.line(line)
                except _embd.Error as e:
                    e.args = ("%s line %d: %s" % (name, no, e.args[0] if e.args else ""),)
                    e.file, e.line = name, no
                    raise
                cid = cid.decode("utf-8", "surrogateescape")
                if _sizes is not None:
                    _sizes[-1] = len(line)
                if failed:
                    yield cid, None, {"custom_id": cid, "line": no, "file": name,
                                      "status_code": status or None,
                                      "code": ecode.decode("utf-8", "replace") or None,
                                      "message": emsg.decode("utf-8", "replace")}
                    continue
                if row_bytes:
                    nd = _numpy_wire(code, order)
                    arr = _np.frombuffer(rows, nd).reshape(count, row_bytes // nd.itemsize)
                else:
                    arr = _np.frombuffer(rows, _np.float32).reshape(count, dims)
                if copy:
                    arr = arr.copy()
                yield cid, arr, None
        finally:
            if own:
                f.close()


def decode_openai_batch(files, *, dtype="f32", byte_order="little", keep_dtype=False, arrow=False):
    """Decodes batch output files (a path, a binary file object, or a list of them: the
    output file, its error file, a retry batch's output) into a BatchResult. Rows come in
    file order, then data[].index order within each request. A request that fails in one
    file and succeeds in a later one is not failed; a custom_id that yields vectors twice
    raises embd.Error naming both places, as does a malformed line (its file, line and
    byte). The GIL is released while each line decodes.

        r = embd.decode_openai_batch(["batch_out.jsonl", "batch_err.jsonl"])
        r.vectors, r.custom_ids, r.index, r.failed

    arrow=True returns a pyarrow.RecordBatch instead (pyarrow needed; float32 rows):
    custom_id (string), index (int32), embedding (fixed_size_list<float>[dims]), the same
    rows in the same order, collected by libembd (embd_arrow_batch: each request's rows
    copied once, from the decoder into the column) and handed to pyarrow without a copy.
    The failed requests (the dicts of .failed) are in its schema metadata as JSON:
    json.loads(batch.schema.metadata[b"embd:failed"]).
    """
    builder = None
    if arrow:
        from ._arrow import _pyarrow
        _pyarrow()  # the install message before any work
        if keep_dtype:
            raise ValueError("decode_openai_batch: arrow=True gives float32 rows (keep_dtype=False)")
        builder = _embd.ArrowBatch()
    out, n = None, 0  # rows land in one array, sized from the files' bytes: one copy each
    ids, index, sizes = [], [], [0]
    srcs = [files] if isinstance(files, (str, bytes, os.PathLike)) or hasattr(files, "read") else list(files)
    try:
        total = sum(os.path.getsize(s) for s in srcs)
    except (TypeError, OSError):
        total = 0  # file objects: grow by doubling
    seen, failed = {}, {}
    where = 0
    for cid, rows, fail in iter_openai_batch(srcs, dtype=dtype, byte_order=byte_order,
                                             keep_dtype=keep_dtype, copy=False, _sizes=sizes):
        if rows is None:
            if cid not in seen:
                failed.setdefault(cid, fail)
            continue
        if cid in seen:
            e = _embd.Error("custom_id %r yields vectors twice (request %d and request %d of the "
                            "successful ones)" % (cid, seen[cid] + 1, where + 1))
            e.code, e.offset = "EMBD_ERR_OPENAI_INDEX", None
            raise e
        seen[cid] = where
        where += 1
        failed.pop(cid, None)  # a retry that succeeded
        k = rows.shape[0]
        if builder is not None:
            if not n and total:  # the columns sized once from the files' bytes, as below
                cap = int(total / max(sizes[-1] / max(k, 1), 1) * 1.1) + k
                builder.reserve(cap, cap * len(cid.encode("utf-8", "surrogateescape")), rows.shape[1])
            builder.add(cid.encode("utf-8", "surrogateescape"), rows, k, rows.shape[1])
            n += k
            continue
        if out is None:
            # the first request's line bytes a row, over every file's bytes (+10%): one
            # allocation for a file of one shape, no doubling copies or fresh-page faults
            cap = int(total / max(sizes[-1] / max(k, 1), 1) * 1.1) + k if total else 64
            out = _np.empty((max(k, cap), rows.shape[1]), rows.dtype)
        elif rows.shape[1] != out.shape[1]:
            e = _embd.Error("custom_id %r: %d dims, the rows before have %d (iter_openai_batch "
                            "yields requests of any dims)" % (cid, rows.shape[1], out.shape[1]))
            e.code, e.offset = "EMBD_ERR_OPENAI_DIMS", None
            raise e
        if n + k > out.shape[0]:
            grown = _np.empty((max(2 * out.shape[0], n + k), out.shape[1]), out.dtype)
            grown[:n] = out[:n]
            out = grown
        out[n:n + k] = rows
        n += k
        ids.extend([cid] * k)
        index.extend(range(k))
    if builder is not None:
        import json
        from ._arrow import _record_batch
        batch = _record_batch(builder.export())
        return batch.replace_schema_metadata(
            {b"embd:failed": json.dumps(list(failed.values()), ensure_ascii=False).encode()})
    if out is None:
        vectors = _np.zeros((0, 0), _np.float32)
    else:
        vectors = out[:n]  # a view: the capacity left over stays with it (~10% at most)
    return BatchResult(vectors, ids, _np.array(index, dtype=_np.int64), list(failed.values()))
