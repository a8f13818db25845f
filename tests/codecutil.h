/* Shared by tests/test_codec.c and fuzz/fuzz_codec_session.c: records what the one-shot
 * Codec decoder (embd_codec_next over the whole buffer) and the stream reader (over given
 * chunk boundaries, optionally writing TOKENS ids to caller memory) deliver, and compares
 * the two: frames (type, index, offset, payload bytes), result, error offset and message.
 * TOKENS ids written by the reader's dest mode are turned back into big-endian bytes with
 * shifts (not the library's kernels), so the comparison checks their byte order. */
#ifndef EMBD_CODECUTIL_H
#define EMBD_CODECUTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embd.h"

typedef struct cu_rec {
  uint8_t *b; /* per frame: type, index u32, offset u64, len u64, payload */
  size_t len, cap;
  size_t nframes;
  embd_result result;
  size_t err_offset;
  char message[160];
  /* reader dest mode */
  int mode;          /* 0: on_frame only; 1: dest for every TOKENS frame; 2: every other */
  uint32_t **dests;  /* owned destinations */
  size_t ndests, capdests;
  int zero_copy_seen;
  const uint8_t *chunk; /* the chunk being fed (zero-copy check) */
  size_t chunk_len;
} cu_rec;

static inline void cu_put(cu_rec *r, const void *p, size_t n) {
  if (r->len + n > r->cap) {
    size_t c = r->cap ? r->cap * 2 : 256;
    while (c < r->len + n) c *= 2;
    r->b = (uint8_t *)realloc(r->b, c);
    if (!r->b) abort();
    r->cap = c;
  }
  if (n) memcpy(r->b + r->len, p, n);
  r->len += n;
}

static inline void cu_frame(cu_rec *r, const embd_codec_frame *f) {
  const uint64_t off = f->offset, len = f->payload_len;
  cu_put(r, &f->type, 1);
  cu_put(r, &f->index, 4);
  cu_put(r, &off, 8);
  cu_put(r, &len, 8);
  if (!f->ids) {
    cu_put(r, f->payload, f->payload_len);
  } else { /* dest mode: the ids written to caller memory */
    for (size_t i = 0; i < f->payload_len / 4; i++) {
      const uint32_t v = f->ids[i];
      const uint8_t be[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
      cu_put(r, be, 4);
    }
  }
  r->nframes++;
}

static inline void cu_init(cu_rec *r) { memset(r, 0, sizeof *r); }

static inline void cu_free(cu_rec *r) {
  free(r->b);
  for (size_t i = 0; i < r->ndests; i++) free(r->dests[i]);
  free(r->dests);
  memset(r, 0, sizeof *r);
}

/* flags: the options' EMBD_CODEC_* flags (the same for both sides of a comparison). */
static inline void cu_oneshot(const uint8_t *b, size_t len, size_t max_payload, uint64_t flags,
                              cu_rec *r) {
  cu_init(r);
  embd_codec_decode_options o = {.max_payload = max_payload, .flags = flags};
  size_t pos = 0;
  uint32_t index = 0;
  embd_error err;
  r->result = EMBD_OK;
  while (pos < len) {
    embd_codec_frame f;
    embd_result res = embd_codec_next(b, len, &pos, &index, &o, &f, &err);
    if (res != EMBD_OK) {
      r->result = res;
      r->err_offset = err.offset;
      memcpy(r->message, err.message, sizeof r->message);
      return;
    }
    cu_frame(r, &f);
  }
}

static inline embd_result cu_on_frame(void *user, const embd_codec_frame *f) {
  cu_rec *r = (cu_rec *)user;
  if (f->payload && f->payload >= r->chunk && f->payload < r->chunk + r->chunk_len)
    r->zero_copy_seen = 1;
  cu_frame(r, f);
  return EMBD_OK;
}

static inline uint32_t *cu_dest(void *user, uint32_t index, size_t n) {
  cu_rec *r = (cu_rec *)user;
  if (r->mode == 2 && (index & 1)) return NULL;
  if (r->ndests == r->capdests) {
    r->capdests = r->capdests ? 2 * r->capdests : 16;
    r->dests = (uint32_t **)realloc(r->dests, r->capdests * sizeof *r->dests);
    if (!r->dests) abort();
  }
  uint32_t *d = (uint32_t *)malloc(n * 4 + 4);
  if (!d) abort();
  r->dests[r->ndests++] = d;
  return d;
}

/* The reader over b[len] cut at cuts[0..ncuts) (ascending, each <= len). */
static inline void cu_reader(const uint8_t *b, size_t len, size_t max_payload, uint64_t flags,
                             const size_t *cuts, size_t ncuts, int mode, cu_rec *r) {
  cu_init(r);
  r->mode = mode;
  embd_codec_reader_options o;
  memset(&o, 0, sizeof o);
  o.max_payload = max_payload;
  o.flags = flags;
  o.on_frame = cu_on_frame;
  o.user = r;
  if (mode) o.tokens_dest = cu_dest;
  embd_codec_reader *rd;
  if (embd_codec_reader_create(&o, &rd) != EMBD_OK) abort();
  embd_error err;
  embd_result res = EMBD_OK;
  size_t at = 0;
  for (size_t i = 0; i <= ncuts && res == EMBD_OK; i++) {
    const size_t end = i < ncuts ? cuts[i] : len;
    r->chunk = b + at;
    r->chunk_len = end - at;
    res = embd_codec_reader_feed(rd, b + at, end - at, &err);
    at = end;
  }
  if (res == EMBD_OK) res = embd_codec_reader_finish(rd, &err);
  /* Sticky. */
  embd_error e2;
  if (res != EMBD_OK && (embd_codec_reader_feed(rd, b, len ? 1 : 0, &e2) != res ||
                         embd_codec_reader_finish(rd, &e2) != res || e2.offset != err.offset))
    abort();
  r->result = res;
  if (res != EMBD_OK) {
    r->err_offset = err.offset;
    memcpy(r->message, err.message, sizeof r->message);
  }
  embd_codec_reader_destroy(rd);
}

/* 0 if equal; else which part differs. */
static inline int cu_cmp(const cu_rec *a, const cu_rec *b) {
  if (a->nframes != b->nframes) return 1;
  if (a->len != b->len || (a->len && memcmp(a->b, b->b, a->len) != 0)) return 2;
  if (a->result != b->result) return 3;
  if (a->result != EMBD_OK && a->err_offset != b->err_offset) return 4;
  if (a->result != EMBD_OK && strcmp(a->message, b->message) != 0) return 5;
  return 0;
}

#endif
