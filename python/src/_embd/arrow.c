/* embd._embd: Arrow output (embd/arrow.h). The C export's ArrowSchema / ArrowArray leave
 * in PyCapsules named "arrow_schema" and "arrow_array" (the Arrow PyCapsule interface):
 * pyarrow imports them with _import_from_c_capsule, moving the structs and keeping the
 * buffers, which are embd's own storage (no copy anywhere). A capsule never imported
 * releases its struct when it is collected, as the interface asks. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

#include "embd/arrow.h"

static void schema_capsule_free(PyObject *cap) {
  struct ArrowSchema *s = PyCapsule_GetPointer(cap, "arrow_schema");
  if (!s) {
    PyErr_Clear();
    return;
  }
  if (s->release) s->release(s);
  free(s);
}

static void array_capsule_free(PyObject *cap) {
  struct ArrowArray *a = PyCapsule_GetPointer(cap, "arrow_array");
  if (!a) {
    PyErr_Clear();
    return;
  }
  if (a->release) a->release(a);
  free(a);
}

/* (schema capsule, array capsule) over heap copies of s and a (moved: the callers' structs
 * are left released-looking). On failure both are released. */
static PyObject *capsules(struct ArrowSchema *s, struct ArrowArray *a) {
  struct ArrowSchema *hs = malloc(sizeof *hs);
  struct ArrowArray *ha = malloc(sizeof *ha);
  if (!hs || !ha) {
    free(hs);
    free(ha);
    s->release(s);
    a->release(a);
    return PyErr_NoMemory();
  }
  *hs = *s;
  *ha = *a;
  s->release = NULL;
  a->release = NULL;
  PyObject *cs = PyCapsule_New(hs, "arrow_schema", schema_capsule_free);
  if (!cs) {
    hs->release(hs);
    free(hs);
    ha->release(ha);
    free(ha);
    return NULL;
  }
  PyObject *ca = PyCapsule_New(ha, "arrow_array", array_capsule_free);
  if (!ca) {
    Py_DECREF(cs);
    ha->release(ha);
    free(ha);
    return NULL;
  }
  return Py_BuildValue("(NN)", cs, ca);
}

/* openai_decode_arrow(body, dtype, order, dims, count) -> (schema, array) capsules of a
 * fixed_size_list<float>[dims]: the decoder's row storage moved into the array. */
static PyObject *py_openai_decode_arrow(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *body_obj;
  int dt, ord;
  Py_ssize_t dims, count;
  if (!PyArg_ParseTuple(args, "Oiinn:openai_decode_arrow", &body_obj, &dt, &ord, &dims, &count))
    return NULL;
  embd_dtype dtype;
  embd_byte_order order;
  if (embdpy_dtype_arg(dt, &dtype) < 0 || embdpy_order_arg(ord, &order) < 0) return NULL;
  if (dims < 0 || (uint64_t)dims > UINT32_MAX || count < 0)
    return PyErr_Format(PyExc_ValueError, "dims and count must be non-negative (dims below 2**32)");
  embd_openai_options o = {0};
  o.dtype = dtype;
  o.byte_order = order;
  o.expected_dims = (uint32_t)dims;
  o.expected_count = (size_t)count;
  embdpy_input body;
  if (embdpy_input_get(body_obj, &body, "body") < 0) return NULL;
  embd_openai_embeddings e;
  embd_openai_init(&e);
  struct ArrowSchema s;
  struct ArrowArray a;
  embd_error err;
  embd_result r;
  EMBDPY_NOGIL_BEGIN(body.len)
  r = embd_openai_decode(&e, body.data, body.len, &o, &err);
  if (r == EMBD_OK) r = embd_arrow_from_openai(&e, &s, &a, &err);
  EMBDPY_NOGIL_END
  embdpy_input_release(&body);
  embd_openai_free(&e);  /* empty after a move; the decoded state on a failed export */
  if (r != EMBD_OK) return embdpy_raise(r, &err);
  return capsules(&s, &a);
}

/* ArrowBatch(): rows collected with add(custom_id, rows, count, dims, first_index=0)
 * (custom_id bytes, rows a buffer of count x dims float32), exported as a struct array
 * {custom_id, index, embedding} with export() -> (schema, array) capsules. */
typedef struct {
  PyObject_HEAD
  embd_arrow_batch b;
  int busy;
} arrow_batch_obj;

static PyObject *arrow_batch_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  if (!PyArg_ParseTuple(args, ":ArrowBatch") || (kw && PyDict_Size(kw))) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "ArrowBatch takes no arguments");
    return NULL;
  }
  arrow_batch_obj *self = (arrow_batch_obj *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  embd_arrow_batch_init(&self->b);
  return (PyObject *)self;
}

static void arrow_batch_dealloc(arrow_batch_obj *self) {
  embd_arrow_batch_free(&self->b);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *arrow_batch_reserve(arrow_batch_obj *self, PyObject *args) {
  Py_ssize_t rows, ids, dims;
  if (!PyArg_ParseTuple(args, "nnn:reserve", &rows, &ids, &dims)) return NULL;
  if (rows < 0 || ids < 0 || dims < 0) return PyErr_Format(PyExc_ValueError, "reserve: negative size");
  if (embdpy_enter(&self->busy, "ArrowBatch") < 0) return NULL;
  embd_error err;
  embd_result r = embd_arrow_batch_reserve(&self->b, (size_t)rows, (size_t)ids, (size_t)dims, &err);
  embdpy_leave(&self->busy);
  if (r != EMBD_OK) return embdpy_raise(r, &err);
  Py_RETURN_NONE;
}

static PyObject *arrow_batch_add(arrow_batch_obj *self, PyObject *args) {
  const char *cid;
  Py_ssize_t cid_len, count, dims, first = 0;
  PyObject *rows_obj;
  if (!PyArg_ParseTuple(args, "y#Onn|n:add", &cid, &cid_len, &rows_obj, &count, &dims, &first)) return NULL;
  if (count < 0 || dims < 0 || first < 0) return PyErr_Format(PyExc_ValueError, "add: negative size");
  embdpy_input rows;
  if (embdpy_input_get(rows_obj, &rows, "rows") < 0) return NULL;
  if ((size_t)count * (size_t)dims > rows.len / sizeof(float)) {
    embdpy_input_release(&rows);
    return PyErr_Format(PyExc_ValueError, "add: %zd x %zd float32 need %zu bytes, the buffer has %zu",
                        count, dims, (size_t)count * (size_t)dims * sizeof(float), rows.len);
  }
  if (embdpy_enter(&self->busy, "ArrowBatch") < 0) {
    embdpy_input_release(&rows);
    return NULL;
  }
  embd_error err;
  embd_result r;
  /* memcpy of the rows: no float alignment assumed of the caller's buffer by C's rules,
   * embd_arrow_batch_add copies bytes */
  EMBDPY_NOGIL_BEGIN(rows.len)
  r = embd_arrow_batch_add(&self->b, cid, (size_t)cid_len, (const float *)rows.data, (size_t)count,
                           (size_t)dims, (size_t)first, &err);
  EMBDPY_NOGIL_END
  embdpy_leave(&self->busy);
  embdpy_input_release(&rows);
  if (r != EMBD_OK) return embdpy_raise(r, &err);
  Py_RETURN_NONE;
}

static PyObject *arrow_batch_export(arrow_batch_obj *self, PyObject *noargs) {
  (void)noargs;
  if (embdpy_enter(&self->busy, "ArrowBatch") < 0) return NULL;
  struct ArrowSchema s;
  struct ArrowArray a;
  embd_error err;
  embd_result r = embd_arrow_batch_export(&self->b, &s, &a, &err);
  embdpy_leave(&self->busy);
  if (r != EMBD_OK) return embdpy_raise(r, &err);
  return capsules(&s, &a);
}

static PyObject *arrow_batch_rows(arrow_batch_obj *self, void *closure) {
  (void)closure;
  return PyLong_FromSize_t(self->b.rows);
}

static PyMethodDef arrow_batch_methods[] = {
    {"reserve", (PyCFunction)arrow_batch_reserve, METH_VARARGS, "reserve(rows, id_bytes, dims)"},
    {"add", (PyCFunction)arrow_batch_add, METH_VARARGS, "add(custom_id: bytes, rows, count, dims, first_index=0)"},
    {"export", (PyCFunction)arrow_batch_export, METH_NOARGS,
     "export() -> (schema, array) capsules; the builder is then empty"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef arrow_batch_getset[] = {
    {"rows", (getter)arrow_batch_rows, NULL, "rows added since the last export", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject arrow_batch_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "embd._embd.ArrowBatch",
    .tp_basicsize = sizeof(arrow_batch_obj),
    .tp_dealloc = (destructor)arrow_batch_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Rows of batch output lines collected into one Arrow struct array (embd_arrow_batch).",
    .tp_methods = arrow_batch_methods,
    .tp_getset = arrow_batch_getset,
    .tp_new = arrow_batch_new,
};

int embdpy_arrow_init(PyObject *m) {
  if (PyType_Ready(&arrow_batch_type) < 0) return -1;
  Py_INCREF(&arrow_batch_type);
  if (PyModule_AddObject(m, "ArrowBatch", (PyObject *)&arrow_batch_type) < 0) {
    Py_DECREF(&arrow_batch_type);
    return -1;
  }
  return 0;
}

/* arrow_values_address(array capsule) -> the address of the float values of a
 * fixed_size_list array (or of a struct's last child, the embedding column) before any
 * import: tests compare it with what pyarrow's buffers point at (no copy). */
static PyObject *py_arrow_values_address(PyObject *self, PyObject *cap) {
  (void)self;
  struct ArrowArray *a = PyCapsule_GetPointer(cap, "arrow_array");
  if (!a) return NULL;
  if (!a->release) return PyErr_Format(PyExc_ValueError, "the array was moved (imported) already");
  if (a->n_buffers == 1 && a->n_children == 3) a = a->children[2]; /* a batch: its embedding */
  if (a->n_children != 1 || a->children[0]->n_buffers != 2)
    return PyErr_Format(PyExc_ValueError, "not an embd vector array");
  return PyLong_FromVoidPtr((void *)a->children[0]->buffers[1]);
}

PyMethodDef embdpy_arrow_methods[] = {
    {"arrow_values_address", py_arrow_values_address, METH_O,
     "arrow_values_address(array_capsule) -> int (the float values' address; for tests)"},
    {"openai_decode_arrow", py_openai_decode_arrow, METH_VARARGS,
     "openai_decode_arrow(body, dtype, order, dims, count) -> (arrow_schema, arrow_array) capsules"},
    {NULL, NULL, 0, NULL}};
