/* Shared by test_batch.c and test_stream.c: decode a batch one-shot (embd_batch_iter) or
 * through the stream decoder in given chunks, into a comparable record: every frame's
 * offset, dims, flags and dtype, its values as float bits (any dtype, converted), and the
 * final result with its offset. The raw paths (embd_batch_frame_decode_raw, the stream's
 * dest_raw) are recorded through embd_to_f32 of their elements, so they compare too. */
#ifndef EMBD_TEST_BATCHUTIL_H
#define EMBD_TEST_BATCHUTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"

typedef struct bu_rec {
  size_t nframes, nvals, cap_frames, cap_vals;
  size_t *offset;
  uint32_t *dims, *flags; /* flags: info.flags | info.dtype << 8 */
  uint32_t *vals; /* all frames' value bits, back to back */
  embd_result result;
  size_t err_offset;
  char message[160];
  int decode_failed; /* the error came from embd_batch_frame_decode */
} bu_rec;

static inline void bu_free(bu_rec *r) {
  free(r->offset), free(r->dims), free(r->flags), free(r->vals);
  memset(r, 0, sizeof *r);
}

static inline void *bu_grow(void *p, size_t *cap, size_t need, size_t elt) {
  if (need <= *cap) return p;
  size_t c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *q = realloc(p, c * elt);
  if (!q) abort();
  *cap = c;
  return q;
}

static inline embd_byte_order bu_host_order(void) {
  const uint16_t one = 1;
  uint8_t b;
  memcpy(&b, &one, 1);
  return b ? EMBD_ORDER_LE : EMBD_ORDER_BE;
}

/* Room for one more frame's offset, dims and flags (bu_add and bu_cb alike). */
static inline void bu_room(bu_rec *r) {
  size_t c1 = r->cap_frames;
  r->offset = (size_t *)bu_grow(r->offset, &c1, r->nframes + 1, sizeof *r->offset);
  c1 = r->cap_frames;
  r->dims = (uint32_t *)bu_grow(r->dims, &c1, r->nframes + 1, sizeof *r->dims);
  r->flags = (uint32_t *)bu_grow(r->flags, &r->cap_frames, r->nframes + 1, sizeof *r->flags);
}

/* The frame recorded, its values already in place at r->vals + r->nvals. */
static inline embd_result bu_note(bu_rec *r, const embd_batch_frame *f) {
  r->offset[r->nframes] = f->offset;
  r->dims[r->nframes] = f->info.dims;
  r->flags[r->nframes] = f->info.flags | (uint32_t)f->info.dtype << 8;
  r->nframes++;
  r->nvals += f->info.dims;
  return EMBD_OK;
}

/* Records a frame; decodes its values (and checks that the raw decode, converted, gives
 * the same floats). Returns the decode result. */
static inline embd_result bu_add(bu_rec *r, const embd_batch_frame *f) {
  bu_room(r);
  r->vals = (uint32_t *)bu_grow(r->vals, &r->cap_vals, r->nvals + f->info.dims + 1, 4);
  embd_error e;
  embd_result d = embd_batch_frame_decode(f, (float *)(void *)(r->vals + r->nvals), f->info.dims, &e);
  if (d != EMBD_OK) {
    r->result = d;
    r->err_offset = e.offset;
    memcpy(r->message, e.message, sizeof r->message);
    r->decode_failed = 1;
    return d;
  }
  /* the dtype kept: the same values once converted, the same error otherwise (none) */
  uint8_t *raw = (uint8_t *)malloc(f->info.value_bytes + 1);
  float *conv = (float *)malloc(((size_t)f->info.dims + 1) * sizeof *conv);
  if (!raw || !conv) abort();
  if (embd_batch_frame_decode_raw(f, raw, f->info.value_bytes, bu_host_order(), &e) != EMBD_OK ||
      embd_to_f32(conv, raw, f->info.dims, (embd_dtype)f->info.dtype, bu_host_order()) != EMBD_OK ||
      (f->info.dims && memcmp(conv, r->vals + r->nvals, (size_t)f->info.dims * 4) != 0))
    abort();
  free(raw);
  free(conv);
  return bu_note(r, f);
}

static inline void bu_batch(const uint8_t *buf, size_t len, const embd_frame_decode_options *o,
                            bu_rec *r) {
  memset(r, 0, sizeof *r);
  embd_batch_iter it;
  embd_error e;
  embd_batch_frame f;
  embd_result x = embd_batch_iter_init(&it, buf, len, o, &e);
  while (x == EMBD_OK) {
    x = embd_batch_next(&it, &f, &e);
    if (x == EMBD_OK && bu_add(r, &f) != EMBD_OK) return;
  }
  if (x == EMBD_BATCH_END) return;
  r->result = x;
  r->err_offset = e.offset;
  memcpy(r->message, e.message, sizeof r->message);
}

/* The raw destination of the frame being decoded (one at a time: dest_raw, then its
 * callback), poisoned like bu_dest's. */
static uint8_t *bu_raw_place;

/* A frame the stream decoded into bu_dest's (or bu_raw_dest's) place: record it without
 * decoding (raw: converted to floats here). */
static inline embd_result bu_cb(void *user, const embd_batch_frame *f) {
  bu_rec *r = (bu_rec *)user;
  if (f->values && f->raw_values) abort();
  if (!f->values && !f->raw_values) return bu_add(r, f);
  if (f->raw_values) {
    if (f->raw_values != bu_raw_place) abort();
    r->vals = (uint32_t *)bu_grow(r->vals, &r->cap_vals, r->nvals + f->info.dims + 1, 4);
    if (embd_to_f32((float *)(void *)(r->vals + r->nvals), f->raw_values, f->info.dims,
                    (embd_dtype)f->info.dtype, bu_host_order()) != EMBD_OK)
      abort();
    free(bu_raw_place);
    bu_raw_place = NULL;
  } else if (f->values != (const float *)(const void *)(r->vals + r->nvals)) {
    abort();
  }
  if (f->data && f->data + 16 != f->payload) abort();
  bu_room(r);
  return bu_note(r, f);
}

/* The stream's dest: the record's next values (mode 1), or every other frame (mode 2). */
typedef struct bu_dest_ctx {
  bu_rec *r;
  int mode;
} bu_dest_ctx;

static inline float *bu_dest(void *user, uint32_t index, const embd_frame_info *info) {
  bu_dest_ctx *c = (bu_dest_ctx *)user;
  if (c->mode == 2 && index % 2) return NULL;
  if (index != c->r->nframes) abort();
  c->r->vals = (uint32_t *)bu_grow(c->r->vals, &c->r->cap_vals, c->r->nvals + info->dims + 1, 4);
  /* Poison, so values the stream forgot to write cannot pass as decoded. */
  memset(c->r->vals + c->r->nvals, 0xA5, (size_t)info->dims * 4);
  return (float *)(void *)(c->r->vals + c->r->nvals);
}

/* dest_raw: a fresh allocation per frame (mode 3: every frame; mode 4: even frames). */
static inline void *bu_raw_dest(void *user, uint32_t index, const embd_frame_info *info) {
  bu_dest_ctx *c = (bu_dest_ctx *)user;
  if (c->mode == 4 && index % 2) return NULL;
  if (index != c->r->nframes) abort();
  free(bu_raw_place); /* a frame whose stream failed after dest_raw */
  bu_raw_place = (uint8_t *)malloc(info->value_bytes + 1);
  if (!bu_raw_place) abort();
  memset(bu_raw_place, 0xA5, info->value_bytes);
  return bu_raw_place;
}

static inline embd_result bu_dest_cb(void *user, const embd_batch_frame *f) {
  return bu_cb(((bu_dest_ctx *)user)->r, f);
}

/* Feeds buf split at cuts[0 .. ncuts) (ascending offsets). mode 0: on_frame only; 1: dest
 * for every frame; 2: dest for even frames; 3: dest_raw for every frame; 4: dest_raw for
 * even frames. */
static inline void bu_stream_mode(const uint8_t *buf, size_t len, uint32_t max_dims,
                                  const size_t *cuts, size_t ncuts, int mode, bu_rec *r) {
  memset(r, 0, sizeof *r);
  bu_dest_ctx dc = {r, mode};
  embd_stream_options so;
  memset(&so, 0, sizeof so);
  so.max_dims = max_dims;
  so.batch = 1;
  so.on_frame = mode ? bu_dest_cb : bu_cb;
  so.user = mode ? (void *)&dc : (void *)r;
  so.dest = mode == 1 || mode == 2 ? bu_dest : NULL;
  so.dest_raw = mode >= 3 ? bu_raw_dest : NULL;
  embd_stream *s;
  if (embd_stream_create(&so, &s) != EMBD_OK) abort();
  embd_error e;
  embd_result x = EMBD_OK;
  size_t at = 0;
  for (size_t i = 0; i <= ncuts && x == EMBD_OK; i++) {
    size_t end = i < ncuts ? cuts[i] : len;
    /* Each chunk in its own allocation, so reads past it are caught by ASan. */
    uint8_t *chunk = (uint8_t *)malloc(end - at ? end - at : 1);
    if (!chunk) abort();
    if (end > at) memcpy(chunk, buf + at, end - at);
    x = embd_stream_feed(s, chunk, end - at, &e);
    free(chunk);
    at = end;
  }
  if (x == EMBD_OK) x = embd_stream_finish(s, &e);
  embd_stream_destroy(s);
  free(bu_raw_place);
  bu_raw_place = NULL;
  if (r->decode_failed) return; /* the decode error recorded by bu_add */
  r->result = x;
  r->err_offset = x == EMBD_OK ? 0 : e.offset;
  if (x != EMBD_OK) memcpy(r->message, e.message, sizeof r->message);
}

static inline void bu_stream(const uint8_t *buf, size_t len, uint32_t max_dims,
                             const size_t *cuts, size_t ncuts, bu_rec *r) {
  bu_stream_mode(buf, len, max_dims, cuts, ncuts, 0, r);
}

/* 0 if equal (frames, value bits, result, error offset). */
static inline int bu_cmp(const bu_rec *a, const bu_rec *b) {
  if (a->nframes != b->nframes || a->nvals != b->nvals) return 1;
  if (a->result != b->result) return 2;
  if (a->result != EMBD_OK && a->err_offset != b->err_offset) return 3;
  for (size_t i = 0; i < a->nframes; i++)
    if (a->offset[i] != b->offset[i] || a->dims[i] != b->dims[i] || a->flags[i] != b->flags[i])
      return 4;
  if (a->nvals && memcmp(a->vals, b->vals, a->nvals * 4) != 0) return 5;
  return 0;
}

#endif
