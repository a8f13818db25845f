/* One input through any of the framer's readers (src/wire/framer.h), fed whole or in chunks,
 * reduced to a digest of everything the reader said: every frame's index, offset and
 * content, the final result, err.offset and message. The
 * framer's promise is that the chunking changes none of it. Shared by tests/test_framer.c
 * and fuzz/fuzz_framer.c. Public API only. */
#ifndef EMBD_FRAMER_DRIVE_H
#define EMBD_FRAMER_DRIVE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embd/codec.h"
#include "embd/stream.h"
#ifdef EMBD_HAVE_CODEC_MODES
#include "embd/codec_stream.h"
#endif

enum {
  FD_EMBD,        /* embd_stream, on_frame (values decoded with embd_batch_frame_decode) */
  FD_EMBD_BATCH,  /* the same with the batch count */
  FD_EMBD_DEST,   /* embd_stream with dest */
  FD_CODEC,       /* embd_codec_reader, on_frame */
  FD_CODEC_DEST,  /* embd_codec_reader with tokens_dest */
  FD_MSGPACK,
  FD_PROTO,
  FD_KINDS
};

typedef struct fd_run {
  uint64_t h;      /* FNV-1a over everything said */
  uint64_t frames; /* frames delivered */
  int result;      /* feed/finish's final result */
  uint32_t max;    /* max_dims / max_payload / max_frame_bytes */
  uint64_t stop_at; /* the callback stops the stream at this frame (UINT64_MAX: never) */
  float vals[4096];
  uint32_t ids[4096];
} fd_run;

static void fd_mix(fd_run *r, const void *p, size_t n) {
  const uint8_t *b = (const uint8_t *)p;
  for (size_t i = 0; i < n; i++) r->h = (r->h ^ b[i]) * 0x100000001b3ull;
}
static void fd_mix64(fd_run *r, uint64_t v) { fd_mix(r, &v, sizeof v); }

static embd_result fd_stop(fd_run *r, uint64_t index) {
  r->frames++;
  return index == r->stop_at ? EMBD_ERR_INVALID_ARGUMENT : EMBD_OK;
}

static embd_result fd_embd_frame(void *u, const embd_batch_frame *f) {
  fd_run *r = (fd_run *)u;
  fd_mix64(r, f->index), fd_mix64(r, f->offset), fd_mix64(r, f->info.dims),
      fd_mix64(r, f->info.flags), fd_mix64(r, f->info.frame_size), fd_mix64(r, f->info.dtype);
  if (f->values) {
    fd_mix(r, f->values, (size_t)f->info.dims * 4);
  } else if (f->info.dims <= 4096) {
    embd_error e;
    const embd_result d = embd_batch_frame_decode(f, r->vals, 4096, &e);
    fd_mix64(r, (uint64_t)d);
    if (d == EMBD_OK) fd_mix(r, r->vals, (size_t)f->info.dims * 4);
    else fd_mix(r, e.message, strlen(e.message));
  }
  return fd_stop(r, f->index);
}

static float *fd_embd_dest(void *u, uint32_t index, const embd_frame_info *info) {
  fd_run *r = (fd_run *)u;
  /* Not in the digest: a frame that fails (a payload CRC) is asked for its destination
   * when it goes direct, not when it was whole in a chunk (stream.h); the frames'
   * callbacks carry the values. Every third frame takes the callback path: both paths in one stream. */
  return index % 3 == 2 || info->dims > 4096 ? NULL : r->vals;
}

static embd_result fd_codec_frame(void *u, const embd_codec_frame *f) {
  fd_run *r = (fd_run *)u;
  fd_mix64(r, f->type), fd_mix64(r, f->index), fd_mix64(r, f->offset), fd_mix64(r, f->payload_len);
  if (f->type == EMBD_CODEC_TOKENS) { /* as ids whichever way they came */
    size_t n = 0;
    if (embd_codec_tokens(f, r->ids, 4096, &n) == EMBD_OK) fd_mix(r, r->ids, n * 4);
  } else {
    fd_mix(r, f->payload, f->payload_len);
  }
  return fd_stop(r, f->index);
}

static uint32_t *fd_codec_dest(void *u, uint32_t index, size_t n) {
  fd_run *r = (fd_run *)u; /* not in the digest either (fd_embd_dest) */
  return index % 3 == 2 || n > 4096 ? NULL : r->ids;
}

#ifdef EMBD_HAVE_CODEC_MODES
static embd_result fd_mode_frame(void *u, const embd_codec_stream_frame *f) {
  fd_run *r = (fd_run *)u;
  fd_mix64(r, f->index), fd_mix64(r, f->offset), fd_mix64(r, f->size), fd_mix64(r, f->n_ids),
      fd_mix64(r, (uint64_t)f->done), fd_mix(r, f->ids, f->n_ids * 4);
  fd_mix64(r, f->finish_reason != NULL), fd_mix(r, f->finish_reason, f->finish_reason_len);
  fd_mix64(r, f->tool_calls != NULL), fd_mix(r, f->tool_calls, f->tool_calls_len);
  return fd_stop(r, f->index);
}
#endif

/* Chunk sizes: 0 feeds the input whole; otherwise xorshift-chosen sizes in 1..chunk, with
 * a zero-length feed now and then. */
typedef struct fd_chunks {
  uint32_t s, most;
} fd_chunks;
static size_t fd_next(fd_chunks *c, size_t left) {
  if (!c->most) return left;
  c->s ^= c->s << 13, c->s ^= c->s >> 17, c->s ^= c->s << 5;
  const size_t n = c->s % 11 == 0 ? 0 : 1 + c->s % c->most;
  return n < left ? n : left;
}

/* Runs p[0..n) through reader `kind`; fills r (h, frames, result). 0 if the reader could
 * not be made (kind not built). */
static int fd_run_one(int kind, const uint8_t *p, size_t n, uint32_t chunk, uint32_t seed,
                      fd_run *r) {
  fd_chunks c = {seed | 1, chunk};
  embd_error e;
  embd_result res = EMBD_OK;
  r->h = 0xcbf29ce484222325ull;
  r->frames = 0;
  void *rd = NULL;
  embd_result (*feed)(void *, const void *, size_t, embd_error *) = NULL;
  embd_result (*fin)(void *, embd_error *) = NULL;
  void (*destroy)(void *) = NULL;
  if (kind <= FD_EMBD_DEST) {
    embd_stream_options o = {0};
    o.max_dims = r->max ? r->max : 1;
    o.batch = kind == FD_EMBD_BATCH;
    o.on_frame = fd_embd_frame;
    o.dest = kind == FD_EMBD_DEST ? fd_embd_dest : NULL;
    o.user = r;
    if (embd_stream_create(&o, (embd_stream **)&rd) != EMBD_OK) return 0;
    feed = (embd_result(*)(void *, const void *, size_t, embd_error *))embd_stream_feed;
    fin = (embd_result(*)(void *, embd_error *))embd_stream_finish;
    destroy = (void (*)(void *))embd_stream_destroy;
  } else if (kind <= FD_CODEC_DEST) {
    embd_codec_reader_options o = {0};
    o.max_payload = r->max;
    o.on_frame = fd_codec_frame;
    o.tokens_dest = kind == FD_CODEC_DEST ? fd_codec_dest : NULL;
    o.user = r;
    if (embd_codec_reader_create(&o, (embd_codec_reader **)&rd) != EMBD_OK) return 0;
    feed = (embd_result(*)(void *, const void *, size_t, embd_error *))embd_codec_reader_feed;
    fin = (embd_result(*)(void *, embd_error *))embd_codec_reader_finish;
    destroy = (void (*)(void *))embd_codec_reader_destroy;
  } else {
#ifdef EMBD_HAVE_CODEC_MODES
    embd_codec_stream_options o = {0};
    o.max_frame_bytes = r->max ? r->max : 1;
    o.on_frame = fd_mode_frame;
    o.user = r;
    if (kind == FD_MSGPACK) {
      if (embd_codec_msgpack_create(&o, (embd_codec_msgpack_reader **)&rd) != EMBD_OK) return 0;
      feed = (embd_result(*)(void *, const void *, size_t, embd_error *))embd_codec_msgpack_feed;
      fin = (embd_result(*)(void *, embd_error *))embd_codec_msgpack_finish;
      destroy = (void (*)(void *))embd_codec_msgpack_destroy;
    } else {
      if (embd_codec_proto_create(&o, (embd_codec_proto_reader **)&rd) != EMBD_OK) return 0;
      feed = (embd_result(*)(void *, const void *, size_t, embd_error *))embd_codec_proto_feed;
      fin = (embd_result(*)(void *, embd_error *))embd_codec_proto_finish;
      destroy = (void (*)(void *))embd_codec_proto_destroy;
    }
#else
    return 0;
#endif
  }
  size_t at = 0;
  while (res == EMBD_OK && at < n) {
    const size_t k = fd_next(&c, n - at);
    res = feed(rd, p + at, k, &e);
    at += k;
  }
  if (res == EMBD_OK) res = fin(rd, &e);
  /* Sticky: one more feed and finish say the same. */
  if (res != EMBD_OK) {
    embd_error e2;
    if (feed(rd, p, n ? 1 : 0, &e2) != res || fin(rd, &e2) != res ||
        e2.offset != e.offset || strcmp(e2.message, e.message))
      fd_mix64(r, 0xbad5);
  }
  destroy(rd);
  r->result = (int)res;
  fd_mix64(r, (uint64_t)res), fd_mix64(r, r->frames);
  if (res != EMBD_OK) fd_mix64(r, e.offset), fd_mix(r, e.message, strlen(e.message));
  return 1;
}

#endif
