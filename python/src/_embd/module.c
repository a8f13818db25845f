/* embd._embd: module definition, embd.Error, the buffer object and the argument helpers
 * every face shares (common.h). */
#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PyObject *embdpy_Error;

/* ---- errors ------------------------------------------------------------------------- */

static PyObject *raise_with(embd_result r, PyObject *offset, const char *message) {
  if (r == EMBD_ERR_OUT_OF_MEMORY) {
    Py_XDECREF(offset);
    return PyErr_NoMemory();
  }
  const char *name = embd_result_name(r);
  PyObject *exc = PyObject_CallFunction(embdpy_Error, "s", message);
  if (!exc) {
    Py_XDECREF(offset);
    return NULL;
  }
  PyObject *code = name ? PyUnicode_FromString(name) : PyLong_FromLong((long)r);
  if (!code || PyObject_SetAttrString(exc, "code", code) < 0 ||
      PyObject_SetAttrString(exc, "offset", offset ? offset : Py_None) < 0) {
    Py_XDECREF(code);
    Py_XDECREF(offset);
    Py_DECREF(exc);
    return NULL;
  }
  Py_DECREF(code);
  Py_XDECREF(offset);
  PyErr_SetObject(embdpy_Error, exc);
  Py_DECREF(exc);
  return NULL;
}

PyObject *embdpy_raise(embd_result r, const embd_error *err) {
  if (err && err->result == r && err->message[0]) {
    PyObject *off = PyLong_FromUnsignedLongLong((unsigned long long)err->offset);
    if (!off) return NULL;
    return raise_with(r, off, err->message);
  }
  /* Functions without an embd_error (or that left it empty): the code's description. */
  return raise_with(r, NULL, embd_strerror(r));
}

PyObject *embdpy_raise_at(embd_result r, uint64_t offset, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  PyObject *off = PyLong_FromUnsignedLongLong((unsigned long long)offset);
  if (!off) return NULL;
  return raise_with(r, off, msg);
}

/* ---- inputs and outputs ------------------------------------------------------------- */

int embdpy_input_get(PyObject *obj, embdpy_input *in, const char *what) {
  memset(in, 0, sizeof *in);
  if (PyUnicode_Check(obj)) {
    /* The UTF-8 form is cached in the str object (no copy for ASCII text, which every
     * JSON body and base64 string is): valid while the caller holds obj. */
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(obj, &n);
    if (!s) return -1;
    in->data = s;
    in->len = (size_t)n;
    return 0;
  }
  if (!PyObject_CheckBuffer(obj)) {
    PyErr_Format(PyExc_TypeError, "%s: expected bytes, bytearray, memoryview, str or a "
                 "C-contiguous buffer, not %.100s", what, Py_TYPE(obj)->tp_name);
    return -1;
  }
  if (PyObject_GetBuffer(obj, &in->view, PyBUF_SIMPLE) < 0) {
    /* numpy says "ndarray is not C-contiguous" as BufferError; name the argument too. */
    if (PyErr_ExceptionMatches(PyExc_BufferError) || PyErr_ExceptionMatches(PyExc_ValueError)) {
      PyObject *t, *v, *tb;
      PyErr_Fetch(&t, &v, &tb);
      PyErr_Format(PyExc_TypeError, "%s: not a C-contiguous buffer (%S)", what, v ? v : Py_None);
      Py_XDECREF(t);
      Py_XDECREF(v);
      Py_XDECREF(tb);
    }
    return -1;
  }
  in->has_view = 1;
  in->data = in->view.buf;
  in->len = (size_t)in->view.len;
  return 0;
}

void embdpy_input_release(embdpy_input *in) {
  if (in->has_view) PyBuffer_Release(&in->view);
  in->has_view = 0;
}

int embdpy_output_get(PyObject *obj, Py_buffer *view, const char *what) {
  if (!PyObject_CheckBuffer(obj)) {
    PyErr_Format(PyExc_TypeError, "%s: expected a writable buffer (bytearray, numpy array...), "
                 "not %.100s", what, Py_TYPE(obj)->tp_name);
    return -1;
  }
  if (PyObject_GetBuffer(obj, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_Format(PyExc_TypeError, "%s: not a writable C-contiguous buffer (%S)", what,
                 v ? v : Py_None);
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
    return -1;
  }
  return 0;
}

int embdpy_enter(int *busy, const char *what) {
  if (*busy) {
    PyErr_Format(PyExc_RuntimeError, "%s is in use by another thread (one thread at a time "
                 "per object; make one per thread)", what);
    return -1;
  }
  *busy = 1;
  return 0;
}

int embdpy_dtype_arg(int dtype, embd_dtype *out) {
  if (dtype < 0 || dtype >= (int)EMBD_DTYPE_COUNT_) {
    PyErr_Format(PyExc_ValueError, "dtype code %d is not a dtype", dtype);
    return -1;
  }
  *out = (embd_dtype)dtype;
  return 0;
}

int embdpy_order_arg(int order, embd_byte_order *out) {
  if (order != EMBD_ORDER_LE && order != EMBD_ORDER_BE) {
    PyErr_Format(PyExc_ValueError, "byte order code %d is not one", order);
    return -1;
  }
  *out = (embd_byte_order)order;
  return 0;
}

/* ---- the buffer object ---------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  void *data;
  Py_ssize_t len;
  embdpy_release_fn release;
  void *ctx;
  Py_ssize_t exports;
} buffer_obj;

static void buffer_dealloc(buffer_obj *self) {
  if (self->release) self->release(self->ctx);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int buffer_getbuffer(buffer_obj *self, Py_buffer *view, int flags) {
  /* Writable: the arrays it becomes are the caller's to change (nothing else sees it). */
  if (PyBuffer_FillInfo(view, (PyObject *)self, self->data, self->len, 0, flags) < 0) return -1;
  self->exports++;
  return 0;
}

static void buffer_releasebuffer(buffer_obj *self, Py_buffer *view) {
  (void)view;
  self->exports--;
}

static PyBufferProcs buffer_procs = {(getbufferproc)buffer_getbuffer,
                                     (releasebufferproc)buffer_releasebuffer};

static Py_ssize_t buffer_length(buffer_obj *self) { return self->len; }
static PySequenceMethods buffer_seq = {.sq_length = (lenfunc)buffer_length};

PyTypeObject embdpy_BufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "embd._embd.Buffer",
    .tp_basicsize = sizeof(buffer_obj),
    .tp_dealloc = (destructor)buffer_dealloc,
    .tp_as_buffer = &buffer_procs,
    .tp_as_sequence = &buffer_seq,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Memory made by embd (a decoded result), exposed through the buffer protocol; "
              "the numpy arrays embd returns keep it alive as their base.",
};

/* A zero-length result still needs a valid pointer for the buffer protocol. */
static char empty_byte;

PyObject *embdpy_buffer_wrap(void *data, size_t len, embdpy_release_fn release, void *ctx) {
  if (len > (size_t)PY_SSIZE_T_MAX) {
    if (release) release(ctx);
    return PyErr_NoMemory();
  }
  buffer_obj *b = PyObject_New(buffer_obj, &embdpy_BufferType);
  if (!b) {
    if (release) release(ctx);
    return NULL;
  }
  b->data = data ? data : &empty_byte;
  b->len = (Py_ssize_t)len;
  b->release = release;
  b->ctx = ctx;
  b->exports = 0;
  return (PyObject *)b;
}

PyObject *embdpy_buffer_new(size_t len, void **data) {
  void *p = malloc(len ? len : 1);
  if (!p) return PyErr_NoMemory();
  *data = p;
  return embdpy_buffer_wrap(p, len, free, p);
}

/* ---- module ------------------------------------------------------------------------------ */

static PyObject *version(PyObject *self, PyObject *noargs) {
  (void)self;
  (void)noargs;
  return PyUnicode_FromString(embd_version());
}

static PyObject *dtype_parse(PyObject *self, PyObject *arg) {
  (void)self;
  Py_ssize_t n;
  const char *s = PyUnicode_Check(arg) ? PyUnicode_AsUTF8AndSize(arg, &n) : NULL;
  if (!s) {
    if (!PyErr_Occurred())
      PyErr_Format(PyExc_TypeError, "dtype: expected a str, not %.100s", Py_TYPE(arg)->tp_name);
    return NULL;
  }
  embd_dtype t;
  if (embd_dtype_parse(s, (size_t)n, &t) != EMBD_OK) Py_RETURN_NONE;
  return PyLong_FromLong((long)t);
}

static PyObject *dtype_name(PyObject *self, PyObject *arg) {
  (void)self;
  long v = PyLong_AsLong(arg);
  if (v == -1 && PyErr_Occurred()) return NULL;
  embd_dtype t;
  if (embdpy_dtype_arg((int)v, &t) < 0) return NULL;
  return PyUnicode_FromString(embd_dtype_name(t));
}

static PyMethodDef module_methods[] = {
    {"version", version, METH_NOARGS, "The C library's version string."},
    {"dtype_parse", dtype_parse, METH_O,
     "The embd_dtype code a name stands for (embd_dtype_parse), or None."},
    {"dtype_name", dtype_name, METH_O, "The canonical name of a dtype code."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "embd._embd",
    "embd's C extension: thin calls into libembd's public API (use the embd package).", -1,
    NULL, NULL, NULL, NULL, NULL};

static int add_methods(PyObject *m, PyMethodDef *defs) {
  PyObject *name = PyModule_GetNameObject(m); /* each function's __module__ */
  if (!name) return -1;
  for (PyMethodDef *d = defs; d->ml_name; d++) {
    PyObject *f = PyCFunction_NewEx(d, NULL, name);
    if (!f || PyModule_AddObject(m, d->ml_name, f) < 0) {
      Py_XDECREF(f);
      Py_DECREF(name);
      return -1;
    }
  }
  Py_DECREF(name);
  return 0;
}

PyMODINIT_FUNC PyInit__embd(void) {
  PyObject *m = PyModule_Create(&module_def);
  if (!m) return NULL;
#ifdef Py_GIL_DISABLED
  /* No module state changes after init, every stateful object guards itself (common.h):
   * the module does not need the GIL. */
  PyUnstable_Module_SetGIL(m, Py_MOD_GIL_NOT_USED);
#endif
  if (PyType_Ready(&embdpy_BufferType) < 0) goto fail;
  embdpy_Error = PyErr_NewExceptionWithDoc(
      "embd.Error",
      "An embd decoder or encoder refused its input. .code is the C result's name (e.g. "
      "'EMBD_ERR_BASE64_CHAR'), .offset the byte of the input the problem is at (an int, or "
      "None when the call has no single place), str() the C library's message.",
      PyExc_ValueError, NULL);
  if (!embdpy_Error) goto fail;
  Py_INCREF(embdpy_Error);
  if (PyModule_AddObject(m, "Error", embdpy_Error) < 0) {
    Py_DECREF(embdpy_Error);
    goto fail;
  }
  Py_INCREF(&embdpy_BufferType);
  if (PyModule_AddObject(m, "Buffer", (PyObject *)&embdpy_BufferType) < 0) {
    Py_DECREF(&embdpy_BufferType);
    goto fail;
  }
  if (add_methods(m, module_methods) < 0 || add_methods(m, embdpy_kernel_methods) < 0 ||
      add_methods(m, embdpy_openai_methods) < 0 || add_methods(m, embdpy_frame_methods) < 0 ||
      add_methods(m, embdpy_codec_methods) < 0 || add_methods(m, embdpy_writer_methods) < 0 || add_methods(m, embdpy_arrow_methods) < 0 || embdpy_arrow_init(m) < 0 || embdpy_frame_init(m) < 0 || embdpy_openai_init(m) < 0 ||
      embdpy_codec_init(m) < 0)
    goto fail;
  if (PyModule_AddIntConstant(m, "NOGIL_MIN", EMBDPY_NOGIL_MIN) < 0) goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
