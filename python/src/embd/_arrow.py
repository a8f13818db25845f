"""Arrow output: decoded rows handed to pyarrow (and through it to Polars, DuckDB, LanceDB,
Spark, Ray, Parquet) by the Arrow C Data Interface, without a copy. libembd exports the
rows as an ArrowSchema / ArrowArray pair (embd/arrow.h) whose value buffer is the
decoder's own row storage; pyarrow imports the pair from PyCapsules
(Array._import_from_c_capsule) and frees that storage when the array is collected.

pyarrow is optional: it is imported only here, when Arrow output is asked for."""

_INSTALL = ("embd: Arrow output needs pyarrow (not a dependency of embd): pip install pyarrow "
            "(tested with pyarrow 25.0.1, see python/requirements-engines.lock; pyarrow 26 "
            "needs NumPy 2)")


def _pyarrow():
    try:
        import pyarrow
    except ImportError as e:
        raise ImportError(_INSTALL + " [%s]" % e) from None
    return pyarrow


def _array(capsules):
    return _pyarrow().Array._import_from_c_capsule(*capsules)


def _record_batch(capsules):
    return _pyarrow().RecordBatch._import_from_c_capsule(*capsules)


def decode_openai_arrow(body, *, dtype="f32", byte_order="little", dims=None, count=None):
    """decode_openai's vectors as a pyarrow.FixedSizeListArray (fixed_size_list<float>[dims],
    one row per input, placed by data[].index): the same decoder and options as
    decode_openai (dtype and byte_order of the request; dims and count checked when
    given), float32 rows only. The array's value buffer is the memory the decoder wrote
    the rows into (no copy); DuckDB's FLOAT[d], Polars' Array(Float32, d), LanceDB's and
    Parquet's vector columns take it as it is.

        >>> import embd
        >>> embd.decode_openai_arrow('{"data":[{"index":0,"embedding":[1.5,2]}]}').type
        FixedSizeListType(fixed_size_list<item: float>[2])
    """
    _pyarrow()  # before decoding: the install message rather than a decoded body lost
    from . import _embd, _openai_args
    code, order, d, c = _openai_args(dtype, byte_order, dims, count)
    return _array(_embd.openai_decode_arrow(body, code, order, d, c))


def decode_openai_batch_lines_arrow(lines, *, dtype="f32", byte_order="little"):
    """Batch output lines that an engine hands over as an Arrow string column (Spark's
    spark.read.text `value`, Ray Data's read_text `text`: a pyarrow StringArray,
    LargeStringArray or ChunkedArray of them) -> (RecordBatch, failed). The lines are read in
    place from the column's own data buffer (no Python str per line), each decoded by
    libembd's strict batch-line reader into one reused storage and its rows collected by
    embd_arrow_batch; the RecordBatch (custom_id string, index int32, embedding
    fixed_size_list<float>[dims]) is handed over without a copy. `failed`: one dict per
    failed request (custom_id, status_code, code, message, pos: the line's position in
    `lines`, 0-based). Empty lines are skipped; a malformed line raises embd.Error naming
    its position. Retries and duplicates across lines are the caller's to judge (the
    engines' examples do it over the whole job)."""
    pa = _pyarrow()
    import numpy as np
    from . import _dtype, _embd, _order
    reader = _embd.BatchLines(_dtype(dtype), _order(byte_order), False)
    builder = _embd.ArrowBatch()
    failed = []
    chunks = lines.chunks if isinstance(lines, pa.ChunkedArray) else [lines]
    pos = 0
    for chunk in chunks:
        if pa.types.is_string(chunk.type) or pa.types.is_binary(chunk.type):
            odt = np.int32
        elif pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type):
            odt = np.int64
        else:
            raise TypeError("decode_openai_batch_lines_arrow: a string column, not %s" % chunk.type)
        n = len(chunk)
        bufs = chunk.buffers()
        offs = np.frombuffer(bufs[1], odt, n + 1, chunk.offset * np.dtype(odt).itemsize) if n else None
        data = memoryview(bufs[2]) if bufs[2] is not None else memoryview(b"")
        valid = chunk.is_valid().to_numpy(zero_copy_only=False) if chunk.null_count else None
        for i in range(n):
            p = pos + i
            if valid is not None and not valid[i]:
                continue
            a, b = int(offs[i]), int(offs[i + 1])
            if b - a <= 64 and not bytes(data[a:b]).strip():
                continue
            try:
                cid, status, fail, ecode, emsg, etype, rows, count, dims, row_bytes = reader.line(data[a:b])
            except _embd.Error as e:
                e.args = ("line %d: %s" % (p, e.args[0] if e.args else ""),)
                e.pos = p
                raise
            if fail:
                failed.append({"custom_id": cid.decode("utf-8", "surrogateescape"),
                               "status_code": status or None,
                               "code": ecode.decode("utf-8", "replace") or None,
                               "message": emsg.decode("utf-8", "replace"), "pos": p})
            elif count:
                builder.add(cid, rows, count, dims)
        pos += n
    return _record_batch(builder.export()), failed
