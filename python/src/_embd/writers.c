/* embd._embd: the database writers (embd/pgcopy.h, embd/vecfile.h): PostgreSQL binary
 * COPY rows, Elasticsearch/OpenSearch _bulk lines, FAISS .fvecs/.bvecs. Each call sizes
 * its output exactly first, then writes into a new bytes object without the GIL. */
#include "common.h"

#include <string.h>

/* A new bytes object of exactly `need` bytes, filled by fn (its *written must be need). */
static PyObject *new_bytes(size_t need, char **data) {
  if (need > (size_t)PY_SSIZE_T_MAX) return PyErr_NoMemory();
  PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)need);
  if (b) *data = PyBytes_AS_STRING(b);
  return b;
}

static int pg_init(embd_pgcopy *w, int type, int with_id, long long first_id, Py_ssize_t typmod,
                   int finite, unsigned long long row0) {
  embd_pgcopy_options o;
  memset(&o, 0, sizeof o);
  if (type < 0 || type >= (int)EMBD_PG_TYPE_COUNT_) {
    PyErr_Format(PyExc_ValueError, "pg type code %d is not one", type);
    return -1;
  }
  if (typmod < 0 || (uint64_t)typmod > UINT32_MAX) {
    PyErr_Format(PyExc_ValueError, "typmod must be in 0..2**32-1");
    return -1;
  }
  o.type = (embd_pg_type)type;
  o.columns = with_id ? EMBD_PGCOPY_ID : 0;
  o.flags = finite ? EMBD_PGCOPY_FINITE : 0;
  o.typmod = (uint32_t)typmod;
  o.first_id = first_id;
  embd_result r = embd_pgcopy_init(w, &o);
  if (r != EMBD_OK) {
    embdpy_raise(r, NULL);
    return -1;
  }
  w->rows = row0; /* a stream written in several calls numbers its rows on */
  return 0;
}

/* The rows of one call, written by a row writer into out[0 .. cap) (*n: bytes written). */
typedef embd_result (*rows_fn)(embd_pgcopy *w, const void *ctx, char *out, size_t cap, size_t *n,
                               embd_error *err);

/* [header] rows [trailer] as a new bytes object of exactly the size given (`rows` bytes
 * for the rows, sized by the caller with the library's size functions); the rows are
 * written without the GIL when large. NULL with the error set. */
static PyObject *pg_stream(embd_pgcopy *w, size_t rows, int header, int trailer, rows_fn fn,
                           const void *ctx) {
  size_t need = (header ? EMBD_PGCOPY_HEADER_SIZE : 0) + rows + (trailer ? EMBD_PGCOPY_TRAILER_SIZE : 0);
  char *out = NULL;
  PyObject *res = new_bytes(need, &out);
  if (!res) return NULL;
  size_t at = 0, n = 0;
  embd_error err;
  memset(&err, 0, sizeof err);
  embd_result r = EMBD_OK;
  EMBDPY_NOGIL_BEGIN(need)
  if (header) {
    r = embd_pgcopy_header(w, out, need, &n);
    at += n;
  }
  if (r == EMBD_OK && fn) {
    r = fn(w, ctx, out + at, need - at, &n, &err);
    at += n;
  }
  if (r == EMBD_OK && trailer) {
    r = embd_pgcopy_trailer(w, out + at, need - at, &n);
    at += n;
  }
  EMBDPY_NOGIL_END
  if (r != EMBD_OK) {
    Py_DECREF(res);
    return embdpy_raise(r, &err);
  }
  if (at != need) {
    Py_DECREF(res);
    return PyErr_Format(PyExc_SystemError, "pgcopy: wrote %zu bytes of the %zu sized", at, need);
  }
  return res;
}

/* The row writers' arguments. */
typedef struct {
  const void *v;
  size_t count, dims;
  const embd_pgcopy_keys *keys;
  const uint32_t *indices; /* sparse */
} rows_args;

static embd_result write_f32(embd_pgcopy *w, const void *c, char *out, size_t cap, size_t *n, embd_error *err) {
  const rows_args *a = c;
  return embd_pgcopy_write_f32(w, a->v, a->count, a->dims, a->keys, out, cap, n, err);
}

static embd_result write_bits(embd_pgcopy *w, const void *c, char *out, size_t cap, size_t *n, embd_error *err) {
  const rows_args *a = c;
  return embd_pgcopy_write_bits(w, a->v, a->count, a->dims, a->keys, out, cap, n, err);
}

static embd_result write_sparse(embd_pgcopy *w, const void *c, char *out, size_t cap, size_t *n,
                                embd_error *err) {
  const rows_args *a = c;
  return embd_pgcopy_write_sparse(w, a->dims, a->indices, a->v, a->count, NULL, out, cap, n, err);
}

static embd_result write_null(embd_pgcopy *w, const void *c, char *out, size_t cap, size_t *n, embd_error *err) {
  (void)c;
  return embd_pgcopy_write_null(w, NULL, out, cap, n, err);
}

enum { K_F32, K_BITS };

/* pgcopy(values, count, dims, kind, type, with_id, ids, first_id, typmod, finite, row0,
 *        header, trailer) -> bytes
 * values: count x dims host float32 (kind K_F32) or count x ceil(dims/8) packed bytes
 * (K_BITS); ids: None or count host int64. */
static PyObject *py_pgcopy(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *vobj, *idobj;
  Py_ssize_t count, dims, typmod;
  int kind, type, with_id, finite, header, trailer;
  long long first_id;
  unsigned long long row0;
  if (!PyArg_ParseTuple(args, "OnniipOLnpKpp:pgcopy", &vobj, &count, &dims, &kind, &type, &with_id,
                        &idobj, &first_id, &typmod, &finite, &row0, &header, &trailer))
    return NULL;
  if (count < 0 || dims < 0) return PyErr_Format(PyExc_ValueError, "count and dims must be >= 0");
  embd_pgcopy w;
  if (pg_init(&w, type, with_id, first_id, typmod, finite, row0) < 0) return NULL;
  embdpy_input v, ids = {0};
  if (embdpy_input_get(vobj, &v, "values") < 0) return NULL;
  size_t row_bytes = kind == K_BITS ? ((size_t)dims + 7) / 8 : (size_t)dims * sizeof(float);
  if (v.len != (size_t)count * row_bytes) {
    embdpy_input_release(&v);
    return PyErr_Format(PyExc_ValueError, "values: %zu bytes, not %zd rows of %zu", v.len, count, row_bytes);
  }
  if (idobj != Py_None) {
    if (embdpy_input_get(idobj, &ids, "ids") < 0) {
      embdpy_input_release(&v);
      return NULL;
    }
    if (ids.len != (size_t)count * sizeof(int64_t)) {
      embdpy_input_release(&v);
      embdpy_input_release(&ids);
      return PyErr_Format(PyExc_ValueError, "ids: %zu ids for %zd rows", ids.len / sizeof(int64_t), count);
    }
  }
  embd_pgcopy_keys keys;
  memset(&keys, 0, sizeof keys);
  keys.ids = idobj != Py_None ? (const int64_t *)ids.data : NULL;
  size_t rows = 0;
  embd_result r = EMBD_OK; /* no rows (a header or trailer alone): nothing to size */
  if (count)
    r = kind == K_BITS ? embd_pgcopy_row_size(&w, (size_t)dims, 0, &rows)
                       : embd_pgcopy_rows_size(&w, (const float *)v.data, (size_t)count, (size_t)dims,
                                               &rows);
  if (r == EMBD_OK && kind == K_BITS) rows *= (size_t)count;
  PyObject *res = NULL;
  if (r != EMBD_OK) {
    embdpy_raise_at(r, w.rows, "row %llu: %zd dims are not a %s column's (%s)", (unsigned long long)w.rows,
                    dims, embd_pg_type_name((embd_pg_type)type), embd_strerror(r));
    goto done;
  }
  rows_args a = {v.data, (size_t)count, (size_t)dims, &keys, NULL};
  res = pg_stream(&w, rows, header, trailer, count ? (kind == K_BITS ? write_bits : write_f32) : NULL, &a);
done:
  embdpy_input_release(&v);
  embdpy_input_release(&ids);
  return res;
}

/* pgcopy_sparse(dims, indices(uint32), values(float32), with_id, id, typmod, row0,
 *               header, trailer) -> bytes: one sparsevec row. */
static PyObject *py_pgcopy_sparse(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *iobj, *vobj;
  Py_ssize_t dims, typmod;
  int with_id, header, trailer;
  long long id;
  unsigned long long row0;
  if (!PyArg_ParseTuple(args, "nOOpLnKpp:pgcopy_sparse", &dims, &iobj, &vobj, &with_id, &id, &typmod,
                        &row0, &header, &trailer))
    return NULL;
  if (dims < 0) return PyErr_Format(PyExc_ValueError, "dims must be >= 0");
  embd_pgcopy w;
  if (pg_init(&w, EMBD_PG_SPARSEVEC, with_id, id - (long long)row0, typmod, 0, row0) < 0) return NULL;
  embdpy_input ix, vx;
  if (embdpy_input_get(iobj, &ix, "indices") < 0) return NULL;
  if (embdpy_input_get(vobj, &vx, "values") < 0) {
    embdpy_input_release(&ix);
    return NULL;
  }
  PyObject *res = NULL;
  size_t nnz = ix.len / sizeof(uint32_t);
  if (ix.len % sizeof(uint32_t) || vx.len != nnz * sizeof(float)) {
    PyErr_Format(PyExc_ValueError, "indices and values must be as many uint32 and float32");
    goto done;
  }
  size_t row;
  embd_result r = embd_pgcopy_row_size(&w, (size_t)dims, nnz, &row);
  if (r != EMBD_OK) {
    embdpy_raise_at(r, row0, "row %llu: %zd dims with %zu values are not a sparsevec (%s)",
                    (unsigned long long)row0, dims, nnz, embd_strerror(r));
    goto done;
  }
  rows_args a = {vx.data, nnz, (size_t)dims, NULL, (const uint32_t *)ix.data};
  res = pg_stream(&w, row, header, trailer, write_sparse, &a);
done:
  embdpy_input_release(&ix);
  embdpy_input_release(&vx);
  return res;
}

/* pgcopy_null(type, with_id, id, row0, header, trailer) -> bytes: one NULL row. */
static PyObject *py_pgcopy_null(PyObject *self, PyObject *args) {
  (void)self;
  int type, with_id, header, trailer;
  long long id;
  unsigned long long row0;
  if (!PyArg_ParseTuple(args, "ipLKpp:pgcopy_null", &type, &with_id, &id, &row0, &header, &trailer))
    return NULL;
  embd_pgcopy w;
  if (pg_init(&w, type, with_id, id - (long long)row0, 0, 0, row0) < 0) return NULL;
  size_t row;
  embd_result r = embd_pgcopy_null_row_size(&w, &row);
  if (r != EMBD_OK) return embdpy_raise(r, NULL);
  return pg_stream(&w, row, header, trailer, write_null, NULL);
}

/* es_bulk(values, count, dims, index, field, encoding, ids) -> bytes */
static PyObject *py_es_bulk(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *vobj, *idobj;
  Py_ssize_t count, dims, ilen, flen;
  const char *index, *field;
  int enc;
  if (!PyArg_ParseTuple(args, "Onns#s#iO:es_bulk", &vobj, &count, &dims, &index, &ilen, &field, &flen, &enc,
                        &idobj))
    return NULL;
  if (count < 0 || dims < 0) return PyErr_Format(PyExc_ValueError, "count and dims must be >= 0");
  if (enc < 0 || enc >= (int)EMBD_BULK_ENCODING_COUNT_) return PyErr_Format(PyExc_ValueError, "encoding %d", enc);
  embd_bulk_options o;
  memset(&o, 0, sizeof o);
  o.index = index;
  o.index_len = (size_t)ilen;
  o.field = field;
  o.field_len = (size_t)flen;
  o.encoding = (embd_bulk_encoding)enc;
  embdpy_input v, ids = {0};
  if (embdpy_input_get(vobj, &v, "values") < 0) return NULL;
  PyObject *res = NULL;
  if (v.len != (size_t)count * (size_t)dims * sizeof(float)) {
    PyErr_Format(PyExc_ValueError, "values: %zu bytes, not %zd x %zd float32", v.len, count, dims);
    goto done;
  }
  if (idobj != Py_None) {
    if (embdpy_input_get(idobj, &ids, "ids") < 0) goto done;
    if (ids.len != (size_t)count * sizeof(int64_t)) {
      PyErr_Format(PyExc_ValueError, "ids: %zu ids for %zd rows", ids.len / sizeof(int64_t), count);
      goto done;
    }
  }
  const int64_t *idp = idobj != Py_None ? (const int64_t *)ids.data : NULL;
  size_t need;
  embd_result r = embd_bulk_size(&o, (size_t)count, (size_t)dims, idp, &need);
  if (r != EMBD_OK) {
    embdpy_raise(r, NULL);
    goto done;
  }
  char *out = NULL;
  res = new_bytes(need, &out);
  if (!res) goto done;
  size_t n = 0;
  embd_error err;
  memset(&err, 0, sizeof err);
  EMBDPY_NOGIL_BEGIN(need)
  r = embd_bulk_write_f32(&o, (const float *)v.data, (size_t)count, (size_t)dims, idp, out, need, &n, &err);
  EMBDPY_NOGIL_END
  if (r != EMBD_OK) {
    Py_CLEAR(res);
    embdpy_raise(r, &err);
  }
done:
  embdpy_input_release(&v);
  embdpy_input_release(&ids);
  return res;
}

/* vecs(values, count, dims, bytes_per_value) -> bytes: .fvecs (4) or .bvecs (1) records */
static PyObject *py_vecs(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *vobj;
  Py_ssize_t count, dims;
  int width;
  if (!PyArg_ParseTuple(args, "Onni:vecs", &vobj, &count, &dims, &width)) return NULL;
  if (count < 0 || dims < 0 || (width != 1 && width != 4))
    return PyErr_Format(PyExc_ValueError, "count, dims >= 0 and width 1 or 4");
  embdpy_input v;
  if (embdpy_input_get(vobj, &v, "values") < 0) return NULL;
  PyObject *res = NULL;
  size_t need;
  embd_result r;
  if (v.len != (size_t)count * (size_t)dims * (size_t)width) {
    PyErr_Format(PyExc_ValueError, "values: %zu bytes, not %zd x %zd", v.len, count, dims);
    goto done;
  }
  r = width == 4 ? embd_fvecs_size((size_t)count, (size_t)dims, &need)
                 : embd_bvecs_size((size_t)count, (size_t)dims, &need);
  if (r != EMBD_OK) {
    embdpy_raise_at(r, 0, "%zd dims do not fit a vecs record (%s)", dims, embd_strerror(r));
    goto done;
  }
  char *out = NULL;
  res = new_bytes(need, &out);
  if (!res) goto done;
  size_t n = 0;
  EMBDPY_NOGIL_BEGIN(need)
  r = width == 4 ? embd_fvecs_write((const float *)v.data, (size_t)count, (size_t)dims, out, need, &n)
                 : embd_bvecs_write((const uint8_t *)v.data, (size_t)count, (size_t)dims, out, need, &n);
  EMBDPY_NOGIL_END
  if (r != EMBD_OK) {
    Py_CLEAR(res);
    embdpy_raise(r, NULL);
  }
done:
  embdpy_input_release(&v);
  return res;
}

PyMethodDef embdpy_writer_methods[] = {
    {"pgcopy", py_pgcopy, METH_VARARGS,
     "pgcopy(values, count, dims, kind, type, with_id, ids, first_id, typmod, finite, row0, header, trailer)"},
    {"pgcopy_sparse", py_pgcopy_sparse, METH_VARARGS,
     "pgcopy_sparse(dims, indices, values, with_id, id, typmod, row0, header, trailer)"},
    {"pgcopy_null", py_pgcopy_null, METH_VARARGS, "pgcopy_null(type, with_id, id, row0, header, trailer)"},
    {"es_bulk", py_es_bulk, METH_VARARGS, "es_bulk(values, count, dims, index, field, encoding, ids)"},
    {"vecs", py_vecs, METH_VARARGS, "vecs(values, count, dims, width)"},
    {NULL, NULL, 0, NULL}};
