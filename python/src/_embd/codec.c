/* embd._embd: Codec token frames (embd/codec.h, embd/codec_stream.h, embd/tokmap.h).
 *
 * One reader type for the five stream shapes (session frames, msgpack, protobuf and their
 * delta variants): its callbacks run without the GIL and only copy each frame into malloc'd
 * memory (session TOKENS ids straight from the wire through tokens_dest); the Python
 * objects are built after the feed. The encoders take host uint32 ids from the Python
 * layer (a C-contiguous uint32 array, checked there). TokMap is a loaded map (immutable,
 * shared freely); Detok one stream's detokenizer (one thread at a time). */
#include "common.h"

#include <stdlib.h>
#include <string.h>

/* ---- helpers ---------------------------------------------------------------------------- */

static void *dup_mem(const void *p, size_t n) {
  void *q = malloc(n ? n : 1);
  if (q && n) memcpy(q, p, n);
  return q;
}

/* A str argument as a NUL-terminated UTF-8 string (no NUL inside: the C API reads up to
 * the first one). Borrowed from obj's cache: valid while obj lives. */
static const char *cstr_arg(PyObject *obj, const char *what) {
  if (!PyUnicode_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s: expected a str, not %.100s", what, Py_TYPE(obj)->tp_name);
    return NULL;
  }
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(obj, &n);
  if (!s) return NULL;
  if (strlen(s) != (size_t)n) {
    PyErr_Format(PyExc_ValueError, "%s: a string with a NUL character", what);
    return NULL;
  }
  return s;
}

/* A buffer of host uint32 ids (the Python layer passes a C-contiguous uint32 array). */
static int ids_arg(PyObject *obj, embdpy_input *in) {
  if (embdpy_input_get(obj, in, "ids") < 0) return -1;
  if (in->len % 4) {
    embdpy_input_release(in);
    PyErr_Format(PyExc_ValueError, "ids: %zu bytes are not whole uint32 values", in->len);
    return -1;
  }
  return 0;
}

/* ---- session frames: encoders ------------------------------------------------------------ */

/* codec_encode_frame(type, payload) -> bytes */
static PyObject *py_encode_frame(PyObject *self, PyObject *args) {
  (void)self;
  unsigned type;
  PyObject *payload;
  if (!PyArg_ParseTuple(args, "IO:codec_encode_frame", &type, &payload)) return NULL;
  embdpy_input in;
  if (embdpy_input_get(payload, &in, "payload") < 0) return NULL;
  size_t size;
  embd_result r = embd_codec_frame_size(type, in.len, &size);
  PyObject *b = NULL;
  if (r != EMBD_OK) {
    embdpy_raise_at(r, 0, "a frame of type 0x%02x with %zu payload bytes: %s", type, in.len,
                    embd_strerror(r));
    goto done;
  }
  b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
  if (!b) goto done;
  size_t n = 0;
  EMBDPY_NOGIL_BEGIN(size)
  r = embd_codec_encode_frame(type, in.data, in.len, PyBytes_AS_STRING(b), size, &n);
  EMBDPY_NOGIL_END
  if (r != EMBD_OK) {
    Py_CLEAR(b);
    /* The payload broke the frame's rule: say where (the decoder's code, the UTF-8 offset
     * relative to the payload). */
    size_t bad = r == EMBD_ERR_CODEC_UTF8 ? embd_codec_utf8_check(in.data, in.len) : 0;
    if (bad)
      embdpy_raise_at(r, bad - 1, "%s payload: invalid UTF-8 at byte %zu",
                      embd_codec_type_name(type), bad - 1);
    else
      embdpy_raise_at(r, 0, "%s payload of %zu bytes: %s", embd_codec_type_name(type), in.len,
                      embd_strerror(r));
  }
done:
  embdpy_input_release(&in);
  return b;
}

/* codec_encode_tokens(ids, per_frame) -> bytes: per_frame 0 is one frame (even empty). */
static PyObject *py_encode_tokens(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *obj;
  Py_ssize_t per_frame;
  if (!PyArg_ParseTuple(args, "On:codec_encode_tokens", &obj, &per_frame)) return NULL;
  if (per_frame < 0) return PyErr_Format(PyExc_ValueError, "per_frame must be >= 1");
  embdpy_input in;
  if (ids_arg(obj, &in) < 0) return NULL;
  const uint32_t *ids = (const uint32_t *)(const void *)in.data;
  size_t n = in.len / 4, size = 0;
  embd_result r = per_frame ? embd_codec_tokens_frames_size(n, (size_t)per_frame, &size)
                            : embd_codec_frame_size(EMBD_CODEC_TOKENS, in.len, &size);
  PyObject *b = NULL;
  if (r != EMBD_OK) {
    embdpy_raise_at(r, 0, "%zu ids do not fit TOKENS frames (%s)", n, embd_strerror(r));
    goto done;
  }
  b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
  if (!b) goto done;
  size_t w = 0;
  EMBDPY_NOGIL_BEGIN(size)
  r = per_frame ? embd_codec_encode_tokens_frames(ids, n, (size_t)per_frame, PyBytes_AS_STRING(b),
                                                  size, &w)
                : embd_codec_encode_tokens(ids, n, PyBytes_AS_STRING(b), size, &w);
  EMBDPY_NOGIL_END
  if (r != EMBD_OK) {
    Py_CLEAR(b);
    embdpy_raise(r, NULL);
  }
done:
  embdpy_input_release(&in);
  return b;
}

/* codec_forward(data, types, max_payload, flags) -> (bytes, frames) */
static PyObject *py_forward(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *obj;
  unsigned types;
  Py_ssize_t max_payload;
  unsigned long long flags;
  if (!PyArg_ParseTuple(args, "OInK:codec_forward", &obj, &types, &max_payload, &flags)) return NULL;
  if (max_payload < 0) return PyErr_Format(PyExc_ValueError, "max_payload must be >= 0");
  embdpy_input in;
  if (embdpy_input_get(obj, &in, "data") < 0) return NULL;
  embd_codec_decode_options o;
  memset(&o, 0, sizeof o);
  o.max_payload = (size_t)max_payload;
  o.flags = flags;
  /* The output is at most the input (frames copied unchanged). */
  PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)in.len);
  if (!b) {
    embdpy_input_release(&in);
    return NULL;
  }
  size_t w = 0, frames = 0;
  embd_error err;
  embd_result r;
  EMBDPY_NOGIL_BEGIN(in.len)
  r = embd_codec_forward(in.data, in.len, &o, types, PyBytes_AS_STRING(b), in.len, &w, &frames, &err);
  EMBDPY_NOGIL_END
  embdpy_input_release(&in);
  if (r != EMBD_OK) {
    Py_DECREF(b);
    return embdpy_raise(r, &err);
  }
  if (w != in.len && _PyBytes_Resize(&b, (Py_ssize_t)w) < 0) return NULL;
  return Py_BuildValue("(Nn)", b, (Py_ssize_t)frames);
}

/* ---- handshake ---------------------------------------------------------------------------- */

typedef struct {
  const char *name;
  size_t off;
  int list;
} field_def;

#define HF(f, l) {#f, offsetof(embd_codec_hello, f), l}
static const field_def hello_fields[] = {
    HF(codec_version, 0),        HF(accept_tokenizers, 1),      HF(modalities, 1),
    HF(accept_latent_spaces, 1), HF(accept_decoders, 1),        HF(accept_pipelines, 1),
    HF(accept_safety_policies, 1), HF(accept_transports, 1),    HF(accept_encoding, 1),
    {NULL, 0, 0}};
#undef HF
#define RF(f, l) {#f, offsetof(embd_codec_ready, f), l}
static const field_def ready_fields[] = {
    RF(codec_version, 0),      RF(modality, 0),         RF(tokenizer_id, 0),
    RF(map_url, 0),            RF(map_hash, 0),         RF(min_codec_version, 0),
    RF(required_features, 1),  RF(safety_policy_id, 0), RF(safety_policy_hash, 0),
    RF(transport, 0),          RF(encoding, 0),         RF(latent_space_id, 0),
    RF(latent_map_url, 0),     RF(latent_map_hash, 0),  RF(decoder_runtime, 0),
    RF(pipeline, 0),           {NULL, 0, 0}};
#undef RF

#define MAX_FIELDS 16

/* Fills the struct at base from a dict of field -> str / sequence of str (None: absent).
 * Pointers borrow from the dict's objects (kept in keep[]) and lists are malloc'd (lists[]):
 * release with fields_release. */
typedef struct {
  PyObject *keep[MAX_FIELDS];
  const char **lists[MAX_FIELDS];
  int nkeep, nlists;
} fields_hold;

static void fields_release(fields_hold *h) {
  for (int i = 0; i < h->nkeep; i++) Py_DECREF(h->keep[i]);
  for (int i = 0; i < h->nlists; i++) free(h->lists[i]);
  h->nkeep = h->nlists = 0;
}

static int fields_fill(const field_def *defs, const char *what, PyObject *dict, void *base,
                       fields_hold *h) {
  memset(h, 0, sizeof *h);
  if (!PyDict_Check(dict)) {
    PyErr_Format(PyExc_TypeError, "%s: expected a dict of fields", what);
    return -1;
  }
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dict, &pos, &key, &value)) {
    const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    if (!k) {
      if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "%s: field names are str", what);
      goto fail;
    }
    const field_def *d = defs;
    while (d->name && strcmp(d->name, k)) d++;
    if (!d->name) {
      PyErr_Format(PyExc_TypeError, "%s has no field %R", what, key);
      goto fail;
    }
    if (value == Py_None) continue;
    char label[96];
    snprintf(label, sizeof label, "%s %s", what, d->name);
    if (!d->list) {
      const char *s = cstr_arg(value, label);
      if (!s) goto fail;
      *(const char **)(void *)((char *)base + d->off) = s;
      continue;
    }
    if (PyUnicode_Check(value) || PyBytes_Check(value)) {
      PyErr_Format(PyExc_TypeError, "%s: expected a list of str, not a single %.100s", label,
                   Py_TYPE(value)->tp_name);
      goto fail;
    }
    PyObject *fast = PySequence_Fast(value, label);
    if (!fast) goto fail;
    h->keep[h->nkeep++] = fast;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    const char **v = malloc(((size_t)n + 1) * sizeof *v);
    if (!v) {
      PyErr_NoMemory();
      goto fail;
    }
    h->lists[h->nlists++] = v;
    for (Py_ssize_t i = 0; i < n; i++)
      if (!(v[i] = cstr_arg(PySequence_Fast_GET_ITEM(fast, i), label))) goto fail;
    *(embd_codec_list *)(void *)((char *)base + d->off) = (embd_codec_list){v, (size_t)n};
  }
  return 0;
fail:
  fields_release(h);
  return -1;
}

typedef embd_result (*build_fn)(const void *s, char *json, size_t cap, size_t *len, embd_error *err);
static embd_result hello_build(const void *s, char *j, size_t c, size_t *l, embd_error *e) {
  return embd_codec_hello_build(s, j, c, l, e);
}
static embd_result ready_build(const void *s, char *j, size_t c, size_t *l, embd_error *e) {
  return embd_codec_ready_build(s, j, c, l, e);
}

static PyObject *build_json(build_fn build, const void *s) {
  size_t len = 0;
  embd_error err;
  embd_result r = build(s, NULL, 0, &len, &err);
  if (r == EMBD_OK) return PyBytes_FromStringAndSize("", 0);
  if (r != EMBD_ERR_OUTPUT_TOO_SMALL) return embdpy_raise(r, &err);
  /* One byte more: the builder adds a NUL when there is room. */
  char *buf = malloc(len + 1);
  if (!buf) return PyErr_NoMemory();
  r = build(s, buf, len + 1, &len, &err);
  PyObject *b = r == EMBD_OK ? PyBytes_FromStringAndSize(buf, (Py_ssize_t)len) : embdpy_raise(r, &err);
  free(buf);
  return b;
}

/* codec_hello_build(fields) -> JSON bytes */
static PyObject *py_hello_build(PyObject *self, PyObject *dict) {
  (void)self;
  embd_codec_hello h;
  memset(&h, 0, sizeof h);
  fields_hold hold;
  if (fields_fill(hello_fields, "HELLO", dict, &h, &hold) < 0) return NULL;
  PyObject *b = build_json(hello_build, &h);
  fields_release(&hold);
  return b;
}

static PyObject *py_ready_build(PyObject *self, PyObject *dict) {
  (void)self;
  embd_codec_ready rd;
  memset(&rd, 0, sizeof rd);
  fields_hold hold;
  if (fields_fill(ready_fields, "READY", dict, &rd, &hold) < 0) return NULL;
  PyObject *b = build_json(ready_build, &rd);
  fields_release(&hold);
  return b;
}

/* Every field of the parsed struct: str or None, lists as list of str. */
static PyObject *fields_dict(const field_def *defs, const void *base) {
  PyObject *d = PyDict_New();
  if (!d) return NULL;
  for (const field_def *f = defs; f->name; f++) {
    PyObject *v;
    if (f->list) {
      const embd_codec_list *l = (const embd_codec_list *)(const void *)((const char *)base + f->off);
      v = PyList_New((Py_ssize_t)l->n);
      for (size_t i = 0; v && i < l->n; i++) {
        PyObject *s = PyUnicode_FromString(l->v[i]);
        if (!s) Py_CLEAR(v);
        else PyList_SET_ITEM(v, (Py_ssize_t)i, s);
      }
    } else {
      const char *s = *(const char *const *)(const void *)((const char *)base + f->off);
      v = s ? PyUnicode_FromString(s) : Py_NewRef(Py_None);
    }
    if (!v || PyDict_SetItemString(d, f->name, v) < 0) {
      Py_XDECREF(v);
      Py_DECREF(d);
      return NULL;
    }
    Py_DECREF(v);
  }
  return d;
}

/* codec_hello_parse(payload) -> dict */
static PyObject *py_hello_parse(PyObject *self, PyObject *arg) {
  (void)self;
  embdpy_input in;
  if (embdpy_input_get(arg, &in, "payload") < 0) return NULL;
  embd_codec_hello h;
  embd_error err;
  embd_result r = embd_codec_hello_parse(in.data, in.len, &h, &err);
  embdpy_input_release(&in);
  if (r != EMBD_OK) return embdpy_raise(r, &err);
  PyObject *d = fields_dict(hello_fields, &h);
  embd_codec_hello_free(&h);
  return d;
}

static PyObject *py_ready_parse(PyObject *self, PyObject *arg) {
  (void)self;
  embdpy_input in;
  if (embdpy_input_get(arg, &in, "payload") < 0) return NULL;
  embd_codec_ready rd;
  embd_error err;
  embd_result r = embd_codec_ready_parse(in.data, in.len, &rd, &err);
  embdpy_input_release(&in);
  if (r != EMBD_OK) return embdpy_raise(r, &err);
  PyObject *d = fields_dict(ready_fields, &rd);
  embd_codec_ready_free(&rd);
  return d;
}

/* codec_pick_tokenizer(hello_payload, supported) -> index in the client's list */
static PyObject *py_pick_tokenizer(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *payload, *supported;
  if (!PyArg_ParseTuple(args, "OO:codec_pick_tokenizer", &payload, &supported)) return NULL;
  if (PyUnicode_Check(supported))
    return PyErr_Format(PyExc_TypeError, "supported: expected a list of str, not a str");
  PyObject *fast = PySequence_Fast(supported, "supported: expected a list of str");
  if (!fast) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  const char **v = malloc(((size_t)n + 1) * sizeof *v);
  if (!v) {
    Py_DECREF(fast);
    return PyErr_NoMemory();
  }
  PyObject *res = NULL;
  for (Py_ssize_t i = 0; i < n; i++)
    if (!(v[i] = cstr_arg(PySequence_Fast_GET_ITEM(fast, i), "supported"))) goto done;
  embdpy_input in;
  if (embdpy_input_get(payload, &in, "hello") < 0) goto done;
  embd_codec_hello h;
  embd_error err;
  embd_result r = embd_codec_hello_parse(in.data, in.len, &h, &err);
  embdpy_input_release(&in);
  if (r != EMBD_OK) {
    embdpy_raise(r, &err);
    goto done;
  }
  size_t index = 0;
  r = embd_codec_pick_tokenizer(&h, v, (size_t)n, &index, &err);
  embd_codec_hello_free(&h);
  res = r == EMBD_OK ? PyLong_FromSize_t(index) : embdpy_raise(r, &err);
done:
  free(v);
  Py_DECREF(fast);
  return res;
}

/* ---- msgpack / protobuf encoders ------------------------------------------------------- */

/* codec_stream_encode(format, ids, done, finish_reason, tool_calls, delta, base_id, flags)
 * format 1 msgpack, 2 protobuf; finish_reason / tool_calls None or bytes-like / str. */
static PyObject *py_stream_encode(PyObject *self, PyObject *args) {
  (void)self;
  int format, done, delta;
  PyObject *ids_o, *fr_o, *tc_o;
  unsigned long base_id;
  unsigned long long flags;
  if (!PyArg_ParseTuple(args, "iOpOOpkK:codec_stream_encode", &format, &ids_o, &done, &fr_o,
                        &tc_o, &delta, &base_id, &flags))
    return NULL;
  if (format != 1 && format != 2) return PyErr_Format(PyExc_ValueError, "format must be 1 or 2");
  if (base_id > UINT32_MAX) return PyErr_Format(PyExc_ValueError, "base_id must be in 0..2**32-1");
  embdpy_input ids, fr, tc;
  int has_fr = 0, has_tc = 0;
  if (ids_arg(ids_o, &ids) < 0) return NULL;
  if (fr_o != Py_None) {
    if (embdpy_input_get(fr_o, &fr, "finish_reason") < 0) goto fail_ids;
    has_fr = 1;
  }
  if (tc_o != Py_None) {
    if (PyUnicode_Check(tc_o)) {
      PyErr_Format(PyExc_TypeError, "tool_calls: expected the encoded bytes, not a str");
      goto fail_fr;
    }
    if (embdpy_input_get(tc_o, &tc, "tool_calls") < 0) goto fail_fr;
    has_tc = 1;
  }
  embd_codec_stream_frame f;
  memset(&f, 0, sizeof f);
  f.ids = (const uint32_t *)(const void *)ids.data;
  f.n_ids = ids.len / 4;
  f.done = done;
  if (has_fr) {
    f.finish_reason = fr.data ? fr.data : "";
    f.finish_reason_len = fr.len;
  }
  if (has_tc) {
    f.tool_calls = (const uint8_t *)(tc.data ? tc.data : "");
    f.tool_calls_len = tc.len;
  }
  size_t size = 0;
  embd_result r;
  if (format == 1)
    r = delta ? embd_codec_msgpack_delta_encoded_size(&f, (uint32_t)base_id, &size)
              : embd_codec_msgpack_encoded_size(&f, &size);
  else
    r = delta ? embd_codec_proto_delta_encoded_size(&f, (uint32_t)base_id, flags, &size)
              : embd_codec_proto_encoded_size(&f, &size);
  PyObject *b = NULL;
  if (r != EMBD_OK) {
    embdpy_raise_at(r, 0, "%s%s frame: %s (tool_calls must be %s; protobuf-delta: neighbouring "
                    "ids less than 2**31 apart)", format == 1 ? "msgpack" : "protobuf",
                    delta ? "-delta" : "", embd_strerror(r),
                    format == 1 ? "one msgpack value" : "field-4 length-delimited records");
    goto done;
  }
  b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
  if (!b) goto done;
  size_t w = 0;
  EMBDPY_NOGIL_BEGIN(size)
  char *out = PyBytes_AS_STRING(b);
  if (format == 1)
    r = delta ? embd_codec_msgpack_delta_encode(&f, (uint32_t)base_id, out, size, &w)
              : embd_codec_msgpack_encode(&f, out, size, &w);
  else
    r = delta ? embd_codec_proto_delta_encode(&f, (uint32_t)base_id, flags, out, size, &w)
              : embd_codec_proto_encode(&f, out, size, &w);
  EMBDPY_NOGIL_END
  if (r != EMBD_OK) {
    Py_CLEAR(b);
    embdpy_raise(r, NULL);
  } else if (w != size && _PyBytes_Resize(&b, (Py_ssize_t)w) < 0) {
    b = NULL;
  }
done:
  if (has_tc) embdpy_input_release(&tc);
fail_fr:
  if (has_fr) embdpy_input_release(&fr);
fail_ids:
  embdpy_input_release(&ids);
  return b;
}

/* ---- the reader ---------------------------------------------------------------------------- */

enum { MODE_SESSION = 0, MODE_MSGPACK = 1, MODE_PROTOBUF = 2 };

/* A frame delivered during one feed (without the GIL), turned into a tuple after. */
typedef struct {
  int type, done, has_fr, has_tc;
  uint64_t index, offset, size;
  uint32_t *ids; /* NULL: not a TOKENS frame */
  size_t n_ids;
  uint8_t *payload; /* session frames other than TOKENS */
  size_t payload_len;
  char *fr;
  size_t fr_len;
  uint8_t *tc;
  size_t tc_len;
} cframe;

typedef struct {
  PyObject_HEAD
  int mode, busy;
  embd_codec_reader *sr;
  embd_codec_msgpack_reader *mr;
  embd_codec_proto_reader *pr;
  cframe *p;
  size_t np, cap;
  uint32_t *dest; /* session: the TOKENS frame being written by tokens_dest */
} reader_obj;

static void cframe_free(cframe *v) {
  free(v->ids);
  free(v->payload);
  free(v->fr);
  free(v->tc);
  memset(v, 0, sizeof *v);
}

static void reader_clear(reader_obj *s) {
  for (size_t i = 0; i < s->np; i++) cframe_free(&s->p[i]);
  s->np = 0;
}

static embd_result push(reader_obj *s, cframe *v) {
  if (s->np == s->cap) {
    size_t c = s->cap ? s->cap * 2 : 16;
    cframe *q = realloc(s->p, c * sizeof *q);
    if (!q) {
      cframe_free(v);
      return EMBD_ERR_OUT_OF_MEMORY;
    }
    s->p = q;
    s->cap = c;
  }
  s->p[s->np++] = *v;
  return EMBD_OK;
}

static uint32_t *session_dest(void *user, uint32_t index, size_t n) {
  (void)index;
  reader_obj *s = user;
  free(s->dest);
  s->dest = malloc(n ? n * 4 : 4); /* NULL: the frame takes the assembled path */
  return s->dest;
}

static embd_result session_frame(void *user, const embd_codec_frame *f) {
  reader_obj *s = user;
  cframe v;
  memset(&v, 0, sizeof v);
  v.type = f->type;
  v.index = f->index;
  v.offset = f->offset;
  v.size = EMBD_CODEC_HEADER_SIZE + (uint64_t)f->payload_len;
  if (f->type == EMBD_CODEC_TOKENS) {
    v.n_ids = f->payload_len / 4;
    if (f->ids && f->ids == s->dest) {
      v.ids = s->dest; /* written in place by tokens_dest */
      s->dest = NULL;
    } else if (f->ids) {
      if (!(v.ids = dup_mem(f->ids, v.n_ids * 4))) return EMBD_ERR_OUT_OF_MEMORY;
    } else {
      size_t n = v.n_ids;
      if (!(v.ids = malloc(n ? n * 4 : 4))) return EMBD_ERR_OUT_OF_MEMORY;
      embd_result r = embd_codec_tokens(f, v.ids, n, &n);
      if (r != EMBD_OK) {
        cframe_free(&v);
        return r;
      }
    }
  } else {
    v.done = f->type == EMBD_CODEC_EOS || f->type == EMBD_CODEC_ERROR;
    v.payload_len = f->payload_len;
    if (!(v.payload = dup_mem(f->payload, f->payload_len))) return EMBD_ERR_OUT_OF_MEMORY;
  }
  return push(s, &v);
}

static embd_result stream_frame(void *user, const embd_codec_stream_frame *f) {
  reader_obj *s = user;
  cframe v;
  memset(&v, 0, sizeof v);
  v.type = EMBD_CODEC_TOKENS;
  v.index = f->index;
  v.offset = f->offset;
  v.size = f->size;
  v.done = f->done;
  v.n_ids = f->n_ids;
  if (!(v.ids = dup_mem(f->ids, f->n_ids * 4))) return EMBD_ERR_OUT_OF_MEMORY;
  if (f->finish_reason) {
    v.has_fr = 1;
    v.fr_len = f->finish_reason_len;
    if (!(v.fr = dup_mem(f->finish_reason, f->finish_reason_len))) goto oom;
  }
  if (f->tool_calls) {
    v.has_tc = 1;
    v.tc_len = f->tool_calls_len;
    if (!(v.tc = dup_mem(f->tool_calls, f->tool_calls_len))) goto oom;
  }
  return push(s, &v);
oom:
  cframe_free(&v);
  return EMBD_ERR_OUT_OF_MEMORY;
}

/* CodecReader(mode, max_bytes, max_ids, flags): mode 0 session (max_bytes: max_payload,
 * flags EMBD_CODEC_*), 1 msgpack, 2 protobuf (max_bytes: max_frame_bytes, flags
 * EMBD_CODEC_STREAM_*). */
static PyObject *reader_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  int mode;
  Py_ssize_t max_bytes = 0, max_ids = 0;
  unsigned long long flags = 0;
  static char *kwlist[] = {"mode", "max_bytes", "max_ids", "flags", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "i|nnK:CodecReader", kwlist, &mode, &max_bytes,
                                   &max_ids, &flags))
    return NULL;
  if (mode < MODE_SESSION || mode > MODE_PROTOBUF)
    return PyErr_Format(PyExc_ValueError, "mode %d: 0 session, 1 msgpack, 2 protobuf", mode);
  if (max_bytes < 0 || max_ids < 0)
    return PyErr_Format(PyExc_ValueError, "limits must be >= 0");
  reader_obj *self = (reader_obj *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->mode = mode;
  embd_result r;
  if (mode == MODE_SESSION) {
    embd_codec_reader_options o;
    memset(&o, 0, sizeof o);
    o.max_payload = (size_t)max_bytes;
    o.on_frame = session_frame;
    o.tokens_dest = session_dest;
    o.user = self;
    o.flags = flags;
    r = embd_codec_reader_create(&o, &self->sr);
  } else {
    embd_codec_stream_options o;
    memset(&o, 0, sizeof o);
    o.max_frame_bytes = (size_t)max_bytes;
    o.max_ids = (size_t)max_ids;
    o.on_frame = stream_frame;
    o.user = self;
    o.flags = flags;
    r = mode == MODE_MSGPACK ? embd_codec_msgpack_create(&o, &self->mr)
                             : embd_codec_proto_create(&o, &self->pr);
  }
  if (r != EMBD_OK) {
    Py_DECREF(self);
    return embdpy_raise_at(r, 0, "reader options refused (%s): limits in range, flags known",
                           embd_strerror(r));
  }
  return (PyObject *)self;
}

static void reader_dealloc(reader_obj *self) {
  if (self->sr) embd_codec_reader_destroy(self->sr);
  if (self->mr) embd_codec_msgpack_destroy(self->mr);
  if (self->pr) embd_codec_proto_destroy(self->pr);
  reader_clear(self);
  free(self->p);
  free(self->dest);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* One frame's tuple: (type, index, offset, size, ids buffer | None, payload bytes | None,
 * done, finish_reason str | None, tool_calls bytes | None). Takes v's memory. */
static PyObject *cframe_tuple(cframe *v) {
  PyObject *ids = Py_None, *payload = Py_None, *fr = Py_None, *tc = Py_None;
  Py_INCREF(Py_None);
  Py_INCREF(Py_None);
  Py_INCREF(Py_None);
  Py_INCREF(Py_None);
  PyObject *t = NULL;
  if (v->ids) {
    Py_DECREF(ids);
    ids = embdpy_buffer_wrap(v->ids, v->n_ids * 4, free, v->ids);
    v->ids = NULL; /* the buffer owns it now, also if wrapping failed */
    if (!ids) goto done;
  }
  if (v->payload) {
    Py_DECREF(payload);
    if (!(payload = PyBytes_FromStringAndSize((const char *)v->payload, (Py_ssize_t)v->payload_len)))
      goto done;
  }
  if (v->has_fr) {
    Py_DECREF(fr);
    /* Bytes as sent (the C API does not check them): undecodable bytes survive as
     * surrogate escapes. */
    if (!(fr = PyUnicode_DecodeUTF8(v->fr, (Py_ssize_t)v->fr_len, "surrogateescape"))) goto done;
  }
  if (v->has_tc) {
    Py_DECREF(tc);
    if (!(tc = PyBytes_FromStringAndSize((const char *)v->tc, (Py_ssize_t)v->tc_len))) goto done;
  }
  t = Py_BuildValue("(iKKKOOOOO)", v->type, (unsigned long long)v->index,
                    (unsigned long long)v->offset, (unsigned long long)v->size, ids, payload,
                    v->done ? Py_True : Py_False, fr, tc);
done:
  Py_XDECREF(ids);
  Py_XDECREF(payload);
  Py_XDECREF(fr);
  Py_XDECREF(tc);
  cframe_free(v);
  return t;
}

static PyObject *reader_results(reader_obj *self) {
  PyObject *list = PyList_New((Py_ssize_t)self->np);
  if (list)
    for (size_t i = 0; i < self->np; i++) {
      PyObject *t = cframe_tuple(&self->p[i]);
      if (!t) {
        Py_CLEAR(list);
        break;
      }
      PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
  reader_clear(self);
  return list;
}

/* The error of a failed feed, with the frames completed before it in the same feed as the
 * exception's `frames` (the Python layer turns them into Frame objects). */
static PyObject *reader_fail(reader_obj *self, embd_result r, const embd_error *err) {
  PyObject *done = reader_results(self);
  if (!done) PyErr_Clear();
  embdpy_raise(r, err);
  if (done && PyErr_ExceptionMatches(embdpy_Error)) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (v && PyObject_SetAttrString(v, "frames", done) < 0) PyErr_Clear();
    PyErr_Restore(t, v, tb);
  }
  Py_XDECREF(done);
  return NULL;
}

static embd_result reader_feed_c(reader_obj *s, const void *data, size_t len, embd_error *err) {
  switch (s->mode) {
  case MODE_SESSION: return embd_codec_reader_feed(s->sr, data, len, err);
  case MODE_MSGPACK: return embd_codec_msgpack_feed(s->mr, data, len, err);
  default: return embd_codec_proto_feed(s->pr, data, len, err);
  }
}

static PyObject *reader_feed(reader_obj *self, PyObject *arg) {
  if (embdpy_enter(&self->busy, "TokenReader") < 0) return NULL;
  embdpy_input in;
  if (embdpy_input_get(arg, &in, "chunk") < 0) {
    embdpy_leave(&self->busy);
    return NULL;
  }
  embd_error err;
  embd_result r;
  reader_clear(self);
  EMBDPY_NOGIL_BEGIN(in.len)
  r = reader_feed_c(self, in.data ? in.data : "", in.len, &err);
  EMBDPY_NOGIL_END
  embdpy_input_release(&in);
  PyObject *res = r == EMBD_OK ? reader_results(self) : reader_fail(self, r, &err);
  embdpy_leave(&self->busy);
  return res;
}

static PyObject *reader_finish(reader_obj *self, PyObject *noargs) {
  (void)noargs;
  if (embdpy_enter(&self->busy, "TokenReader") < 0) return NULL;
  embd_error err;
  embd_result r;
  reader_clear(self);
  switch (self->mode) {
  case MODE_SESSION: r = embd_codec_reader_finish(self->sr, &err); break;
  case MODE_MSGPACK: r = embd_codec_msgpack_finish(self->mr, &err); break;
  default: r = embd_codec_proto_finish(self->pr, &err); break;
  }
  PyObject *res = r == EMBD_OK ? reader_results(self) : reader_fail(self, r, &err);
  embdpy_leave(&self->busy);
  return res;
}

static PyObject *reader_frames(reader_obj *self, void *c) {
  (void)c;
  switch (self->mode) {
  case MODE_SESSION: return PyLong_FromUnsignedLong(embd_codec_reader_frames(self->sr));
  case MODE_MSGPACK: return PyLong_FromUnsignedLongLong(embd_codec_msgpack_frames(self->mr));
  default: return PyLong_FromUnsignedLongLong(embd_codec_proto_frames(self->pr));
  }
}

static PyObject *reader_offset(reader_obj *self, void *c) {
  (void)c;
  switch (self->mode) {
  case MODE_SESSION: return PyLong_FromUnsignedLongLong(embd_codec_reader_offset(self->sr));
  case MODE_MSGPACK: return PyLong_FromUnsignedLongLong(embd_codec_msgpack_offset(self->mr));
  default: return PyLong_FromUnsignedLongLong(embd_codec_proto_offset(self->pr));
  }
}

static PyMethodDef reader_methods[] = {
    {"feed", (PyCFunction)reader_feed, METH_O, "feed(chunk) -> list of frame tuples"},
    {"finish", (PyCFunction)reader_finish, METH_NOARGS, "finish() -> [] (raises on a partial frame)"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef reader_getset[] = {
    {"frames", (getter)reader_frames, NULL, "frames delivered so far", NULL},
    {"offset", (getter)reader_offset, NULL, "bytes consumed so far", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject reader_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "embd._embd.CodecReader",
    .tp_basicsize = sizeof(reader_obj),
    .tp_dealloc = (destructor)reader_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The C Codec readers (embd/codec.h, embd/codec_stream.h); use embd.codec.TokenReader.",
    .tp_methods = reader_methods,
    .tp_getset = reader_getset,
    .tp_new = reader_new,
};

/* ---- tokenizer maps --------------------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  embd_tokmap *map;
} tokmap_obj;

static PyTypeObject tokmap_type;

static PyObject *tokmap_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *data, *hash_o = Py_None;
  static char *kwlist[] = {"data", "sha256", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:TokMap", kwlist, &data, &hash_o)) return NULL;
  const char *hash = NULL;
  if (hash_o != Py_None && !(hash = cstr_arg(hash_o, "sha256"))) return NULL;
  embdpy_input in;
  if (embdpy_input_get(data, &in, "data") < 0) return NULL;
  tokmap_obj *self = (tokmap_obj *)type->tp_alloc(type, 0);
  if (!self) {
    embdpy_input_release(&in);
    return NULL;
  }
  embd_error err;
  embd_result r;
  EMBDPY_NOGIL_BEGIN(in.len)
  r = embd_tokmap_load(in.data, in.len, hash, &self->map, &err);
  EMBDPY_NOGIL_END
  embdpy_input_release(&in);
  if (r != EMBD_OK) {
    Py_DECREF(self);
    return embdpy_raise(r, &err);
  }
  return (PyObject *)self;
}

static void tokmap_dealloc(tokmap_obj *self) {
  if (self->map) embd_tokmap_free(self->map);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Detokenizer output: n ids (or, ids NULL, the finish) into a new str. All or nothing: a
 * short buffer is retried at the size the C call names. */
static PyObject *detok_text(embd_detok *d, const embd_tokmap *map, const uint32_t *ids, size_t n,
                            int finish) {
  size_t bound = embd_detok_bound(map, n), guess = n * 8 + 64;
  size_t cap = bound < guess ? bound : guess;
  for (int pass = 0; pass < 2; pass++) {
    char *out = malloc(cap ? cap : 1);
    if (!out) return PyErr_NoMemory();
    size_t w = 0;
    embd_error err;
    embd_result r;
    EMBDPY_NOGIL_BEGIN(n * 4)
    r = finish ? embd_detok_finish(d, out, cap, &w, &err)
               : embd_detok_feed(d, ids, n, out, cap, &w, &err);
    EMBDPY_NOGIL_END
    if (r == EMBD_OK) {
      PyObject *s = PyUnicode_DecodeUTF8(out, (Py_ssize_t)w, NULL);
      free(out);
      return s;
    }
    free(out);
    if (r != EMBD_ERR_OUTPUT_TOO_SMALL || pass) return embdpy_raise(r, &err);
    cap = w;
  }
  return NULL;
}

/* detokenize(ids, flags) -> str: a whole text (the detokenizer's non-partial feed). */
static PyObject *tokmap_detokenize(tokmap_obj *self, PyObject *args) {
  PyObject *ids_o;
  unsigned flags;
  if (!PyArg_ParseTuple(args, "OI:detokenize", &ids_o, &flags)) return NULL;
  embdpy_input in;
  if (ids_arg(ids_o, &in) < 0) return NULL;
  embd_detok *d;
  embd_result r = embd_detok_create(self->map, flags, &d);
  PyObject *s = NULL;
  if (r != EMBD_OK)
    embdpy_raise_at(r, 0, "detokenizer flags 0x%x refused (%s)", flags, embd_strerror(r));
  else {
    s = detok_text(d, self->map, (const uint32_t *)(const void *)in.data, in.len / 4, 0);
    embd_detok_destroy(d);
  }
  embdpy_input_release(&in);
  return s;
}

static PyObject *tokmap_lookup(tokmap_obj *self, PyObject *arg) {
  unsigned long id = PyLong_AsUnsignedLong(arg);
  if (id == (unsigned long)-1 && PyErr_Occurred()) return NULL;
  if (id > UINT32_MAX) return PyErr_Format(PyExc_OverflowError, "token id %lu is not a uint32", id);
  const char *bytes;
  size_t len;
  embd_token_kind kind;
  embd_result r = embd_tokmap_lookup(self->map, (uint32_t)id, &bytes, &len, &kind);
  if (r != EMBD_OK)
    return embdpy_raise_at(r, 0, "token id %lu is not in map \"%s\"", id, embd_tokmap_id(self->map));
  return Py_BuildValue("(y#i)", bytes, (Py_ssize_t)len, (int)kind);
}

static PyObject *tokmap_specials(tokmap_obj *self, PyObject *noargs) {
  (void)noargs;
  size_t n = embd_tokmap_special_count(self->map);
  PyObject *list = PyList_New((Py_ssize_t)n);
  for (size_t i = 0; list && i < n; i++) {
    const char *name;
    uint32_t id;
    embd_result r = embd_tokmap_special(self->map, i, &name, &id);
    PyObject *t = r == EMBD_OK ? Py_BuildValue("(sk)", name, (unsigned long)id) : embdpy_raise(r, NULL);
    if (!t) {
      Py_CLEAR(list);
      break;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, t);
  }
  return list;
}

static PyObject *tokmap_info(tokmap_obj *self, PyObject *noargs) {
  (void)noargs;
  uint32_t bs = 0, be = 0;
  int has_bf = embd_tokmap_byte_fallback(self->map, &bs, &be);
  PyObject *bf = has_bf ? Py_BuildValue("(kk)", (unsigned long)bs, (unsigned long)be) : Py_NewRef(Py_None);
  if (!bf) return NULL;
  return Py_BuildValue("{s:s,s:s,s:s,s:s,s:K,s:n,s:n,s:s,s:i,s:N}", "id",
                       embd_tokmap_id(self->map), "version", embd_tokmap_version(self->map),
                       "published_at", embd_tokmap_published_at(self->map), "sha256",
                       embd_tokmap_hash(self->map), "vocab_size",
                       (unsigned long long)embd_tokmap_vocab_size(self->map), "token_count",
                       (Py_ssize_t)embd_tokmap_token_count(self->map), "special_count",
                       (Py_ssize_t)embd_tokmap_special_count(self->map), "schema",
                       embd_tokmap_schema(self->map), "encoder",
                       (int)embd_tokmap_encoder_of(self->map), "byte_fallback", bf);
}

static PyMethodDef tokmap_methods[] = {
    {"detokenize", (PyCFunction)tokmap_detokenize, METH_VARARGS, "detokenize(ids, flags) -> str"},
    {"lookup", (PyCFunction)tokmap_lookup, METH_O, "lookup(id) -> (bytes, kind)"},
    {"specials", (PyCFunction)tokmap_specials, METH_NOARGS, "specials() -> [(name, id)]"},
    {"info", (PyCFunction)tokmap_info, METH_NOARGS, "info() -> dict"},
    {NULL, NULL, 0, NULL}};

static PyTypeObject tokmap_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "embd._embd.TokMap",
    .tp_basicsize = sizeof(tokmap_obj),
    .tp_dealloc = (destructor)tokmap_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A loaded tokenizer map (embd/tokmap.h), immutable; use embd.codec.TokenizerMap.",
    .tp_methods = tokmap_methods,
    .tp_new = tokmap_new,
};

/* ---- the streaming detokenizer ------------------------------------------------------------ */

typedef struct {
  PyObject_HEAD
  tokmap_obj *map; /* kept alive: the C detokenizer reads it */
  embd_detok *d;
  int busy;
} detok_obj;

static PyObject *detok_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  PyObject *map;
  unsigned flags = 0;
  static char *kwlist[] = {"map", "flags", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|I:Detok", kwlist, &tokmap_type, &map, &flags))
    return NULL;
  detok_obj *self = (detok_obj *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  Py_INCREF(map);
  self->map = (tokmap_obj *)map;
  embd_result r = embd_detok_create(self->map->map, flags, &self->d);
  if (r != EMBD_OK) {
    Py_DECREF(self);
    return embdpy_raise_at(r, 0, "detokenizer flags 0x%x refused (%s)", flags, embd_strerror(r));
  }
  return (PyObject *)self;
}

static void detok_dealloc(detok_obj *self) {
  if (self->d) embd_detok_destroy(self->d);
  Py_XDECREF(self->map);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *detok_feed(detok_obj *self, PyObject *arg) {
  if (embdpy_enter(&self->busy, "Detokenizer") < 0) return NULL;
  embdpy_input in;
  PyObject *s = NULL;
  if (ids_arg(arg, &in) == 0) {
    s = detok_text(self->d, self->map->map, (const uint32_t *)(const void *)in.data, in.len / 4, 0);
    embdpy_input_release(&in);
  }
  embdpy_leave(&self->busy);
  return s;
}

static PyObject *detok_finish(detok_obj *self, PyObject *noargs) {
  (void)noargs;
  if (embdpy_enter(&self->busy, "Detokenizer") < 0) return NULL;
  PyObject *s = detok_text(self->d, self->map->map, NULL, 0, 1);
  embdpy_leave(&self->busy);
  return s;
}

static PyObject *detok_reset(detok_obj *self, PyObject *noargs) {
  (void)noargs;
  if (embdpy_enter(&self->busy, "Detokenizer") < 0) return NULL;
  embd_detok_reset(self->d);
  embdpy_leave(&self->busy);
  Py_RETURN_NONE;
}

static PyObject *detok_pending(detok_obj *self, void *c) {
  (void)c;
  return PyLong_FromSize_t(embd_detok_pending(self->d));
}

static PyMethodDef detok_methods[] = {
    {"feed", (PyCFunction)detok_feed, METH_O, "feed(ids) -> str"},
    {"finish", (PyCFunction)detok_finish, METH_NOARGS, "finish() -> str"},
    {"reset", (PyCFunction)detok_reset, METH_NOARGS, "reset()"},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef detok_getset[] = {
    {"pending", (getter)detok_pending, NULL, "bytes held back (0..3)", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject detok_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "embd._embd.Detok",
    .tp_basicsize = sizeof(detok_obj),
    .tp_dealloc = (destructor)detok_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One stream's detokenizer (embd/tokmap.h); use TokenizerMap.detokenizer().",
    .tp_methods = detok_methods,
    .tp_getset = detok_getset,
    .tp_new = detok_new,
};

/* tokmap_sha256(data) -> "sha256:<hex>" */
static PyObject *py_tokmap_sha256(PyObject *self, PyObject *arg) {
  (void)self;
  embdpy_input in;
  if (embdpy_input_get(arg, &in, "data") < 0) return NULL;
  char out[EMBD_TOKMAP_SHA256_SIZE];
  embd_result r;
  EMBDPY_NOGIL_BEGIN(in.len)
  r = embd_tokmap_sha256(in.data, in.len, out);
  EMBDPY_NOGIL_END
  embdpy_input_release(&in);
  if (r != EMBD_OK) return embdpy_raise(r, NULL);
  return PyUnicode_FromString(out);
}

/* ---- module ------------------------------------------------------------------------------- */

PyMethodDef embdpy_codec_methods[] = {
    {"codec_encode_frame", py_encode_frame, METH_VARARGS, "codec_encode_frame(type, payload) -> bytes"},
    {"codec_encode_tokens", py_encode_tokens, METH_VARARGS,
     "codec_encode_tokens(ids, per_frame) -> bytes (per_frame 0: one frame)"},
    {"codec_forward", py_forward, METH_VARARGS,
     "codec_forward(data, types, max_payload, flags) -> (bytes, frames)"},
    {"codec_hello_build", py_hello_build, METH_O, "codec_hello_build(fields) -> JSON bytes"},
    {"codec_ready_build", py_ready_build, METH_O, "codec_ready_build(fields) -> JSON bytes"},
    {"codec_hello_parse", py_hello_parse, METH_O, "codec_hello_parse(payload) -> dict"},
    {"codec_ready_parse", py_ready_parse, METH_O, "codec_ready_parse(payload) -> dict"},
    {"codec_pick_tokenizer", py_pick_tokenizer, METH_VARARGS,
     "codec_pick_tokenizer(hello_payload, supported) -> index"},
    {"codec_stream_encode", py_stream_encode, METH_VARARGS,
     "codec_stream_encode(format, ids, done, finish_reason, tool_calls, delta, base_id, flags) -> bytes"},
    {"tokmap_sha256", py_tokmap_sha256, METH_O, "tokmap_sha256(data) -> 'sha256:<hex>'"},
    {NULL, NULL, 0, NULL}};

static int add_type(PyObject *m, PyTypeObject *t, const char *name) {
  if (PyType_Ready(t) < 0) return -1;
  Py_INCREF(t);
  if (PyModule_AddObject(m, name, (PyObject *)t) < 0) {
    Py_DECREF(t);
    return -1;
  }
  return 0;
}

int embdpy_codec_init(PyObject *m) {
  if (add_type(m, &reader_type, "CodecReader") < 0 || add_type(m, &tokmap_type, "TokMap") < 0 ||
      add_type(m, &detok_type, "Detok") < 0)
    return -1;
  struct {
    const char *name;
    long v;
  } consts[] = {{"CODEC_STRICT_TYPES", EMBD_CODEC_STRICT_TYPES},
                {"CODEC_STREAM_DELTA", EMBD_CODEC_STREAM_DELTA},
                {"CODEC_STREAM_BASE_ID_4", EMBD_CODEC_STREAM_BASE_ID_4},
                {"CODEC_DEFAULT_MAX_PAYLOAD", (long)EMBD_CODEC_DEFAULT_MAX_PAYLOAD},
                {"DETOK_SKIP_SPECIAL", EMBD_DETOK_SKIP_SPECIAL},
                {"DETOK_PARTIAL", EMBD_DETOK_PARTIAL},
                {"DETOK_REPLACE_UNKNOWN", EMBD_DETOK_REPLACE_UNKNOWN}};
  for (size_t i = 0; i < sizeof consts / sizeof consts[0]; i++)
    if (PyModule_AddIntConstant(m, consts[i].name, consts[i].v) < 0) return -1;
  return 0;
}
