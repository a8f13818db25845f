/* embd._embd: OpenAI-compatible embedding responses (embd/openai.h). Each call decodes
 * into a fresh embd_openai_embeddings that the result's buffer object then owns: the rows
 * the C decoder wrote are the numpy array's memory (no copy), freed with the array. */
#include "common.h"

#include <stdlib.h>

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

PyMethodDef embdpy_openai_methods[] = {
    {"openai_decode", py_openai_decode, METH_VARARGS, "openai_decode(body, dtype, order, dims, count, keep)"},
    {"openai_decode_bytes", py_openai_decode_bytes, METH_VARARGS,
     "openai_decode_bytes(body, metadata, dtype, order, dims, count, keep)"},
    {"openai_decode_bytes_only", py_openai_decode_bytes_only, METH_VARARGS,
     "openai_decode_bytes_only(body, dims, dtype, order, count, keep)"},
    {NULL, NULL, 0, NULL}};
