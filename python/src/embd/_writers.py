"""Vectors into databases: PostgreSQL binary COPY (pgvector's vector, halfvec, sparsevec,
bit; float4[]; bytea), Elasticsearch/OpenSearch _bulk lines, FAISS .fvecs/.bvecs. Every
check the server makes is made here first (embd.Error naming the row and element): a
refused row never reaches the server."""
import numpy as _np

from . import _embd

PG_TYPES = {"vector": 0, "halfvec": 1, "sparsevec": 2, "bit": 3, "float4[]": 4, "real[]": 4,
            "bytea": 5}
_K_F32, _K_BITS = 0, 1
_BULK = {("base64", "big"): 0, ("base64", "little"): 1, ("int8", None): 2, ("bit", None): 3}


def _pg_type(pg_type):
    if not isinstance(pg_type, str):
        raise TypeError("pg_type: expected a str")
    try:
        return PG_TYPES[pg_type]
    except KeyError:
        raise ValueError("pg_type %r: one of %s" % (pg_type, ", ".join(PG_TYPES))) from None


def _rows(array, code, dims=None):
    """(contiguous values, count, dims, kind): float32 rows, or for bit a uint8 array of
    packed rows (ceil(dims/8) bytes each, dims given or 8 x the row bytes)."""
    a = _np.asarray(array)
    if a.ndim == 1:
        a = a.reshape(1, -1)
    if a.ndim != 2:
        raise ValueError("expected a 2-D array (rows x dims) or one 1-D vector, got %d-D" % a.ndim)
    if code == 3 and a.dtype == _np.uint8:
        d = a.shape[1] * 8 if dims is None else int(dims)
        if (d + 7) // 8 != a.shape[1]:
            raise ValueError("bit: %d dims need %d bytes a row, the rows have %d" % (d, (d + 7) // 8, a.shape[1]))
        return _np.ascontiguousarray(a), a.shape[0], d, _K_BITS
    if a.dtype.kind not in "fiub":
        raise TypeError("expected numbers, got dtype %s" % a.dtype)
    a = _np.ascontiguousarray(a, dtype=_np.float32)
    return a, a.shape[0], a.shape[1], _K_F32


def _ids(ids, count):
    if ids is None:
        return None
    i = _np.ascontiguousarray(ids, dtype=_np.int64)
    if i.shape != (count,):
        raise ValueError("ids: %d ids for %d rows" % (i.size, count))
    return i


def to_pgcopy(array, pg_type="vector", ids=None, *, first_id=None, typmod=None, finite=False):
    """A whole PostgreSQL binary COPY stream (header, rows, trailer) of the rows of `array`
    (2-D, rows x dims; floats, or for pg_type "bit" packed uint8 rows as numpy.packbits
    makes them) as bytes, for

        COPY items (embedding) FROM STDIN (FORMAT binary)          -- ids=None
        COPY items (id, embedding) FROM STDIN (FORMAT binary)      -- ids or first_id given

    pg_type: "vector", "halfvec", "sparsevec" (zeros dropped), "bit" (bit j = value > 0 for
    floats), "float4[]" (or "real[]"), "bytea" (the little-endian float32 bytes). ids: one
    int per row for a leading bigint column; first_id: number the rows from it instead.
    typmod: the column's declared dims, checked on every row. finite: refuse NaN and
    infinities for float4[] and bytea too (pgvector's types always refuse them).
    The rows are all checked before the stream is returned: on any refusal embd.Error
    (EMBD_ERR_VECTOR_VALUE / _DIMS / EMBD_ERR_SPARSE_INDEX, naming row and element) and no
    bytes at all."""
    code = _pg_type(pg_type)
    v, count, dims, kind = _rows(array, code)
    i = _ids(ids, count)
    with_id = i is not None or first_id is not None
    return _embd.pgcopy(v, count, dims, kind, code, with_id, i, int(first_id or 0), int(typmod or 0),
                        bool(finite), 0, True, True)


class PgCopyWriter:
    """A PostgreSQL binary COPY stream written piece by piece to `file` (anything with a
    .write(bytes) method: an open file, sys.stdout.buffer, psycopg 3's Copy object):

        with cur.copy("COPY items (id, embedding) FROM STDIN (FORMAT binary)") as copy:
            with embd.PgCopyWriter(copy, pg_type="vector", dims=1536, ids=True) as w:
                for body in responses:
                    w.write(embd.decode_openai(body))

    The header goes out with the first write, the trailer at close() (or the end of the
    with block, unless it ends in an exception: then the stream is left without it and
    the COPY should be aborted). Each write's rows are checked whole before any of its
    bytes go out: a refused row raises embd.Error and nothing of that call is written.
    ids=True numbers the rows from first_id (default 0) in a leading bigint column;
    write(rows, ids=[...]) gives them explicitly. dims, when given, is the column's
    declared dims (checked on every row). One thread at a time."""

    def __init__(self, file, pg_type="vector", dims=None, *, ids=False, first_id=0, finite=False):
        if not hasattr(file, "write"):
            raise TypeError("file: expected an object with a write(bytes) method")
        self._file = file
        self._code = _pg_type(pg_type)
        self._dims = int(dims or 0)
        self._with_id = bool(ids)
        self._next_id = int(first_id)
        self._finite = bool(finite)
        self._rows = 0
        self._started = False
        self._closed = False

    @property
    def rows(self):
        """Rows written so far."""
        return self._rows

    def _emit(self, data):
        self._file.write(data)

    def _row0(self):
        header = not self._started
        self._started = True
        return header

    def write(self, rows, ids=None):
        """Writes the rows of a 2-D array (or one 1-D vector). Returns the rows written."""
        if self._closed:
            raise ValueError("PgCopyWriter is closed")
        v, count, dims, kind = _rows(rows, self._code, self._dims or None)
        i = _ids(ids, count)
        if i is not None and not self._with_id:
            raise ValueError("ids given to a writer made without ids=True")
        data = _embd.pgcopy(v, count, dims, kind, self._code, self._with_id, i,
                            self._next_id - self._rows, self._dims, self._finite, self._rows,
                            not self._started, False)
        self._started = True
        self._emit(data)
        self._rows += count
        if i is None:
            self._next_id += count
        return count

    def write_sparse(self, dims, indices, values, id=None):
        """One sparsevec row from its stored elements (0-based ascending indices, non-zero
        values)."""
        if self._code != 2:
            raise ValueError("write_sparse needs pg_type 'sparsevec'")
        ix = _np.ascontiguousarray(indices, dtype=_np.uint32)
        vx = _np.ascontiguousarray(values, dtype=_np.float32)
        rid = self._next_id if id is None else int(id)
        data = _embd.pgcopy_sparse(int(dims), ix, vx, self._with_id, rid, self._dims, self._rows,
                                   not self._started, False)
        self._started = True
        self._emit(data)
        self._rows += 1
        if id is None:
            self._next_id += 1

    def write_null(self, id=None):
        """One row whose vector is NULL."""
        rid = self._next_id if id is None else int(id)
        data = _embd.pgcopy_null(self._code, self._with_id, rid, self._rows, not self._started, False)
        self._started = True
        self._emit(data)
        self._rows += 1
        if id is None:
            self._next_id += 1

    def close(self):
        """Writes the trailer (and the header, for a stream of no rows)."""
        if self._closed:
            return
        self._emit(_embd.pgcopy(b"", 0, 0, _K_F32, self._code, self._with_id, None, 0, 0, False,
                                self._rows, not self._started, True))
        self._started = True
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        return False


def to_es_bulk(array, index, field, *, ids=None, encoding="base64", byte_order="big"):
    """Elasticsearch / OpenSearch _bulk NDJSON: an index action line and a document line
    per row, the vector as base64 of its float32 bytes in `byte_order` (Elasticsearch 9.3+
    dense_vector: "big"; OpenSearch k-NN: "little"), or encoding "int8" / "bit" as hex.
    NaN and infinities are refused (embd.Error naming row and element)."""
    try:
        enc = _BULK[(encoding, byte_order if encoding == "base64" else None)]
    except KeyError:
        raise ValueError("encoding %r / byte_order %r: base64 (big or little), int8 or bit" % (
            encoding, byte_order)) from None
    v, count, dims, _ = _rows(array, 0)
    return _embd.es_bulk(v, count, dims, index.encode(), field.encode(), enc, _ids(ids, count))


def to_fvecs(array):
    """FAISS .fvecs records (int32 d, then d float32, little-endian) of the rows."""
    v, count, dims, _ = _rows(array, 0)
    return _embd.vecs(v, count, dims, 4)


def to_bvecs(array):
    """FAISS .bvecs records (int32 d, then d uint8) of the rows of a uint8 array."""
    a = _np.asarray(array)
    if a.ndim == 1:
        a = a.reshape(1, -1)
    if a.ndim != 2 or a.dtype != _np.uint8:
        raise TypeError("to_bvecs: expected a 2-D uint8 array")
    a = _np.ascontiguousarray(a)
    return _embd.vecs(a, a.shape[0], a.shape[1], 1)
