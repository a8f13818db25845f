/* embd._embd: EMBD frames, batches and the stream decoder (embd/frame.h, batch.h,
 * stream.h). The Python layer hands in contiguous arrays and names dtypes by code; the
 * values come back as buffer objects (float32, or the wire dtype's bytes with raw=True). */
#include "common.h"

#include <stdlib.h>
#include <string.h>

static int encode_options(embd_frame_encode_options *o, unsigned flags, int level) {
  memset(o, 0, sizeof *o);
  if (flags & ~EMBD_FRAME_KNOWN_FLAGS) {
    PyErr_Format(PyExc_ValueError, "frame flags 0x%x: unknown bits", flags);
    return -1;
  }
  if (level < 0 || level > 9) {
    PyErr_Format(PyExc_ValueError, "level %d: zlib levels are 1..9 (0: zlib's default)", level);
    return -1;
  }
  o->flags = flags;
  o->level = level;
  return 0;
}

/* A new bytes object from an encoder that writes at most `bound` bytes, cut to what it
 * wrote (exact without zlib). `enc` runs without the GIL for large outputs. */
typedef embd_result (*encode_fn)(void *ctx, void *out, size_t cap, size_t *written);

static PyObject *encode_bytes(encode_fn enc, void *ctx, size_t bound) {
  if (bound > (size_t)PY_SSIZE_T_MAX) return PyErr_NoMemory();
  PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)bound);
  if (!b) return NULL;
  size_t n = 0;
  embd_result r;
  EMBDPY_NOGIL_BEGIN(bound)
  r = enc(ctx, PyBytes_AS_STRING(b), bound, &n);
  EMBDPY_NOGIL_END
  if (r != EMBD_OK) {
    Py_DECREF(b);
    return embdpy_raise(r, NULL);
  }
  if (n != bound && _PyBytes_Resize(&b, (Py_ssize_t)n) < 0) return NULL;
  return b;
}

/* One frame or a batch of frames: vectors at data[i] with dims[i] elements of dtypes[i]
 * (raw) or float32 (converted to opt.dtype). */
typedef struct {
  const void **data;
  size_t *dims;
  embd_dtype *dtypes;
  size_t count;
  int raw, single;
  embd_frame_encode_options opt;
} enc_ctx;

static embd_result enc_run(void *c, void *out, size_t cap, size_t *written) {
  enc_ctx *x = c;
  if (x->single)
    return x->raw ? embd_frame_encode_raw(x->data[0], x->dims[0], x->dtypes[0], EMBD_ORDER_LE,
                                          &x->opt, out, cap, written)
                  : embd_frame_encode_f32(x->data[0], x->dims[0], &x->opt, out, cap, written);
  if (x->raw)
    return embd_batch_encode_raw(x->data, x->dims, x->dtypes, x->count, EMBD_ORDER_LE, &x->opt,
                                 out, cap, written);
  return embd_batch_encode_ptrs((const float *const *)x->data, x->dims, x->count, &x->opt, out,
                                cap, written);
}

/* encode_frames(vectors, single, raw, dtype, flags, level) -> bytes
 * vectors: a sequence of (buffer, dims) pairs: host float32 (raw False, written as dtype)
 * or elements of dtype in little-endian order (raw True). single: one frame, no batch
 * count. */
static PyObject *py_encode_frames(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *seq;
  int single, raw, dt, level;
  unsigned flags;
  if (!PyArg_ParseTuple(args, "OppiIi:encode_frames", &seq, &single, &raw, &dt, &flags, &level))
    return NULL;
  embd_dtype dtype;
  enc_ctx x;
  memset(&x, 0, sizeof x);
  if (embdpy_dtype_arg(dt, &dtype) < 0 || encode_options(&x.opt, flags, level) < 0) return NULL;
  PyObject *fast = PySequence_Fast(seq, "vectors: expected a sequence");
  if (!fast) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  if (single && n != 1) {
    Py_DECREF(fast);
    return PyErr_Format(PyExc_ValueError, "one frame holds one vector");
  }
  embdpy_input *ins = calloc((size_t)n + 1, sizeof *ins);
  x.data = calloc((size_t)n + 1, sizeof *x.data);
  x.dims = calloc((size_t)n + 1, sizeof *x.dims);
  x.dtypes = calloc((size_t)n + 1, sizeof *x.dtypes);
  PyObject *res = NULL;
  Py_ssize_t got = 0;
  if (!ins || !x.data || !x.dims || !x.dtypes) {
    PyErr_NoMemory();
    goto done;
  }
  x.count = (size_t)n;
  x.single = single;
  x.raw = raw;
  if (!raw) x.opt.dtype = dtype;
  size_t bound = single ? 0 : EMBD_BATCH_PREFIX_SIZE;
  for (; got < n; got++) {
    PyObject *item = PySequence_Fast_GET_ITEM(fast, got), *buf;
    Py_ssize_t d;
    if (!PyArg_ParseTuple(item, "On:vector", &buf, &d)) goto done;
    if (embdpy_input_get(buf, &ins[got], "vector") < 0) goto done;
    size_t elem_bytes, fsize;
    embd_result r = raw ? embd_dtype_bytes(dtype, (size_t)d, &elem_bytes)
                        : (elem_bytes = (size_t)d * sizeof(float), EMBD_OK);
    if (r == EMBD_OK && ins[got].len != elem_bytes) r = EMBD_ERR_INVALID_ARGUMENT;
    if (r == EMBD_OK) r = embd_frame_size_dtype((size_t)d, dtype, flags, &fsize);
    if (r != EMBD_OK) {
      got++;
      embdpy_raise_at(r, 0, "vector %zd: %zd %s values do not make a frame (%s)", got - 1, d,
                      embd_dtype_name(dtype), embd_strerror(r));
      goto done;
    }
    x.data[got] = ins[got].data;
    x.dims[got] = (size_t)d;
    x.dtypes[got] = dtype;
    if (bound > SIZE_MAX - fsize) {
      got++;
      PyErr_NoMemory();
      goto done;
    }
    bound += fsize;
  }
  res = encode_bytes(enc_run, &x, bound);
done:
  for (Py_ssize_t i = 0; i < got; i++) embdpy_input_release(&ins[i]);
  free(ins);
  free(x.data);
  free(x.dims);
  free(x.dtypes);
  Py_DECREF(fast);
  return res;
}

static int decode_options(embd_frame_decode_options *o, Py_ssize_t max_dims, Py_ssize_t dims) {
  memset(o, 0, sizeof *o);
  if (max_dims < 0 || dims < 0 || (uint64_t)max_dims > UINT32_MAX || (uint64_t)dims > UINT32_MAX) {
    PyErr_Format(PyExc_ValueError, "dims must be in 0..2**32-1");
    return -1;
  }
  o->max_dims = (uint32_t)max_dims;
  o->expected_dims = (uint32_t)dims;
  return 0;
}

/* The frame calls' arguments (data[, max_dims, dims[, raw]]), read without the tuple
 * PyArg_ParseTuple builds: these calls are per frame, so their fixed cost is the binding's
 * whole cost beside numpy's own frombuffer. */
static int frame_args(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t most, const char *fn,
                      embd_frame_decode_options *o, int *raw) {
  if (nargs < 1 || nargs > most) {
    PyErr_Format(PyExc_TypeError, "%s() takes 1 to %zd arguments (%zd given)", fn, most, nargs);
    return -1;
  }
  Py_ssize_t v[2] = {0, 0};
  for (Py_ssize_t i = 1; i < nargs && i < 3; i++) {
    v[i - 1] = PyLong_AsSsize_t(args[i]);
    if (v[i - 1] == -1 && PyErr_Occurred()) return -1;
  }
  if (decode_options(o, v[0], v[1]) < 0) return -1;
  *raw = 0;
  if (nargs > 3 && (*raw = PyObject_IsTrue(args[3])) < 0) return -1;
  return 0;
}

/* frame_decode(data, max_dims=0, dims=0, raw=False) -> (buffer, dims, dtype) */
static PyObject *py_frame_decode(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  embd_frame_decode_options o;
  int raw;
  if (frame_args(args, nargs, 4, "frame_decode", &o, &raw) < 0) return NULL;
  PyObject *data = args[0];
  embdpy_input in;
  if (embdpy_input_get(data, &in, "data") < 0) return NULL;
  embd_frame_info info;
  embd_error err;
  /* The header first: the size of the output, before allocating it. */
  embd_result r = embd_frame_header(in.data, in.len, &o, &info, &err);
  if (r != EMBD_OK) {
    embdpy_input_release(&in);
    return embdpy_raise(r, &err);
  }
  size_t len = raw ? info.value_bytes : (size_t)info.dims * sizeof(float);
  void *out;
  PyObject *buf = embdpy_buffer_new(len, &out);
  if (!buf) {
    embdpy_input_release(&in);
    return NULL;
  }
  EMBDPY_NOGIL_BEGIN(in.len)
  r = raw ? embd_frame_decode_raw(in.data, in.len, &o, out, len, EMBD_ORDER_LE, &info, &err)
          : embd_frame_decode(in.data, in.len, &o, out, info.dims, &info, &err);
  EMBDPY_NOGIL_END
  embdpy_input_release(&in);
  if (r != EMBD_OK) {
    Py_DECREF(buf);
    return embdpy_raise(r, &err);
  }
  return Py_BuildValue("(NIi)", buf, (unsigned)info.dims, (int)info.dtype);
}

/* frame_view(data, max_dims, dims) -> (offset, dims, dtype, nbytes) of the payload inside
 * data, or None when no zero-copy view is possible (the frame validated: decode a copy). */
static PyObject *py_frame_view(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)self;
  embd_frame_decode_options o;
  int raw;
  if (frame_args(args, nargs, 3, "frame_view", &o, &raw) < 0) return NULL;
  PyObject *data = args[0];
  embdpy_input in;
  if (embdpy_input_get(data, &in, "data") < 0) return NULL;
  embd_frame_info info;
  embd_error err;
  const void *p = NULL;
  embd_result r;
  EMBDPY_NOGIL_BEGIN(in.len)
  r = embd_frame_view_raw(in.data, in.len, &o, &p, &info, &err);
  EMBDPY_NOGIL_END
  const char *base = in.data;
  embdpy_input_release(&in);
  if (r == EMBD_ERR_FRAME_VIEW_UNAVAILABLE) Py_RETURN_NONE;
  if (r != EMBD_OK) return embdpy_raise(r, &err);
  return Py_BuildValue("(nIin)", (Py_ssize_t)((const char *)p - base), (unsigned)info.dims,
                       (int)info.dtype, (Py_ssize_t)info.value_bytes);
}

/* ---- batches ------------------------------------------------------------------------ */

/* batch_decode(data, max_dims, dims, raw) -> (buffer, count, dims, dtype): every frame of
 * one dims and dtype (the first frame's), rows in frame order. */
static PyObject *py_batch_decode(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *data;
  Py_ssize_t max_dims, dims;
  int raw;
  if (!PyArg_ParseTuple(args, "Onnp:batch_decode", &data, &max_dims, &dims, &raw)) return NULL;
  embd_frame_decode_options o;
  if (decode_options(&o, max_dims, dims) < 0) return NULL;
  embdpy_input in;
  if (embdpy_input_get(data, &in, "data") < 0) return NULL;
  embd_batch_iter it;
  embd_batch_frame f;
  embd_error err;
  embd_result r = embd_batch_iter_init(&it, in.data, in.len, &o, &err);
  if (r != EMBD_OK) {
    embdpy_input_release(&in);
    return embdpy_raise(r, &err);
  }
  /* The count is checked against the bytes by iter_init (16 bytes a frame at least), so
   * the allocation below is bounded by the input once the first frame is known. */
  uint32_t count = it.count, d = 0;
  int dtype = EMBD_DTYPE_F32;
  size_t row = 0;
  void *out = NULL;
  PyObject *buf = NULL;
  if (count == 0) {
    r = embd_batch_next(&it, &f, &err);
    embdpy_input_release(&in);
    if (r != EMBD_BATCH_END) return embdpy_raise(r, &err);
    buf = embdpy_buffer_new(0, &out);
    return buf ? Py_BuildValue("(NIIi)", buf, 0u, (unsigned)dims, dtype) : NULL;
  }
  int mixed = 0;
  uint32_t bad_index = 0;
  uint64_t bad_offset = 0;
  uint32_t bad_dims = 0;
  int bad_dtype = 0;
  r = embd_batch_next(&it, &f, &err);
  if (r == EMBD_OK) {
    d = f.info.dims;
    dtype = f.info.dtype;
    row = raw ? f.info.value_bytes : (size_t)d * sizeof(float);
    if (row && count > SIZE_MAX / row) {
      embdpy_input_release(&in);
      return PyErr_NoMemory();
    }
    buf = embdpy_buffer_new((size_t)count * row, &out);
    if (!buf) {
      embdpy_input_release(&in);
      return NULL;
    }
    EMBDPY_NOGIL_BEGIN(in.len)
    for (;;) {
      if (f.info.dims != d || (raw && f.info.dtype != dtype)) {
        mixed = 1;
        bad_index = f.index;
        bad_offset = f.offset;
        bad_dims = f.info.dims;
        bad_dtype = f.info.dtype;
        break;
      }
      uint8_t *dst = (uint8_t *)out + (size_t)f.index * row;
      r = raw ? embd_batch_frame_decode_raw(&f, dst, row, EMBD_ORDER_LE, &err)
              : embd_batch_frame_decode(&f, (float *)dst, d, &err);
      if (r != EMBD_OK) break;
      r = embd_batch_next(&it, &f, &err);
      if (r != EMBD_OK) break;
    }
    EMBDPY_NOGIL_END
  }
  embdpy_input_release(&in);
  if (mixed) {
    Py_XDECREF(buf);
    return embdpy_raise_at(EMBD_ERR_FRAME_DIMS_MISMATCH, bad_offset,
                           "frame %u at byte %llu: %u %s values, frame 0 has %u %s: a batch of "
                           "mixed frames is not one array (iter_batch yields each frame)",
                           bad_index, (unsigned long long)bad_offset, bad_dims,
                           embd_dtype_name((embd_dtype)bad_dtype), d, embd_dtype_name((embd_dtype)dtype));
  }
  if (r != EMBD_BATCH_END) {
    Py_XDECREF(buf);
    return embdpy_raise(r, &err);
  }
  return Py_BuildValue("(NIIi)", buf, count, d, dtype);
}

/* A frame's values into a new buffer: (buffer, dims, dtype). */
static PyObject *frame_values(const embd_batch_frame *f, int raw, embd_error *err) {
  size_t len = raw ? f->info.value_bytes : (size_t)f->info.dims * sizeof(float);
  void *out;
  PyObject *buf = embdpy_buffer_new(len, &out);
  if (!buf) return NULL;
  embd_result r;
  EMBDPY_NOGIL_BEGIN(f->info.frame_size)
  r = raw ? embd_batch_frame_decode_raw(f, out, len, EMBD_ORDER_LE, err)
          : embd_batch_frame_decode(f, out, f->info.dims, err);
  EMBDPY_NOGIL_END
  if (r != EMBD_OK) {
    Py_DECREF(buf);
    return embdpy_raise(r, err);
  }
  return Py_BuildValue("(NIi)", buf, (unsigned)f->info.dims, (int)f->info.dtype);
}

/* BatchIter(data, max_dims, dims, raw): yields (buffer, dims, dtype) per frame. */
typedef struct {
  PyObject_HEAD
  embdpy_input in;
  embd_batch_iter it;
  int raw, started, busy, done;
  embd_result init_r;
  embd_error init_err;
} batch_iter_obj;

static PyObject *batch_iter_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *data;
  Py_ssize_t max_dims = 0, dims = 0;
  int raw = 0;
  static char *kwlist[] = {"data", "max_dims", "dims", "raw", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|nnp:BatchIter", kwlist, &data, &max_dims, &dims, &raw))
    return NULL;
  embd_frame_decode_options o;
  if (decode_options(&o, max_dims, dims) < 0) return NULL;
  batch_iter_obj *self = (batch_iter_obj *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  if (embdpy_input_get(data, &self->in, "data") < 0) {
    self->done = 1;
    Py_DECREF(self);
    return NULL;
  }
  self->raw = raw;
  embd_error err;
  embd_result r = embd_batch_iter_init(&self->it, self->in.data, self->in.len, &o, &err);
  if (r != EMBD_OK) {
    Py_DECREF(self);
    return embdpy_raise(r, &err);
  }
  return (PyObject *)self;
}

static void batch_iter_dealloc(batch_iter_obj *self) {
  /* `done` without an input: the constructor failed before getting it. */
  if (self->in.has_view) embdpy_input_release(&self->in);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *batch_iter_next(batch_iter_obj *self) {
  if (self->done) return NULL;
  if (embdpy_enter(&self->busy, "BatchIter") < 0) return NULL;
  embd_batch_frame f;
  embd_error err;
  embd_result r = embd_batch_next(&self->it, &f, &err);
  PyObject *res = NULL;
  if (r == EMBD_OK)
    res = frame_values(&f, self->raw, &err);
  else if (r == EMBD_BATCH_END)
    self->done = 1; /* NULL without an exception: StopIteration */
  else
    embdpy_raise(r, &err);
  embdpy_leave(&self->busy);
  return res;
}

static PyObject *batch_iter_count(batch_iter_obj *self, void *closure) {
  (void)closure;
  return PyLong_FromUnsignedLong(self->it.count);
}

static PyGetSetDef batch_iter_getset[] = {
    {"count", (getter)batch_iter_count, NULL, "the batch's frame count (its first 4 bytes)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject batch_iter_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "embd._embd.BatchIter",
    .tp_basicsize = sizeof(batch_iter_obj),
    .tp_dealloc = (destructor)batch_iter_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Iterator over a batch's frames: (buffer, dims, dtype) each.",
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)batch_iter_next,
    .tp_getset = batch_iter_getset,
    .tp_new = batch_iter_new,
};

/* ---- the stream decoder -------------------------------------------------------------- */

/* Frames decoded during one feed without the GIL, turned into Python objects after. */
typedef struct {
  void *data;
  size_t len;
  uint32_t dims, index;
  int dtype;
} pending;

typedef struct {
  PyObject_HEAD
  embd_stream *s;
  int raw, busy, failed;
  /* dest mode: rows of out_row bytes in the caller's buffer */
  Py_buffer out;
  int has_out;
  size_t out_rows, out_row;
  uint32_t out_dims;
  /* per feed */
  pending *p;
  size_t np, cap;
  embd_result cb_r;
  embd_error cb_err;
  uint32_t bad_index;
  uint64_t bad_offset;
  uint32_t bad_dims;
} stream_obj;

static int push(stream_obj *s, pending v) {
  if (s->np == s->cap) {
    size_t c = s->cap ? s->cap * 2 : 8;
    pending *q = realloc(s->p, c * sizeof *q);
    if (!q) return -1;
    s->p = q;
    s->cap = c;
  }
  s->p[s->np++] = v;
  return 0;
}

static embd_result on_frame(void *user, const embd_batch_frame *f) {
  stream_obj *s = user;
  if (s->has_out) {
    /* dest mode: the values are already in the row (dest named it); record the row. */
    if (!f->values && !f->raw_values) {
      s->bad_index = f->index;
      s->bad_offset = f->offset;
      s->bad_dims = f->info.dims;
      return EMBD_ERR_OUTPUT_TOO_SMALL;
    }
    return push(s, (pending){NULL, 0, f->info.dims, f->index, f->info.dtype}) ? EMBD_ERR_OUT_OF_MEMORY : EMBD_OK;
  }
  size_t len = s->raw ? f->info.value_bytes : (size_t)f->info.dims * sizeof(float);
  void *out = malloc(len ? len : 1);
  if (!out) return EMBD_ERR_OUT_OF_MEMORY;
  embd_result r = s->raw ? embd_batch_frame_decode_raw(f, out, len, EMBD_ORDER_LE, &s->cb_err)
                         : embd_batch_frame_decode(f, out, f->info.dims, &s->cb_err);
  if (r == EMBD_OK && push(s, (pending){out, len, f->info.dims, f->index, f->info.dtype})) r = EMBD_ERR_OUT_OF_MEMORY;
  if (r != EMBD_OK) {
    free(out);
    s->cb_r = r;
  }
  return r;
}

static float *dest(void *user, uint32_t index, const embd_frame_info *info) {
  stream_obj *s = user;
  if (index >= s->out_rows || info->dims != s->out_dims) return NULL; /* on_frame reports it */
  return (float *)((uint8_t *)s->out.buf + (size_t)index * s->out_row);
}

static void *dest_raw(void *user, uint32_t index, const embd_frame_info *info) {
  stream_obj *s = user;
  if (index >= s->out_rows || info->value_bytes != s->out_row) return NULL;
  return (uint8_t *)s->out.buf + (size_t)index * s->out_row;
}

static void stream_clear_pending(stream_obj *s) {
  for (size_t i = 0; i < s->np; i++) free(s->p[i].data);
  s->np = 0;
}

static PyObject *stream_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  Py_ssize_t max_dims, expected = 0;
  int batch = 0, raw = 0;
  PyObject *out = Py_None;
  static char *kwlist[] = {"max_dims", "expected_dims", "batch", "raw", "out", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "n|nppO:StreamDecoder", kwlist, &max_dims, &expected,
                                   &batch, &raw, &out))
    return NULL;
  if (max_dims <= 0 || (uint64_t)max_dims > UINT32_MAX || expected < 0 || (uint64_t)expected > UINT32_MAX)
    return PyErr_Format(PyExc_ValueError, "max_dims must be in 1..2**32-1 (and expected_dims in 0..max_dims)");
  stream_obj *self = (stream_obj *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->raw = raw;
  embd_stream_options o = {0};
  o.max_dims = (uint32_t)max_dims;
  o.expected_dims = (uint32_t)expected;
  o.batch = batch;
  o.on_frame = on_frame;
  o.user = self;
  if (out != Py_None) {
    if (embdpy_output_get(out, &self->out, "out") < 0) {
      Py_DECREF(self);
      return NULL;
    }
    self->has_out = 1;
    /* rows x row bytes: the Python layer checks the array's shape and passes row info via
     * the buffer's shape (ndim 2). */
    if (self->out.ndim != 2 || !self->out.shape) {
      Py_DECREF(self);
      return PyErr_Format(PyExc_ValueError, "out must be a 2-D array (rows x dims)");
    }
    self->out_rows = (size_t)self->out.shape[0];
    self->out_row = (size_t)self->out.shape[1] * (size_t)self->out.itemsize;
    self->out_dims = (uint32_t)(raw ? 0 : self->out.shape[1]);
    if (!raw && self->out.itemsize != 4) {
      Py_DECREF(self);
      return PyErr_Format(PyExc_ValueError, "out must hold float32 values (itemsize 4)");
    }
    if (raw)
      o.dest_raw = dest_raw;
    else
      o.dest = dest;
  }
  embd_result r = embd_stream_create(&o, &self->s);
  if (r != EMBD_OK) {
    Py_DECREF(self);
    return embdpy_raise(r, NULL);
  }
  return (PyObject *)self;
}

static void stream_dealloc(stream_obj *self) {
  if (self->s) embd_stream_destroy(self->s);
  stream_clear_pending(self);
  free(self->p);
  if (self->has_out) PyBuffer_Release(&self->out);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The frames of one feed as a list: (buffer, dims, dtype) each, or row indices (dest). */
static PyObject *stream_results(stream_obj *self) {
  PyObject *list = PyList_New((Py_ssize_t)self->np);
  if (!list) return NULL;
  for (size_t i = 0; i < self->np; i++) {
    pending *v = &self->p[i];
    PyObject *item;
    if (self->has_out) {
      item = PyLong_FromUnsignedLong(v->index);
    } else {
      PyObject *buf = embdpy_buffer_wrap(v->data, v->len, free, v->data);
      v->data = NULL; /* the buffer owns it now, also if wrapping failed */
      item = buf ? Py_BuildValue("(NIi)", buf, v->dims, v->dtype) : NULL;
    }
    if (!item) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

static PyObject *stream_fail(stream_obj *self, embd_result r, embd_error *err) {
  self->failed = 1;
  if (r == EMBD_ERR_OUTPUT_TOO_SMALL && self->has_out)
    return embdpy_raise_at(r, self->bad_offset, "frame %u at byte %llu: %u values do not fit out "
                           "(%zu rows of %zu bytes)", self->bad_index,
                           (unsigned long long)self->bad_offset, self->bad_dims, self->out_rows,
                           self->out_row);
  return embdpy_raise(r, err);
}

static PyObject *stream_feed(stream_obj *self, PyObject *arg) {
  if (embdpy_enter(&self->busy, "StreamDecoder") < 0) return NULL;
  embdpy_input in;
  if (embdpy_input_get(arg, &in, "chunk") < 0) {
    embdpy_leave(&self->busy);
    return NULL;
  }
  /* A chunk inside the out array would be overwritten while it is read. */
  if (self->has_out && in.data < (char *)self->out.buf + self->out.len &&
      (char *)self->out.buf < in.data + in.len) {
    embdpy_input_release(&in);
    embdpy_leave(&self->busy);
    return PyErr_Format(PyExc_ValueError, "chunk overlaps out");
  }
  embd_error err;
  embd_result r;
  self->np = 0;
  self->cb_r = EMBD_OK;
  EMBDPY_NOGIL_BEGIN(in.len)
  r = embd_stream_feed(self->s, in.data, in.len, &err);
  EMBDPY_NOGIL_END
  embdpy_input_release(&in);
  PyObject *res;
  if (r != EMBD_OK) {
    stream_clear_pending(self);
    /* A frame that failed to decode in the callback: its own error, not the stream's
     * report of the callback's result. */
    res = stream_fail(self, r, self->cb_r == r ? &self->cb_err : &err);
  } else {
    res = stream_results(self);
    stream_clear_pending(self);
  }
  embdpy_leave(&self->busy);
  return res;
}

static PyObject *stream_finish(stream_obj *self, PyObject *noargs) {
  (void)noargs;
  if (embdpy_enter(&self->busy, "StreamDecoder") < 0) return NULL;
  embd_error err;
  embd_result r = embd_stream_finish(self->s, &err);
  embdpy_leave(&self->busy);
  if (r != EMBD_OK) return stream_fail(self, r, &err);
  Py_RETURN_NONE;
}

static PyObject *stream_frames(stream_obj *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLong(embd_stream_frames(self->s));
}

static PyObject *stream_offset(stream_obj *self, void *c) {
  (void)c;
  return PyLong_FromUnsignedLongLong(embd_stream_offset(self->s));
}

static PyMethodDef stream_methods[] = {
    {"feed", (PyCFunction)stream_feed, METH_O, "feed(chunk) -> list"},
    {"finish", (PyCFunction)stream_finish, METH_NOARGS, "finish()"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef stream_getset[] = {
    {"frames", (getter)stream_frames, NULL, "frames delivered so far", NULL},
    {"offset", (getter)stream_offset, NULL, "bytes consumed so far", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject stream_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "embd._embd.Stream",
    .tp_basicsize = sizeof(stream_obj),
    .tp_dealloc = (destructor)stream_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The C stream decoder (embd/stream.h); use embd.StreamDecoder.",
    .tp_methods = stream_methods,
    .tp_getset = stream_getset,
    .tp_new = stream_new,
};

PyMethodDef embdpy_frame_methods[] = {
    {"encode_frames", py_encode_frames, METH_VARARGS,
     "encode_frames(vectors, single, raw, dtype, flags, level) -> bytes"},
    {"frame_decode", (PyCFunction)(void (*)(void))py_frame_decode, METH_FASTCALL,
     "frame_decode(data, max_dims=0, dims=0, raw=False) -> (buffer, dims, dtype)"},
    {"frame_view", (PyCFunction)(void (*)(void))py_frame_view, METH_FASTCALL,
     "frame_view(data, max_dims=0, dims=0) -> (offset, dims, dtype, nbytes) or None"},
    {"batch_decode", py_batch_decode, METH_VARARGS, "batch_decode(data, max_dims, dims, raw)"},
    {NULL, NULL, 0, NULL}};

int embdpy_frame_init(PyObject *m) {
  if (PyType_Ready(&batch_iter_type) < 0 || PyType_Ready(&stream_type) < 0) return -1;
  Py_INCREF(&batch_iter_type);
  if (PyModule_AddObject(m, "BatchIter", (PyObject *)&batch_iter_type) < 0) {
    Py_DECREF(&batch_iter_type);
    return -1;
  }
  Py_INCREF(&stream_type);
  if (PyModule_AddObject(m, "Stream", (PyObject *)&stream_type) < 0) {
    Py_DECREF(&stream_type);
    return -1;
  }
  return 0;
}
