/* embd serve: answers (serve/answer.h). */
#include "answer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int serve_buf_reserve(serve_buf *b, size_t extra) {
  if (b->cap - b->len >= extra) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < extra) {
    if (cap > ((size_t)-1) / 2) return -1;
    cap *= 2;
  }
  char *d = realloc(b->data, cap);
  if (!d) return -1;
  b->data = d;
  b->cap = cap;
  return 0;
}

int serve_buf_put(serve_buf *b, const void *s, size_t n) {
  if (serve_buf_reserve(b, n)) return -1;
  if (n) memcpy(b->data + b->len, s, n);
  b->len += n;
  return 0;
}

void serve_buf_free(serve_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

int serve_answer_binary(const serve_request *req, const embd_openai_embeddings *e, serve_buf *out,
                        embd_error *err) {
  embd_frame_encode_options eo;
  memset(&eo, 0, sizeof eo);
  eo.dtype = (uint64_t)req->dtype;
  size_t size = 0, written = 0;
  embd_result r;
  const int single = req->route == SERVE_ROUTE_EMBED;
  if (single)
    r = embd_frame_size_dtype(e->dims, req->dtype, 0, &size);
  else
    r = embd_batch_size_dtype(e->count, e->dims, req->dtype, 0, &size);
  if (r != EMBD_OK) {
    err->result = r;
    err->offset = 0;
    snprintf(err->message, sizeof err->message, "%u-dim vectors as %s frames: %.60s", (unsigned)e->dims,
             embd_dtype_name(req->dtype), embd_strerror(r));
    return -1;
  }
  if (serve_buf_reserve(out, size)) {
    err->result = EMBD_ERR_OUT_OF_MEMORY;
    snprintf(err->message, sizeof err->message, "out of memory for a %zu-byte answer", size);
    return -1;
  }
  if (single)
    r = embd_frame_encode_f32(e->values, e->dims, &eo, out->data + out->len, size, &written);
  else
    r = embd_batch_encode_f32(e->values, e->count, e->dims, &eo, out->data + out->len, size, &written);
  if (r != EMBD_OK) {
    /* the encoders say only what went wrong: find the element (int8/uint8 ask for exact
     * integers in range) with embd_from_f32, which names it */
    err->result = r;
    err->offset = 0;
    snprintf(err->message, sizeof err->message, "the vectors as %s frames: %s", embd_dtype_name(req->dtype),
             embd_strerror(r));
    const size_t vb = e->dims * 4 + 8;
    void *tmp = malloc(vb);
    for (size_t i = 0; tmp && i < e->count; i++) {
      embd_error ce;
      if (embd_from_f32(tmp, e->values + i * e->dims, e->dims, req->dtype, EMBD_ORDER_LE, &ce) != EMBD_OK) {
        snprintf(err->message, sizeof err->message, "vector %zu as %s: %.100s", i, embd_dtype_name(req->dtype),
                 ce.message);
        break;
      }
    }
    free(tmp);
    return -1;
  }
  out->len += written;
  return 0;
}

static int put_floats(serve_buf *b, const float *v, size_t n) {
  /* at most 16 bytes a number ("-1.17549435e-38" and a comma) */
  if (serve_buf_reserve(b, n * 16 + 2)) return -1;
  char *o = b->data + b->len;
  *o++ = '[';
  for (size_t i = 0; i < n; i++) {
    if (i) *o++ = ',';
    if (isfinite(v[i]))
      o += snprintf(o, 16, "%.9g", (double)v[i]);
    else {
      memcpy(o, "null", 4);
      o += 4;
    }
  }
  *o++ = ']';
  b->len = (size_t)(o - b->data);
  return 0;
}

int serve_answer_json(const serve_request *req, const embd_openai_embeddings *e, serve_buf *out) {
  if (req->route == SERVE_ROUTE_EMBED) {
    if (serve_buf_put(out, "{\"embedding\":", 13) || put_floats(out, e->values, e->dims) ||
        serve_buf_put(out, "}", 1))
      return -1;
    return 0;
  }
  if (serve_buf_put(out, "{\"embeddings\":[", 15)) return -1;
  for (size_t i = 0; i < e->count; i++) {
    if (i && serve_buf_put(out, ",", 1)) return -1;
    if (put_floats(out, e->values + i * e->dims, e->dims)) return -1;
  }
  return serve_buf_put(out, "]}", 2);
}

static int put_escaped(serve_buf *b, const char *s) {
  if (serve_buf_put(b, "\"", 1)) return -1;
  for (; *s; s++) {
    const unsigned char c = (unsigned char)*s;
    char e[8];
    if (c == '"' || c == '\\') {
      e[0] = '\\';
      e[1] = (char)c;
      if (serve_buf_put(b, e, 2)) return -1;
    } else if (c < 0x20 || c >= 0x7f) {
      /* messages quote bytes of requests: anything but printable ASCII as \u00XX, so that
       * the error body is valid JSON (UTF-8) whatever the request held */
      snprintf(e, sizeof e, "\\u%04x", c);
      if (serve_buf_put(b, e, 6)) return -1;
    } else if (serve_buf_put(b, s, 1)) {
      return -1;
    }
  }
  return serve_buf_put(b, "\"", 1);
}

int serve_error_json(serve_buf *out, const char *message, const char *type, const char *code) {
  if (serve_buf_put(out, "{\"error\":{\"message\":", 20) || put_escaped(out, message) ||
      serve_buf_put(out, ",\"type\":", 8) || put_escaped(out, type) || serve_buf_put(out, ",\"code\":", 8) ||
      put_escaped(out, code) || serve_buf_put(out, "}}\n", 3))
    return -1;
  return 0;
}
