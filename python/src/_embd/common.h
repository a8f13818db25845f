/* embd._embd: the CPython extension over libembd's public C API (nothing else of the
 * library is included). Plain C API, no NumPy C API: results are memory this module owns,
 * exposed through the buffer protocol (embdpy_buffer), which the Python layer (embd/) wraps
 * with numpy.frombuffer, so one build serves numpy 1.x and 2.x.
 *
 * One file per face of the library (kernels.c, openai.c, frames.c, codec.c, writers.c), each with a
 * method table and an init hook listed once in module.c. This header is what they share:
 * the error type, the buffer object, argument helpers and the GIL rule.
 *
 * The GIL: every call whose input or output is larger than EMBDPY_NOGIL_MIN bytes releases
 * it around the C work (EMBDPY_NOGIL_BEGIN / _END). No module state is mutable after init;
 * objects with state (stream decoders, readers, iterators) refuse to be entered by a
 * second thread while one is inside them (embdpy_enter / embdpy_leave) instead of racing. */
#ifndef EMBDPY_COMMON_H
#define EMBDPY_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

#include <embd.h>

/* Below this the GIL's release and re-acquisition cost more than the work. */
#define EMBDPY_NOGIL_MIN 512

#define EMBDPY_NOGIL_BEGIN(n)               \
  {                                          \
    PyThreadState *embdpy_ts_ = NULL;        \
    if ((size_t)(n) >= EMBDPY_NOGIL_MIN) embdpy_ts_ = PyEval_SaveThread();
#define EMBDPY_NOGIL_END                     \
    if (embdpy_ts_) PyEval_RestoreThread(embdpy_ts_); \
  }

/* embd.Error (a ValueError): .code (the result's name), .offset (int or None), the message. */
extern PyObject *embdpy_Error;
/* Raises embd.Error for r with err's message and offset (err may be NULL: embd_strerror,
 * offset None). EMBD_ERR_OUT_OF_MEMORY becomes MemoryError. Returns NULL. */
PyObject *embdpy_raise(embd_result r, const embd_error *err);
/* The same with a message and offset of the binding's own (a check the C API leaves to
 * its caller, e.g. a batch of mixed dims asked for as one array). */
PyObject *embdpy_raise_at(embd_result r, uint64_t offset, const char *fmt, ...);

/* A read-only byte input: bytes, bytearray, memoryview, str (its UTF-8) or any
 * C-contiguous buffer. Holding it keeps the object alive and (for exporters) unresizable. */
typedef struct embdpy_input {
  const char *data;
  size_t len;
  Py_buffer view;
  int has_view;
} embdpy_input;
/* 0 on success; -1 with TypeError (or BufferError) set. `what` names the argument. */
int embdpy_input_get(PyObject *obj, embdpy_input *in, const char *what);
void embdpy_input_release(embdpy_input *in);
/* An `out=` argument: a writable C-contiguous buffer. 0 / -1 with the error set. */
int embdpy_output_get(PyObject *obj, Py_buffer *view, const char *what);

/* The buffer object: `len` bytes at `data`, released by release(ctx) when the last
 * reference (the numpy array's base) goes. */
typedef void (*embdpy_release_fn)(void *ctx);
/* Takes ownership of data/ctx (release is called also when this fails). */
PyObject *embdpy_buffer_wrap(void *data, size_t len, embdpy_release_fn release, void *ctx);
/* A new buffer of `len` bytes from malloc, uninitialised; *data its memory. */
PyObject *embdpy_buffer_new(size_t len, void **data);
/* The memory of a buffer object made by this module (for the Python layer's checks). */
extern PyTypeObject embdpy_BufferType;

/* One object entered by one thread at a time: *busy is the object's flag (read and set with
 * the GIL held, so the check itself does not race). -1 with RuntimeError when in use. */
int embdpy_enter(int *busy, const char *what);
static inline void embdpy_leave(int *busy) { *busy = 0; }

/* A dtype / byte order given as the C enum's integer (the Python layer parses names). */
int embdpy_dtype_arg(int dtype, embd_dtype *out);
int embdpy_order_arg(int order, embd_byte_order *out);

/* The faces' tables and init hooks (module.c lists them). An init hook adds types and
 * constants to the module; 0 / -1. */
extern PyMethodDef embdpy_kernel_methods[];
extern PyMethodDef embdpy_openai_methods[];
extern PyMethodDef embdpy_frame_methods[];
extern PyMethodDef embdpy_codec_methods[];
extern PyMethodDef embdpy_writer_methods[];
extern PyMethodDef embdpy_arrow_methods[]; /* arrow.c */
int embdpy_arrow_init(PyObject *m);
int embdpy_frame_init(PyObject *m);
int embdpy_openai_init(PyObject *m);
int embdpy_codec_init(PyObject *m);

#endif
