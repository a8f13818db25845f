/* embd._embd: the kernels (embd/crc32.h, base64.h, convert.h, bswap.h, cpu.h). Outputs go
 * to a new object or, with out=, into the caller's writable buffer (the count written is
 * returned then). */
#include "common.h"

#include <string.h>

/* crc32(data, crc) -> int */
static PyObject *py_crc32(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *data;
  unsigned long crc = 0;
  if (!PyArg_ParseTuple(args, "O|k:crc32", &data, &crc)) return NULL;
  if (crc > 0xffffffffUL) return PyErr_Format(PyExc_ValueError, "crc32: crc %lu is not a 32-bit value", crc);
  embdpy_input in;
  if (embdpy_input_get(data, &in, "crc32: data") < 0) return NULL;
  uint32_t r;
  EMBDPY_NOGIL_BEGIN(in.len)
  r = embd_crc32((uint32_t)crc, in.data, in.len);
  EMBDPY_NOGIL_END
  embdpy_input_release(&in);
  return PyLong_FromUnsignedLong(r);
}

/* Where a result goes: a new bytes object of exactly `need` bytes, or the caller's out=. */
typedef struct {
  PyObject *obj;  /* the new bytes (NULL with out=) */
  Py_buffer view; /* out= */
  int has_view;
  char *data;
  size_t cap;
} sink;

static int sink_open(sink *s, PyObject *out, size_t need, const char *what) {
  memset(s, 0, sizeof *s);
  if (out && out != Py_None) {
    if (embdpy_output_get(out, &s->view, what) < 0) return -1;
    s->has_view = 1;
    s->data = s->view.buf;
    s->cap = (size_t)s->view.len;
    return 0;
  }
  if (need > (size_t)PY_SSIZE_T_MAX) {
    PyErr_NoMemory();
    return -1;
  }
  s->obj = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)need);
  if (!s->obj) return -1;
  s->data = PyBytes_AS_STRING(s->obj);
  s->cap = need;
  return 0;
}

/* The result: the bytes (cut to n when shorter) or, with out=, the count written. */
static PyObject *sink_close(sink *s, size_t n) {
  if (s->has_view) {
    PyBuffer_Release(&s->view);
    return PyLong_FromSize_t(n);
  }
  if (n != s->cap && _PyBytes_Resize(&s->obj, (Py_ssize_t)n) < 0) return NULL;
  return s->obj;
}

static void sink_drop(sink *s) {
  if (s->has_view) PyBuffer_Release(&s->view);
  Py_XDECREF(s->obj);
}

/* b64decode(s, flags, out=None) -> bytes | int */
static PyObject *py_b64decode(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *src, *out = Py_None;
  unsigned flags = 0;
  if (!PyArg_ParseTuple(args, "OI|O:b64decode", &src, &flags, &out)) return NULL;
  embdpy_input in;
  if (embdpy_input_get(src, &in, "b64decode: s") < 0) return NULL;
  sink s;
  if (sink_open(&s, out, embd_base64_decoded_max(in.len), "b64decode: out") < 0) {
    embdpy_input_release(&in);
    return NULL;
  }
  size_t n = 0;
  embd_error err;
  embd_result r;
  EMBDPY_NOGIL_BEGIN(in.len)
  r = embd_base64_decode(in.data, in.len, flags, s.data, s.cap, &n, &err);
  EMBDPY_NOGIL_END
  embdpy_input_release(&in);
  if (r != EMBD_OK) {
    sink_drop(&s);
    if (r == EMBD_ERR_OUTPUT_TOO_SMALL)
      return embdpy_raise_at(r, 0, "b64decode: out holds %zu bytes, %zu needed", s.cap, n);
    return embdpy_raise(r, &err);
  }
  return sink_close(&s, n);
}

/* b64encode(data, flags, out=None) -> bytes | int */
static PyObject *py_b64encode(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *src, *out = Py_None;
  unsigned flags = 0;
  if (!PyArg_ParseTuple(args, "OI|O:b64encode", &src, &flags, &out)) return NULL;
  embdpy_input in;
  if (embdpy_input_get(src, &in, "b64encode: data") < 0) return NULL;
  size_t need;
  embd_result r = embd_base64_encoded_size(in.len, flags, &need);
  if (r != EMBD_OK) {
    embdpy_input_release(&in);
    return embdpy_raise(r, NULL);
  }
  sink s;
  if (sink_open(&s, out, need, "b64encode: out") < 0) {
    embdpy_input_release(&in);
    return NULL;
  }
  size_t n = 0;
  EMBDPY_NOGIL_BEGIN(in.len)
  r = embd_base64_encode(in.data, in.len, flags, s.data, s.cap, &n);
  EMBDPY_NOGIL_END
  embdpy_input_release(&in);
  if (r != EMBD_OK) {
    sink_drop(&s);
    if (r == EMBD_ERR_OUTPUT_TOO_SMALL)
      return embdpy_raise_at(r, 0, "b64encode: out holds %zu bytes, %zu needed", s.cap, n);
    return embdpy_raise(r, NULL);
  }
  return sink_close(&s, n);
}

/* to_f32(data, dtype, order, out=None) -> Buffer | int (floats written) */
static PyObject *py_to_f32(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *src, *out = Py_None;
  int dt, ord;
  if (!PyArg_ParseTuple(args, "Oii|O:to_f32", &src, &dt, &ord, &out)) return NULL;
  embd_dtype dtype;
  embd_byte_order order;
  if (embdpy_dtype_arg(dt, &dtype) < 0 || embdpy_order_arg(ord, &order) < 0) return NULL;
  embdpy_input in;
  if (embdpy_input_get(src, &in, "to_f32: data") < 0) return NULL;
  size_t n;
  embd_result r = embd_dtype_count(dtype, in.len, &n);
  if (r != EMBD_OK) {
    embdpy_input_release(&in);
    return embdpy_raise_at(r, in.len - in.len % (embd_dtype_bits(dtype) >= 8 ? embd_dtype_bits(dtype) / 8 : 1),
                           "to_f32: %zu bytes are not a whole number of %s elements", in.len,
                           embd_dtype_name(dtype));
  }
  PyObject *res;
  float *dst;
  Py_buffer view;
  int has_view = 0;
  if (out != Py_None) {
    if (embdpy_output_get(out, &view, "to_f32: out") < 0) {
      embdpy_input_release(&in);
      return NULL;
    }
    has_view = 1;
    if ((size_t)view.len < n * sizeof(float) || ((uintptr_t)view.buf % sizeof(float))) {
      size_t have = (size_t)view.len;
      PyBuffer_Release(&view);
      embdpy_input_release(&in);
      if (have < n * sizeof(float))
        return embdpy_raise_at(EMBD_ERR_OUTPUT_TOO_SMALL, 0, "to_f32: out holds %zu bytes, %zu floats "
                               "(%zu bytes) needed", have, n, n * sizeof(float));
      return PyErr_Format(PyExc_ValueError, "to_f32: out is not 4-byte aligned");
    }
    dst = view.buf;
    res = NULL;
  } else {
    void *p;
    res = embdpy_buffer_new(n * sizeof(float), &p);
    if (!res) {
      embdpy_input_release(&in);
      return NULL;
    }
    dst = p;
  }
  EMBDPY_NOGIL_BEGIN(in.len)
  r = embd_to_f32(dst, in.data, n, dtype, order);
  EMBDPY_NOGIL_END
  embdpy_input_release(&in);
  if (has_view) PyBuffer_Release(&view);
  if (r != EMBD_OK) {
    Py_XDECREF(res);
    return embdpy_raise(r, NULL);
  }
  return res ? res : PyLong_FromSize_t(n);
}

/* from_f32(floats, dtype, order, out=None) -> bytes | int (bytes written); floats: a
 * buffer of host float32 (the Python layer makes it contiguous float32). */
static PyObject *py_from_f32(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *src, *out = Py_None;
  int dt, ord;
  if (!PyArg_ParseTuple(args, "Oii|O:from_f32", &src, &dt, &ord, &out)) return NULL;
  embd_dtype dtype;
  embd_byte_order order;
  if (embdpy_dtype_arg(dt, &dtype) < 0 || embdpy_order_arg(ord, &order) < 0) return NULL;
  embdpy_input in;
  if (embdpy_input_get(src, &in, "from_f32: array") < 0) return NULL;
  if (in.len % sizeof(float) || ((uintptr_t)in.data % sizeof(float))) {
    embdpy_input_release(&in);
    return PyErr_Format(PyExc_ValueError, "from_f32: %zu bytes are not aligned float32 values", in.len);
  }
  size_t n = in.len / sizeof(float), need;
  embd_result r = embd_dtype_bytes(dtype, n, &need);
  if (r != EMBD_OK) {
    embdpy_input_release(&in);
    return embdpy_raise_at(r, 0, "from_f32: %zu values are not a whole number of %s bytes "
                           "(packed bits: a multiple of 8)", n, embd_dtype_name(dtype));
  }
  sink s;
  if (sink_open(&s, out, need, "from_f32: out") < 0) {
    embdpy_input_release(&in);
    return NULL;
  }
  if (s.cap < need) {
    size_t have = s.cap;
    sink_drop(&s);
    embdpy_input_release(&in);
    return embdpy_raise_at(EMBD_ERR_OUTPUT_TOO_SMALL, 0, "from_f32: out holds %zu bytes, %zu needed",
                           have, need);
  }
  embd_error err;
  EMBDPY_NOGIL_BEGIN(in.len)
  r = embd_from_f32(s.data, (const float *)in.data, n, dtype, order, &err);
  EMBDPY_NOGIL_END
  embdpy_input_release(&in);
  if (r != EMBD_OK) {
    sink_drop(&s);
    return embdpy_raise(r, &err);
  }
  return sink_close(&s, need);
}

/* bswap32(data, out=None) -> bytes | int */
static PyObject *py_bswap32(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *src, *out = Py_None;
  if (!PyArg_ParseTuple(args, "O|O:bswap32", &src, &out)) return NULL;
  embdpy_input in;
  if (embdpy_input_get(src, &in, "bswap32: data") < 0) return NULL;
  if (in.len % 4) {
    embdpy_input_release(&in);
    return embdpy_raise_at(EMBD_ERR_DTYPE_LENGTH, in.len - in.len % 4,
                           "bswap32: %zu bytes are not a whole number of 32-bit words", in.len);
  }
  sink s;
  if (sink_open(&s, out, in.len, "bswap32: out") < 0) {
    embdpy_input_release(&in);
    return NULL;
  }
  if (s.cap < in.len) {
    size_t have = s.cap;
    sink_drop(&s);
    embdpy_input_release(&in);
    return embdpy_raise_at(EMBD_ERR_OUTPUT_TOO_SMALL, 0, "bswap32: out holds %zu bytes, %zu needed",
                           have, in.len);
  }
  /* In place is allowed by the C function; a partial overlap is not. */
  if (s.has_view && s.data != in.data && s.data < in.data + in.len && in.data < s.data + in.len) {
    sink_drop(&s);
    embdpy_input_release(&in);
    return PyErr_Format(PyExc_ValueError, "bswap32: out overlaps data (only exactly in place works)");
  }
  EMBDPY_NOGIL_BEGIN(in.len)
  embd_bswap32(s.data, in.data, in.len / 4);
  EMBDPY_NOGIL_END
  size_t n = in.len;
  embdpy_input_release(&in);
  return sink_close(&s, n);
}

/* cpu() -> {"features": [...], "enabled": [...], "kernels": {name: active impl}} */
static PyObject *py_cpu(PyObject *self, PyObject *noargs) {
  (void)self;
  (void)noargs;
  PyObject *d = PyDict_New(), *feat = PyList_New(0), *en = PyList_New(0), *k = PyDict_New();
  if (!d || !feat || !en || !k) goto fail;
  uint64_t all = embd_cpu_features(), on = embd_cpu_features_enabled();
  for (int b = 0; b < 63; b++) {
    uint64_t bit = UINT64_C(1) << b;
    const char *name = embd_cpu_feature_name(bit);
    if (!name) continue;
    PyObject *s = PyUnicode_FromString(name);
    if (!s) goto fail;
    if (((all & bit) && PyList_Append(feat, s) < 0) || ((on & bit) && PyList_Append(en, s) < 0)) {
      Py_DECREF(s);
      goto fail;
    }
    Py_DECREF(s);
  }
  for (int kk = 0; kk < (int)EMBD_KERNEL_COUNT_; kk++) {
    PyObject *v = PyUnicode_FromString(embd_impl_active((embd_kernel)kk));
    if (!v || PyDict_SetItemString(k, embd_kernel_name((embd_kernel)kk), v) < 0) {
      Py_XDECREF(v);
      goto fail;
    }
    Py_DECREF(v);
  }
  if (PyDict_SetItemString(d, "features", feat) < 0 || PyDict_SetItemString(d, "enabled", en) < 0 ||
      PyDict_SetItemString(d, "kernels", k) < 0)
    goto fail;
  Py_DECREF(feat);
  Py_DECREF(en);
  Py_DECREF(k);
  return d;
fail:
  Py_XDECREF(d);
  Py_XDECREF(feat);
  Py_XDECREF(en);
  Py_XDECREF(k);
  return NULL;
}

PyMethodDef embdpy_kernel_methods[] = {
    {"crc32", py_crc32, METH_VARARGS, "crc32(data, crc=0) -> int"},
    {"b64decode", py_b64decode, METH_VARARGS, "b64decode(s, flags, out=None)"},
    {"b64encode", py_b64encode, METH_VARARGS, "b64encode(data, flags, out=None)"},
    {"to_f32", py_to_f32, METH_VARARGS, "to_f32(data, dtype, order, out=None)"},
    {"from_f32", py_from_f32, METH_VARARGS, "from_f32(floats, dtype, order, out=None)"},
    {"bswap32", py_bswap32, METH_VARARGS, "bswap32(data, out=None)"},
    {"cpu", py_cpu, METH_NOARGS, "cpu() -> dict"},
    {NULL, NULL, 0, NULL}};
