/* Shared body of fuzz_codec_msgpack.c and fuzz_codec_proto.c (embd/codec_stream.h).
 *
 * Input: byte 0 picks max_frame_bytes (1 << (b0 % 16), at least 1) and max_ids (0 = the
 * default, or b0 >> 4 when that is non-zero); bytes 1-2 (LE) seed the chunk boundaries,
 * and byte 2's top bits pick the variant: bit 6 EMBD_CODEC_STREAM_DELTA (msgpack-delta /
 * protobuf-delta), bit 7 with it EMBD_CODEC_STREAM_BASE_ID_4 (protobuf only: base_id in
 * field 4); the rest is the stream. The stream is decoded in one feed and in fuzzer-chosen chunks:
 * both must give the same frames (ids, done, finish_reason, tool_calls, offsets, sizes),
 * the same result, error offset and message. Every frame decoded is encoded again with
 * our encoder and decoded again to the same values (protobuf: except a frame the canonical
 * encoder cannot write, one with nothing in it; delta frames with the delta encoder, from
 * a base_id the frame's own first id, so no step needs more than field 1's uint32). Errors
 * must have a message. msgpack: the one-shot decode again with the reader's fast path off
 * must give the same. Any difference aborts.
 */
#ifndef EMBD_CODEC_MODES_FUZZ_H
#define EMBD_CODEC_MODES_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "embd/codec_stream.h"
#include "fuzz_cuts.h"

/* The library's test hook (src/codec/codec_msgpack.c): non-zero, the msgpack reader's
 * fast path is off. */
extern int embd_msgpack_fast_off_;

typedef struct cmf_rec {
  uint8_t *log; /* every frame serialised: a flat byte log compared with memcmp */
  size_t n, cap;
  size_t frames;
  int mode;
  int reencode;
  uint64_t flags; /* EMBD_CODEC_STREAM_* of the readers */
} cmf_rec;

static void cmf_put(cmf_rec *r, const void *p, size_t n) {
  if (r->cap - r->n < n) {
    size_t c = r->cap ? r->cap : 256;
    while (c - r->n < n) c *= 2;
    r->log = realloc(r->log, c);
    if (!r->log) abort();
    r->cap = c;
  }
  if (n) memcpy(r->log + r->n, p, n);
  r->n += n;
}

static embd_result cmf_same(void *user, const embd_codec_stream_frame *f);

static embd_result cmf_decode(int mode, uint64_t flags, const uint8_t *b, size_t len, const size_t *cuts,
                              size_t ncuts, size_t max_frame, size_t max_ids, embd_codec_stream_frame_fn fn,
                              void *user, embd_error *err) {
  embd_codec_stream_options o = {
      .max_frame_bytes = max_frame, .max_ids = max_ids, .on_frame = fn, .user = user, .flags = flags};
  embd_codec_msgpack_reader *m = NULL;
  embd_codec_proto_reader *p = NULL;
  embd_result res = mode ? embd_codec_proto_create(&o, &p) : embd_codec_msgpack_create(&o, &m);
  if (res != EMBD_OK) abort();
  size_t at = 0;
  for (size_t i = 0; i <= ncuts && res == EMBD_OK; i++) {
    size_t end = i < ncuts ? cuts[i] : len;
    res = mode ? embd_codec_proto_feed(p, b + at, end - at, err) : embd_codec_msgpack_feed(m, b + at, end - at, err);
    at = end;
  }
  if (res == EMBD_OK) res = mode ? embd_codec_proto_finish(p, err) : embd_codec_msgpack_finish(m, err);
  embd_codec_msgpack_destroy(m);
  embd_codec_proto_destroy(p);
  return res;
}

static embd_result cmf_on_frame(void *user, const embd_codec_stream_frame *f) {
  cmf_rec *r = (cmf_rec *)user;
  uint64_t h[8] = {f->n_ids, (uint64_t)f->done, f->finish_reason != NULL, f->finish_reason_len,
                   f->tool_calls != NULL, f->tool_calls_len, f->offset, f->size};
  if (f->index != r->frames) abort();
  r->frames++;
  cmf_put(r, h, sizeof h);
  if (f->n_ids) cmf_put(r, f->ids, f->n_ids * 4);
  cmf_put(r, f->finish_reason, f->finish_reason_len);
  cmf_put(r, f->tool_calls, f->tool_calls_len);
  if (!r->reencode) return EMBD_OK;
  /* encode it again and decode that: the same values */
  size_t size = 0;
  const int delta = (r->flags & EMBD_CODEC_STREAM_DELTA) != 0;
  const uint64_t pflags = r->flags & EMBD_CODEC_STREAM_BASE_ID_4;
  uint32_t base = f->n_ids ? f->ids[0] : 0; /* d[0] = 0; the other steps came from uint32s */
  if (pflags && base > INT32_MAX) base = INT32_MAX; /* spec v0.5's int32; the step still fits */
  embd_result e = delta ? (r->mode ? embd_codec_proto_delta_encoded_size(f, base, pflags, &size)
                                   : embd_codec_msgpack_delta_encoded_size(f, base, &size))
                  : r->mode ? embd_codec_proto_encoded_size(f, &size)
                            : embd_codec_msgpack_encoded_size(f, &size);
  if (e != EMBD_OK) { /* every decoded frame encodes, the empty protobuf one too (10 00) */
    fprintf(stderr, "codec fuzz: a decoded frame does not encode (%d)\n", (int)e);
    abort();
  }
  uint8_t *buf = malloc(size ? size : 1);
  size_t w = 0;
  e = delta ? (r->mode ? embd_codec_proto_delta_encode(f, base, pflags, buf, size, &w)
                       : embd_codec_msgpack_delta_encode(f, base, buf, size, &w))
      : r->mode ? embd_codec_proto_encode(f, buf, size, &w)
                : embd_codec_msgpack_encode(f, buf, size, &w);
  if (e != EMBD_OK || w != size) abort();
  embd_error err;
  const embd_codec_stream_frame *orig = f;
  e = cmf_decode(r->mode, r->flags, buf, w, NULL, 0, w, 0, cmf_same, (void *)orig, &err);
  if (e != EMBD_OK) {
    fprintf(stderr, "codec fuzz: our encoding does not decode: %s\n", err.message);
    abort();
  }
  free(buf);
  return EMBD_OK;
}

static embd_result cmf_same(void *user, const embd_codec_stream_frame *g) {
  const embd_codec_stream_frame *f = (const embd_codec_stream_frame *)user;
  if (g->n_ids != f->n_ids || g->done != f->done || (g->finish_reason != NULL) != (f->finish_reason != NULL) ||
      g->finish_reason_len != f->finish_reason_len || g->tool_calls_len != f->tool_calls_len ||
      (f->n_ids && memcmp(g->ids, f->ids, f->n_ids * 4)) ||
      (f->finish_reason_len && memcmp(g->finish_reason, f->finish_reason, f->finish_reason_len)) ||
      (f->tool_calls_len && memcmp(g->tool_calls, f->tool_calls, f->tool_calls_len))) {
    fprintf(stderr, "codec fuzz: re-encoded frame decodes differently\n");
    abort();
  }
  return EMBD_OK;
}

static int cmf_run(int mode, const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  size_t max_frame = (size_t)1 << (data[0] % 16);
  size_t max_ids = data[0] >> 4;
  uint32_t seed = (uint32_t)data[1] | (uint32_t)data[2] << 8;
  const uint8_t *b = data + 3;
  const size_t len = size - 3;
  size_t n;
  size_t *cuts = fz_cuts(seed, len, &n);
  cmf_rec a = {0}, c = {0};
  a.mode = c.mode = mode;
  uint64_t flags = (data[2] & 0x40) ? EMBD_CODEC_STREAM_DELTA : 0;
  if (mode && flags && (data[2] & 0x80)) flags |= EMBD_CODEC_STREAM_BASE_ID_4;
  a.flags = c.flags = flags;
  a.reencode = 1;
  embd_error ea, ec;
  memset(&ea, 0, sizeof ea);
  memset(&ec, 0, sizeof ec);
  embd_result ra = cmf_decode(mode, flags, b, len, NULL, 0, max_frame, max_ids, cmf_on_frame, &a, &ea);
  embd_result rc = cmf_decode(mode, flags, b, len, cuts, n, max_frame, max_ids, cmf_on_frame, &c, &ec);
  free(cuts);
  if (ra != rc || a.n != c.n || a.frames != c.frames || (a.n && memcmp(a.log, c.log, a.n)) ||
      (ra != EMBD_OK && (ea.offset != ec.offset || strcmp(ea.message, ec.message)))) {
    fprintf(stderr, "codec fuzz (%s): one shot %d (%zu frames, at %zu: %s) != chunked %d (%zu frames, at %zu: %s)\n",
            mode ? "protobuf" : "msgpack", (int)ra, a.frames, ea.offset, ea.message, (int)rc, c.frames,
            ec.offset, ec.message);
    abort();
  }
  if (ra != EMBD_OK && (!ea.message[0] || ea.offset > len)) abort();
  if (mode == 0) {
    /* msgpack: one shot again with the reader's fast path off (the scanner and mp_frame
     * for every frame, embd_msgpack_fast_off_): the same frames, result and error. */
    cmf_rec z = {0};
    z.mode = mode;
    z.flags = flags;
    embd_error ez;
    memset(&ez, 0, sizeof ez);
    embd_msgpack_fast_off_ = 1;
    embd_result rz = cmf_decode(mode, flags, b, len, NULL, 0, max_frame, max_ids, cmf_on_frame, &z, &ez);
    embd_msgpack_fast_off_ = 0;
    if (ra != rz || a.frames != z.frames || a.n != z.n || (a.n && memcmp(a.log, z.log, a.n)) ||
        (ra != EMBD_OK && (ea.offset != ez.offset || strcmp(ea.message, ez.message)))) {
      fprintf(stderr, "codec fuzz (msgpack): fast path %d (%zu frames, at %zu: %s) != full path %d (%zu frames, at %zu: %s)\n",
              (int)ra, a.frames, ea.offset, ea.message, (int)rz, z.frames, ez.offset, ez.message);
      abort();
    }
    free(z.log);
  }
  free(a.log);
  free(c.log);
  return 0;
}

#endif
