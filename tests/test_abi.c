/* The ABI conventions of include/embd/common.h, checked across the library:
 *   - the result codes: EMBD_BATCH_END and EMBD_STOPPED are real, positive enum values, one
 *     unavailable code (the old name an alias), 36 retired, every code has a message;
 *   - embd_error.offset (and the frames' offsets) are 64-bit: a stream error past 4 GiB
 *     has its true offset on 32-bit hosts too (the armhf cross build runs this);
 *   - a callback's EMBD_STOPPED stops every stream reader, sticky, with that code;
 *   - "output too small" reports the size needed, and that size suffices;
 *   - options structs: reserved room that must be zero (a non-zero slot is refused).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "embd.h"
#include "testutil.h"

#define OK(x) assert_int_equal((x), EMBD_OK)

/* ---- result codes ---------------------------------------------------------------------- */

_Static_assert(EMBD_BATCH_END > 0, "EMBD_BATCH_END is a non-negative enum value");
_Static_assert(EMBD_STOPPED > 0, "EMBD_STOPPED is a non-negative enum value");
_Static_assert(EMBD_ERR_OPENAI_UNAVAILABLE == EMBD_ERR_UNAVAILABLE, "one unavailable code");
_Static_assert(sizeof(((embd_error *)0)->offset) == 8, "embd_error.offset is 64-bit");
_Static_assert(sizeof(((embd_batch_frame *)0)->offset) == 8, "embd_batch_frame.offset is 64-bit");
_Static_assert(sizeof(((embd_codec_frame *)0)->offset) == 8, "embd_codec_frame.offset is 64-bit");

/* A switch over the codes compiles with both statuses as cases (they are enum values). */
static int is_status(embd_result r) {
  switch (r) {
    case EMBD_BATCH_END:
    case EMBD_STOPPED:
      return 1;
    default:
      return 0;
  }
}

static void test_codes(void **state) {
  (void)state;
  assert_true(is_status(EMBD_BATCH_END) && is_status(EMBD_STOPPED) && !is_status(EMBD_OK));
  assert_int_equal(EMBD_BATCH_END, 51);
  assert_int_equal(EMBD_STOPPED, 52);
  assert_int_equal(EMBD_ERR_UNAVAILABLE, 50);
  assert_int_equal(EMBD_ERR_OUT_OF_MEMORY, 35);
  /* every code 0..60 but the retired 36 has its own message */
  for (int c = 0; c <= 60; c++) {
    const char *m = embd_strerror((embd_result)c);
    assert_non_null(m);
    if (c == 36)
      assert_string_equal(m, "unknown result");
    else
      assert_string_not_equal(m, "unknown result");
    for (int d = 0; d < c; d++)
      if (d != 36 && c != 36) assert_string_not_equal(m, embd_strerror((embd_result)d));
  }
  assert_string_equal(embd_strerror((embd_result)61), "unknown result");
}

/* embd_result_name: the enum's spelling for every code (bindings report errors by it),
 * NULL for the retired 36 and for values past the last code. */
static void test_result_names(void **state) {
  (void)state;
  assert_string_equal(embd_result_name(EMBD_OK), "EMBD_OK");
  assert_string_equal(embd_result_name(EMBD_ERR_BASE64_CHAR), "EMBD_ERR_BASE64_CHAR");
  assert_string_equal(embd_result_name(EMBD_ERR_OPENAI_METADATA), "EMBD_ERR_OPENAI_METADATA");
  assert_string_equal(embd_result_name(EMBD_BATCH_END), "EMBD_BATCH_END");
  assert_string_equal(embd_result_name(EMBD_ERR_UNAVAILABLE), "EMBD_ERR_UNAVAILABLE");
  for (int c = 0; c <= 60; c++) {
    const char *n = embd_result_name((embd_result)c);
    if (c == 36) {
      assert_null(n);
      continue;
    }
    assert_non_null(n);
    assert_memory_equal(n, "EMBD_", 5);
    for (int d = 0; d < c; d++)
      if (d != 36) assert_string_not_equal(n, embd_result_name((embd_result)d));
  }
  assert_null(embd_result_name((embd_result)61));
  assert_null(embd_result_name((embd_result)-1));
}

static void test_batch_end(void **state) {
  (void)state;
  float v[4] = {1, 2, 3, 4};
  uint8_t buf[256];
  size_t n;
  OK(embd_batch_encode_f32(v, 2, 2, NULL, buf, sizeof buf, &n));
  embd_batch_iter it;
  embd_batch_frame f;
  embd_error err;
  OK(embd_batch_iter_init(&it, buf, n, NULL, &err));
  OK(embd_batch_next(&it, &f, &err));
  OK(embd_batch_next(&it, &f, &err));
  assert_int_equal(embd_batch_next(&it, &f, &err), EMBD_BATCH_END);
  assert_int_equal(embd_batch_next(&it, &f, &err), EMBD_BATCH_END);
  assert_int_equal(it.status, EMBD_BATCH_END);
}

/* ---- 64-bit offsets: errors past 4 GiB of a stream ------------------------------------- */

#define BIG_PAYLOAD ((size_t)1 << 20)
#define CHUNK_FRAMES 16

static embd_result count_codec(void *user, const embd_codec_frame *f) {
  uint64_t *last = (uint64_t *)user;
  *last = f->offset;
  return EMBD_OK;
}

/* 4 GiB and a bit of LATENTS frames (opaque: handed over in place, never copied), then a
 * frame with an unknown type byte: the error's offset is past 2^32. */
static void test_offset_past_4gib_codec(void **state) {
  (void)state;
  const size_t fsz = EMBD_CODEC_HEADER_SIZE + BIG_PAYLOAD;
  uint8_t *chunk = calloc(CHUNK_FRAMES, fsz);
  assert_non_null(chunk);
  uint8_t *payload = calloc(1, BIG_PAYLOAD);
  assert_non_null(payload);
  for (size_t i = 0; i < CHUNK_FRAMES; i++) {
    size_t w;
    OK(embd_codec_encode_frame(EMBD_CODEC_LATENTS, payload, BIG_PAYLOAD, chunk + i * fsz, fsz, &w));
    assert_int_equal(w, fsz);
  }
  uint64_t last = 0;
  embd_codec_reader_options o = {0};
  o.max_payload = BIG_PAYLOAD;
  o.flags = EMBD_CODEC_STRICT_TYPES; /* the 0x07 frame at the end is the error past 4 GiB */
  o.on_frame = count_codec;
  o.user = &last;
  embd_codec_reader *r;
  OK(embd_codec_reader_create(&o, &r));
  embd_error err;
  uint64_t fed = 0;
  const uint64_t target = (UINT64_C(1) << 32) + fsz + 1000; /* the last frame past 4 GiB */
  while (fed < target) {
    OK(embd_codec_reader_feed(r, chunk, CHUNK_FRAMES * fsz, &err));
    fed += CHUNK_FRAMES * fsz;
  }
  assert_int_equal(last, fed - fsz); /* the last frame's offset, past 4 GiB, not wrapped */
  assert_true(last > UINT32_MAX);
  const uint8_t bad[5] = {0x07, 0, 0, 0, 0};
  assert_int_equal(embd_codec_reader_feed(r, bad, sizeof bad, &err), EMBD_ERR_CODEC_UNKNOWN_TYPE);
  assert_int_equal(err.offset, fed);
  assert_true(err.offset > UINT32_MAX);
  assert_int_equal(embd_codec_reader_offset(r), fed);
  embd_codec_reader_destroy(r);
  free(payload);
  free(chunk);
}

static embd_result count_stream(void *user, const embd_batch_frame *f) {
  uint64_t *last = (uint64_t *)user;
  *last = f->offset;
  return EMBD_OK;
}

/* The same for EMBD frames: 4 GiB of uncompressed frames without a payload CRC (only the
 * headers are read), then a bad magic. */
static void test_offset_past_4gib_stream(void **state) {
  (void)state;
  const uint32_t dims = (uint32_t)(BIG_PAYLOAD / 4);
  size_t fsz;
  OK(embd_frame_size(dims, 0, &fsz));
  uint8_t *chunk = malloc(CHUNK_FRAMES * fsz);
  assert_non_null(chunk);
  float *v = calloc(dims, sizeof *v);
  assert_non_null(v);
  for (size_t i = 0; i < CHUNK_FRAMES; i++) {
    size_t w;
    OK(embd_frame_encode_f32(v, dims, NULL, chunk + i * fsz, fsz, &w));
  }
  uint64_t last = 0;
  embd_stream_options o = {0};
  o.max_dims = dims;
  o.on_frame = count_stream;
  o.user = &last;
  embd_stream *s;
  OK(embd_stream_create(&o, &s));
  embd_error err;
  uint64_t fed = 0;
  const uint64_t target = (UINT64_C(1) << 32) + fsz + 1000; /* the last frame past 4 GiB */
  while (fed < target) {
    OK(embd_stream_feed(s, chunk, CHUNK_FRAMES * fsz, &err));
    fed += CHUNK_FRAMES * fsz;
  }
  assert_int_equal(last, fed - fsz);
  assert_true(last > UINT32_MAX);
  uint8_t bad[EMBD_FRAME_HEADER_SIZE];
  memcpy(bad, chunk, sizeof bad);
  bad[0] = 'X';
  assert_int_equal(embd_stream_feed(s, bad, sizeof bad, &err), EMBD_ERR_FRAME_BAD_MAGIC);
  assert_int_equal(err.offset, fed);
  assert_true(err.offset > UINT32_MAX);
  embd_stream_destroy(s);
  free(v);
  free(chunk);
}

/* ---- EMBD_STOPPED from callbacks --------------------------------------------------------- */

typedef struct stopper {
  unsigned calls, stop_at;
} stopper;

static embd_result stop_stream(void *user, const embd_batch_frame *f) {
  (void)f;
  stopper *st = (stopper *)user;
  return st->calls++ == st->stop_at ? EMBD_STOPPED : EMBD_OK;
}

static embd_result stop_codec(void *user, const embd_codec_frame *f) {
  (void)f;
  stopper *st = (stopper *)user;
  return st->calls++ == st->stop_at ? EMBD_STOPPED : EMBD_OK;
}

static embd_result stop_modes(void *user, const embd_codec_stream_frame *f) {
  (void)f;
  stopper *st = (stopper *)user;
  return st->calls++ == st->stop_at ? EMBD_STOPPED : EMBD_OK;
}

static void test_stopped_stream(void **state) {
  (void)state;
  float v[3 * 4] = {0};
  uint8_t buf[512];
  size_t n, one;
  OK(embd_frame_size(4, 0, &one));
  OK(embd_batch_encode_f32(v, 3, 4, NULL, buf, sizeof buf, &n));
  stopper st = {0, 1};
  embd_stream_options o = {0};
  o.max_dims = 4;
  o.batch = 1;
  o.on_frame = stop_stream;
  o.user = &st;
  embd_stream *s;
  OK(embd_stream_create(&o, &s));
  embd_error err;
  assert_int_equal(embd_stream_feed(s, buf, n, &err), EMBD_STOPPED);
  assert_int_equal(err.result, EMBD_STOPPED);
  assert_int_equal(err.offset, 4 + one); /* frame 1 */
  assert_int_equal(st.calls, 2);
  assert_int_equal(embd_stream_feed(s, buf, 0, &err), EMBD_STOPPED); /* sticky */
  assert_int_equal(embd_stream_finish(s, &err), EMBD_STOPPED);
  assert_int_equal(st.calls, 2);
  embd_stream_destroy(s);
}

static void test_stopped_codec(void **state) {
  (void)state;
  const uint32_t ids[2] = {1, 2};
  uint8_t buf[64];
  size_t n = 0, w;
  for (int i = 0; i < 3; i++) {
    OK(embd_codec_encode_tokens(ids, 2, buf + n, sizeof buf - n, &w));
    n += w;
  }
  stopper st = {0, 1};
  embd_codec_reader_options o = {0};
  o.on_frame = stop_codec;
  o.user = &st;
  embd_codec_reader *r;
  OK(embd_codec_reader_create(&o, &r));
  embd_error err;
  assert_int_equal(embd_codec_reader_feed(r, buf, n, &err), EMBD_STOPPED);
  assert_int_equal(err.result, EMBD_STOPPED);
  assert_int_equal(err.offset, w);
  assert_int_equal(embd_codec_reader_finish(r, &err), EMBD_STOPPED);
  assert_int_equal(st.calls, 2);
  embd_codec_reader_destroy(r);
}

static void test_stopped_modes(void **state) {
  (void)state;
  const uint32_t ids[2] = {7, 8};
  embd_codec_stream_frame f = {0};
  f.ids = ids;
  f.n_ids = 2;
  uint8_t mp[128], pb[128];
  size_t nm = 0, np = 0, w;
  embd_result r0 = embd_codec_msgpack_encode(&f, mp, sizeof mp, &w);
  if (r0 == EMBD_ERR_UNAVAILABLE) {
    skip();
    return;
  }
  OK(r0);
  const size_t wm = w;
  nm = w;
  OK(embd_codec_msgpack_encode(&f, mp + nm, sizeof mp - nm, &w));
  nm += w;
  OK(embd_codec_proto_encode(&f, pb, sizeof pb, &w));
  const size_t wp = w;
  np = w;
  OK(embd_codec_proto_encode(&f, pb + np, sizeof pb - np, &w));
  np += w;

  stopper st = {0, 1};
  embd_codec_stream_options o = {0};
  o.max_frame_bytes = 64;
  o.on_frame = stop_modes;
  o.user = &st;
  embd_error err;
  embd_codec_msgpack_reader *m;
  OK(embd_codec_msgpack_create(&o, &m));
  assert_int_equal(embd_codec_msgpack_feed(m, mp, nm, &err), EMBD_STOPPED);
  assert_int_equal(err.result, EMBD_STOPPED);
  assert_int_equal(err.offset, wm);
  assert_int_equal(embd_codec_msgpack_finish(m, &err), EMBD_STOPPED);
  embd_codec_msgpack_destroy(m);

  st.calls = 0;
  embd_codec_proto_reader *p;
  OK(embd_codec_proto_create(&o, &p));
  assert_int_equal(embd_codec_proto_feed(p, pb, np, &err), EMBD_STOPPED);
  assert_int_equal(err.result, EMBD_STOPPED);
  assert_int_equal(err.offset, wp);
  assert_int_equal(embd_codec_proto_finish(p, &err), EMBD_STOPPED);
  embd_codec_proto_destroy(p);
}

/* ---- output too small: the size needed, and it suffices --------------------------------- */

static void test_too_small(void **state) {
  (void)state;
  enum { D = 64 };
  float v[D];
  for (int i = 0; i < D; i++) v[i] = (float)i * 0.25f;
  static uint8_t out[4096];
  size_t w, need, bound;

  /* frames, plain (exact) and zlib (the bound, which suffices) */
  const unsigned flag_sets[] = {0, EMBD_FRAME_PAYLOAD_CRC, EMBD_FRAME_ZLIB,
                                EMBD_FRAME_ZLIB | EMBD_FRAME_PAYLOAD_CRC};
  for (size_t k = 0; k < sizeof flag_sets / sizeof flag_sets[0]; k++) {
    embd_frame_encode_options eo = {0};
    eo.flags = flag_sets[k];
    OK(embd_frame_size(D, eo.flags, &bound));
    for (size_t cap = 0; cap < 40; cap += 7) {
      w = 12345;
      assert_int_equal(embd_frame_encode_f32(v, D, &eo, out, cap, &w), EMBD_ERR_OUTPUT_TOO_SMALL);
      assert_int_equal(w, bound);
    }
    OK(embd_frame_encode_f32(v, D, &eo, out, bound, &w));
    if (!(eo.flags & EMBD_FRAME_ZLIB)) assert_int_equal(w, bound);
    if (eo.flags & EMBD_FRAME_ZLIB) { /* a cap one short of the real size: still reported */
      const size_t real = w;
      size_t w2 = 0;
      assert_int_equal(embd_frame_encode_f32(v, D, &eo, out, real - 1, &w2), EMBD_ERR_OUTPUT_TOO_SMALL);
      assert_int_equal(w2, bound);
    }
    /* the decoder: info->dims is the float count needed */
    float back[D];
    embd_frame_info info = {0};
    embd_error err;
    assert_int_equal(embd_frame_decode(out, w, NULL, back, D - 1, &info, &err),
                     EMBD_ERR_OUTPUT_TOO_SMALL);
    assert_int_equal(info.dims, D);
    OK(embd_frame_decode(out, w, NULL, back, info.dims, &info, &err));
  }

  /* batches */
  OK(embd_batch_size(3, D / 4, 0, &need));
  w = 0;
  assert_int_equal(embd_batch_encode_f32(v, 3, D / 4, NULL, out, need - 1, &w), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(w, need);
  OK(embd_batch_encode_f32(v, 3, D / 4, NULL, out, w, &w));
  assert_int_equal(w, need);
  const float *vecs[2] = {v, v + 10};
  const size_t dims[2] = {10, 20};
  size_t a, b;
  OK(embd_frame_size(10, 0, &a));
  OK(embd_frame_size(20, 0, &b));
  w = 0;
  assert_int_equal(embd_batch_encode_ptrs(vecs, dims, 2, NULL, out, 3, &w), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(w, 4 + a + b);
  OK(embd_batch_encode_ptrs(vecs, dims, 2, NULL, out, w, &w));
  assert_int_equal(w, 4 + a + b);

  /* base64 */
  char txt[1024];
  OK(embd_base64_encoded_size(D * 4, 0, &need));
  assert_int_equal(embd_base64_encode_f32(v, D, 0, txt, need - 1, &w), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(w, need);
  assert_int_equal(embd_base64_encode(v, D * 4, 0, NULL, 0, &w), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(w, need);
  OK(embd_base64_encode_f32(v, D, 0, txt, w, &w));
  embd_error err;
  assert_int_equal(embd_base64_decode(txt, w, 0, NULL, 0, &need, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(need, D * 4);
  float back[D];
  size_t cnt = 0;
  assert_int_equal(embd_base64_decode_f32(txt, w, 0, back, D - 1, &cnt, &err), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(cnt, D);
  OK(embd_base64_decode_f32(txt, w, 0, back, cnt, &cnt, &err));
  assert_memory_equal(back, v, sizeof v);

  /* Codec frames (already the convention: kept) */
  const uint32_t ids[3] = {1, 2, 3};
  assert_int_equal(embd_codec_encode_tokens(ids, 3, out, 3, &w), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(w, 17);
  assert_int_equal(embd_codec_encode_tokens_frames(ids, 3, 2, out, 3, &w), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(w, 12 + 5 + 5);
  assert_int_equal(embd_codec_encode_frame(EMBD_CODEC_ERROR, "oops", 4, out, 2, &w), EMBD_ERR_OUTPUT_TOO_SMALL);
  assert_int_equal(w, 9);
}


/* ---- options structs: reserved room must be zero ---------------------------------------- */

static embd_result nop_stream(void *user, const embd_batch_frame *f) {
  (void)user, (void)f;
  return EMBD_OK;
}
static embd_result nop_codec(void *user, const embd_codec_frame *f) {
  (void)user, (void)f;
  return EMBD_OK;
}
static embd_result nop_modes(void *user, const embd_codec_stream_frame *f) {
  (void)user, (void)f;
  return EMBD_OK;
}

static int dummy;

/* Every slot, one at a time: a non-zero value is EMBD_ERR_INVALID_ARGUMENT; all zero is OK.
 * Counted by sizeof: a field that took a slot (embd_frame_encode_options.dtype) leaves
 * fewer. */
#define EACH_SLOT(o, call)                                                     \
  do {                                                                         \
    for (size_t k_ = 0; k_ < sizeof (o).reserved_ / sizeof (o).reserved_[0]; k_++) { \
      (o).reserved_[k_] = 1;                                                   \
      assert_int_equal((call), EMBD_ERR_INVALID_ARGUMENT);                     \
      (o).reserved_[k_] = 0;                                                   \
    }                                                                          \
    for (size_t k_ = 0; k_ < sizeof (o).reserved_ptr_ / sizeof (o).reserved_ptr_[0]; k_++) { \
      (o).reserved_ptr_[k_] = &dummy;                                          \
      assert_int_equal((call), EMBD_ERR_INVALID_ARGUMENT);                     \
      (o).reserved_ptr_[k_] = NULL;                                            \
    }                                                                          \
  } while (0)

static void test_reserved(void **state) {
  (void)state;
  _Static_assert(sizeof(((embd_stream_options *)0)->reserved_) == 32, "4 slots");
  /* dtype took reserved_[0]'s slot in 0.3: the size and every offset stay. */
  _Static_assert(sizeof(embd_frame_encode_options) == 8 + 4 * 8 + 2 * sizeof(void *),
                 "embd_frame_encode_options keeps its size");
  _Static_assert(offsetof(embd_frame_encode_options, reserved_) == 16, "dtype is the old slot 0");
  float v[4] = {1, 2, 3, 4};
  uint8_t buf[256];
  size_t w;
  embd_error err;

  embd_frame_encode_options eo = {0};
  EACH_SLOT(eo, embd_frame_encode_f32(v, 4, &eo, buf, sizeof buf, &w));
  EACH_SLOT(eo, embd_batch_encode_f32(v, 1, 4, &eo, buf, sizeof buf, &w));
  embd_batch_encoder enc;
  EACH_SLOT(eo, embd_batch_begin(&enc, 1, &eo, buf, sizeof buf));
  OK(embd_frame_encode_f32(v, 4, &eo, buf, sizeof buf, &w));

  embd_frame_decode_options dopt = {0};
  float out[4];
  EACH_SLOT(dopt, embd_frame_decode(buf, w, &dopt, out, 4, NULL, &err));
  EACH_SLOT(dopt, embd_frame_header(buf, w, &dopt, NULL, &err));
  assert_int_equal(err.result, EMBD_ERR_INVALID_ARGUMENT);
  OK(embd_frame_decode(buf, w, &dopt, out, 4, NULL, &err));
  size_t bn;
  OK(embd_batch_encode_f32(v, 1, 4, NULL, buf, sizeof buf, &bn));
  embd_batch_iter it;
  EACH_SLOT(dopt, embd_batch_iter_init(&it, buf, bn, &dopt, &err));
  OK(embd_batch_iter_init(&it, buf, bn, &dopt, &err));

  embd_stream_options so = {0};
  so.max_dims = 4;
  so.on_frame = nop_stream;
  embd_stream *s = NULL;
  EACH_SLOT(so, embd_stream_create(&so, &s));
  assert_null(s);
  OK(embd_stream_create(&so, &s));
  embd_stream_destroy(s);

  const uint32_t ids[1] = {5};
  OK(embd_codec_encode_tokens(ids, 1, buf, sizeof buf, &w));
  embd_codec_decode_options co = {0};
  embd_codec_frame f;
  size_t used, pos = 0;
  uint32_t index = 0;
  EACH_SLOT(co, embd_codec_decode_frame(buf, w, &co, &f, &used, &err));
  EACH_SLOT(co, embd_codec_next(buf, w, &pos, &index, &co, &f, &err));
  EACH_SLOT(co, embd_codec_forward(buf, w, &co, 0, buf + 64, 64, &used, NULL, &err));
  OK(embd_codec_decode_frame(buf, w, &co, &f, &used, &err));

  embd_codec_reader_options ro = {0};
  ro.on_frame = nop_codec;
  embd_codec_reader *r = NULL;
  EACH_SLOT(ro, embd_codec_reader_create(&ro, &r));
  OK(embd_codec_reader_create(&ro, &r));
  embd_codec_reader_destroy(r);

  embd_codec_stream_options mo = {0};
  mo.max_frame_bytes = 64;
  mo.on_frame = nop_modes;
  embd_codec_msgpack_reader *m = NULL;
  embd_codec_proto_reader *p = NULL;
  if (embd_codec_msgpack_create(&mo, &m) != EMBD_ERR_UNAVAILABLE) {
    embd_codec_msgpack_destroy(m);
    EACH_SLOT(mo, embd_codec_msgpack_create(&mo, &m));
    EACH_SLOT(mo, embd_codec_proto_create(&mo, &p));
    OK(embd_codec_proto_create(&mo, &p));
    embd_codec_proto_destroy(p);
  }

  embd_openai_options oo = {0};
  embd_openai_embeddings e;
  embd_openai_init(&e);
  const char *j = "{\"data\":[{\"index\":0,\"embedding\":[1,2]}]}";
  if (embd_openai_decode(&e, j, strlen(j), &oo, &err) != EMBD_ERR_UNAVAILABLE) {
    EACH_SLOT(oo, embd_openai_decode(&e, j, strlen(j), &oo, &err));
    assert_int_equal(e.count, 0); /* no partial result */
    EACH_SLOT(oo, embd_openai_append(&e, j, strlen(j), &oo, &err));
    OK(embd_openai_decode(&e, j, strlen(j), &oo, &err));
    assert_int_equal(e.count, 1);
  }
  embd_openai_free(&e);
}

int main(void) {
  const int s = tu_isa_preflight("test_abi");
  if (s) return s;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_codes),
      cmocka_unit_test(test_result_names),
      cmocka_unit_test(test_batch_end),
      cmocka_unit_test(test_stopped_stream),
      cmocka_unit_test(test_stopped_codec),
      cmocka_unit_test(test_stopped_modes),
      cmocka_unit_test(test_too_small),
      cmocka_unit_test(test_reserved),
      cmocka_unit_test(test_offset_past_4gib_codec),
      cmocka_unit_test(test_offset_past_4gib_stream),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
