/* embd._embd: OpenAI-compatible embedding responses (embd/openai.h). Each call decodes
 * into a fresh embd_openai_embeddings that the result's buffer object then owns: the rows
 * the C decoder wrote are the numpy array's memory (no copy), freed with the array. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

static void release_embeddings(void *ctx) {
  embd_openai_embeddings *e = ctx;
  embd_openai_free(e);
  free(e);
}

enum { K_JSON, K_BYTES, K_BYTES_ONLY };

/* (buffer, count, dims, row_bytes, dtype, model, model_truncated, prompt_tokens,
 * total_tokens): row_bytes 0 for float32 rows, else the kept dtype's bytes per row. */
static PyObject *decode(int kind, PyObject *body_obj, PyObject *meta_obj, Py_ssize_t dims_arg,
                        int dt, int ord, Py_ssize_t dims, Py_ssize_t count, int keep) {
  embd_openai_options o = {0};
  embd_dtype dtype;
  embd_byte_order order;
  if (embdpy_dtype_arg(dt, &dtype) < 0 || embdpy_order_arg(ord, &order) < 0) return NULL;
  if (dims < 0 || (uint64_t)dims > UINT32_MAX || count < 0 || dims_arg < 0)
    return PyErr_Format(PyExc_ValueError, "dims and count must be non-negative (dims below 2**32)");
  o.dtype = dtype;
  o.byte_order = order;
  o.flags = keep ? EMBD_OPENAI_KEEP_DTYPE : 0;
  o.expected_dims = (uint32_t)dims;
  o.expected_count = (size_t)count;
  embdpy_input body, meta = {0};
  if (embdpy_input_get(body_obj, &body, "body") < 0) return NULL;
  if (meta_obj && embdpy_input_get(meta_obj, &meta, "metadata") < 0) {
    embdpy_input_release(&body);
    return NULL;
  }
  embd_openai_embeddings *e = malloc(sizeof *e);
  if (!e) {
    embdpy_input_release(&body);
    embdpy_input_release(&meta);
    return PyErr_NoMemory();
  }
  embd_openai_init(e);
  embd_error err;
  embd_result r;
  EMBDPY_NOGIL_BEGIN(body.len + meta.len)
  if (kind == K_JSON)
    r = embd_openai_decode(e, body.data, body.len, &o, &err);
  else if (kind == K_BYTES)
    r = embd_openai_decode_bytes(e, body.data, body.len, meta.data, meta.len, &o, &err);
  else
    r = embd_openai_decode_bytes_only(e, body.data, body.len, (size_t)dims_arg, &o, &err);
  EMBDPY_NOGIL_END
  embdpy_input_release(&body);
  embdpy_input_release(&meta);
  if (r != EMBD_OK) {
    release_embeddings(e);
    return embdpy_raise(r, &err);
  }
  size_t count_out = e->count, dims_out = e->dims, row_bytes = e->row_bytes;
  void *rows = keep ? e->data : (void *)e->values;
  size_t len = keep ? count_out * row_bytes : count_out * dims_out * sizeof(float);
  PyObject *model = PyUnicode_DecodeUTF8(e->model, (Py_ssize_t)strlen(e->model), "replace");
  int truncated = e->model_truncated, has_usage = e->has_usage;
  unsigned long long pt = e->prompt_tokens, tt = e->total_tokens;
  int out_dtype = keep ? (int)e->dtype : (int)EMBD_DTYPE_F32;
  if (!model) {
    release_embeddings(e);
    return NULL;
  }
  PyObject *buf = embdpy_buffer_wrap(rows, len, release_embeddings, e);
  if (!buf) {
    Py_DECREF(model);
    return NULL;
  }
  PyObject *ptok = has_usage ? PyLong_FromUnsignedLongLong(pt) : Py_NewRef(Py_None);
  PyObject *ttok = has_usage ? PyLong_FromUnsignedLongLong(tt) : Py_NewRef(Py_None);
  if (!ptok || !ttok) {
    Py_DECREF(buf);
    Py_DECREF(model);
    Py_XDECREF(ptok);
    Py_XDECREF(ttok);
    return NULL;
  }
  return Py_BuildValue("(NnnniNONN)", buf, (Py_ssize_t)count_out, (Py_ssize_t)dims_out,
                       (Py_ssize_t)row_bytes, out_dtype, model, truncated ? Py_True : Py_False,
                       ptok, ttok);
}

/* openai_decode(body, dtype, order, dims, count, keep) */
static PyObject *py_openai_decode(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *body;
  int dt, ord, keep;
  Py_ssize_t dims, count;
  if (!PyArg_ParseTuple(args, "Oiinnp:openai_decode", &body, &dt, &ord, &dims, &count, &keep))
    return NULL;
  return decode(K_JSON, body, NULL, 0, dt, ord, dims, count, keep);
}

/* openai_decode_bytes(body, metadata, dtype, order, dims, count, keep) */
static PyObject *py_openai_decode_bytes(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *body, *meta;
  int dt, ord, keep;
  Py_ssize_t dims, count;
  if (!PyArg_ParseTuple(args, "OOiinnp:openai_decode_bytes", &body, &meta, &dt, &ord, &dims, &count,
                        &keep))
    return NULL;
  return decode(K_BYTES, body, meta, 0, dt, ord, dims, count, keep);
}

/* openai_decode_bytes_only(body, dims, dtype, order, count, keep) */
static PyObject *py_openai_decode_bytes_only(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *body;
  int dt, ord, keep;
  Py_ssize_t dims, count;
  if (!PyArg_ParseTuple(args, "Oniinp:openai_decode_bytes_only", &body, &dims, &dt, &ord, &count,
                        &keep))
    return NULL;
  if (dims <= 0) return PyErr_Format(PyExc_ValueError, "decode_vllm_bytes_only: dims must be positive");
  return decode(K_BYTES_ONLY, body, NULL, dims, dt, ord, 0, count, keep);
}


/* ---- batch output files (OpenAI Batch API, vLLM run_batch): one line at a time -------- */

/* BatchLines(dtype, order, keep): reads lines with one embd_openai_embeddings whose storage
 * is reused line after line (a steady stream touches no new memory). .line(buf) returns
 * (custom_id bytes, status_code, failed, error_code, error_message, error_type, rows, count,
 * dims, row_bytes): rows a read-only memoryview of the decoded rows, valid until the next
 * call (copy them out), or None for a failed request. One thread at a time. */
typedef struct {
  PyObject_HEAD
  embd_openai_embeddings e;
  embd_openai_options o;
  int busy;
  Py_ssize_t exports;
} batch_lines_obj;

static PyObject *batch_lines_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  int dt, ord, keep = 0;
  static char *kwlist[] = {"dtype", "order", "keep", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "ii|p:BatchLines", kwlist, &dt, &ord, &keep)) return NULL;
  embd_dtype dtype;
  embd_byte_order order;
  if (embdpy_dtype_arg(dt, &dtype) < 0 || embdpy_order_arg(ord, &order) < 0) return NULL;
  batch_lines_obj *self = (batch_lines_obj *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  embd_openai_init(&self->e);
  memset(&self->o, 0, sizeof self->o);
  self->o.dtype = dtype;
  self->o.byte_order = order;
  self->o.flags = keep ? EMBD_OPENAI_KEEP_DTYPE : 0;
  return (PyObject *)self;
}

static void batch_lines_dealloc(batch_lines_obj *self) {
  embd_openai_free(&self->e);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *batch_lines_line(batch_lines_obj *self, PyObject *arg) {
  if (embdpy_enter(&self->busy, "BatchLines") < 0) return NULL;
  embdpy_input in;
  if (embdpy_input_get(arg, &in, "line") < 0) {
    embdpy_leave(&self->busy);
    return NULL;
  }
  embd_openai_batch_info info;
  memset(&info, 0, sizeof info);
  embd_error err;
  embd_result r;
  EMBDPY_NOGIL_BEGIN(in.len)
  r = embd_openai_batch_line(&self->e, in.data, in.len, &self->o, &info, &err);
  EMBDPY_NOGIL_END
  embdpy_input_release(&in);
  PyObject *res = NULL;
  if (r != EMBD_OK) {
    embdpy_raise(r, &err);
    /* the custom_id, when the line got that far, for the caller's report */
    if (info.custom_id && info.custom_id_len) {
      PyObject *t, *v, *tb;
      PyErr_Fetch(&t, &v, &tb);
      PyErr_NormalizeException(&t, &v, &tb);
      PyObject *cid = PyBytes_FromStringAndSize(info.custom_id, (Py_ssize_t)info.custom_id_len);
      if (cid && v) PyObject_SetAttrString(v, "custom_id", cid);
      Py_XDECREF(cid);
      PyErr_Restore(t, v, tb);
    }
    embdpy_leave(&self->busy);
    return NULL;
  }
  int keep = (self->o.flags & EMBD_OPENAI_KEEP_DTYPE) != 0;
  PyObject *rows;
  size_t len = keep ? self->e.count * self->e.row_bytes : self->e.count * self->e.dims * sizeof(float);
  void *p = keep ? self->e.data : (void *)self->e.values;
  if (info.failed || !p) {
    rows = Py_NewRef(Py_None);
  } else {
    rows = PyMemoryView_FromMemory(p, (Py_ssize_t)len, PyBUF_READ);
  }
  if (rows)
    res = Py_BuildValue("(y#iiy#y#y#Nnnn)", info.custom_id, (Py_ssize_t)info.custom_id_len,
                        info.status_code, info.failed, info.error_code, (Py_ssize_t)info.error_code_len,
                        info.error_message, (Py_ssize_t)info.error_message_len, info.error_type,
                        (Py_ssize_t)info.error_type_len, rows, (Py_ssize_t)self->e.count,
                        (Py_ssize_t)self->e.dims, (Py_ssize_t)self->e.row_bytes);
  embdpy_leave(&self->busy);
  return res;
}

static PyMethodDef batch_lines_methods[] = {
    {"line", (PyCFunction)batch_lines_line, METH_O, "line(buf) -> tuple (see the type's doc)"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject batch_lines_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "embd._embd.BatchLines",
    .tp_basicsize = sizeof(batch_lines_obj),
    .tp_dealloc = (destructor)batch_lines_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Batch output lines, one at a time, in reused storage (embd_openai_batch_line).",
    .tp_methods = batch_lines_methods,
    .tp_new = batch_lines_new,
};

static PyObject *py_is_batch_line(PyObject *self, PyObject *arg) {
  (void)self;
  embdpy_input in;
  if (embdpy_input_get(arg, &in, "buf") < 0) return NULL;
  int r = embd_openai_is_batch_line(in.data, in.len);
  embdpy_input_release(&in);
  return PyBool_FromLong(r);
}

int embdpy_openai_init(PyObject *m) {
  if (PyType_Ready(&batch_lines_type) < 0) return -1;
  Py_INCREF(&batch_lines_type);
  if (PyModule_AddObject(m, "BatchLines", (PyObject *)&batch_lines_type) < 0) {
    Py_DECREF(&batch_lines_type);
    return -1;
  }
  return 0;
}

PyMethodDef embdpy_openai_methods[] = {
    {"openai_decode", py_openai_decode, METH_VARARGS, "openai_decode(body, dtype, order, dims, count, keep)"},
    {"openai_decode_bytes", py_openai_decode_bytes, METH_VARARGS,
     "openai_decode_bytes(body, metadata, dtype, order, dims, count, keep)"},
    {"openai_decode_bytes_only", py_openai_decode_bytes_only, METH_VARARGS,
     "openai_decode_bytes_only(body, dims, dtype, order, count, keep)"},
    {"is_batch_line", py_is_batch_line, METH_O, "is_batch_line(buf) -> bool (a sniff)"},
    {NULL, NULL, 0, NULL}};
